"""Cotangents of iterables: what a loop, `sum`, `max` or `zip` took from them.

A loop collects the cotangents of the items it took in a list; `like_items`
turns that list into a cotangent of the iterable (an array for an array, a
tuple for a tuple, the list itself for an iterator such as `zip(...)`, whose
rule passes it on to the iterator's arguments). Each map here is linear in
the cotangent, maps `ZERO` to `ZERO` and has its transpose beside it, which
its derivative rule uses (`pullback/rules/pullback_helpers.py`).
"""

import numpy as np

from ..errors import TransformError
from .cotangents import ZERO, materialize, rebroadcast, unbroadcast


def like_items(cts, items):
    """The cotangent of iterable `items` from the list `cts` of those of the items
    taken from it, first to last (after a `break`, fewer than all)."""
    if cts is ZERO or _without_cotangent(items) or all(ct is ZERO for ct in cts):
        return ZERO
    cts = list(cts) + [ZERO] * (_length(items, len(cts)) - len(cts))
    if isinstance(items, np.ndarray):
        return np.stack([materialize(ct, row) for ct, row in zip(cts, items)])
    return tuple(cts) if isinstance(items, tuple) else cts


def item_cotangents(h, cts, items):
    """The transpose of `like_items`: the first `len(cts)` items of `h`, as a list."""
    if h is ZERO or cts is ZERO or _without_cotangent(items):
        return ZERO
    return [h[i] for i in range(len(cts))]


def unzip(g, iterables):
    """The cotangents of the arguments of `zip(*iterables)` from the list `g` of those
    of the tuples it produced."""
    if g is ZERO:
        return ZERO
    return tuple(like_items([ZERO if ct is ZERO else ct[k] for ct in g], items)
                 for k, items in enumerate(iterables))


def rezip(h, g, iterables):
    """The transpose of `unzip`."""
    if h is ZERO or g is ZERO:
        return ZERO
    parts = [item_cotangents(hk, g, items) for hk, items in zip(h, iterables)]
    return [tuple(ZERO if part is ZERO else part[i] for part in parts) for i in range(len(g))]


def zipped(ts, iterables):
    """The tangents of the tuples `zip(*iterables)` makes, from the tangents `ts` of the
    iterables: a list of tuples (`ZERO` for the parts whose tangent is `ZERO`)."""
    if ts is ZERO or all(t is ZERO for t in ts):
        return ZERO
    count = min(len(t) for t in ts if t is not ZERO)
    columns = [[ZERO] * count if t is ZERO else t for t in ts]
    return [tuple(column[i] for column in columns) for i in range(count)]


def unreverse(g, items):
    """The cotangent of `items` from the list `g` of those of the items of
    `reversed(items)`, last item first."""
    if g is ZERO:
        return ZERO
    return like_items([ZERO] * (len(items) - len(g)) + g[::-1], items)


def rereverse(h, g, items):
    """The transpose of `unreverse`."""
    if h is ZERO or g is ZERO:
        return ZERO
    return [h[len(items) - 1 - i] for i in range(len(g))]


def unitems(g, mapping, position):
    """The cotangent of dict `mapping` from the list `g` of those of the items of
    `mapping.items()` (position 1 of each pair) or `mapping.values()` (None)."""
    if g is ZERO:
        return ZERO
    cts = [ct if position is None or ct is ZERO else ct[position] for ct in g]
    cts += [ZERO] * (len(mapping) - len(cts))
    return dict(zip(mapping, cts))


def reitems(h, g, mapping, position):
    """The transpose of `unitems`."""
    if h is ZERO or g is ZERO:
        return ZERO
    values = [h.get(k, ZERO) for k, _ in zip(mapping, g)]
    return values if position is None else [(ZERO, v) for v in values]


