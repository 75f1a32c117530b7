"""Linear maps that move cotangents between containers, each with its transpose.

The reverse rules of indexing, unpacking, starred literals, `**` dicts,
recursive closures, `np.stack`, `np.concatenate` and `np.array` use the
`un...` maps; the `re...` maps are their transposes, which the derivative rules
of the `un...` maps use (`pullback/rules/pullback_helpers.py`). So every map here
has a rule, and derivatives of derivatives stay inside what pullback
transforms. All of them map `ZERO` to `ZERO`.
"""

import numpy as np

from ..errors import TransformError
from .cotangents import ZERO, add, add_all, any_zero, reshape_like, unbroadcast, unreduce
from .deferred import concrete, is_int, row_sum, scatter_add


class ListVersion:
    """What a pullback keeps of one version of a list that a loop appends to in place:
    its length. The helpers that read a list only for its type and length
    (`Spec.structural`: `unindex`, `unindex_all`, `add_at`, `add_at_into`, `len`) take
    it for the list (`compiler.optimize.in_place_lists`)."""

    __slots__ = ("length",)

    def __init__(self, length):
        self.length = length

    def __len__(self):
        return self.length

    def __repr__(self):
        return f"ListVersion({self.length})"


def list_version(items):
    """The version `items` as its pullback reads it: for a list, its length now
    (`ListVersion`), which appending to the list in place later does not change."""
    return ListVersion(len(items)) if type(items) is list else items


_LISTS = (list, ListVersion)
_FLOATS = (float, np.float64)
_FLOAT_TYPES = frozenset(_FLOATS)
_SEQUENCES = (tuple, list, ListVersion)
_CONTAINERS = (tuple, list, ListVersion, dict)


def unindex(g, x, index):
    """The cotangent of `x` from the cotangent `g` of `x[index]`.

    For arrays this scatters `g` into zeros, adding repeated indices (or, for a
    few rows of a table, defers that: `deferred.RowSum`); for tuples, lists and
    dicts it puts `g` at `index` and `ZERO` at the other items. Its transpose is
    indexing: `h[index]`.
    """
    if g is ZERO or x is ZERO:
        return ZERO
    if type(x) is np.ndarray:
        rows = row_sum(g, x, index)
        return _scattered(g, x, index) if rows is None else rows
    if isinstance(x, dict):
        return {k: g if k == index else ZERO for k in x}
    if isinstance(x, _SEQUENCES):
        items = [ZERO] * len(x)
        if isinstance(index, slice):
            places = range(*index.indices(len(x)))
            if len(places) == len(g):
                items[index] = g  # keeps the length
            else:
                for i, gi in zip(places, g):
                    items[i] = gi
        else:
            items[index] = g
        return tuple(items) if isinstance(x, tuple) else items
    return _scattered(g, x, index)


def unindex_all(gs, x, indices):
    """The sum of `unindex(g, x, index)` over the cotangents `gs` and `indices`.

    The optimiser writes it for the cotangents of several parts of one array
    (the rewrite rule `sums.summed_helpers`): they are put in one array of zeros,
    the first scattered into it and the others added into it in place, or, when the
    parts tile the array (`_tile`), each written into an empty one. Its transpose is `indexed_all`.
    """
    if gs is ZERO:
        return ZERO
    if isinstance(x, _CONTAINERS):
        return _items_sum(gs, x, indices)
    if type(x) is np.ndarray and x.ndim == 1 and _ints(indices):
        return _numbers_sum(gs, x, indices)
    if type(x) is np.ndarray and x.size >= _TILED and type(gs) is tuple and _tile(
            gs, x, indices):
        total = np.empty_like(x)
        for g, index in zip(gs, indices):
            total[index] = g
        return total
    rows = _rows(gs, x, indices) if type(x) is np.ndarray and len(gs) > 2 else None
    if rows is not None:
        index, values = rows
        deferred = row_sum(values, x, index)
        if deferred is not None:
            return deferred
        total = np.zeros(x.shape, np.promote_types(x.dtype, values.dtype))
        scatter_add(total, index, values)
        return total
    total = ZERO
    for g, index in zip(gs, indices):
        if g is ZERO:
            continue
        if type(total) is not np.ndarray or type(x) is not np.ndarray:
            total = add(total, unindex(g, x, index))
        elif _is_basic_index(index):
            total[index] += g
        else:
            scatter_add(total, index, g)
    return total


