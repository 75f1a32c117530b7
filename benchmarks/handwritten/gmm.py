"""Hand-written adjoint of `workloads.gmm`: ADBench's Gaussian mixture objective.

The forward builds the Cholesky factors by the workload's concatenation and gather and
keeps its (k, n, d) broadcasting layout for `centered` and `z = centered @ L^T`; the two
logsumexps stop at the softmax their gradient is (`common.softmax`), and the terms that do
not depend on the parameters (the Wishart constant, the Frobenius norm's value) are dropped.
"""

import numpy as np
from workloads.gmm import cholesky_index

from .common import softmax


def forward(alphas, means, icf, x, index):
    """The workload's data term up to its softmax, with `index` the factors' gather index: the
    diagonals of the factors, the factors `L` (k, d, d), the centred points (k, n, d), `z`
    and the posteriors `P` (k, n)."""
    d = x.shape[1]
    log_diag = icf[:, :d]
    diag = np.exp(log_diag)
    sum_qs = np.sum(log_diag, axis=1)
    entries = np.concatenate([np.zeros((icf.shape[0], 1)), diag, icf[:, d:]], axis=1)
    chol = entries[:, index]
    centered = x[None, :, :] - means[:, None, :]
    z = centered @ np.transpose(chol, (0, 2, 1))
    mahalanobis = np.sum(z ** 2, axis=2)
    inner = alphas[:, None] + sum_qs[:, None] - 0.5 * mahalanobis
    return diag, chol, centered, z, softmax(inner, axis=0)


def icf_gradient(icf, diag, index, d_chol, d_sum_qs, prior_scale):
    """The gradient with respect to `icf` from the factors' gradient `d_chol` (gathered by
    `index`), that of the sums of their log-diagonals and the Frobenius term's `gamma²`."""
    d = diag.shape[1]
    d_entries = np.empty((icf.shape[0], icf.shape[1] + 1))
    # the gather's adjoint: every entry but the zero (slot 0, not needed) is gathered once
    d_entries[:, index] = d_chol
    d_icf = np.empty_like(icf)
    d_icf[:, :d] = (d_entries[:, 1:d + 1] + prior_scale * diag) * diag + d_sum_qs[:, None]
    d_icf[:, d:] = d_entries[:, d + 1:] + prior_scale * icf[:, d:]
    return d_icf


def gradient(alphas, means, icf, x, gamma, m, constant):
    """The gradient of `workloads.gmm.objective` with respect to `alphas`, `means`, `icf`."""
    index = np.array(cholesky_index(x.shape[1]))
    diag, chol, centered, z, posteriors = forward(alphas, means, icf, x, index)
    weight = posteriors.sum(axis=1)
    d_alphas = weight - x.shape[0] * softmax(alphas, axis=0)
    # minus the gradient of z is posteriors[:, :, None] * z; its sums over the points by a
    # product, then in place
    d_means = ((posteriors[:, None, :] @ z) @ chol)[:, 0, :]
    z *= posteriors[:, :, None]
    d_chol = -(np.transpose(z, (0, 2, 1)) @ centered)
    return d_alphas, d_means, icf_gradient(icf, diag, index, d_chol, weight - m, gamma * gamma)
