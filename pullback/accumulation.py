"""Stage 4 (optimize): the cotangents of an array's slices gather in one buffer.

A function that reads several slices of an array (`gates[:, :n]`, `gates[:, n:2 * n]`,
...) gets from the reverse rules one `unindex` per slice, each scattering a slice's
cotangent into a fresh array of zeros, and a sum of them::

    dgates = unindex(dgates_part, gates, (slice(None), slice(n, 2 * n)))
    dgates = dgates + unindex(dgates_part_1, gates, (slice(None), slice(None, n)))

A person would allocate one array and add each slice's cotangent into it. Where the
first array came from `unindex` in the same block and nothing else reads it before
the next sum, the sum becomes `index_add`, which adds into that buffer in place::

    dgates = unindex(dgates_part, gates, (slice(None), slice(n, 2 * n)))
    dgates = index_add(dgates, dgates_part_1, gates, (slice(None), slice(None, n)))
"""

from . import nodes
from .structures import index_add, unindex


def accumulate_in_place(statements, bindings):
    """`statements` (a block of a pullback, and the blocks nested in it) with the
    sums of `unindex` results into a buffer of their own made `index_add`."""
    scatter = bindings.name_of(unindex)
    if scatter is None:
        return statements
    return _Block(scatter, bindings).rewrite(statements)


class _Block:
    def __init__(self, scatter, bindings):
        self.scatter = scatter
        self.bindings = bindings

    def rewrite(self, statements):
        owned = {}  # cotangent name -> the array name its buffer is shaped like
        out = []
        for stmt in statements:
            stmt = self.nested(stmt)
            target = nodes.single_target(stmt)
            accumulated = self.accumulation(stmt, target, owned)
            if accumulated is not None:
                out.append(accumulated)
                continue
            touched = nodes.reads(stmt) | nodes.stores(stmt)
            owned = {d: x for d, x in owned.items() if d not in touched and x not in touched}
            made = self.scattered_into(stmt)
            if made is not None:
                owned[target] = made
            out.append(stmt)
        return out

    def nested(self, stmt):
        if isinstance(stmt, (nodes.If, nodes.For, nodes.While)):
            new = stmt.__class__.__new__(stmt.__class__)
            new.__dict__.update(stmt.__dict__)
            new.body = self.rewrite(stmt.body)
            new.orelse = self.rewrite(stmt.orelse)
            return new
        return stmt

    def scattered_into(self, stmt):
        """For `d = unindex(g, x, index)`, the name `x`."""
        value = stmt.value if isinstance(stmt, nodes.Assign) else None
        if self.is_scatter(value) and nodes.is_name(value.args[1]):
            return value.args[1].id
        return None

    def accumulation(self, stmt, target, owned):
        """`d = index_add(d, g, x, index)` for `d = d + unindex(g, x, index)` when `d`
        holds an array this block scattered into from `x`."""
        if target not in owned or not isinstance(stmt.value, nodes.BinOp):
            return None
        left, op, right = stmt.value.left, stmt.value.op, stmt.value.right
        if not (isinstance(op, nodes.Add) and nodes.is_name(left, target)
                and self.is_scatter(right) and nodes.is_name(right.args[1], owned[target])
                and target not in nodes.reads(right)):
            return None
        add_into = nodes.name(self.bindings.object("index_add", index_add))
        call = nodes.call(add_into, [nodes.name(target)] + right.args[:3])
        return nodes.assign(target, call, nodes.lineno_of(stmt))

    def is_scatter(self, node):
        return (isinstance(node, nodes.Call) and nodes.is_name(node.func, self.scatter)
                and len(node.args) == 3 and not node.keywords)
