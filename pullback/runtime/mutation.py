"""Updates of arrays, lists and dicts, as functions that return the updated value.

ANF writes `x[i] = v` as `x_1 = with_item(x, i, v)`, `xs.append(v)` as
`xs_1 = appended(xs, v)`, `xs.extend(ys)` as `xs_1 = extended(xs, ys)` and
`v = xs.pop(i)` as `xs_1, v = popped(xs, i)`; comprehensions build their
results with them (and `with_member` for sets). Each returns a new value and
leaves its argument as it was, so every version of a variable keeps the value
it had (the pullbacks of earlier operations may read it) and an argument the
caller passed in is never modified. The reverse pass refuses an update that
another name for the same array or list would see (see `aliases`).

Their derivative rules (`pullback/rules/python_mutation.py`) zero the cotangent of
the overwritten item, as seed 000 says destructive assignment requires, and
give it to the value written instead.
"""

import numpy as np

from ..errors import TransformError
from . import structures
from .cotangents import ZERO, is_differentiable, materialize, rebroadcast, unbroadcast
from .deferred import is_int
from .structures import unindex


def with_item(x, index, value):
    """A copy of array, list or dict `x` with `x[index] = value`."""
    if not isinstance(x, (np.ndarray, list, dict)):
        raise TransformError(f"item assignment into a {type(x).__name__}: pullback updates "
                             "arrays, lists and dicts", construct="item assignment")
    if isinstance(x, list) and isinstance(index, slice) and not (
            isinstance(value, (list, tuple))
            and len(value) == len(range(*index.indices(len(x))))):
        raise TransformError("a slice of a list may only be assigned a list or tuple of as "
                             "many items as it holds (the list's length would change): "
                             "build a new list instead, xs = xs[:i] + new + xs[j:]",
                             construct="slice assignment")
    result = x.copy()
    result[index] = value
    return result


def copied(x):
    """A copy of list, array or dict `x` that a loop then updates in place (`with_item_into`,
    `without_item_into`, `structures.add_at_into`); anything else as it is, which
    those update by copying."""
    if type(x) is list:
        return list(x)
    return x.copy() if type(x) is np.ndarray or type(x) is dict else x


def listed(g, x, more=0):
    """The cotangent `g` of a list of `len(x) + more` items as a list of its items'
    cotangents, which a loop's pullback then updates by index in Python
    (`compiler.optimize.inline_items`): `g` itself when it is a list (the loop's own
    copy), else a new one (`ZERO` for each item of a zero `g`)."""
    if type(g) is list:
        return g
    return [ZERO] * (len(x) + more) if g is ZERO else list(g)


def arrayed(g, x):
    """The cotangent `g` of vector `x` as an array, which a loop's pullback then updates by
    index in Python (`compiler.optimize.inline_items`): `g` itself when it is one (the
    loop's own copy), else a new one (zeros for a zero `g`)."""
    if type(g) is np.ndarray:
        return g
    return materialize(g, x)


def with_item_into(x, index, value):
    """`with_item(x, index, value)`, writing into `x` itself when it is an array, a list
    and `index` an int, or a dict holding the key `index`: a loop's own copy
    (`copied`) whose earlier versions nothing reads but for their type, length, keys,
    shape and dtype, which such an update leaves as they were
    (`compiler.optimize.in_place_lists`)."""
    if type(x) is list and (type(index) is int or is_int(index)) or type(x) is np.ndarray or (
            type(x) is dict and index in x):
        x[index] = value
        return x
    return with_item(x, index, value)


def item_of(x, index):
    """`x[index]`, copied when it is part of array `x` (a row, a slice): a read of an
    array that a loop updates in place, whose value is read after the update
    (`compiler.optimize.in_place_lists`); a list's item as it is."""
    item = x[index]
    return item.copy() if type(x) is np.ndarray and type(item) is np.ndarray else item


def appended_into(items, value):
    """`appended(items, value)`, appending to `items` itself when it is a list (see
    `with_item_into`; `compiler.optimize.in_place_lists` makes sure nothing reads an
    earlier version at all, since its length changes)."""
    if type(items) is list:
        items.append(value)
        return items
    return appended(items, value)