def _ints(indices):
    for index in indices:  # noqa: SIM110 (a loop is faster than all() on this hot path)
        if type(index) is not int:
            return False
    return True


def _numbers_sum(gs, x, indices):
    """`unindex_all` for numbers read from a vector `x` at int `indices` (a state's
    components, `x[0]` and `x[1]`): each added into one array of zeros."""
    total = ZERO
    for g, index in zip(gs, indices):
        if g is not ZERO:
            if total is ZERO:
                total = _zeros_for(g, x)
            total[index] += g
    return total


def _items_sum(gs, x, indices):
    """`unindex_all` for a tuple, list or dict `x`: each cotangent added at its item
    of one list of cotangents (not a whole list made per read and added)."""
    items = dict.fromkeys(x, ZERO) if isinstance(x, dict) else [ZERO] * len(x)
    if not _add_items(items, gs, x, indices):
        return ZERO
    return tuple(items) if isinstance(x, tuple) else items


def _add_items(items, gs, x, indices):
    """Add each cotangent of `gs` into the list or dict `items` (a cotangent of `x`) at
    its index; whether one was not `ZERO`."""
    found = False
    keyed = isinstance(items, dict)
    for g, index in zip(gs, indices):
        if g is ZERO:
            continue
        found = True
        if index in items if keyed else type(index) is int:  # one item, often ZERO or a float
            old = items[index]
            items[index] = g if old is ZERO else old + g if type(old) is type(g) is float else (
                add(old, g))
        elif keyed:
            continue  # a key `x` did not hold, read as its `__missing__` gave (a Counter's 0)
        elif isinstance(index, slice):
            for i, gi in zip(range(*index.indices(len(x))), g):
                items[i] = add(items[i], gi)
        else:
            items[index] = add(items[index], g)
    return found


def add_at(total, gs, x, indices):
    """`add(total, unindex_all(gs, x, indices))`: for a tuple, list or dict `x` and its
    cotangent `total`, a copy of `total` with each cotangent of `gs` added at its index.

    The optimiser writes it for a sum of a cotangent of a container and the cotangents
    of some of its items (the rewrite rule `sums.items_added`), such as a loop's list
    of states read and written by index: the sum then costs a copy of the list, not a
    cotangent for every item made per read and added item by item.
    """
    if type(x) is np.ndarray and _adds_in_place(total, gs, x):
        total = total.copy()
        _add_parts(total, gs, indices)
        return total
    if (gs is ZERO or total is ZERO or not isinstance(x, _CONTAINERS)
            or type(total) is not (list if type(x) is ListVersion else type(x))):
        return add(total, unindex_all(gs, x, indices))
    items = list(total) if isinstance(total, tuple) else total.copy()
    _add_items(items, gs, x, indices)
    return tuple(items) if isinstance(total, tuple) else items


def add_at_into(total, gs, x, indices):
    """`add_at(total, gs, x, indices)`, adding into `total` itself when it and `x` are
    lists, dicts or float arrays: a loop's own copy of a cotangent (`mutation.copied`)
    whose earlier versions nothing reads (`compiler.optimize.in_place_lists`). A
    list's or dict's items are replaced, never changed in place."""
    if (type(total) is list and type(x) in _LISTS or type(total) is dict is type(x)) and (
            gs is not ZERO):
        _add_items(total, gs, x, indices)
        return total
    if type(total) is np.ndarray and type(gs) is tuple and len(gs) == 1 and (
            type(indices[0]) is int and type(gs[0]) in _FLOATS and total.dtype == np.float64
            and type(x) is np.ndarray and total.shape == x.shape):  # a number, the common case
        total[indices[0]] += gs[0]
        return total
    if type(x) is np.ndarray and _adds_in_place(total, gs, x):
        _add_parts(total, gs, indices)
        return total
    return add_at(total, gs, x, indices)


