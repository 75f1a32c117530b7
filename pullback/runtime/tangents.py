"""What tangent code (forward mode) calls besides the rules' helpers.

A tangent mirrors its primal value as a cotangent does (`cotangents`): a float for a
float, an array of its shape for an array, a tuple, list or dict of tangents for a
tuple, list or dict, the dict of its fields' tangents for a record (a tuple for a
named tuple), and for a function the tuple of the tangents of its free variables
(then of its defaults). Any of them may be the symbolic zero `ZERO`.
"""

import collections
import itertools

import numpy as np

from ..errors import TransformError
from . import mutation, records
from .cotangents import ZERO, add, is_differentiable


def zeros_of(x):
    """A zero tangent of `x` as a value, where a map needs one (the part of a
    concatenation that is a constant): zeros of its shape, and containers of them."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind == "f" else float)
    if isinstance(x, (tuple, list)):
        return type(x)(zeros_of(item) for item in x)
    if isinstance(x, dict):
        return dict_like(x, {k: zeros_of(v) for k, v in x.items()})
    if isinstance(x, (float, np.floating)):
        return type(x)(0.0)
    return 0.0


def unpacked(t, count, x):
    """The tangents of the `count` items value `x` is unpacked into, from its tangent
    `t`, which may be `ZERO`."""
    if t is ZERO:
        return (ZERO,) * count
    return tuple(t)


def item_tangents(t, items):
    """The tangents of the items a loop takes from `items`, one by one, from `t`, the
    tangent of `items` (`ZERO` for each when it is `ZERO`; None for a `while` loop)."""
    if t is ZERO or items is None:
        return itertools.repeat(ZERO)
    return t


def shaped(t, x):
    """Tangent `t` of container or array `x`, a container of `ZERO`s (zeros for an array)
    when it is `ZERO`: for an update of one item, which keeps the others."""
    if t is not ZERO:
        return t
    if isinstance(x, (tuple, list)):
        return type(x)([ZERO] * len(x))
    if isinstance(x, dict):
        return dict_like(x, dict.fromkeys(x, ZERO))
    return zeros_of(x)


def dict_like(x, items):
    """The tangent of dict `x` holding `items`. For a dict whose class gives a value for
    a key it does not hold (`__missing__`: a `collections.defaultdict`, a `Counter`), a
    defaultdict whose missing keys are `ZERO`: that value is a constant, and the
    tangent's read of the key must not fail."""
    if hasattr(type(x), "__missing__"):
        return collections.defaultdict(_no_tangent, items)
    return items


def _no_tangent():
    """The tangent of a defaultdict's default value."""
    return ZERO


def repopped(t, t_default, items, index=-1):
    """The tangent of `popped(items, index[, default])` from the tangents `t` of `items`
    and `t_default` of the default."""
    if isinstance(items, dict):
        return add(mutation.repop(t, items, index),
                   mutation.repop_default(t_default, items, index))
    return mutation.popped(shaped(t, items), index)


def unrounded(t, z):
    """Tangent `t` of `z`, or `ZERO` when `z` is an array that cannot hold a derivative
    (an array of ints written a float: the value was rounded)."""
    if isinstance(z, np.ndarray) and not is_differentiable(z):
        return ZERO
    return t


def zero_mapping(source):
    """The tangent `ZERO` for each key of the dict `dict(source)` (a constant)."""
    return dict.fromkeys(dict(source), ZERO)


def dense(t, x):
    """Tangent `t` of `x` with its zeros made values (`zeros_of`), for a map that reads
    every part (`np.concatenate`)."""
    if t is ZERO:
        return zeros_of(x)
    if isinstance(x, (tuple, list)) and isinstance(t, (tuple, list)):
        return type(x)(dense(a, b) for a, b in zip(t, x))
    if isinstance(x, dict) and isinstance(t, dict):
        return dict_like(x, {k: dense(t.get(k, ZERO), v) for k, v in x.items()})
    return t


