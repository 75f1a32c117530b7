"""What the transformer knows about a value before it runs: its kind.

A kind says whether a value is *active* (it may carry a derivative: floats,
inexact arrays and containers of them) and, when known, whether it is a scalar
or an array. A function is transformed once per tuple of parameter kinds, so
ints, strings and arguments outside `argnums` are known constants: no cotangent
code is generated for them. Kinds only ever remove code: the generated code is
correct for any value of its kind.
"""

import dataclasses
import types

import numpy as np

from . import scopes
from .cotangents import is_differentiable


@dataclasses.dataclass(frozen=True)
class Kind:
    """A leaf kind: `active` and a shape class ("scalar", "array" or "unknown")."""

    name: str
    active: bool
    shape: str

    def __repr__(self):
        return self.name


CONST = Kind("CONST", False, "unknown")
CONST_SCALAR = Kind("CONST_SCALAR", False, "scalar")
SCALAR = Kind("SCALAR", True, "scalar")
ARRAY = Kind("ARRAY", True, "array")
ANY = Kind("ANY", True, "unknown")

_LEAVES = {(k.active, k.shape): k for k in (CONST, CONST_SCALAR, SCALAR, ARRAY, ANY)}
_LEAVES[(False, "array")] = CONST


@dataclasses.dataclass(frozen=True)
class Container:
    """A tuple, list or dict whose items have known kinds.

    `keys` are the positions (0, 1, ...) or the dict keys, `items` their kinds.
    """

    type: type
    keys: tuple
    items: tuple
    active: bool = True
    shape: str = "unknown"

    def __repr__(self):
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in zip(self.keys, self.items))
        return f"{self.type.__name__}({inner})"

    def item(self, key):
        """The kind of item `key`, or None when it is not a known key."""
        for k, v in zip(self.keys, self.items):
            if k == key and type(k) is type(key):
                return v
        return None


def container(type_, keys, items):
    """A Container kind, or CONST when no item is active."""
    items = tuple(items)
    if not any(k.active for k in items):
        return CONST
    return Container(type_, tuple(keys), items)


def sequence(type_, items):
    """The kind of a tuple or list whose items have kinds `items`."""
    items = tuple(items)
    return container(type_, range(len(items)), items)


def of_value(value):
    """The kind of a runtime value.

    A function is active (ANY) when a value it closes over is: its cotangent
    is the tuple of the cotangents of its free variables.
    """
    if isinstance(value, (bool, int, np.integer)):
        return CONST_SCALAR
    if isinstance(value, (tuple, list)):
        return sequence(tuple if isinstance(value, tuple) else list, map(of_value, value))
    if isinstance(value, dict):
        return container(dict, value.keys(), map(of_value, value.values()))
    if isinstance(value, types.FunctionType):
        return ANY if _closes_over_active(value, set()) else CONST
    if scopes.is_bound_method(value):
        return ANY if of_value(value.__self__).active else CONST
    if not is_differentiable(value):
        return CONST
    return ARRAY if isinstance(value, np.ndarray) else SCALAR


def _closes_over_active(fn, seen):
    seen.add(id(fn))
    for value in scopes.cell_values(fn):
        if isinstance(value, types.FunctionType):
            if id(value) not in seen and _closes_over_active(value, seen):
                return True
        elif of_value(value).active:
            return True
    return False


def of_annotation(annotation, default=ANY):
    """The kind a parameter annotation promises (float, int, np.ndarray, ...)."""
    if annotation in (float, complex):
        return SCALAR
    if annotation in (int, bool, str):
        return CONST_SCALAR
    if annotation is np.ndarray:
        return ARRAY
    return default


def promote(kinds):
    """The kind of an elementwise operation's result from its operands' kinds."""
    active = any(k.active for k in kinds)
    shapes = {k.shape for k in kinds}
    if "array" in shapes:
        shape = "array"
    elif shapes <= {"scalar"}:
        shape = "scalar"
    else:
        shape = "unknown"
    return _LEAVES[(active, shape)]


def join(a, b):
    """The kind of a variable that holds a value of kind `a` or of kind `b`."""
    if a == b:
        return a
    if a is None or b is None:
        return a or b
    active = a.active or b.active
    shape = a.shape if a.shape == b.shape else "unknown"
    return _LEAVES[(active, shape)]


def element(kind):
    """The kind of an item of a value of kind `kind` when the key is not known."""
    if isinstance(kind, Container):
        result = None
        for item in kind.items:
            result = join(result, item)
        return result or CONST
    if kind is ARRAY:
        return ARRAY
    return ANY if kind.active else CONST