def refuse_if_shared(updated, reader, error):
    """Raise `error` if `reader` may share memory with `updated`, which the function
    updates in place, so that Python would see the update through `reader` (either
    may be an item of an array, which is a number or a view by the array's rank).
    Numbers share nothing, and an update of one changes nothing; anything but two
    arrays is taken to share."""
    if isinstance(reader, _NUMBERS) or isinstance(updated, _NUMBERS):
        return
    if not (isinstance(reader, np.ndarray) and isinstance(updated, np.ndarray)
            and not np.may_share_memory(updated, reader)):
        raise error


_NUMBERS = (float, int, complex, np.generic)
_NUMBER_TYPES = frozenset((float, int, bool, complex, np.float64, np.float32, np.int64))
_SEQUENCES = frozenset((list, tuple))


def refuse_if_held_twice(container, item, error):
    """Raise `error` if the tuple, list or dict `container` holds, besides `item`, which
    an update is about to change in place, `item` again or memory it shares, at any
    depth (`[a] * 2`, `[a, a[1:]]`, `[a, [a]]`): Python's update shows there too,
    where the derivative, which updates a copy at the one place, does not. Numbers
    share nothing."""
    if isinstance(item, _NUMBERS) or not isinstance(container, (list, tuple, dict)):
        return
    if _references(container, item) > 1:
        raise error


def _references(container, item):
    """How many times `container` holds `item`, or an array sharing its memory."""
    count = 0
    for value in container.values() if isinstance(container, dict) else container:
        if value is item:
            count += 1
        elif type(value) in _SEQUENCES and set(map(type, value)) <= _NUMBER_TYPES:
            continue  # a row of numbers, which holds nothing (its types found without a loop)
        elif isinstance(value, (list, tuple, dict)):
            count += _references(value, item)
        elif (type(value) is np.ndarray and type(item) is np.ndarray
              and (value.base is not None or item.base is not None)
              and np.may_share_memory(value, item)):
            count += 1
    return count


def refuse_repetition(count, error):
    """Raise `error` if `count` repeats a sequence (`xs * count`): an int or a bool."""
    if isinstance(count, (int, np.integer)):
        raise error


def appended(items, value):
    """A copy of list `items` with `value` appended."""
    return _list(items, "append") + [value]


def extended(items, values):
    """A copy of list `items` extended by the items of `values`."""
    return _list(items, "extend") + list(values)


def popped(items, index=-1, *default):
    """`(a copy of list items without items[index], items[index])`; for a dict, `(a copy
    without key index, its value)`, or the `default` given for a key it does not hold."""
    if isinstance(items, dict):
        result = items.copy()
        return result, result.pop(index, *default)
    result = _list(items, "pop")
    value = result.pop(index, *default)
    return result, value


def with_member(members, value):
    """A copy of set `members` with `value` added. It has no derivative rule: a set
    has no order in which to hold the cotangents of its members."""
    return members | {value}


def _list(items, method):
    if not isinstance(items, list):
        also = " (and del x[i], which is x.pop(i))" if method == "pop" else ""
        raise TransformError(f"pullback treats .{method}(){also} as the list's (or the "
                             f"dict's) method; this value is a {type(items).__name__}",
                             construct=f".{method}()")
    return list(items)


# -- their cotangents ------------------------------------------------------------------


def without_item(g, index):
    """The cotangent `g` with the item at `index` zeroed: what the value updated by
    `with_item` contributes (its item there was overwritten). Its own transpose."""
    if g is ZERO:
        return ZERO
    if not isinstance(g, (list, dict, tuple)):
        result = np.array(g)
        result[index] = 0.0
        return result
    result = g.copy() if isinstance(g, (list, dict)) else list(g)
    if isinstance(index, slice):  # a slice of a list, assigned as many items as it holds
        result[index] = [ZERO] * len(range(*index.indices(len(result))))
    else:
        result[index] = ZERO
    return result if not isinstance(g, tuple) else tuple(result)


def without_item_into(g, index):
    """`without_item(g, index)`, zeroing the item in `g` itself when it is an array, a
    dict, or a list and `index` an int (see `with_item_into`)."""
    if type(g) is list and (type(index) is int or is_int(index)) or type(g) is dict:
        g[index] = ZERO
        return g
    if type(g) is np.ndarray:
        g[index] = 0.0
        return g
    return without_item(g, index)


