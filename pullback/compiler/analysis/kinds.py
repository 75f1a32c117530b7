"""What the transformer knows about a value before it runs: its kind.

A kind says whether a value is *active* (it may carry a derivative: floats,
inexact arrays and containers of them) and, when known, whether it is a scalar
or an array. A function is transformed once per tuple of parameter kinds, so
ints, strings and arguments outside `argnums` are known constants: no cotangent
code is generated for them. Kinds only ever remove code: the generated code is
correct for any value of its kind.
"""

import collections.abc
import dataclasses
import functools
import types

import numpy as np

from ...runtime import introspection, records
from ...runtime.cotangents import is_differentiable
from ...runtime.deferred import Deferred


@dataclasses.dataclass(frozen=True, eq=False)
class Kind:
    """A leaf kind: `active`, a shape class ("scalar", "array" or "unknown") and, for
    an array known to be a vector or a matrix of floats (or complex numbers), its
    `rank`, 1 or 2: its item at as many ints (`v[i]`, `m[i, j]`) is a number, not a
    view, and writing into it keeps it an array of floats of that rank.

    The eleven below are the only ones; they compare (and hash, in cache keys) by
    identity.
    """

    name: str
    active: bool
    shape: str
    rank: int | None = None

    def __repr__(self):
        return self.name


CONST = Kind("CONST", False, "unknown")
CONST_SCALAR = Kind("CONST_SCALAR", False, "scalar")
SCALAR = Kind("SCALAR", True, "scalar")
ARRAY = Kind("ARRAY", True, "array")
ANY = Kind("ANY", True, "unknown")

CONST_ARRAY = Kind("CONST_ARRAY", False, "array")
VECTOR = Kind("VECTOR", True, "array", 1)
CONST_VECTOR = Kind("CONST_VECTOR", False, "array", 1)
MATRIX = Kind("MATRIX", True, "array", 2)
CONST_MATRIX = Kind("CONST_MATRIX", False, "array", 2)
_RANKED = {(True, 1): VECTOR, (False, 1): CONST_VECTOR, (True, 2): MATRIX, (False, 2): CONST_MATRIX}
# `None`, which joins with a leaf kind to that kind: a variable set to `None` and then to
# a number or an array (`best = None` before a loop, a name a loop assigns first) is that
# value wherever its operations read it (on `None` they fail as the user's code does).
NONE = Kind("NONE", False, "unknown")
# What a recursive function's calls of itself are first assumed to return: nothing, as
# if they never returned (`interpret.recursion_fixed_point`), so that the first attempt
# finds what the function returns without recursing. Read as `ANY` anywhere but there.
NEVER = Kind("NEVER", True, "unknown")

_LEAVES = {(k.active, k.shape): k for k in (CONST, CONST_SCALAR, CONST_ARRAY, SCALAR, ARRAY,
                                            ANY)}


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

    def __hash__(self):
        return self._hash

    @functools.cached_property
    def _hash(self):
        """The hash of the fields, computed once: kinds are keys of every cache lookup."""
        return hash((self.type, self.keys, self.items, self.active, self.shape))

    def item(self, key):
        """The kind of item `key`, or None when it is not a known key."""
        for k, v in zip(self.keys, self.items):
            if k == key and type(k) is type(key):
                return v
        return None


@dataclasses.dataclass(frozen=True)
class Items:
    """An iterable that is not a container of known items (a range, zip, enumerate,
    a list of unknown length): what matters is the kind of its items. `type` is
    `list` or `tuple` where it is known to be one (None: any iterable)."""

    element: object
    type: type = None
    shape: str = "unknown"

    @property
    def active(self):
        return self.element.active

    def __repr__(self):
        return f"Items({self.element!r})" if self.type is None else (
            f"Items({self.element!r}, {self.type.__name__})")


def constant(kind):
    """The kind of a value of kind `kind` held constant: a scalar stays a scalar, an
    array an array, a vector a vector, a matrix a matrix."""
    if isinstance(kind, Kind) and kind.rank:
        return _RANKED[(False, kind.rank)]
    return _LEAVES[(False, kind.shape)] if kind.shape in ("scalar", "array") else CONST


def is_array(kind):
    """Whether `kind` is that of a differentiable array (of any rank)."""
    return isinstance(kind, Kind) and kind.active and kind.shape == "array"


def is_vector(kind):
    """Whether `kind` is that of a vector of floats, constant or not."""
    return isinstance(kind, Kind) and kind.rank == 1


def vector_or_array(active, rank):
    """The leaf kind of an array of floats of `rank` (1, 2, or None: unknown), `active`
    or not."""
    ranked = _RANKED.get((bool(active), rank))
    if ranked is not None:
        return ranked
    return ARRAY if active else CONST_ARRAY


def rank_of(kind):
    """The rank of arrays of kind `kind` (a vector's 1, a matrix's 2), or None."""
    return kind.rank if isinstance(kind, Kind) else None


