"""Rewrite rules on the cotangents of tuples of known length: displays.

A function reading parts of a tuple (`w_out, b_out = params[5:]`) gets from the
reverse rules a tuple of `ZERO`s made at run time with the part's cotangents in
place, and a sum of such tuples::

    dparams = ANY_SUM(unindex((dw_out, db_out), params, slice(5, None)),
                      unindex((dw_node, db_node), params, slice(3, 5)))

When the kind of `params` says it holds 7 items and the index is a constant, each
scatter is a display (`unindexed_tuple`), and the sum of displays the display of
their items' sums (`sum_of_displays`), which is what a person writes::

    dparams = (ZERO, ZERO, ZERO, dw_node, db_node, dw_out, db_out)

An item read from a name bound to a display (`dtimes = dleaf_state[0]`, the
cotangent of a returned pair of an inlined callee) is the item itself
(`item_of_display`).
"""

from ...runtime.structures import unindex
from .. import ir
from ..analysis import kinds
from ..syntax import nodes
from .slice_chains import slice_args


def unindexed_tuple(node, context):
    """`unindex(g, t, 1)` -> `(ZERO, g, ZERO)` for a tuple `t` of 3 items; for a slice,
    the items of `g`, a display or a name bound to one."""
    if not context.calls(node, unindex) or len(node.args) != 3:
        return None
    g, x, index = node.args
    kind = context.kinds.get(x.id) if nodes.is_name(x) else None
    if not isinstance(kind, kinds.Container) or kind.type is not tuple:
        return None
    positions = _positions(index, context.bindings.name_of(slice), len(kind.items))
    if positions is None:
        return None
    items = [nodes.name(context.zero) for _ in kind.items]
    if isinstance(positions, int):
        items[positions] = nodes.clone(g)
        return nodes.tuple_(items)
    parts = _display(g, context)
    if parts is None or len(parts) != len(positions):
        return None
    for position, part in zip(positions, parts):
        items[position] = nodes.clone(part)
    return nodes.tuple_(items)


def sum_of_displays(node, context):
    """`ANY_SUM((a, b), (c, d))` -> `(ANY_SUM(a, c), ANY_SUM(b, d))`; a term may be a
    name bound to a display of names."""
    if not isinstance(node, ir.Sum):
        return None
    displays = [_display(term, context) for term in node.terms]
    if None in displays or len({len(items) for items in displays}) != 1:
        return None
    return nodes.tuple_([
        ir.sum_of([item for item in column if not context.is_zero(item)], ir.ANY, context.zero)
        for column in zip(*displays)])


def item_of_display(node, context):
    """`t[1]` -> `b` where `t = (a, b)`, the item being a name (never an expression
    computed twice)."""
    if not (isinstance(node, nodes.Subscript) and nodes.is_name(node.value)):
        return None
    items = _display(node.value, context)
    if items is None:
        return None
    position = _positions(node.slice, context.bindings.name_of(slice), len(items))
    if not isinstance(position, int) or not isinstance(items[position], nodes.Name):
        return None
    return nodes.clone(items[position])


def _display(node, context):
    """The items of the tuple display `node` is, or that a name bound to a display of
    names stands for; else None."""
    if isinstance(node, nodes.Tuple) and not any(
            isinstance(e, nodes.Starred) for e in node.elts):
        return node.elts
    bound = context.bound(node)
    if isinstance(bound, nodes.Tuple) and all(isinstance(e, nodes.Name) for e in bound.elts):
        return bound.elts
    return None


def _positions(index, slice_name, length):
    """The position (an int) or positions (a range) of a constant index into a tuple of
    `length` items: an int constant, or `slice(start, stop, step)` of int or None
    constants; else None."""
    if isinstance(index, nodes.Constant) and type(index.value) is int:
        return index.value % length if -length <= index.value < length else None
    args = slice_args(index, slice_name)
    if args is None:
        return None
    bounds = []
    for arg in args:
        if not isinstance(arg, nodes.Constant) or type(arg.value) not in (int, type(None)):
            return None
        bounds.append(arg.value)
    return range(length)[slice(*bounds)]