def spread(g, items):
    """The cotangent of `items` from that of `sum(items, start)`: `g` for each item,
    summed back to the item's shape."""
    if g is ZERO:
        return ZERO
    _check_not_joined(g)
    if isinstance(items, np.ndarray):
        return np.broadcast_to(g, np.shape(items))
    if type(g) is float and type(items) in (list, tuple):  # then the items are numbers
        return like_items([g] * len(items), items)
    return like_items([unbroadcast(g, item) for item in items], items)


def _check_not_joined(total):
    """Refuse `sum` joining lists or tuples (`sum(rows, [])`): its derivative is a sum's."""
    if isinstance(total, (list, tuple)):
        raise TransformError("sum of lists or tuples (which joins them, from a start of [] or "
                             "()) is not supported: join them with itertools.chain or a "
                             "comprehension, [x for xs in rows for x in xs]",
                             construct="sum of sequences")


def unspread(h, g, items):
    """The transpose of `spread`: the sum of the items of `h`, each broadcast like `g`."""
    if h is ZERO:
        return ZERO
    _check_not_joined(g)
    if isinstance(items, np.ndarray):
        return np.sum(h, axis=0)
    total = ZERO
    for ct in h:
        total = total + (ZERO if ct is ZERO else rebroadcast(ct, g))
    return total


def unextremum(g, values, extremum):
    """The cotangents of the arguments of `max(*values)` or `min(*values)`, whose
    result is `extremum`: all of `g` goes to the first item equal to it, as in Python."""
    if g is ZERO:
        return ZERO
    items = values[0] if len(values) == 1 else values
    if not len(items):
        return ZERO  # `max([], default=d)`: see `unextremum_default`
    cts = [ZERO] * len(items)
    cts[_first_equal(items, extremum)] = g
    return (like_items(cts, items),) if len(values) == 1 else tuple(cts)


def unextremum_default(g, values):
    """The cotangent of the `default` of `max(iterable, default=d)` (or `min`) from that
    of its result: `g` where the iterable was empty, else `ZERO`. Its own transpose."""
    return g if len(values) == 1 and not len(values[0]) else ZERO


def reextremum(h, values, extremum):
    """The transpose of `unextremum`."""
    if h is ZERO:
        return ZERO
    items = values[0] if len(values) == 1 else values
    ct = h[0] if len(values) == 1 else h
    return ZERO if ct is ZERO or not len(items) else ct[_first_equal(items, extremum)]


def unsort(g, items, result):
    """The cotangent of `items` from that of `result = sorted(items)`."""
    if g is ZERO:
        return ZERO
    cts = [ZERO] * len(result)
    for j, i in enumerate(sort_order(items, result)):
        cts[i] = g[j]
    return like_items(cts, items)


def resort(h, items, result):
    """The transpose of `unsort`."""
    cts = item_cotangents(h, result, items)
    if cts is ZERO:
        return ZERO
    return [cts[i] for i in sort_order(items, result)]


def sort_order(items, result):
    """For each item of `result` (sorted `items`), its position in `items`."""
    items = list(items)
    unused = list(range(len(items)))
    order = []
    for value in result:
        i = next((i for i in unused if items[i] is value), None)
        if i is None:
            i = next(i for i in unused if _same_item(items[i], value))
        unused.remove(i)
        order.append(i)
    return order


def _without_cotangent(items):
    """Whether the items of `items` are constants (a range, a string, a dict's keys)."""
    return items is None or isinstance(items, (range, str, bytes, dict))


def _first_equal(items, extremum):
    for i, item in enumerate(items):
        if item is extremum or _same_item(item, extremum):
            return i
    raise ValueError("the extremum is not among the items")


def _same_item(item, value):
    """Whether `value`, an item a call returned, is `item` of the items read again: a
    number equal to it, or a view of the same memory (iterating an array again makes
    new views of its rows)."""
    if np.ndim(item) == 0:
        return item == value
    return type(item) is np.ndarray and type(value) is np.ndarray and (
        item.__array_interface__["data"][0] == value.__array_interface__["data"][0]
        and item.shape == value.shape and item.strides == value.strides)


def _length(items, taken):
    try:
        return len(items)
    except TypeError:
        return taken