def product(a, b, *_):
    """The kind of `np.dot(a, b)` or `a @ b` that carries a derivative: by the operands'
    ranks where both are vectors or matrices (a number, a vector or a matrix of floats),
    else an array; `CONST` for constant operands, which may be ints."""
    if not (a.active or b.active):
        return CONST
    ranks = (rank_of(a), rank_of(b))
    if None in ranks:
        return ARRAY
    return SCALAR if ranks == (1, 1) else vector_or_array(True, sum(ranks) - 2)


def same_rank(a, *_):
    """The kind of a transpose of `a`: of `a`'s rank where it carries a derivative."""
    return vector_or_array(True, rank_of(a)) if a.active else CONST


def of_constant(value):
    """`constant(of_value(value))`, without looking into `value`."""
    if type(value) is np.ndarray:
        return constant(_of_array(value)) if is_differentiable(value) else CONST
    if isinstance(value, (float, int, complex, np.number)) and not _is_bool(value):
        return CONST_SCALAR
    return CONST


def container(type_, keys, items):
    """A Container kind, inactive when no item is active."""
    items = tuple(items)
    return Container(type_, tuple(keys), items, any(k.active for k in items))


def sequence(type_, items):
    """The kind of a tuple or list whose items have kinds `items`."""
    items = tuple(items)
    return container(type_, range(len(items)), items)


def of_value(value, depth=0):
    """The kind of a runtime value.

    A function is active (ANY) when a value it closes over, or a default value, is:
    its cotangent is the tuple of the cotangents of its free variables (and of its
    defaults, see `calls.with_defaults`). Long sequences and
    deep nests (a loop's trail of pullbacks) get the kind of their items or
    the generic kind, so that neither their length nor their depth matters.
    A container with nothing differentiable in it is a constant, whatever its
    shape: a tree of ints passed down a recursion needs one derivative, not
    one per shape of subtree.
    """
    kind = _EXACT.get(type(value))
    if kind is not None:
        return kind
    if type(value) is np.ndarray:
        return _of_array(value) if is_differentiable(value) else CONST
    if isinstance(value, (int, np.integer)) and not _is_bool(value):
        return CONST_SCALAR
    if isinstance(value, (tuple, list, dict)) or records.is_record(value):
        if depth == 0 and not _any_active(value):
            return CONST
        kind = _container_of_value(value, depth)
        return kind if kind.active else CONST
    if type(value) in records.DICT_VIEWS:
        return _of_view(value, depth)
    if isinstance(value, collections.abc.Iterator):
        return ANY  # its items cannot be seen without taking them
    if isinstance(value, types.FunctionType):
        held = value.__closure__ or value.__defaults__ or value.__kwdefaults__
        return ANY if held and _any_active(value) else CONST
    if introspection.is_bound_method(value):
        return ANY if _any_active(value.__self__) else CONST
    if not is_differentiable(value):
        return CONST
    return ARRAY if isinstance(value, (np.ndarray, Deferred)) else SCALAR


def _of_view(view, depth):
    """The kind of a dict's `values()` or `items()`: an iterable of its items' kinds."""
    result = None
    for item in view:
        result = join(result, of_value(item, depth + 1))
    return Items(result) if result is not None and result.active else CONST


def _of_array(array):
    """The kind of a differentiable `np.ndarray` (of floats or complex numbers)."""
    return vector_or_array(True, array.ndim if array.ndim in (1, 2) else None)


# A bool is no `CONST_SCALAR`: an int picks an item (`v[i]`, a number) where a bool adds an
# axis (`v[True]` is `v[None]`), so the kinds must not take one for the other.
_EXACT = {float: SCALAR, int: CONST_SCALAR, bool: CONST, str: CONST, type(None): NONE}


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


def _container_of_value(value, depth):
    if depth > _DEEPEST:
        return ANY if _any_active(value) else CONST
    if records.is_record(value):  # active as its fields are: not walked again at each depth
        items = records.fields(value)
        keys = range(len(items)) if records.is_named_tuple(value) else items.keys()
        return container(type(value), keys, (of_value(v, depth + 1) for v in items.values()))
    if isinstance(value, (tuple, list)) and len(value) > _LONGEST:
        result = None
        for item in value:
            result = join(result, of_value(item, depth + 1))
        return Items(result, type(value))
    if isinstance(value, (tuple, list)):
        items = (of_value(v, depth + 1) for v in value)
        return sequence(tuple if isinstance(value, tuple) else list, items)
    return container(dict, value.keys(), (of_value(v, depth + 1) for v in value.values()))


_DEEPEST = 8
_LONGEST = 32


def _any_active(value):
    """Whether `value` holds a differentiable value: in a container, in a function's
    closure cells, or in a bound method's object; or an iterator, which may."""
    return any(is_differentiable(leaf) or isinstance(leaf, collections.abc.Iterator)
               for leaf in records.leaves(value, into_closures=True))