def external(t, x):
    """Tangent `t` of `x` as the user is given it: zeros for `ZERO` (None for a value
    that has no derivative), records rebuilt, arrays of `x`'s shape."""
    if records.is_record(x):
        fields = records.fields(x)
        items = t if not isinstance(t, tuple) else dict(zip(fields, t))
        return records.rebuild(x, {k: external(ZERO if t is ZERO else items.get(k, ZERO), v)
                                   for k, v in fields.items()})
    if isinstance(x, (tuple, list)):
        items = [ZERO] * len(x) if t is ZERO else t
        return type(x)(external(a, b) for a, b in zip(items, x))
    if isinstance(x, dict):
        return {k: external(ZERO if t is ZERO else t.get(k, ZERO), v) for k, v in x.items()}
    if not is_differentiable(x):
        return None
    if t is ZERO:
        return zeros_of(x)
    if isinstance(x, np.ndarray):
        return np.array(np.broadcast_to(t, x.shape), dtype=x.dtype)
    return type(x)(t) if isinstance(x, (float, np.floating)) else t


def internal(t, x, where="tangent"):
    """A tangent the user gave for value `x`, as generated code holds it: `ZERO` for
    None or for a value without derivative (an int, a string), records as dicts of
    their fields (tuples for named tuples).

    Raises:
      TypeError: when `t` is not shaped like `x`, naming `where` it was found.
    """
    if t is None or t is ZERO:
        return ZERO
    if records.is_record(x):
        given = records.fields(t) if records.is_record(t) else t
        if not isinstance(given, dict):
            raise TypeError(f"{where} of a {type(x).__name__} must be one too, or None")
        items = {k: internal(given.get(k), v, f"{where}.{k}") for k, v in
                 records.fields(x).items()}
        return tuple(items.values()) if records.is_named_tuple(x) else items
    if isinstance(x, (tuple, list)):
        if not isinstance(t, (tuple, list)) or len(t) != len(x):
            raise TypeError(f"{where} must be a {type(x).__name__} of {len(x)} tangents, "
                            f"like its value, not {type(t).__name__}")
        return type(x)(internal(a, b, f"{where}[{i}]") for i, (a, b) in enumerate(zip(t, x)))
    if isinstance(x, dict):
        if not isinstance(t, dict) or set(t) - set(x):
            raise TypeError(f"{where} must be a dict with the keys of its value")
        return dict_like(x, {k: internal(t.get(k), v, f"{where}[{k!r}]") for k, v in x.items()})
    if not is_differentiable(x):
        return ZERO
    if np.shape(t) != np.shape(x):
        raise TypeError(f"{where} has shape {np.shape(t)}, but its value has shape "
                        f"{np.shape(x)}: a tangent is shaped like its value")
    return t


class GroupTangent:
    """The tangent of each of a group of nested functions that read one another (a
    recursive `def`, or `even` and `odd`): the tangents of the other variables they
    read, by name (`values`), and the names of the group's functions (`members`), whose
    tangent is this same object. A function's tangent is otherwise the tuple of its
    free variables' tangents; here that tuple would hold itself."""

    __slots__ = ("values", "members")

    def __init__(self, values, members):
        self.values = values
        self.members = members

    def __repr__(self):
        return f"GroupTangent({self.values!r}, {self.members!r})"


def group_tangent(values, members):
    """The `GroupTangent` of functions `members` reading variables whose tangents are
    `values`, by name (`ZERO` when all are)."""
    if all(v is ZERO for v in values.values()):
        return ZERO
    return GroupTangent(values, members)


def environment_of(fn, t):
    """The tangents of the free variables of function `fn`, in `co_freevars` order, from
    its tangent `t`: `t` itself, unless `t` is a group's (`GroupTangent`)."""
    if not isinstance(t, GroupTangent):
        return t
    return tuple(t if name in t.members else t.values.get(name, ZERO)
                 for name in fn.__code__.co_freevars)


def environment_cotangent(h, t):
    """The transpose of `environment_of`, for a tangent `t` that is not a group's."""
    if isinstance(t, GroupTangent):
        raise TransformError(
            "the reverse derivative of a derivative in forward mode through nested "
            "functions that call one another (recursion) is not supported: define the "
            "recursive function at module level", construct="recursive nested functions")
    return h