def written_item(g, index, value, updated):
    """The cotangent of `value` written by `updated = with_item(x, index, value)`:
    the item of `g` at `index`, summed back to `value`'s shape where it was
    broadcast; zero when `updated` is an array that cannot hold a derivative (the
    value was rounded)."""
    if type(updated) is list and type(index) is int:  # the common case, first
        return ZERO if g is ZERO else g[index]
    if type(updated) is np.ndarray and type(g) is np.ndarray and type(index) is int and (
            (type(value) is float or type(value) is np.float64) and updated.dtype == np.float64
            and updated.ndim == 1):
        # a number of a float vector
        return float(g[index])
    if g is ZERO or (isinstance(updated, np.ndarray) and not is_differentiable(updated)):
        return ZERO
    item = g[index]
    if isinstance(updated, np.ndarray):
        item = unbroadcast(item, value)  # a copy, not a view: `without_item_into` zeroes `g`
        return item.copy() if type(item) is np.ndarray and np.may_share_memory(item, g) else (
            item)
    return type(value)(item) if isinstance(index, slice) and isinstance(value, (list, tuple)) else (
        item)


def written_item_adjoint(h, g, index, value, updated):
    """The transpose of `written_item`: `h` broadcast to the item's shape, placed at
    `index` of a zero cotangent shaped like `g`."""
    if h is ZERO or (isinstance(updated, np.ndarray) and not is_differentiable(updated)):
        return ZERO
    if isinstance(updated, np.ndarray):
        return unindex(rebroadcast(h, updated[index]), updated, index)
    return unindex(h, updated, index)


def unappended(g):
    """The cotangent of `items` from that of `appended(items, value)`: `g` without its
    last item."""
    if g is ZERO:
        return ZERO
    return list(g[:-1])


def unappended_into(g):
    """`unappended(g)`, removing the last item of `g` itself when it is a list (see
    `with_item_into`)."""
    if type(g) is list:
        g.pop()
        return g
    return unappended(g)


def reappended(h):
    """The transpose of `unappended`: `h` with a zero last item."""
    if h is ZERO:
        return ZERO
    return list(h) + [ZERO]


def last_item(g):
    """The cotangent of `value` from that of `appended(items, value)`: the last item of `g`."""
    if g is ZERO:
        return ZERO
    return g[-1]


def last_item_adjoint(h, g):
    """The transpose of `last_item`: `h` as the last item of a zero cotangent shaped like `g`."""
    if h is ZERO or g is ZERO:
        return ZERO
    return [ZERO] * (len(g) - 1) + [h]


def unpop(g, items, index=-1):
    """The cotangent of `items` from that of `popped(items, index)`: the value's
    cotangent put back where it was taken from (for a dict, where it held the key)."""
    if g is ZERO:
        return ZERO
    if isinstance(items, dict):
        rest = {} if g[0] is ZERO else g[0]
        return {k: g[1] if k == index else rest.get(k, ZERO) for k in items}
    rest = [ZERO] * (len(items) - 1) if g[0] is ZERO else list(g[0])
    rest.insert(index % len(items), g[1])
    return rest


def repop(h, items, index=-1):
    """The transpose of `unpop`."""
    if h is ZERO:
        return ZERO
    if isinstance(items, dict):
        return {k: h[k] for k in items if k != index}, h[index] if index in items else ZERO
    rest = list(h)
    value = rest.pop(index % len(items))
    return rest, value


def unpop_default(g, items, index):
    """The cotangent of the default of `popped(items, index, default)` from that of its
    result: the value's, where dict `items` does not hold the key."""
    return ZERO if g is ZERO or index in items else g[1]


def repop_default(h, items, index):
    """The transpose of `unpop_default`."""
    return ZERO if h is ZERO or index in items else (ZERO, h)


IN_PLACE = {with_item: with_item_into, without_item: without_item_into,
            structures.add_at: structures.add_at_into, appended: appended_into,
            unappended: unappended_into}
"""Each update's version writing into its first argument, which the optimiser writes
where nothing reads the argument after (`compiler.optimize.in_place_lists`)."""

RESIZING = {appended, unappended}
"""The updates that change a list's length: nothing may read an earlier version after
them, not even for its length."""

COPYING = {IN_PLACE[update]: update for update in RESIZING}
"""The in-place updates that generated code, transformed again, runs as the copies
they stand for: what made the update safe in it says nothing of what its own
derivative reads, and a tangent rule reads the list it appended to, after the call,
for its length. An update keeping the length leaves what the rules read (a list's
type and length) as it was, and stays in place."""
