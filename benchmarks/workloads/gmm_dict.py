"""The `gmm` workload with its parameters in a dict, written as ADBench's NumPy reference
does: each precision factor split into the exponentiated diagonal and a strictly lower
triangle whose columns are stacked from `icf`, applied to all centred points with
`np.einsum`, and the Wishart prior as its own function."""

import math

import numpy as np

from workloads import gmm as base

BASE = "gmm"
SIZES = base.SIZES
WRT = (0,)


def logsumexp(z):
    top = np.max(z)
    return np.log(np.sum(np.exp(z - top))) + top


def logsumexp_rows(z):
    top = np.max(z, axis=1)
    return np.log(np.sum(np.exp(z - top[:, None]), axis=1)) + top


def strictly_lower(d, icf_row):
    """The strictly lower triangle of one factor, column by column from `icf_row[d:]`."""
    columns = []
    start = d
    for i in range(d):
        count = d - i - 1
        columns.append(np.concatenate([np.zeros(i + 1), icf_row[start:start + count]]))
        start += count
    return np.column_stack(columns)


def log_wishart_prior(q_diagonals, sum_qs, lower_parts, gamma, m, constant):
    frobenius = np.sum(q_diagonals ** 2) + np.sum(lower_parts ** 2)
    return 0.5 * gamma * gamma * frobenius - m * np.sum(sum_qs) - constant


def objective(params, x, gamma, m, constant):
    alphas, means, icf = params["alphas"], params["means"], params["icf"]
    n, d = x.shape
    q_diagonals = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    lower_parts = np.array([strictly_lower(d, row) for row in icf])
    centered = x[:, None, :] - means[None, :, :]  # n × k × d
    transformed = q_diagonals * centered + np.einsum("kij,nkj->nki", lower_parts, centered)
    squared = np.sum(transformed ** 2, axis=2)
    inner = alphas + sum_qs - 0.5 * squared  # n × k
    slse = np.sum(logsumexp_rows(inner))
    constant_term = -n * d * 0.5 * math.log(2.0 * math.pi)
    return (constant_term + slse - n * logsumexp(alphas)
            + log_wishart_prior(q_diagonals, sum_qs, lower_parts, gamma, m, constant))


def inputs(size, rng):
    alphas, means, icf, x, gamma, m, constant = base.inputs(size, rng)
    return {"alphas": alphas, "means": means, "icf": icf}, x, gamma, m, constant


def base_arguments(params, x, gamma, m, constant):
    """The base objective's arguments holding the same numbers as these."""
    return params["alphas"], params["means"], params["icf"], x, gamma, m, constant
