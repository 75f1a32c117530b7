"""Linear maps that move cotangents between containers, each with its transpose.

The reverse rules of indexing, unpacking, starred literals, `**` dicts,
recursive closures, `np.stack`, `np.concatenate` and `np.array` use the
`un...` maps; the `re...` maps are their transposes, which the derivative rules
of the `un...` maps use (`templates/pullback_helpers.py`). So every map here
has a rule, and derivatives of derivatives stay inside what pullback
transforms. All of them map `ZERO` to `ZERO`.
"""

import numpy as np

from .cotangents import ZERO, add, unbroadcast


def unindex(g, x, index):
    """The cotangent of `x` from the cotangent `g` of `x[index]`.

    For arrays this scatters `g` into zeros, adding repeated indices; for
    tuples, lists and dicts it puts `g` at `index` and `ZERO` at the other items.
    Its transpose is indexing: `h[index]`.
    """
    if g is ZERO or x is ZERO:
        return ZERO
    if isinstance(x, dict):
        return {k: g if k == index else ZERO for k in x}
    if isinstance(x, (tuple, list)):
        items = [ZERO] * len(x)
        if isinstance(index, slice):
            for i, gi in zip(range(*index.indices(len(x))), g):
                items[i] = gi
        else:
            items[index] = g
        return items if isinstance(x, list) else tuple(items)
    out = np.zeros(np.shape(x), dtype=np.result_type(x, g))
    if _is_basic_index(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def _is_basic_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               for p in parts)


def repack(x, items):
    """The cotangent of `x` from the cotangents of `items` unpacked from it (`a, b = x`)."""
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
    ends = np.cumsum([np.shape(x)[axis] for x in xs])[:-1]
    return np.split(g, ends, axis=axis)


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
        items = [unarray(gi, xi) for gi, xi in zip(g, x)]
        return items if isinstance(x, list) else tuple(items)
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