def _adds_in_place(total, gs, x):
    """Whether each cotangent of parts `gs` of float array `x` adds into `total`, an
    array cotangent of `x` of its shape and dtype, giving `add(total, unindex_all(gs,
    x, indices))`: they are floats or float arrays no wider than `x`'s dtype."""
    if not (type(total) is np.ndarray and total.shape == x.shape and type(gs) is tuple and (
            total.dtype is x.dtype or total.dtype == x.dtype) and x.dtype.kind == "f"):
        return False
    for g in gs:
        kind = type(g)
        if not (g is ZERO or kind is float or kind is np.float64 or (
                kind is np.ndarray or isinstance(g, np.floating)) and g.dtype.kind == "f"
                and g.dtype.itemsize <= x.dtype.itemsize):
            return False
    return True


def _add_parts(total, gs, indices):
    """Add each cotangent of `gs` into array `total` at its index (repeated rows of an
    index array adding up)."""
    for g, index in zip(gs, indices):
        if g is ZERO:
            continue
        if type(index) is int or _is_basic_index(index):
            total[index] += g
        else:
            scatter_add(total, index, g)


def unindex_tiles(gs, x, indices, axis):
    """`unindex_all(gs, x, indices)` for slices of `x` along `axis` (the axes before it
    taken whole) that the optimiser found to follow one another in this order, from
    the start of the axis to its end (`slice_chains`): when each one's stop is the next
    one's start, and these are ints increasing within the axis, the parts joined.
    Its transpose is `indexed_all`.

    The slices then tile the axis, none empty, so the joined parts have `x`'s shape
    exactly when each has its slice's (a part broadcast to its slice is shorter).
    Parts that do not join (`ZERO`, floats, other shapes) are scattered by `unindex_all`.
    """
    if gs is ZERO:
        return ZERO
    slices = [index[axis] for index in indices] if axis else indices
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    at, size = 0, shape[axis]
    for before, after in zip(slices, slices[1:]):
        bound = before.stop
        if type(bound) is not int or not at < bound < size or after.start != bound:
            return unindex_all(gs, x, indices)
        at = bound
    try:
        joined = np.concatenate(gs, axis)
    except (TypeError, ValueError):
        return unindex_all(gs, x, indices)
    return joined if joined.shape == shape else unindex_all(gs, x, indices)


def _rows(gs, x, indices):
    """`(index, values)`: the rows `gs` (not `ZERO`) of array `x` at the int `indices`
    stacked, to scatter at once (a loop's cotangents of the rows it read, each row
    its own term, `loop_sums`); None when they are not all such rows."""
    row_shape = x.shape[1:]
    kept, at = [], []
    for g, index in zip(gs, indices):
        if g is ZERO:
            continue
        if not is_int(index) or not (
                type(g) is np.ndarray and g.shape == row_shape
                or not row_shape and type(g) is float):
            return None
        kept.append(g)
        at.append(index)
    if not kept:
        return None
    return np.array(at, dtype=np.intp), np.stack(kept) if row_shape else np.array(kept)


def _tile(gs, x, indices):
    """Whether `indices` cover array `x` once each, as slices (with unit step) or ints
    along one axis (the last they index; the axes before it taken whole), the gates of
    an LSTM cell or the columns of a table, and `gs` are arrays or floats of `x`'s
    dtype: then `unindex_all` writes each into an empty array."""
    dtype, shape, spans = x.dtype, x.shape, []
    first = indices[0] if indices else None
    axis = len(first) - 1 if type(first) is tuple else 0
    if axis >= len(shape):
        return False
    size = shape[axis]
    for g, index in zip(gs, indices):
        if type(g) is np.ndarray:
            if not (g.dtype is dtype or g.dtype == dtype):
                return False
        elif type(g) is not float or dtype.kind != "f":
            return False
        if axis:
            if type(index) is not tuple or len(index) != axis + 1:
                return False
            for lead in index[:axis]:
                if type(lead) is not slice or lead != _WHOLE:
                    return False
            index = index[axis]
        if type(index) is slice:
            start, stop, step = index.indices(size)
            if step != 1:
                return False
        elif type(index) is int and -size <= index < size:
            start = index % size
            stop = start + 1
        else:
            return False
        spans.append((start, stop))
    spans.sort()
    reached = 0
    for start, stop in spans:
        if start != reached:
            return False
        reached = max(stop, start)
    return reached == size


