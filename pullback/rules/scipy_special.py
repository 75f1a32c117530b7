"""scipy.special, when SciPy is installed (`pullback/rules/__init__.py` imports this
module only then)."""

import numpy as np
from scipy import special

from pullback.rules.registry import adjoint, d
from pullback.runtime.cotangents import unbroadcast, unreduce


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


@adjoint(special.logsumexp, result="array")
def logsumexp(z, a, axis=None, *, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * np.exp(a - unreduce(z, a, axis, keepdims))


@adjoint(special.xlog1py, result="elementwise")
def xlog1py(z, x, y, /):
    d[x] = unbroadcast(d[z] * np.log1p(y), x)
    d[y] = unbroadcast(d[z] * x / (1.0 + y), y)


@adjoint(special.log_expit, result="elementwise")
def log_expit(z, x, /):
    d[x] = d[z] * special.expit(-x)


@adjoint(special.ndtr, result="elementwise")
def ndtr(z, x, /):
    d[x] = d[z] * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


@adjoint(special.log_ndtr, result="elementwise")
def log_ndtr(z, x, /):
    d[x] = d[z] * np.exp(-0.5 * x * x - 0.5 * np.log(2.0 * np.pi) - z)


@adjoint(special.betaln, result="elementwise")
def betaln(z, a, b, /):
    d[a] = unbroadcast(d[z] * (special.digamma(a) - special.digamma(a + b)), a)
    d[b] = unbroadcast(d[z] * (special.digamma(b) - special.digamma(a + b)), b)


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
