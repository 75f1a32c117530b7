"""The `math` module: scalar functions of Python floats."""

import math

from pullback.rules.registry import adjoint, d


@adjoint(math.sin, result="scalar")
def sin(z, x, /):
    d[x] = d[z] * math.cos(x)


@adjoint(math.cos, result="scalar")
def cos(z, x, /):
    d[x] = -d[z] * math.sin(x)


@adjoint(math.tan, result="scalar")
def tan(z, x, /):
    d[x] = d[z] * (1.0 + z * z)


@adjoint(math.asin, result="scalar")
def asin(z, x, /):
    d[x] = d[z] / math.sqrt(1.0 - x * x)


@adjoint(math.acos, result="scalar")
def acos(z, x, /):
    d[x] = -d[z] / math.sqrt(1.0 - x * x)


@adjoint(math.atan, result="scalar")
def atan(z, x, /):
    d[x] = d[z] / (1.0 + x * x)


@adjoint(math.atan2, result="scalar")
def atan2(z, y, x, /):
    d[y] = d[z] * x / (x * x + y * y)
    d[x] = -d[z] * y / (x * x + y * y)


@adjoint(math.sinh, result="scalar")
def sinh(z, x, /):
    d[x] = d[z] * math.cosh(x)


@adjoint(math.cosh, result="scalar")
def cosh(z, x, /):
    d[x] = d[z] * math.sinh(x)


@adjoint(math.tanh, result="scalar")
def tanh(z, x, /):
    d[x] = d[z] * (1.0 - z * z)


@adjoint(math.exp, result="scalar", shift="exponential")
def exp(z, x, /):
    d[x] = d[z] * z


@adjoint(math.expm1, result="scalar")
def expm1(z, x, /):
    d[x] = d[z] * (z + 1.0)


@adjoint(math.log, result="scalar", shift="logarithm")
def log(z, x, base=math.e, /):
    d[x] = d[z] / (x * math.log(base))
    d[base] = -d[z] * z / (base * math.log(base))


@adjoint(math.log1p, result="scalar")
def log1p(z, x, /):
    d[x] = d[z] / (1.0 + x)


@adjoint(math.log2, result="scalar")
def log2(z, x, /):
    d[x] = d[z] / (x * math.log(2.0))


@adjoint(math.log10, result="scalar")
def log10(z, x, /):
    d[x] = d[z] / (x * math.log(10.0))


@adjoint(math.sqrt, result="scalar")
def sqrt(z, x, /):
    d[x] = d[z] / (2.0 * z)


@adjoint(math.pow, result="scalar")
def pow_(z, x, y, /):
    d[x] = d[z] * y * math.pow(x, y - 1.0)
    d[y] = d[z] * z * math.log(x)


@adjoint(math.hypot, result="scalar")
def hypot(z, x, y, /):
    d[x] = d[z] * x / z
    d[y] = d[z] * y / z


@adjoint(math.copysign, result="scalar")
def copysign(z, x, y, /):
    d[x] = d[z] * math.copysign(1.0, x) * math.copysign(1.0, y)


@adjoint(math.fabs, result="scalar")
def fabs(z, x, /):
    d[x] = d[z] * math.copysign(1.0, x)