_WHOLE = slice(None)
# Below this many numbers, `_tile` costs about what writing the parts saves.
_TILED = 1024


def indexed_all(h, indices):
    """The transpose of `unindex_all`: the item of `h` at each index (`ZERO` at a key a
    dict does not hold, which `unindex_all` dropped: see `_add_items`)."""
    if h is ZERO:
        return ZERO
    if isinstance(h, dict):
        return tuple(h.get(index, ZERO) for index in indices)
    return tuple(h[index] for index in indices)


def _scattered(g, x, index):
    """`g` placed at `index` in zeros shaped like array `x`, repeated indices adding up."""
    out = _zeros_for(g, x)
    if _is_basic_index(index):
        out[index] = g
    else:
        scatter_add(out, index, g)
    return out


def _zeros_for(g, x):
    """Zeros shaped like `x`, of the dtype of `x` and the cotangent `g` put into them
    (`x`'s own, without asking NumPy, for a float or a value of that dtype)."""
    if type(x) is np.ndarray and (type(g) is float or isinstance(
            g, (np.ndarray, np.generic)) and g.dtype == x.dtype):
        return np.zeros(x.shape, x.dtype)
    return np.zeros(np.shape(x), np.result_type(x, g))


def _is_basic_index(index):
    if type(index) is not tuple:
        return index is None or index is Ellipsis or isinstance(index, _BASIC)
    for part in index:  # noqa: SIM110 (a loop is faster than all() on this hot path)
        if not (part is None or part is Ellipsis or isinstance(part, _BASIC)):
            return False
    return True


_BASIC = (int, np.integer, slice)


def repack(x, items):
    """The cotangent of `x` from the cotangents of `items` unpacked from it (`a, b = x`)."""
    if items is ZERO:
        return ZERO
    if isinstance(x, list):
        return list(items)
    if isinstance(x, np.ndarray):
        return np.stack([np.zeros_like(row) if g is ZERO else g for g, row in zip(items, x)])
    return tuple(items)


def unrepack(h, items):
    """The transpose of `repack`: the cotangent of each item from that of the container."""
    if h is ZERO:
        return ZERO
    return tuple(h[i] for i in range(len(items)))


def unconcat(g, a, b):
    """The cotangents of tuples or lists `a` and `b` from that of `a + b`."""
    if g is ZERO:
        return ZERO
    return g[: len(a)], g[len(a) :]


def reconcat(h, a, b):
    """The transpose of `unconcat`: the cotangent of `a + b` from those of `a` and `b`."""
    if h is ZERO:
        return ZERO
    parts = [[ZERO] * len(x) if ct is ZERO else list(ct) for ct, x in zip(h, (a, b))]
    items = parts[0] + parts[1]
    return tuple(items) if isinstance(a, tuple) else items


def repeated(items, count):
    """`items * count` for a tuple or list `items` and an int `count` (the interpreter
    calls a repetition so where the kinds tell it from a product)."""
    return items * count


def unrepeated(g, items, count):
    """The cotangent of tuple or list `items` from that of `items * count`: each item's
    is the sum of its copies'."""
    if g is ZERO:
        return ZERO
    size = len(items)
    sums = [add_all(tuple(g[i::size])) for i in range(size)]
    return tuple(sums) if isinstance(items, tuple) else sums


def rerepeated(h, count):
    """The transpose of `unrepeated`: the cotangent of the items repeated."""
    if h is ZERO:
        return ZERO
    return h * count


def unmapping(g, source):
    """The cotangent of `source` from that of `dict(source)`: a dict for a dict, a
    list of `(ZERO, cotangent)` pairs for key-value pairs."""
    if g is ZERO or isinstance(source, dict):
        return g
    return [(ZERO, g.get(key, ZERO)) for key, _ in source]


