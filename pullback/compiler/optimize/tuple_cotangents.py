"""Stage 4 (optimize): the cotangents of tuples of known length written as displays.

A function reading parts of a tuple (`w_out, b_out = params[5:]`) gets from the
reverse rules a tuple of `ZERO`s made at run time with the part's cotangents in
place, and a sum of such tuples for each part read::

    dparams = unindex((dw_out, db_out), params, slice(5, None))
    ...
    dparams = add(dparams, unindex((dw_node, db_node), params, slice(3, 5)))

When the kind of `params` says it is a tuple of 7 items and the index is a
constant, the cotangent is the display a person writes, and the sum of two
displays the display of their items' sums, `ZERO` dropping out::

    dparams = (ZERO, ZERO, ZERO, dw_node, db_node, dw_out, db_out)

An item read from a name holding a display (`dtimes = dleaf_state[0]`, the cotangent
of a returned pair of an inlined callee) is the item itself (`dtimes = dh`).
A display stands for a name (`dparams` above, read in a later block) only while
nothing it reads, nor the name, is assigned again.
"""

from ...runtime.cotangents import ZERO, add
from ...runtime.structures import unindex
from ..analysis import kinds
from ..syntax import nodes
from .slice_chains import slice_args


def fold_tuples(statements, bindings, kinds_of):
    """`statements` (a block of a pullback, and the blocks nested in it) with the
    cotangents of tuples of known length (`kinds_of`: the kind of each variable)
    written as displays where they are made by `unindex` and `add`, and the items read
    from displays as those items."""
    return _Fold(bindings, kinds_of).block(statements, {})


class _Fold:
    def __init__(self, bindings, kinds_of):
        self.scatter = bindings.name_of(unindex)
        self.add = bindings.name_of(add)
        self.slice = bindings.name_of(slice)
        self.zero = bindings.object("ZERO", ZERO)
        self.kinds = kinds_of

    def block(self, statements, known):
        """`statements` folded, `known` mapping names to the items of the display they
        hold (updated to what holds after the block)."""
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                stmt = nodes.replaced(stmt, body=self.block(stmt.body, dict(known)),
                                      orelse=self.block(stmt.orelse, dict(known)))
            target = nodes.single_target(stmt)
            read = self.item_read(stmt.value, known) if target is not None else None
            if read is not None:
                stmt = nodes.assign(target, read, nodes.lineno_of(stmt))
            items = self.items(stmt.value, known) if target is not None else None
            if items is not None and not isinstance(stmt.value, nodes.Tuple):
                stmt = nodes.assign(target, nodes.tuple_(items), nodes.lineno_of(stmt))
            _forget(known, nodes.stores(stmt))
            if items is not None and target not in nodes.reads(stmt.value):
                known[target] = items
            out.append(stmt)
        return out

    def items(self, expr, known):
        """The items of the tuple `expr` stands for, as expressions, when it is a display,
        a name holding one, `unindex` of one into a tuple of known length at a constant
        index, or `add` of two; else None."""
        if isinstance(expr, nodes.Tuple) and not any(
                isinstance(e, nodes.Starred) for e in expr.elts):
            return [nodes.clone(e) for e in expr.elts]
        if isinstance(expr, nodes.Name):
            return [nodes.clone(e) for e in known[expr.id]] if expr.id in known else None
        if not isinstance(expr, nodes.Call) or expr.keywords or len(expr.args) not in (2, 3):
            return None
        if self.scatter is not None and nodes.is_name(expr.func, self.scatter) and len(
                expr.args) == 3:
            return self.scattered(*expr.args, known)
        if self.add is not None and nodes.is_name(expr.func, self.add) and len(expr.args) == 2:
            left, right = (self.items(arg, known) for arg in expr.args)
            if left is not None and right is not None and len(left) == len(right):
                return [self.plus(a, b) for a, b in zip(left, right)]
        return None

    def item_read(self, expr, known):
        """The item `expr` reads when it is `name[i]` of a display held by `name`, a
        constant `i` and a name or `ZERO` there (never an expression computed twice);
        else None."""
        if not (isinstance(expr, nodes.Subscript) and isinstance(expr.value, nodes.Name)
                and expr.value.id in known):
            return None
        items = known[expr.value.id]
        position = _positions(expr.slice, self.slice, len(items))
        if not isinstance(position, int) or not isinstance(items[position], nodes.Name):
            return None
        return nodes.clone(items[position])

    def scattered(self, g, x, index, known):
        """The items of `unindex(g, x, index)` for a tuple `x` of known length."""
        kind = self.kinds.get(x.id) if isinstance(x, nodes.Name) else None
        if not isinstance(kind, kinds.Container) or kind.type is not tuple:
            return None
        positions = _positions(index, self.slice, len(kind.items))
        if positions is None:
            return None
        items = [nodes.name(self.zero) for _ in kind.items]
        if isinstance(positions, int):
            items[positions] = nodes.clone(g)
            return items
        parts = self.items(g, known)
        if parts is None or len(parts) != len(positions):
            return None
        for position, part in zip(positions, parts):
            items[position] = part
        return items

    def plus(self, a, b):
        """`add(a, b)`, or the one that is not `ZERO`."""
        if nodes.is_name(a, self.zero):
            return b
        if nodes.is_name(b, self.zero):
            return a
        return nodes.call(nodes.name(self.add), [a, b])


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


def _forget(known, stored):
    """Drop from `known` the names assigned in `stored` and the displays reading them."""
    for name in [n for n, items in known.items()
                 if n in stored or any(nodes.reads(item) & stored for item in items)]:
        del known[name]
