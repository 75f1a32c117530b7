"""The primitive behind each operator of Python syntax: `a + b` is `operator.add(a, b)`."""

import operator

from . import nodes

BINARY = {
    nodes.Add: operator.add,
    nodes.Sub: operator.sub,
    nodes.Mult: operator.mul,
    nodes.Div: operator.truediv,
    nodes.FloorDiv: operator.floordiv,
    nodes.Mod: operator.mod,
    nodes.Pow: operator.pow,
    nodes.MatMult: operator.matmul,
    nodes.BitAnd: operator.and_,
    nodes.BitOr: operator.or_,
    nodes.BitXor: operator.xor,
    nodes.LShift: operator.lshift,
    nodes.RShift: operator.rshift,
}
"""The primitive behind each binary operator of Python syntax."""

UNARY = {
    nodes.USub: operator.neg,
    nodes.UAdd: operator.pos,
    nodes.Not: operator.not_,
    nodes.Invert: operator.invert,
}
"""The primitive behind each unary operator of Python syntax."""
