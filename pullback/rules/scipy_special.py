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
