"""scipy.special, registered when the program imports it (`pullback/rules/__init__.py`,
`SCIPY_FAMILIES`).

Every template is written with NumPy, scipy.special functions that have rules here,
and pullback's helpers, so derivatives of derivatives work. `logsumexp` takes `b=`
and `return_sign=True` (the sign has no derivative).
"""

import numpy as np
from scipy import special

from pullback.rules.registry import adjoint, d, t
from pullback.runtime.cotangents import ZERO, unbroadcast, unreduce


@adjoint(special.gammaln, result="elementwise")
def gammaln(z, x, /):
    d[x] = d[z] * special.digamma(x)


@adjoint(special.digamma, result="elementwise")
def digamma(z, x, /):
    d[x] = d[z] * special.polygamma(1, x)


@adjoint(special.polygamma, result="elementwise")
def polygamma(z, n, x):
    d[x] = d[z] * special.polygamma(n + 1, x)


@adjoint(special.erf, result="elementwise")
def erf(z, x, /):
    d[x] = d[z] * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@adjoint(special.erfc, result="elementwise")
def erfc(z, x, /):
    d[x] = -d[z] * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x)


@adjoint(special.expit, result="elementwise")
def expit(z, x, /):
    d[x] = d[z] * z * (1.0 - z)


@adjoint(special.logit, result="elementwise")
def logit(z, x, /):
    d[x] = d[z] / (x * (1.0 - x))


@adjoint(special.xlogy, result="elementwise")
def xlogy(z, x, y, /):
    d[x] = unbroadcast(d[z] * np.log(y), x)
    d[y] = unbroadcast(d[z] * x / y, y)


@adjoint(special.xlog1py, result="elementwise")
def xlog1py(z, x, y, /):
    d[x] = unbroadcast(d[z] * np.log1p(y), x)
    d[y] = unbroadcast(d[z] * x / (1.0 + y), y)


@adjoint(special.betaln, result="elementwise")
def betaln(z, a, b, /):
    both = special.digamma(a + b)
    d[a] = unbroadcast(d[z] * (special.digamma(a) - both), a)
    d[b] = unbroadcast(d[z] * (special.digamma(b) - both), b)


@adjoint(special.erfinv, result="elementwise")
def erfinv(z, y, /):
    d[y] = d[z] * (np.sqrt(np.pi) / 2.0) * np.exp(z * z)


@adjoint(special.logsumexp)
def logsumexp(z, a, axis=None, b=None, keepdims=False, return_sign=False):
    """With `b`, the weights of the sum `b * exp(a)`; with `return_sign`, `z` is
    `(value, sign)` and the cotangent of the value is signed."""
    shift = unreduce(value_of(z, return_sign), a, axis, keepdims)
    g = unreduce(value_of(d[z], return_sign) * sign_of(z, return_sign), a, axis, keepdims)
    weights = g * np.exp(a - shift)
    d[a] = scaled(weights, b)
    d[b] = unbroadcast(weights, b)
    summed = np.sum(np.exp(a - shift) * (scaled(t[a], b) + t[b]), axis, keepdims=keepdims)
    t[z] = signed(summed * sign_of(z, return_sign), return_sign)


@adjoint(special.softmax, result="array")
def softmax(z, x, axis=None):
    d[x] = z * (d[z] - np.sum(d[z] * z, axis=axis, keepdims=True))
    t[z] = z * (t[x] - np.sum(z * t[x], axis=axis, keepdims=True))


@adjoint(special.log_softmax, result="array")
def log_softmax(z, x, axis=None):
    d[x] = d[z] - np.exp(z) * np.sum(d[z], axis=axis, keepdims=True)
    t[z] = t[x] - np.sum(np.exp(z) * t[x], axis=axis, keepdims=True)


def value_of(z, return_sign):
    """The value of `logsumexp(..., return_sign=return_sign)` (or its cotangent) `z`:
    its first item when it is a `(value, sign)` pair."""
    if z is ZERO or not return_sign:
        return z
    return z[0]


def sign_of(z, return_sign):
    """The sign `logsumexp(..., return_sign=True)` returns in `z`, else 1."""
    return z[1] if return_sign else 1.0


def scaled(weights, b):
    """`weights * b`, or `weights` when there is no `b`."""
    return weights if b is None else weights * b


def signed(tangent, return_sign):
    """The tangent of `logsumexp(..., return_sign=return_sign)` from the `tangent` of its
    value: with `return_sign`, the pair of it and the sign's, zero."""
    return (tangent, ZERO) if return_sign else tangent


@adjoint(special.log_expit, result="elementwise")
def log_expit(z, x, /):
    d[x] = d[z] * special.expit(-x)


@adjoint(special.ndtr, result="elementwise")
def ndtr(z, x, /):
    d[x] = d[z] * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


@adjoint(special.log_ndtr, result="elementwise")
def log_ndtr(z, x, /):
    d[x] = d[z] * np.exp(-0.5 * x * x - 0.5 * np.log(2.0 * np.pi) - z)


@adjoint(special.poch, result="elementwise")
def poch(z, a, m, /):
    d[a] = unbroadcast(d[z] * z * (special.digamma(a + m) - special.digamma(a)), a)
    d[m] = unbroadcast(d[z] * z * special.digamma(a + m), m)


_NOT_ELEMENTARY = "its derivative in its parameters is not elementary"


def gamma_density(a, x):
    """The standard gamma distribution's density at `x`: `gammainc(a, x)`'s derivative."""
    return np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))


def beta_density(a, b, x):
    """The beta distribution's density at `x`: `betainc(a, b, x)`'s derivative."""
    return np.exp(special.xlog1py(b - 1.0, -x) + special.xlogy(a - 1.0, x)
                  - special.betaln(a, b))


def t_density(df, t):
    """Student's t distribution's density at `t`: `stdtr(df, t)`'s derivative."""
    return np.exp(np.log(special.poch(0.5 * df, 0.5)) - 0.5 * np.log(np.pi * df)
                  - 0.5 * (df + 1.0) * np.log1p(t * t / df))


@adjoint(special.gammainc, result="elementwise", refused={"a": _NOT_ELEMENTARY})
def gammainc(z, a, x, /):
    d[x] = unbroadcast(d[z] * gamma_density(a, x), x)


@adjoint(special.gammaincc, result="elementwise", refused={"a": _NOT_ELEMENTARY})
def gammaincc(z, a, x, /):
    d[x] = unbroadcast(-d[z] * gamma_density(a, x), x)


@adjoint(special.betainc, result="elementwise",
         refused={"a": _NOT_ELEMENTARY, "b": _NOT_ELEMENTARY})
def betainc(z, a, b, x, /):
    d[x] = unbroadcast(d[z] * beta_density(a, b, x), x)


@adjoint(special.betaincc, result="elementwise",
         refused={"a": _NOT_ELEMENTARY, "b": _NOT_ELEMENTARY})
def betaincc(z, a, b, x, /):
    d[x] = unbroadcast(-d[z] * beta_density(a, b, x), x)


@adjoint(special.stdtr, result="elementwise", refused={"df": _NOT_ELEMENTARY})
def stdtr(z, df, t, /):
    d[t] = unbroadcast(d[z] * t_density(df, t), t)
