"""Products: dot, matmul (`@` is in python_operators), outer."""

import numpy as np

from pullback.cotangents import (
    dot_left,
    dot_right,
    reshape_like,
    tensordot_left,
    tensordot_right,
)
from pullback.rules import adjoint, d


@adjoint(np.dot, np.ndarray.dot, result="array")
def dot(z, a, b, out=None):
    d[a] = dot_left(d[z], a, b)
    d[b] = dot_right(d[z], a, b)


@adjoint(np.tensordot, result="array")
def tensordot(z, a, b, axes=2):
    d[a] = tensordot_left(d[z], a, b, axes)
    d[b] = tensordot_right(d[z], a, b, axes)


@adjoint(np.outer, result="array")
def outer(z, a, b, out=None):
    d[a] = reshape_like(np.dot(d[z], np.ravel(b)), a)
    d[b] = reshape_like(np.dot(np.ravel(a), d[z]), b)