def remapping(h, source):
    """The transpose of `unmapping`."""
    if h is ZERO or isinstance(source, dict):
        return h
    return {key: pair[1] for (key, _), pair in zip(source, h)}


def unget(g, mapping, key):
    """The cotangent of dict `mapping` from the cotangent `g` of `mapping.get(key, default)`:
    `g` at `key` when `mapping` holds it, else `ZERO` (the default was taken)."""
    return unindex(g, mapping, key) if key in mapping else ZERO


def reget(h, mapping, key):
    """The transpose of `unget`: item `key` of `h`, shaped like `mapping`, when `mapping`
    holds the key, else `ZERO`."""
    return ZERO if h is ZERO or key not in mapping else h[key]


def unget_default(g, mapping, key):
    """The cotangent of the default of `mapping.get(key, default)` from its cotangent `g`:
    `g` when `mapping` does not hold `key`, else `ZERO`. Its own transpose."""
    return ZERO if key in mapping else g


def unmerged_left(g, a, b):
    """The cotangent of dict `a` in the merge `a | b` from the cotangent `g` of the merge:
    `g` at the keys `b` does not hold (`b`'s give their values)."""
    if g is ZERO:
        return ZERO
    _check_dicts(a, b)
    return {k: ZERO if k in b else g[k] for k in a}


def unmerged_right(g, a, b):
    """The cotangent of dict `b` in the merge `a | b` from the cotangent `g` of the merge."""
    if g is ZERO:
        return ZERO
    _check_dicts(a, b)
    return {k: g[k] for k in b}


def _check_dicts(a, b):
    if not (isinstance(a, dict) and isinstance(b, dict)):
        raise TransformError(f"`|` of a {type(a).__name__} and a {type(b).__name__} with "
                             "differentiable values: pullback differentiates the merge of "
                             "two dicts", construct="| operator")


def merged(ta, tb, a, b):
    """The tangent of the merge `a | b` of dicts from the tangents `ta` of `a` and `tb` of
    `b`; the transpose of `unmerged_left` and `unmerged_right`."""
    if ta is ZERO and tb is ZERO:
        return ZERO
    _check_dicts(a, b)
    return {k: (ZERO if tb is ZERO else tb[k]) if k in b else (ZERO if ta is ZERO else ta[k])
            for k in {**a, **b}}


def unstar(g, parts, starred):
    """The cotangents of the parts of `(a, *xs, b)` from the cotangent `g` of the result.

    `starred[i]` says whether `parts[i]` was unpacked (`*xs`).
    """
    result, start = [], 0
    for part, is_starred in zip(parts, starred):
        end = start + (len(part) if is_starred else 1)
        if g is ZERO:
            result.append(ZERO)
        else:
            result.append(repack(part, g[start:end]) if is_starred else g[start])
        start = end
    return tuple(result)


def restar(h, parts, starred):
    """The transpose of `unstar`: the cotangent of `(a, *xs, b)` from those of its parts."""
    if h is ZERO:
        return ZERO
    items = []
    for ct, part, is_starred in zip(h, parts, starred):
        if not is_starred:
            items.append(ct)
        elif ct is ZERO:
            items.extend([ZERO] * len(part))
        else:
            items.extend(ct[i] for i in range(len(part)))
    return tuple(items)


def undict(g, parts, keys):
    """The cotangents of the parts of `{k: v, **d}` from the cotangent `g` of the result.

    `keys[i]` is the key of `parts[i]`, or None for a dict unpacked with `**`;
    an item that a later part overrides gets `ZERO`.
    """
    result = []
    for i, (key, part) in enumerate(zip(keys, parts)):
        later = _keys_after(parts, keys, i)
        if key is None:
            result.append({k: ZERO if g is ZERO or k in later else g[k] for k in part})
        else:
            result.append(ZERO if g is ZERO or key in later else g[key])
    return tuple(result)


