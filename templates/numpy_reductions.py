"""Reductions along axes: sum, mean, prod, var, std, max, min, and the cumulative sums
and products (functions and array methods)."""

import numpy as np

from pullback.cotangents import (
    extremum_share,
    product_of_others,
    reduced_size,
    uncumsum,
    unreduce,
)
from pullback.rules import adjoint, d


@adjoint(np.sum, np.ndarray.sum, result="array")
def sum_(z, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims)


@adjoint(np.mean, np.ndarray.mean, result="array")
def mean(z, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) / reduced_size(a, z)


@adjoint(np.prod, np.ndarray.prod, result="array")
def prod(z, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * product_of_others(a, axis)


@adjoint(np.var, np.ndarray.var, result="array")
def var(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(2.0 * d[z], a, axis, keepdims) * centered / (reduced_size(a, z) - ddof)


@adjoint(np.std, np.ndarray.std, result="array")
def std(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[z] / z, a, axis, keepdims) * centered / (reduced_size(a, z) - ddof)


@adjoint(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, result="array")
def max_(z, a, axis=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * extremum_share(a, z, axis, keepdims)


@adjoint(np.cumsum, np.ndarray.cumsum, result="array")
def cumsum(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumsum(d[z], a, axis)


@adjoint(np.cumprod, np.ndarray.cumprod, result="array")
def cumprod(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumsum(d[z] * z, a, axis) / a


@adjoint(uncumsum)
def uncumsum_(z, g, x, axis=None):
    d[g] = np.cumsum(d[z], axis)
