"""The `gmm` workload with a Python loop over the mixture's components: each component builds
its Cholesky factor as a d×d matrix (the diagonal from `np.diag`, the lower entries assigned one
by one) and applies it to the centred points with `np.dot`; the log-sum-exp over components
runs on the stacked per-component terms."""

import math

import numpy as np

from workloads import gmm as base

BASE = "gmm"
SIZES = base.SIZES
WRT = (0, 1, 2)


def cholesky_factor(icf_row, d):
    """The lower-triangular factor of one component's precision from its `icf` row."""
    factor = np.diag(np.exp(icf_row[:d]))
    p = d
    for column in range(d):
        for row in range(column + 1, d):
            factor[row, column] = icf_row[p]
            p += 1
    return factor


def objective(alphas, means, icf, x, gamma, m, constant):
    n, d = x.shape
    k = alphas.shape[0]
    per_component = []
    frobenius = 0.0
    log_determinants = 0.0
    for j in range(k):
        factor = cholesky_factor(icf[j], d)
        log_det = np.sum(icf[j, :d])
        centered = x - means[j]
        mahalanobis = np.sum(np.dot(centered, factor.T) ** 2, axis=1)
        per_component.append(alphas[j] + log_det - 0.5 * mahalanobis)
        frobenius = frobenius + np.sum(factor ** 2)
        log_determinants = log_determinants + log_det
    inner = np.stack(per_component)
    top = np.max(inner, axis=0)
    log_likelihoods = np.log(np.sum(np.exp(inner - top), axis=0)) + top
    alpha_top = np.max(alphas)
    log_normalizer = np.log(np.sum(np.exp(alphas - alpha_top))) + alpha_top
    data_term = (np.sum(log_likelihoods) - n * log_normalizer
                 - 0.5 * n * d * math.log(2.0 * math.pi))
    prior_term = 0.5 * gamma * gamma * frobenius - m * log_determinants - constant
    return data_term + prior_term


def inputs(size, rng):
    return base.inputs(size, rng)


def base_arguments(alphas, means, icf, x, gamma, m, constant):
    """The base objective's arguments holding the same numbers as these."""
    return alphas, means, icf, x, gamma, m, constant
