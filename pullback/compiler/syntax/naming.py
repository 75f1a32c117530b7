"""Readable, deterministic names for generated code.

Every generated name is derived from a user name or from the expression it
holds: `x` -> cotangent `dx`, pullback `x_pb`, second binding `x_1`; the value
of `np.sin(x)` is called `sin_x`. Counters are per function, so the same
function always yields the same code.
"""

import builtins
import keyword
import re

from . import nodes

_OPERATOR_WORDS = {
    nodes.Add: "plus",
    nodes.Sub: "minus",
    nodes.Mult: "times",
    nodes.Div: "over",
    nodes.FloorDiv: "floordiv",
    nodes.Mod: "mod",
    nodes.Pow: "pow",
    nodes.MatMult: "matmul",
    nodes.BitAnd: "and",
    nodes.BitOr: "or",
    nodes.BitXor: "xor",
    nodes.LShift: "lshift",
    nodes.RShift: "rshift",
    nodes.USub: "neg",
    nodes.UAdd: "pos",
    nodes.Not: "not",
    nodes.Invert: "invert",
}
_MAX_DERIVED = 24


class Namer:
    """Hands out names unused in one function and its generated code."""

    def __init__(self, taken=()):
        self.taken = set(taken) | set(dir(builtins)) | set(keyword.kwlist)

    @classmethod
    def for_tree(cls, tree):
        """A Namer that avoids every identifier already used in `tree`."""
        used = set()
        for node in nodes.walk(tree):
            if isinstance(node, nodes.Name):
                used.add(node.id)
            elif isinstance(node, nodes.FunctionDef):
                used.add(node.name)
        return cls(used)

    def reserve(self, name):
        """Mark `name` as used."""
        self.taken.add(name)
        return name

    def fresh(self, base):
        """`base` if unused, else `base_1`, `base_2`, ..."""
        base = _identifier(base)
        if base not in self.taken:
            return self.reserve(base)
        stem = re.sub(r"_\d+$", "", base)
        i = 1
        while f"{stem}_{i}" in self.taken:
            i += 1
        return self.reserve(f"{stem}_{i}")

    def cotangent(self, var):
        """The cotangent of `var`: `dvar`."""
        return self.fresh("d" + var)

    def pullback(self, var):
        """The pullback of the call that produced `var`: `var_pb`."""
        return self.fresh(var + "_pb")

    def for_value(self, node):
        """A name describing the value of expression `node`."""
        return self.fresh(describe(node) or "t")


def describe(node):
    """A short identifier describing an expression, or None."""
    text = _describe(node)
    if text and len(text) <= _MAX_DERIVED:
        return text
    return _describe_head(node)


def _describe(node):
    if isinstance(node, nodes.Name):
        return node.id
    if isinstance(node, nodes.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return str(value).replace(".", "_").replace("-", "neg")
    if isinstance(node, nodes.BinOp):
        parts = (_describe(node.left), _OPERATOR_WORDS.get(type(node.op)), _describe(node.right))
        return "_".join(parts) if all(parts) else None
    if isinstance(node, nodes.UnaryOp):
        operand = _describe(node.operand)
        return f"{_OPERATOR_WORDS[type(node.op)]}_{operand}" if operand else None
    if isinstance(node, nodes.Call):
        head = _describe_head(node)
        args = [_describe(a) for a in node.args[:1]]
        return "_".join([head] + args) if head and all(args) else head
    if isinstance(node, nodes.Attribute):
        value = _describe(node.value)
        return f"{value}_{node.attr}" if value else node.attr
    if isinstance(node, nodes.Subscript):
        value = _describe(node.value)
        return f"{value}{_describe_index(node.slice)}" if value else None
    return None


def _describe_index(index):
    """`x[1]` -> x1, `x[-1]` -> x_m1, `x[i]` -> x_i, `x[1:3]` -> x_part."""
    if isinstance(index, nodes.Constant) and isinstance(index.value, int):
        value = index.value
        return str(value) if value >= 0 else f"_m{-value}"
    if isinstance(index, nodes.Constant) and isinstance(index.value, str):
        return "_" + index.value
    if isinstance(index, nodes.Name):
        return "_" + index.id
    return "_part"


def _describe_head(node):
    if isinstance(node, nodes.Call):
        func = node.func
        return func.attr if isinstance(func, nodes.Attribute) else _describe(func)
    if isinstance(node, nodes.BinOp):
        return _OPERATOR_WORDS.get(type(node.op))
    if isinstance(node, nodes.Compare):
        return "cond"
    if isinstance(node, (nodes.Tuple, nodes.List)):
        return "items"
    if isinstance(node, nodes.Dict):
        return "mapping"
    if isinstance(node, nodes.Lambda):
        return "fn"
    return None


def _identifier(text):
    text = re.sub(r"\W", "_", text)
    return text if text.isidentifier() else "v_" + text


class HelperCalls:
    """Calls of pullback's runtime helpers in one function's code: each helper under one
    name free in it (`append`, `enter_context`), each call marked with its helper
    (`helper`, for the reverse pass)."""

    def __init__(self, namer):
        self.namer = namer
        self.names = {}

    def __call__(self, helper, args):
        """A call of `helper` on `args`."""
        if helper not in self.names:
            self.names[helper] = self.namer.fresh(helper.__name__)
        call = nodes.call(nodes.name(self.names[helper]), list(args))
        call.helper = helper
        return call
