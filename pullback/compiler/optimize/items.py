"""Rewrite rules on the reads of an item of the cotangent of a list, dict or vector:
subscripts.

The reverse rules give the value written by `xs[i] = v` the item of the cotangent of
the list at `i` (`written_item(dxs, i, v, xs_1)`), and the value appended by
`xs.append(v)` its last item (`last_item(dxs)`). The helpers serve arrays too, whose
item they sum back to the value's shape. Where the kinds say the updated value is a
list or dict, or a vector or matrix of floats (whose item is a number, never rounded),
and the index a number or a key (for a matrix, a tuple of two numbers), the read is the
subscript itself (`dxs[i]`, `dxs[-1]`), which `ZERO` answers with `ZERO` as the helpers
do.
"""

from ...runtime import mutation
from ..analysis import kinds
from ..syntax import nodes


def item_read(node, context):
    """`written_item(g, i, v, xs)` -> `g[i]` for a list, tuple, dict, vector or matrix `xs`
    and an index `i` of one of its numbers (`is_item_index`); `last_item(g)` -> `g[-1]`."""
    if context.calls(node, mutation.last_item) and len(node.args) == 1:
        return subscript(node.args[0], nodes.constant(-1))
    if not context.calls(node, mutation.written_item) or len(node.args) != 4:
        return None
    g, index, _, updated = node.args
    kind = context.kinds.get(updated.id) if nodes.is_name(updated) else None
    if not (kinds.is_sequence(kind) or kinds.rank_of(kind) or isinstance(
            kind, kinds.Container) and kind.type is dict) or not is_item_index(
                index, context.kinds, kinds.rank_of(kind)):
        return None
    return subscript(g, index)


def is_item_index(index, kinds_of, rank=None):
    """Whether `index` picks one item of a list, tuple or dict, or one number of an array
    of floats of `rank` axes: a tuple of two numbers for a matrix (a display or a name
    bound to one), else a number or constant key (`is_number`)."""
    if rank != 2:
        return is_number(index, kinds_of)
    if isinstance(index, nodes.Tuple):
        return len(index.elts) == 2 and all(is_number(e, kinds_of) for e in index.elts)
    parts = kinds_of.get(index.id) if nodes.is_name(index) else None
    return isinstance(parts, kinds.Container) and parts.type is tuple and len(
        parts.items) == 2 and all(k.shape == "scalar" and not k.active for k in parts.items)


def is_number(index, kinds_of):
    """Whether the index `index` is an int or str constant or a name of a number that
    does not carry a derivative."""
    if isinstance(index, nodes.Constant):
        return type(index.value) in (int, str)
    kind = kinds_of.get(index.id) if nodes.is_name(index) else None
    return kind is not None and kind.shape == "scalar" and not kind.active


def subscript(value, index, store=False):
    """`value[index]` (a target when `store`)."""
    return nodes.Subscript(value=nodes.clone(value), slice=nodes.clone(index),
                           ctx=nodes.STORE if store else nodes.LOAD)
