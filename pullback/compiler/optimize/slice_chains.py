"""Slices of an array that follow one another along an axis, found in the code.

An LSTM cell reads its gates as `gates[:n]`, `gates[n:2 * n]`, ..., `gates[4 * n:]`;
their cotangents, in that order, joined (`np.concatenate`) are the cotangent of
`gates`, which is what a person writes. The rewrite rule `sums.joined_slices` asks
`chain` for that order, and writes `unindex_tiles` for `unindex_all` when there is one.

A chain starts at a slice from the start of the axis and goes on from each stop to
the slice starting there, to a slice going to the end. A stop and a start are taken
to be the same number when they are the same expression of constants and of names
the function binds once (ANF binds `2 * n` once per use: `v_2_times_n_1 = 2 * n`,
`v_2_times_n_2 = 2 * n`). That only chooses the order: `unindex_tiles` checks at run
time that the slices tile the axis and the parts have their shapes, and scatters
them otherwise.
"""

from ..syntax import nodes

_START, _END = "start", "end"


def bound_values(function):
    """`{name: expression}` for the names `function` (a tree, nested functions
    included) binds exactly once: the expression of an assignment, or None for a
    parameter. Names bound more than once, or not at all (globals, cells), are left out.
    """
    counts, values = {}, {}
    for node in nodes.walk(function):
        if isinstance(node, nodes.Name) and isinstance(node.ctx, (nodes.Store, nodes.Param)):
            counts[node.id] = counts.get(node.id, 0) + 1
            values.setdefault(node.id, None)
        elif isinstance(node, nodes.Assign) and nodes.is_name(node.targets[0]):
            values[node.targets[0].id] = node.value
    return {name: values[name] for name, count in counts.items() if count == 1}


def chain(indices, slice_name, values):
    """`(order, axis)`: the positions of `indices` (index expressions, as in `x[index]`)
    in the order of a chain of slices along `axis`, or None when they do not form one.

    Each index is `slice(start, stop)` (a call of `slice_name`), or a tuple of
    whole slices ending with one, all of one length.
    """
    bounds = [_slice_bounds(index, slice_name, values) for index in indices]
    if None in bounds or len({axis for axis, _, _ in bounds}) != 1:
        return None
    starts = {start: position for position, (_, start, _) in enumerate(bounds)}
    if len(starts) != len(bounds):
        return None
    order, at = [], _START
    while at in starts and len(order) < len(bounds):
        order.append(starts[at])
        at = bounds[order[-1]][2]
    return (order, bounds[0][0]) if at == _END and len(order) == len(bounds) else None


def _slice_bounds(index, slice_name, values):
    """`(axis, start, stop)` of a slice along one axis, its bounds as `_key`s, or None."""
    parts = index.elts if isinstance(index, nodes.Tuple) else [index]
    calls = [part for part in parts if _is_slice(part, slice_name)]
    if len(calls) != len(parts):
        return None
    *whole, last = calls
    if any(not _is_none(arg) for part in whole for arg in part.args):
        return None
    start, stop = _key(last.args[0], values), _key(last.args[1], values)
    if start is None or stop is None:
        return None
    return (len(whole), _START if start in ("None", "0") else start,
            _END if stop == "None" else stop)


def slice_args(node, slice_name):
    """`[start, stop, step]` when `node` is `slice(start, stop)` or `slice(start, stop,
    step)` (a call of `slice_name`, as the reverse rules write an index `a:b`), else
    None."""
    if (slice_name is not None and isinstance(node, nodes.Call)
            and nodes.is_name(node.func, slice_name)
            and len(node.args) in (2, 3) and not node.keywords):
        return node.args if len(node.args) == 3 else [*node.args, nodes.constant(None)]
    return None


def _is_slice(node, slice_name):
    args = slice_args(node, slice_name)
    return args is not None and _is_none(args[2])


def _is_none(node):
    return isinstance(node, nodes.Constant) and node.value is None


def _key(expr, values, depth=0):
    """A text equal for expressions of equal value: constants, and names bound once
    replaced by the arithmetic they were assigned; None for anything else."""
    if depth > 20:
        return None
    if isinstance(expr, nodes.Constant):
        return repr(expr.value) if type(expr.value) in (int, type(None)) else None
    if isinstance(expr, nodes.Name):
        if expr.id not in values:
            return None
        value = values[expr.id]
        found = None if value is None else _key(value, values, depth + 1)
        return expr.id if found is None else found
    if isinstance(expr, nodes.BinOp):
        left, right = _key(expr.left, values, depth + 1), _key(expr.right, values, depth + 1)
        if left is None or right is None:
            return None
        return f"({left} {type(expr.op).__name__} {right})"
    if isinstance(expr, nodes.UnaryOp):
        operand = _key(expr.operand, values, depth + 1)
        return None if operand is None else f"({type(expr.op).__name__} {operand})"
    return None