def redict(h, parts, keys):
    """The transpose of `undict`: the cotangent of `{k: v, **d}` from those of its parts."""
    if h is ZERO:
        return ZERO
    result = {}
    for i, (ct, part, key) in enumerate(zip(h, parts, keys)):
        later = _keys_after(parts, keys, i)
        if key is not None and key not in later:
            result[key] = ct
        elif key is None:
            result.update({k: ZERO if ct is ZERO else ct[k] for k in part if k not in later})
    return result


def _keys_after(parts, keys, i):
    later = set()
    for key, part in zip(keys[i + 1 :], parts[i + 1 :]):
        later.update(part if key is None else (key,))
    return later


def unroll(cotangents, captured):
    """The cotangents of the variables read by a group of recursive closures.

    A closure that calls itself (or others of its group) has an environment
    cotangent that holds, for each call it made, the environment cotangent of
    the callee, nested as deep as the recursion went.

    Args:
      cotangents: the cotangent of each closure of the group, by name.
      captured: the names each closure reads, in `co_freevars` order.

    Returns:
      The summed cotangent of each variable read that is not in the group.
    """
    if cotangents is ZERO:
        return ZERO
    totals = {var: ZERO for names in captured.values() for var in names if var not in captured}
    pending = list(cotangents.items())
    while pending:
        name, ct = pending.pop()
        if ct is ZERO:
            continue
        for var, item in zip(captured[name], ct):
            if var in captured:
                pending.append((var, item))
            else:
                totals[var] = add(totals[var], item)
    return totals


def reroll(h, cotangents, captured):
    """The transpose of `unroll`: `h`'s totals, placed as `cotangents` nests them."""
    if h is ZERO or cotangents is ZERO:
        return ZERO
    return {name: _reroll(ct, name, h, captured) for name, ct in cotangents.items()}


def _reroll(ct, name, h, captured):
    if ct is ZERO:
        return ZERO
    return tuple(_reroll(item, var, h, captured) if var in captured else h[var]
                 for var, item in zip(captured[name], ct))


def unstack(g, xs, axis=0):
    """The cotangents of the arrays `xs` from the cotangent `g` of `np.stack(xs, axis)`."""
    if g is ZERO:
        return ZERO
    g = concrete(g)  # a deferred sum made once, not once per item
    return [np.take(g, i, axis=axis) for i in range(len(xs))]


def restack(h, xs, axis=0):
    """The transpose of `unstack`."""
    if h is ZERO:
        return ZERO
    return np.stack(_filled(h, xs), axis=axis)


def unconcatenate(g, xs, axis=0):
    """The cotangents of the arrays `xs` from the cotangent of `np.concatenate(xs, axis)`."""
    if g is ZERO:
        return ZERO
    if axis is None:
        ends = np.cumsum([np.size(x) for x in xs])[:-1]
        return [np.reshape(part, np.shape(x)) for part, x in zip(np.split(g, ends), xs)]
    lead = (slice(None),) * (axis % (g.ndim if type(g) is np.ndarray else np.ndim(g)))
    parts, start = [], 0
    for x in xs:
        end = start + (x.shape if type(x) is np.ndarray else np.shape(x))[axis]
        parts.append(g[(*lead, slice(start, end))])
        start = end
    return parts


def reconcatenate(h, xs, axis=0):
    """The transpose of `unconcatenate`."""
    if h is ZERO:
        return ZERO
    parts = _filled(h, xs)
    if axis is None:
        return np.concatenate([np.ravel(p) for p in parts])
    return np.concatenate(parts, axis=axis)


def _filled(cotangents, xs):
    return [np.zeros(np.shape(x)) if ct is ZERO else ct for ct, x in zip(cotangents, xs)]


def unarray(g, x):
    """The cotangent of (nested) list or tuple `x` from the cotangent of `np.array(x)`."""
    if g is ZERO:
        return ZERO
    if isinstance(x, (list, tuple)):
        if type(g) is np.ndarray and g.ndim == 1 and set(map(type, x)) <= _FLOAT_TYPES:
            items = g.tolist()  # floats: the cotangents of floats, and faster to add
        else:
            items = [unarray(gi, xi) for gi, xi in zip(g, x)]
        return items if isinstance(x, list) else tuple(items)
    return unbroadcast(g, x)


