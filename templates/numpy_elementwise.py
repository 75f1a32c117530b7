"""NumPy's elementwise functions (ufuncs), selection and clipping."""

import numpy as np

from pullback.cotangents import select, tie_share, unbroadcast, within
from pullback.rules import adjoint, d


@adjoint(np.sin, result="elementwise")
def sin(z, x, /):
    d[x] = d[z] * np.cos(x)


@adjoint(np.cos, result="elementwise")
def cos(z, x, /):
    d[x] = -d[z] * np.sin(x)


@adjoint(np.tan, result="elementwise")
def tan(z, x, /):
    d[x] = d[z] * (1.0 + z * z)


@adjoint(np.arcsin, result="elementwise")
def arcsin(z, x, /):
    d[x] = d[z] / np.sqrt(1.0 - x * x)


@adjoint(np.arccos, result="elementwise")
def arccos(z, x, /):
    d[x] = -d[z] / np.sqrt(1.0 - x * x)


@adjoint(np.arctan, result="elementwise")
def arctan(z, x, /):
    d[x] = d[z] / (1.0 + x * x)


@adjoint(np.sinh, result="elementwise")
def sinh(z, x, /):
    d[x] = d[z] * np.cosh(x)


@adjoint(np.cosh, result="elementwise")
def cosh(z, x, /):
    d[x] = d[z] * np.sinh(x)


@adjoint(np.tanh, result="elementwise")
def tanh(z, x, /):
    d[x] = d[z] * (1.0 - z * z)


@adjoint(np.exp, result="elementwise")
def exp(z, x, /):
    d[x] = d[z] * z


@adjoint(np.expm1, result="elementwise")
def expm1(z, x, /):
    d[x] = d[z] * (z + 1.0)


@adjoint(np.log, result="elementwise")
def log(z, x, /):
    d[x] = d[z] / x


@adjoint(np.log1p, result="elementwise")
def log1p(z, x, /):
    d[x] = d[z] / (1.0 + x)


@adjoint(np.sqrt, result="elementwise")
def sqrt(z, x, /):
    d[x] = d[z] / (2.0 * z)


@adjoint(np.square, result="elementwise")
def square(z, x, /):
    d[x] = d[z] * 2.0 * x


@adjoint(np.absolute, result="elementwise")
def absolute(z, x, /):
    d[x] = d[z] * np.sign(x)


@adjoint(np.reciprocal, result="elementwise")
def reciprocal(z, x, /):
    d[x] = -d[z] * z * z


@adjoint(np.maximum, np.minimum, result="elementwise")
def maximum(z, x, y, /):
    d[x] = unbroadcast(d[z] * tie_share(x, z, y), x)
    d[y] = unbroadcast(d[z] * tie_share(y, z, x), y)


@adjoint(np.where, result="array")
def where(z, condition, x, y, /):
    d[x] = unbroadcast(select(condition, d[z]), x)
    d[y] = unbroadcast(select(np.logical_not(condition), d[z]), y)


@adjoint(np.clip, result="array")
def clip(z, a, a_min, a_max):
    d[a] = unbroadcast(select(within(a, a_min, a_max), d[z]), a)
    d[a_min] = unbroadcast(select(a < a_min, d[z]), a_min)
    d[a_max] = unbroadcast(select(a > a_max, d[z]), a_max)