def of_annotation(annotation, default=ANY):
    """The kind a parameter annotation promises (float, int, np.ndarray, ...)."""
    if annotation in (float, complex):
        return SCALAR
    if annotation in (int, str):
        return CONST_SCALAR
    if annotation is bool:
        return CONST
    if annotation is np.ndarray:
        return ARRAY
    return default


def promote(kinds):
    """The kind of an elementwise operation's result from its operands' kinds: a
    differentiable one of vectors, matrices and numbers is an array of floats (a
    differentiable operation makes floats) of their largest rank, as NumPy broadcasts."""
    active = any(k.active for k in kinds)
    shapes = {k.shape for k in kinds}
    if "array" in shapes:
        ranked = active and all(rank_of(k) or k.shape == "scalar" for k in kinds)
        return vector_or_array(active, max(rank_of(k) or 0 for k in kinds) if ranked else None)
    if shapes <= {"scalar"}:
        return _LEAVES[(active, "scalar")]
    return _LEAVES[(active, "unknown")]


def join(a, b):
    """The kind of a variable that holds a value of kind `a` or of kind `b`."""
    if a == b:
        return a
    if a is None or b is None:
        return a or b
    if (a is NONE or b is NONE) and isinstance(b if a is NONE else a, Kind):
        return b if a is NONE else a  # not a container: a list built as `(x, rest)` would grow
    if isinstance(a, Container) and isinstance(b, Container) and (a.type, a.keys) == (
            b.type, b.keys):
        return Container(a.type, a.keys, tuple(map(join, a.items, b.items)))
    if is_sequence(a) and is_sequence(b):
        return _items_of_either(a, b)
    active = a.active or b.active
    if rank_of(a) and rank_of(a) == rank_of(b):
        return vector_or_array(active, a.rank)
    shape = a.shape if a.shape == b.shape else "unknown"
    return _LEAVES[(active, shape)]


def _items_of_either(a, b):
    """A sequence whose items are those of sequences `a` or `b`; an empty one adds no
    kind (`[]`, then appended to in a loop, holds what the loop appends)."""
    found = [element(k) for k in (a, b) if not (isinstance(k, Container) and not k.items)]
    return Items(join(*found) if len(found) == 2 else found[0] if found else CONST,
                 sequence_type(a) if sequence_type(a) is sequence_type(b) else None)


def item(kind, key):
    """The kind of item `key` of a value of kind `kind`."""
    if isinstance(kind, Container):
        found = kind.item(key)
        if found is not None:
            return found
    return element(kind)


def repetition(a, b):
    """The kind of `a * b` when it repeats a tuple or list (`[0.0] * n`): a sequence of
    unknown length with the items' kinds; else None. The count must be known to be a
    number (an array of counts would make the product an array)."""
    for items, count in ((a, b), (b, a)):
        if is_sequence(items) and count.shape == "scalar" and not count.active:
            return Items(element(items), sequence_type(items))
    return None


def is_sequence(kind):
    """Whether `kind` is that of a tuple or list (or of an iterable's items)."""
    return isinstance(kind, Items) or isinstance(kind, Container) and kind.type in (tuple, list)


def sequence_type(kind):
    """`list` or `tuple` where a value of kind `kind` is known to be one, else None."""
    found = kind.type if isinstance(kind, (Items, Container)) else None
    return found if found in (list, tuple) else None


def concatenation(a, b):
    """The kind of `a + b` for tuples or lists of kinds `a` and `b`."""
    if isinstance(a, Container) and isinstance(b, Container) and a.type is b.type:
        return sequence(a.type, a.items + b.items)
    return _items_of_either(a, b)


def field(kind, name):
    """The kind of attribute `name` of a value of kind `kind` (an object's field)."""
    if isinstance(kind, Container):
        fields = getattr(kind.type, "_fields", None)
        found = kind.item(fields.index(name) if fields and name in fields else name)
        if found is not None:
            return found
    return ANY if kind.active else CONST


def iterated(kind):
    """The kind of the items that iterating over a value of kind `kind` gives: a dict's
    keys, constants; else its items (`element`)."""
    if isinstance(kind, Container) and kind.type is dict:
        return CONST
    return element(kind)


def element(kind):
    """The kind of an item of a value of kind `kind` when the key is not known."""
    if isinstance(kind, Container):
        result = None
        for item in kind.items:
            result = join(result, item)
        return result or CONST
    if isinstance(kind, Items):
        return kind.element
    if is_vector(kind):
        return SCALAR if kind.active else CONST_SCALAR
    if rank_of(kind):  # a row of a matrix
        return vector_or_array(kind.active, kind.rank - 1)
    if is_array(kind):
        return ARRAY
    return ANY if kind.active else CONST