def uncast(g, x, z):
    """The cotangent of array `x` from that of `z = x.astype(dtype)`: none through a
    cast to integers or booleans, whose derivative is zero."""
    if g is ZERO or not np.issubdtype(np.result_type(z), np.inexact):
        return ZERO
    return unbroadcast(g, x)


def rearray(h, x):
    """The transpose of `unarray`: an array from the cotangents of `x`'s leaves."""
    if h is ZERO:
        return ZERO
    return np.array(_array_leaves(h, x))


def _array_leaves(h, x):
    if isinstance(x, (list, tuple)):
        return [_array_leaves(ZERO if h is ZERO else hi, xi) for hi, xi in zip(
            h if h is not ZERO else [ZERO] * len(x), x)]
    return np.zeros(np.shape(x)) if h is ZERO else h


def reshape_items(g, xs):
    """The items of cotangent `g` reshaped like the items of `xs`.

    It is its own transpose: the rule of `reshape_items(g, xs)` is `reshape_items(h, g)`.
    """
    if g is ZERO:
        return ZERO
    return [reshape_like(item, x) for item, x in zip(g, xs)]


def undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """The cotangent of `x` from the cotangent `g` of `np.diagonal(x, offset, axis1, axis2)`:
    `g` on that diagonal of zeros. Its transpose is `np.diagonal`."""
    if any_zero(g, x):
        return ZERO
    out = _zeros_for(g, x)
    rows = np.arange(np.shape(g)[-1]) + max(-offset, 0)
    np.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, rows + offset] = g
    return out


# The `un...` maps below are written in the subset of Python that pullback
# transforms, from maps that have rules: they need no rule of their own.


