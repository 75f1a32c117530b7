"""Stage 4 (optimize): a reduction's cotangent multiplies without being broadcast first.

The rules of `np.log(np.sum(np.exp(v)))` give, one statement each::

    de = unreduce(ds, e)
    dv = de * e

`unreduce` broadcasts the scalar `ds` to an array of `e`'s shape only for the
product to read it. When the broadcast is read once, as a factor of a chain of
products another factor of which has the reduced array's shape (the array itself,
a variable the reverse rules gave its shape token, as `e ** 2`, or its
`extremum_share` from the rule of `np.max`), the scalar is the factor::

    dv = ds * e

Broadcasting multiplies the same numbers, so the result is the same array. This
holds too for reductions along the first axis (`np.sum(e, axis=0)`) and for those
that keep their axes (`keepdims=True`): their cotangents line up with `e`'s axes
from the last, as NumPy lines up operands.
"""

import collections

from ...runtime.cotangents import extremum_share, unreduce
from ..analysis import kinds
from ..syntax import nodes


def scalar_factors(statements, bindings, kinds_of, shapes):
    """`statements` (a block of a pullback, and the blocks nested in it) with the
    broadcasts of reductions' cotangents that only a product reads left out of it
    (`kinds_of`: the kind of each variable; `shapes`: the reverse rules' shape token
    of each, equal for variables of one shape)."""
    broadcast = bindings.name_of(unreduce)
    if broadcast is None:
        return statements
    every = [inner for stmt in statements for inner in nodes.statements(stmt)]
    reads = nodes.read_counts(statements)
    stores = collections.Counter(name for stmt in every for name in nodes.stores(stmt))
    once = {name for name, count in reads.items() if count == 1 and stores[name] == 1}
    share = bindings.name_of(extremum_share)
    return _Factors(broadcast, share, once, kinds_of, shapes).block(statements)


class _Factors:
    def __init__(self, broadcast, share, once, kinds_of, shapes):
        self.broadcast, self.share, self.once = broadcast, share, once
        self.kinds, self.shapes = kinds_of, shapes

    def block(self, statements):
        """`statements` rewritten; a broadcast waits, unwritten, for the statement that
        reads it, and is written after all unless that statement is a product it folds
        into."""
        out, waiting = [], {}
        for stmt in statements:
            if not isinstance(stmt, nodes.Assign):
                _flush(out, waiting, set(waiting))
                out.append(self.nested(stmt))
                continue
            value = self.folded(stmt.value, waiting)
            if value is not stmt.value:
                stmt = nodes.replaced(stmt, value=value)
            if waiting:
                read, stored = nodes.reads(stmt), nodes.stores(stmt)
                _flush(out, waiting, {name for name, (_, _, _, names) in waiting.items()
                                      if name in read or names & stored})
            target = nodes.single_target(stmt)
            scalar = self.reduced(stmt.value)
            if target in self.once and scalar is not None:
                waiting[target] = (stmt, *scalar, nodes.reads(stmt.value))
            else:
                out.append(stmt)
        _flush(out, waiting, set(waiting))
        return out

    def nested(self, stmt):
        """A compound statement with each of its blocks rewritten on its own."""
        fields = {field: self.block(getattr(stmt, field))
                  for field in ("body", "orelse", "finalbody") if getattr(stmt, field, None)}
        return nodes.replaced(stmt, **fields) if fields else stmt

    def reduced(self, value):
        """`(g, x)` when `value` is `unreduce(g, x, ...)` of an array `x` whose
        cotangent `g` broadcasts to `x`'s shape as NumPy broadcasts operands: a whole
        reduction, one along the first axis, or one keeping its axes; else None."""
        if not (isinstance(value, nodes.Call) and nodes.is_name(value.func, self.broadcast)
                and 2 <= len(value.args) <= 4 and not value.keywords):
            return None
        g, x, *options = value.args
        if not _aligned(options):
            return None
        kind = self.kinds.get(x.id) if nodes.is_name(x) else None
        return (g, x) if isinstance(kind, kinds.Kind) and kind.shape == "array" else None

    def shaped_like(self, factor, x):
        """Whether `factor` has the shape of array `x`: it is `x`, an array the reverse
        rules know has `x`'s shape (`np.exp(x)`, `x ** 2`), or the share of each of
        `x`'s items in its max or min (along any axes)."""
        if nodes.is_name(factor):
            token = self.shapes.get(factor.id)
            return factor.id == x.id or token is not None and token != "scalar" and (
                token == self.shapes.get(x.id))
        return (self.share is not None and isinstance(factor, nodes.Call)
                and nodes.is_name(factor.func, self.share) and factor.args
                and nodes.is_name(factor.args[0], x.id))

    def folded(self, expr, waiting):
        """`expr` with each product of a broadcast (written in it, or waiting) and a
        factor of the reduced array's shape made with the cotangent unbroadcast; a
        folded broadcast leaves `waiting`."""
        if isinstance(expr, nodes.BinOp) and isinstance(expr.op, nodes.Mult):
            factors = _factors(expr)
            for factor in factors:
                scalar = self.operand(factor, waiting)
                if scalar is not None and any(self.shaped_like(other, scalar[1])
                                              for other in factors if other is not factor):
                    if nodes.is_name(factor):
                        del waiting[factor.id]
                    return self.folded(_replaced(expr, factor, nodes.clone(scalar[0])), waiting)
        if not (isinstance(expr, nodes.AST) and expr._fields):
            return expr
        fields = {}
        for field in expr._fields:
            value = getattr(expr, field, None)
            if isinstance(value, list):
                new = [self.folded(item, waiting) for item in value]
                if any(a is not b for a, b in zip(new, value)):
                    fields[field] = new
            else:
                new = self.folded(value, waiting)
                if new is not value:
                    fields[field] = new
        return nodes.replaced(expr, **fields) if fields else expr

    def operand(self, operand, waiting):
        """`(g, x)` of a broadcast the operand of a product is or names, else None."""
        if nodes.is_name(operand) and operand.id in waiting:
            return waiting[operand.id][1:3]
        return self.reduced(operand)


def _flush(out, waiting, names):
    """Write the waiting broadcasts among `names`, in the order they were made."""
    for name in [n for n in waiting if n in names]:
        out.append(waiting.pop(name)[0])


def _aligned(options):
    """Whether a reduction's cotangent, given `unreduce`'s `axis` and `keepdims`
    arguments (the defaults left out), lines up with the array's axes from the last:
    the whole array reduced, or its first axis, or axes kept."""
    if not options:
        return True
    if len(options) == 2 and nodes.is_constant(options[1], True):
        return True
    return (nodes.is_constant(options[0], None) or nodes.is_constant(options[0], 0)) and (
        len(options) == 1 or nodes.is_constant(options[1], False))


def _factors(product):
    """The factors of a chain of products (`a * 2 * b`: `a`, `2`, `b`)."""
    if isinstance(product, nodes.BinOp) and isinstance(product.op, nodes.Mult):
        return _factors(product.left) + _factors(product.right)
    return [product]


def _replaced(product, factor, new):
    """The chain of products `product` with its factor `factor` (that node) `new`."""
    if product is factor:
        return new
    if not (isinstance(product, nodes.BinOp) and isinstance(product.op, nodes.Mult)):
        return product
    return nodes.replaced(product, left=_replaced(product.left, factor, new),
                          right=_replaced(product.right, factor, new))
