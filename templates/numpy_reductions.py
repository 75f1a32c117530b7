"""Reductions along axes: sum, mean, prod, max, min (functions and array methods)."""

import numpy as np

from pullback.cotangents import (
    euclidean,
    extremum_share,
    product_of_others,
    reduced_size,
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


@adjoint(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, result="array")
def max_(z, a, axis=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * extremum_share(a, z, axis, keepdims)


@adjoint(np.linalg.norm, result="array")
def norm(z, x, ord=None, axis=None, keepdims=False):
    d[x] = unreduce(d[z] / euclidean(z, ord, x, axis), x, axis, keepdims) * x
