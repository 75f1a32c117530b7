"""NumPy's elementwise functions (ufuncs), selection and clipping.

The rules of the linear ones apply them to the cotangent: `deg2rad`, `rad2deg`, and
`real`, `imag`, `conjugate` and `real_if_close`, which on real arguments are the
identity, zero, the identity and `np.asarray`.
"""

import math

import numpy as np

from pullback.rules.registry import adjoint, d, declare, t
from pullback.runtime.cotangents import rebroadcast, select, tie_share, unbroadcast, within
from pullback.runtime.structures import unarray


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


@adjoint(np.arctan2, result="elementwise")
def arctan2(z, y, x, /):
    d[y] = unbroadcast(d[z] * x / (x * x + y * y), y)
    d[x] = -unbroadcast(d[z] * y / (x * x + y * y), x)


@adjoint(np.sinh, result="elementwise")
def sinh(z, x, /):
    d[x] = d[z] * np.cosh(x)


@adjoint(np.cosh, result="elementwise")
def cosh(z, x, /):
    d[x] = d[z] * np.sinh(x)


@adjoint(np.tanh, result="elementwise")
def tanh(z, x, /):
    d[x] = d[z] * (1.0 - z * z)


@adjoint(np.arcsinh, result="elementwise")
def arcsinh(z, x, /):
    d[x] = d[z] / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, result="elementwise")
def arccosh(z, x, /):
    d[x] = d[z] / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh, result="elementwise")
def arctanh(z, x, /):
    d[x] = d[z] / (1.0 - x * x)


@adjoint(np.deg2rad, np.radians, result="elementwise", linear=True)
def deg2rad(z, x, /):
    d[x] = np.deg2rad(d[z])


@adjoint(np.rad2deg, np.degrees, result="elementwise", linear=True)
def rad2deg(z, x, /):
    d[x] = np.rad2deg(d[z])


@adjoint(np.sinc, result="elementwise")
def sinc(z, x):
    d[x] = d[z] * (np.cos(np.pi * x) - z) / x


@adjoint(np.exp, result="elementwise", shift="exponential")
def exp(z, x, /):
    d[x] = d[z] * z


@adjoint(np.expm1, result="elementwise")
def expm1(z, x, /):
    d[x] = d[z] * (z + 1.0)


@adjoint(np.exp2, result="elementwise")
def exp2(z, x, /):
    d[x] = d[z] * z * math.log(2.0)


@adjoint(np.log, result="elementwise", shift="logarithm")
def log(z, x, /):
    d[x] = d[z] / x


@adjoint(np.log1p, result="elementwise")
def log1p(z, x, /):
    d[x] = d[z] / (1.0 + x)


@adjoint(np.log2, result="elementwise")
def log2(z, x, /):
    d[x] = d[z] / (x * math.log(2.0))


@adjoint(np.log10, result="elementwise")
def log10(z, x, /):
    d[x] = d[z] / (x * math.log(10.0))


