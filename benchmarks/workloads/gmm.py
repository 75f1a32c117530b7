"""ADBench's Gaussian mixture model objective, with its Wishart prior on the precisions.

Component j has log-weight `alphas[j]`, mean `means[j]` and the Cholesky factor
`L_j` of its precision: `icf[j]` holds the logs of `L_j`'s diagonal, then its
strictly lower entries column by column.
"""

import math

import numpy as np

SIZES = {"small": (2, 5, 1000), "medium": (10, 25, 10000)}
WRT = (0, 1, 2)


def logsumexp(z, axis):
    """log(sum(exp(z))) along `axis`, shifted by the maximum."""
    top = np.max(z, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(z - top), axis=axis)) + np.squeeze(top, axis=axis)


def cholesky_index(d):
    """For each entry of a d×d lower-triangular L, where it sits in [0, diagonal, lower]."""
    lower = [(i, j) for j in range(d) for i in range(j + 1, d)]
    slot = {ij: 1 + d + p for p, ij in enumerate(lower)}
    slot.update({(i, i): 1 + i for i in range(d)})
    return [[slot.get((i, j), 0) for j in range(d)] for i in range(d)]


def log_multigamma(a, p):
    """log Γ_p(a), the multivariate gamma function (a Python float)."""
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(
        math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def wishart_constant(k, d, gamma, m):
    """The part of the log Wishart prior that does not depend on the parameters."""
    dof = d + m + 1
    per_component = dof * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_multigamma(
        0.5 * dof, d)
    return k * per_component


def objective(alphas, means, icf, x, gamma, m, constant):
    """ADBench's GMM objective: the data term plus the log Wishart prior term."""
    n, d = x.shape
    log_diag = icf[:, :d]
    diag = np.exp(log_diag)
    sum_qs = np.sum(log_diag, axis=1)
    entries = np.concatenate([np.zeros((icf.shape[0], 1)), diag, icf[:, d:]], axis=1)
    chol = entries[:, np.array(cholesky_index(d))]
    centered = x[None, :, :] - means[:, None, :]
    mahalanobis = np.sum((centered @ np.transpose(chol, (0, 2, 1))) ** 2, axis=2)
    inner = alphas[:, None] + sum_qs[:, None] - 0.5 * mahalanobis
    data_term = (np.sum(logsumexp(inner, 0)) - n * logsumexp(alphas, 0)
                 - 0.5 * n * d * math.log(2.0 * math.pi))
    frobenius = np.sum(diag ** 2) + np.sum(icf[:, d:] ** 2)
    prior_term = 0.5 * gamma * gamma * frobenius - m * np.sum(sum_qs) - constant
    return data_term + prior_term


def inputs(size, rng):
    """Random mixture parameters and data of dimension d, k components, n points."""
    d, k, n = size
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, (k, d))
    icf = rng.uniform(0.0, 1.0, (k, d * (d + 1) // 2))
    x = rng.standard_normal((n, d))
    gamma, m = 1.0, 0
    return alphas, means, icf, x, gamma, m, wishart_constant(k, d, gamma, m)
