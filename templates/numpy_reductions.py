"""Reductions along axes: sum, mean, prod, var, std, max, min, and the cumulative sums
and products (functions and array methods)."""

import numpy as np

from pullback.cotangents import (
    degrees_of_freedom,
    extremum_share,
    product_of_others,
    reduced_size,
    select,
    uncumprod,
    uncumsum,
    unreduce,
)
from pullback.rules import adjoint, d


@adjoint(np.sum, np.ndarray.sum, result="array")
def sum_(z, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = select(where, unreduce(d[z], a, axis, keepdims))
    d[initial] = np.sum(d[z])


@adjoint(np.mean, np.ndarray.mean, result="array")
def mean(z, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = select(where, unreduce(d[z], a, axis, keepdims)) / reduced_size(a, z, axis, where)


@adjoint(np.prod, np.ndarray.prod, result="array")
def prod(z, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * product_of_others(a, axis)


@adjoint(np.var, np.ndarray.var, result="array")
def var(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        correction=None):
    centered = a - np.mean(a, axis=axis, keepdims=True, where=where)
    share = unreduce(2.0 * d[z], a, axis, keepdims) * centered
    d[a] = select(where, share / degrees_of_freedom(a, z, axis, ddof, correction, where))


@adjoint(np.std, np.ndarray.std, result="array")
def std(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        correction=None):
    centered = a - np.mean(a, axis=axis, keepdims=True, where=where)
    share = unreduce(d[z] / z, a, axis, keepdims) * centered
    d[a] = select(where, share / degrees_of_freedom(a, z, axis, ddof, correction, where))


@adjoint(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, result="array")
def max_(z, a, axis=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * extremum_share(a, z, axis, keepdims)


@adjoint(np.cumsum, np.ndarray.cumsum, result="array")
def cumsum(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumsum(d[z], a, axis)


@adjoint(np.cumprod, np.ndarray.cumprod, result="array")
def cumprod(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumprod(d[z], a, axis)


@adjoint(uncumsum)
def uncumsum_(z, g, x, axis=None):
    d[g] = np.cumsum(d[z], axis)
