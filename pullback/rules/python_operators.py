"""Python's operators and numeric builtins (and the NumPy ufuncs they call)."""

import operator

import numpy as np

from pullback.compiler.analysis.kinds import (
    ANY,
    CONST,
    Container,
    Items,
    concatenation,
    element,
    product,
    sequence_type,
)
from pullback.rules.registry import adjoint, d, t
from pullback.runtime.cotangents import matmul_left, matmul_right, unbroadcast, unreduce
from pullback.runtime.structures import (
    merged,
    reconcat,
    rerepeated,
    unconcat,
    unindex,
    unmerged_left,
    unmerged_right,
    unrepeated,
)
from pullback.runtime.structures import repeated as repeated_items

from .numpy_versions import numpy_functions


@adjoint(operator.add, np.add, result="elementwise")
def add(z, x, y):
    d[x] = unbroadcast(d[z], x)
    d[y] = unbroadcast(d[z], y)


@adjoint(operator.concat, result=concatenation)
def concat(z, a, b):
    parts = unconcat(d[z], a, b)
    d[a] = parts[0]
    d[b] = parts[1]
    t[z] = reconcat((t[a], t[b]), a, b)


@adjoint(repeated_items, result=lambda items, count: Items(element(items),
                                                                     sequence_type(items)),
         copy=True)
def repeated(z, items, count):
    d[items] = unrepeated(d[z], items, count)
    t[z] = rerepeated(t[items], count)


@adjoint(operator.sub, np.subtract, result="elementwise")
def subtract(z, x, y):
    d[x] = unbroadcast(d[z], x)
    d[y] = -unbroadcast(d[z], y)


@adjoint(operator.mul, np.multiply, result="elementwise", multilinear=True)
def multiply(z, x, y):
    d[x] = unbroadcast(d[z] * y, x)
    d[y] = unbroadcast(d[z] * x, y)


@adjoint(operator.truediv, np.divide, result="elementwise", absorbing=(0,))
def divide(z, x, y):
    d[x] = unbroadcast(d[z] / y, x)
    d[y] = -unbroadcast(d[z] * z / y, y)


# The exponent is y - 1 but where x and y are both 0, whose 0 * 0 ** -1 is nan (1 there):
# its derivatives in y are then those of `y * x ** (y - 1)` wherever x is not 0, x ** -1
# at y = 0 among them. A constant y takes the outer branch when the template is inlined.
@adjoint(operator.pow, np.power, np.float_power, pow, result="elementwise")
def power(z, x, y):
    d[x] = unbroadcast(d[z] * y * x ** np.where(y, y - 1, np.where(x, y - 1, 1.0)), x)
    d[y] = unbroadcast(d[z] * z * np.log(np.where(x == 0, 1.0, x)), y)


@adjoint(operator.mod, np.remainder, result="elementwise")
def remainder(z, x, y):
    d[x] = unbroadcast(d[z], x)
    d[y] = -unbroadcast(d[z] * np.floor_divide(x, y), y)


@adjoint(operator.neg, np.negative, result="elementwise", linear=True)
def negative(z, x):
    d[x] = -d[z]


@adjoint(operator.pos, np.positive, result="elementwise", linear=True)
def positive(z, x):
    d[x] = d[z]


@adjoint(operator.matmul, np.matmul, *numpy_functions("linalg.matmul"), result=product,
         multilinear=True)
def matmul(z, x, y):
    d[x] = matmul_left(d[z], x, y)
    d[y] = matmul_right(d[z], x, y)


@adjoint(operator.getitem, view=True, linear=True)
def getitem(z, x, index):
    d[x] = unindex(d[z], x, index)


def _merged_kind(a, b):
    """The kind of `a | b`: for two dicts of known keys, `a`'s keys then `b`'s new ones,
    each with the kind of the value it takes."""
    if isinstance(a, Container) and isinstance(b, Container) and a.type is dict is b.type:
        items = dict(zip(a.keys, a.items)) | dict(zip(b.keys, b.items))
        return Container(dict, tuple(items), tuple(items.values()),
                         any(k.active for k in items.values()))
    return ANY if a.active or b.active else CONST


@adjoint(operator.or_, result=_merged_kind)
def merge(z, a, b):
    d[a] = unmerged_left(d[z], a, b)
    d[b] = unmerged_right(d[z], a, b)
    t[z] = merged(t[a], t[b], a, b)


@adjoint(abs, result="elementwise")
def absolute(z, x):
    d[x] = d[z] * np.sign(x)


@adjoint(float, result="scalar")
def to_float(z, x=0.0, /):
    d[x] = unreduce(d[z], x)
    t[z] = np.sum(t[x])