def undiag(g, v, k=0):
    """The cotangent of `v` from the cotangent `g` of `np.diag(v, k)`."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return undiagonal(g, v, k)


def unitem(g, x, index=()):
    """The cotangent of `x` from the cotangent `g` of `x.item(*index)`: `g` in `x`'s shape
    when `index` is empty (`x` holds one number), else at the element `index` names (a
    flat index, or one index per axis)."""
    if not index:
        return unreduce(g, x)
    if len(index) == 1 and isinstance(index[0], tuple):
        return unitem(g, x, index[0])
    if len(index) == 1:
        return reshape_like(unindex(g, np.ravel(x), index[0]), x)
    return unindex(g, x, tuple(index))


def reitem(h, x, index=()):
    """The transpose of `unitem`: the element of `h` (shaped like `x`) that `x.item(*index)`
    reads."""
    if h is ZERO:
        return ZERO
    if not index:
        return np.sum(h)
    if len(index) == 1 and isinstance(index[0], tuple):
        return reitem(h, x, index[0])
    if len(index) == 1:
        return np.ravel(h)[index[0]]
    return h[tuple(index)]


def untake(g, x, index, axis=None):
    """The cotangent of `x` from the cotangent `g` of `x[index]`, where `index` (from
    `take_index` or `repeat_index`) selects along `axis`, or in `x` flattened when
    `axis` is None."""
    if axis is None:
        return reshape_like(unindex(g, np.ravel(x), index), x)
    return unindex(g, x, index)


def untile(g, x, reps):
    """The cotangent of `x` from the cotangent `g` of `np.tile(x, reps)`: the sum of the tiles."""
    if any_zero(g, x):
        return ZERO
    tiles = tiled_shape(np.shape(x), reps)
    summed = np.sum(np.reshape(g, tiles), axis=tuple(range(0, len(tiles), 2)))
    return np.reshape(summed, np.shape(x))


def undiff(g, n=1, axis=-1):
    """The cotangent of `a` from the cotangent `g` of `np.diff(a, n, axis)`."""
    if g is ZERO:
        return ZERO
    return pow(-1, n) * np.diff(np.pad(g, axis_padding(np.ndim(g), axis, n)), n, axis)


def unpad(g, x, pad_width, mode="constant"):
    """The cotangent of `x` from the cotangent `g` of `np.pad(x, pad_width, mode)`."""
    if any_zero(g, x):
        return ZERO
    index = pad_index(np.shape(x), pad_width, mode)
    if mode == "constant":
        return g[index]
    return unindex(g, x, index)


# Non-differentiable bookkeeping: indices and shapes.


def take_index(shape, indices, axis=None, mode="raise"):
    """The index selecting `np.take(x, indices, axis, mode=mode)` from an `x` of
    `shape` (from `x` flattened when `axis` is None)."""
    length = int(np.prod(shape)) if axis is None else shape[axis]
    indices = np.clip(indices, 0, length - 1) if mode == "clip" else np.asarray(indices) % length
    return (slice(None),) * (0 if axis is None else axis % len(shape)) + (indices,)


def repeat_index(shape, repeats, axis=None):
    """The index selecting `np.repeat(x, repeats, axis)` from an `x` of `shape`
    (from `x` flattened when `axis` is None)."""
    length = int(np.prod(shape)) if axis is None else shape[axis]
    return take_index(shape, np.repeat(np.arange(length), repeats), axis)


def along_axis(indices, shape, axis=-1):
    """The index selecting `np.take_along_axis(x, indices, axis)` from an `x` of `shape`."""
    if axis is None:
        return np.unravel_index(indices, shape)
    result_shape = list(shape)
    result_shape[axis] = np.shape(indices)[axis]
    index = list(np.indices(result_shape, sparse=True))
    index[axis] = indices
    return tuple(index)


def tiled_shape(shape, reps):
    """The shape of `np.tile(x, reps)`, for an `x` of `shape`, split into
    `(reps[0], shape[0], reps[1], shape[1], ...)`."""
    reps = tuple(np.atleast_1d(reps))
    ndim = max(len(shape), len(reps))
    shape = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + reps
    return tuple(n for pair in zip(reps, shape) for n in pair)


def axis_padding(ndim, axis, width):
    """The `pad_width` of `np.pad` adding `width` elements at both ends of `axis`."""
    widths = [(0, 0)] * ndim
    widths[axis] = (width, width)
    return widths


_COPYING_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad_index(shape, pad_width, mode="constant"):
    """For `np.pad(x, pad_width, mode)` of an `x` of `shape`: in constant mode the
    slices of the result that hold `x`, in the modes that copy elements of `x` the
    index of `x` that gives the result."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (len(shape), 2))
    if mode == "constant":
        return tuple(slice(before, before + n) for (before, _), n in zip(widths, shape))
    if mode not in _COPYING_PAD_MODES:
        raise TypeError(f"the derivative rule of numpy.pad covers the modes constant, "
                        f"{', '.join(_COPYING_PAD_MODES)}, not {mode!r}")
    return np.ix_(*[np.pad(np.arange(n), tuple(w), mode=mode) for n, w in zip(shape, widths)])


def joined_parts(z, xs, axis):
    """The parts of `z` that the arrays `xs` became when `np.vstack`, `np.hstack`,
    `np.dstack` or `np.column_stack` joined them along `axis` (after giving them unit
    axes): arrays of the shapes `np.concatenate` joined."""
    across = np.size(z) // max(np.shape(z)[axis], 1)
    ends = np.cumsum([np.size(x) // max(across, 1) for x in xs])[:-1]
    return np.split(z, ends, axis=axis)


def horizontal_axis(x):
    """The axis along which `np.hstack` joins and `np.hsplit` splits: 0 for vectors, else 1."""
    return 0 if np.ndim(x) <= 1 else 1


def rolled_axis(ndim, axis, start=0):
    """Where `np.rollaxis(x, axis, start)` moves `axis` of an `x` of rank `ndim`."""
    start = start + ndim if start < 0 else start
    return start - 1 if axis % ndim < start else start


def linspace_fractions(num, endpoint, axis, ndim):
    """How far each point of `np.linspace(start, stop, num, endpoint, axis=axis)` lies
    from start toward stop (0 to 1), shaped to broadcast against the result (of rank `ndim`)."""
    shape = [1] * ndim
    shape[axis] = num
    return np.reshape(np.linspace(0.0, 1.0, num, endpoint=endpoint), shape)