@adjoint(np.logaddexp, result="elementwise")
def logaddexp(z, x, y, /):
    d[x] = unbroadcast(d[z] * np.exp(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp(y - z), y)


@adjoint(np.logaddexp2, result="elementwise")
def logaddexp2(z, x, y, /):
    d[x] = unbroadcast(d[z] * np.exp2(x - z), x)
    d[y] = unbroadcast(d[z] * np.exp2(y - z), y)


@adjoint(np.sqrt, result="elementwise")
def sqrt(z, x, /):
    d[x] = d[z] / (2.0 * z)


@adjoint(np.cbrt, result="elementwise")
def cbrt(z, x, /):
    d[x] = d[z] / (3.0 * z * z)


@adjoint(np.square, result="elementwise")
def square(z, x, /):
    d[x] = d[z] * 2.0 * x


@adjoint(np.hypot, result="elementwise")
def hypot(z, x, y, /):
    d[x] = unbroadcast(d[z] * x / z, x)
    d[y] = unbroadcast(d[z] * y / z, y)


@adjoint(np.reciprocal, result="elementwise")
def reciprocal(z, x, /):
    d[x] = -d[z] * z * z




@adjoint(np.absolute, np.fabs, result="elementwise")
def absolute(z, x, /):
    d[x] = d[z] * np.sign(x)


@adjoint(np.fmod, result="elementwise")
def fmod(z, x, y, /):
    d[x] = unbroadcast(d[z], x)
    d[y] = -unbroadcast(d[z] * np.trunc(x / y), y)


@adjoint(np.copysign, result="elementwise")
def copysign(z, x1, x2, /):
    d[x1] = unbroadcast(d[z] * np.copysign(1.0, x1) * np.copysign(1.0, x2), x1)


@adjoint(np.ldexp, result="elementwise")
def ldexp(z, x1, x2, /):
    d[x1] = unbroadcast(d[z] * np.ldexp(1.0, x2), x1)


@adjoint(np.heaviside, result="elementwise")
def heaviside(z, x1, x2, /):
    d[x2] = unbroadcast(select(x1 == 0, d[z]), x2)


@adjoint(np.maximum, np.minimum, np.fmax, np.fmin, result="elementwise")
def maximum(z, x, y, /):
    d[x] = unbroadcast(d[z] * tie_share(x, z, y), x)
    d[y] = unbroadcast(d[z] * tie_share(y, z, x), y)


@adjoint(np.real, np.ndarray.real, result="elementwise", linear=True, view=True)
def real(z, val):
    d[val] = np.real(d[z])


@adjoint(np.imag, np.ndarray.imag, result="elementwise", linear=True, view=True)
def imag(z, val):
    d[val] = np.imag(d[z])


@adjoint(np.real_if_close, result="array", linear=True, view=True)
def real_if_close(z, a, tol=100):
    """Of a real `a`: `np.asarray(a)`."""
    d[a] = unarray(d[z], a)


@adjoint(np.conjugate, np.ndarray.conjugate, np.ndarray.conj, result="elementwise",
         linear=True)
def conjugate(z, x, /):
    d[x] = np.conjugate(d[z])


declare(np.ndarray.conjugate, np.ndarray.conj, view=True)  # of a real array: itself


@adjoint(np.where, result="array")
def where(z, condition, x, y, /):
    d[x] = unbroadcast(select(condition, d[z]), x)
    d[y] = unbroadcast(select(np.logical_not(condition), d[z]), y)


@adjoint(np.nan_to_num, result="elementwise")
def nan_to_num(z, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[x] = select(np.isfinite(x), d[z])
    d[nan] = np.sum(select(np.isnan(x), d[z]))
    d[posinf] = np.sum(select(np.isposinf(x), d[z]))
    d[neginf] = np.sum(select(np.isneginf(x), d[z]))
    t[z] = (select(np.isfinite(x), t[x]) + t[nan] * np.isnan(x) + t[posinf] * np.isposinf(x)
            + t[neginf] * np.isneginf(x))


# `np.clip(a, lo, hi)` and `a.clip(lo, hi)` bind the bounds alike; NumPy >= 2.1 also
# names them `min` and `max` in `np.clip`.
@adjoint(np.clip, np.ndarray.clip, result="array")
def clip(z, a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    d[a] = unbroadcast(select(within(a, a_min, a_max, min, max), d[z]), a)
    d[a_min] = unbroadcast(select(a < a_min, d[z]), a_min)
    d[a_max] = unbroadcast(select(a > a_max, d[z]), a_max)
    d[min] = unbroadcast(select(a < min, d[z]), min)
    d[max] = unbroadcast(select(a > max, d[z]), max)
    t[z] = rebroadcast(select(within(a, a_min, a_max, min, max), t[a]) + t[a_min] * (a < a_min)
                       + t[a_max] * (a > a_max) + t[min] * (a < min) + t[max] * (a > max), z)
