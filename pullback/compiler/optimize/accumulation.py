"""Stage 4 (optimize): the cotangents of an array's slices gather in one buffer.

A function that reads several slices of an array (`gates[:, :n]`, `gates[:, n:2 * n]`,
...) gets from the reverse rules one `unindex` per slice, each scattering a slice's
cotangent into a fresh array of zeros, and a sum of them::

    dgates = unindex(dgates_part, gates, (slice(None), slice(n, 2 * n)))
    ...
    dgates = dgates + unindex(dgates_part_1, gates, (slice(None), slice(None, n)))

A person would put the slices' cotangents in place at once. Where the first sum's
term came from `unindex` in the same block and nothing else reads the running sum
nor changes what the terms read until the last sum, the chain becomes one call at
the place of the last sum::

    dgates = unindex_all((dgates_part, dgates_part_1), gates,
                         ((slice(None), slice(n, 2 * n)), (slice(None), slice(None, n))))

which puts the first part in an array of zeros and adds the others into it in
place, or writes each into an empty array when they tile it (`structures.unindex_all`).
When the parts are slices that follow one another along an axis (`slice_chains`),
the call is `unindex_tiles` with the parts in that order, which joins them::

    dgates = unindex_tiles((dgates_part_1, dgates_part), gates,
                           ((slice(None), slice(None, n)), (slice(None), slice(n, None))), 1)
"""

from ...runtime.structures import unindex, unindex_all, unindex_tiles
from ..syntax import nodes
from . import slice_chains
from .sum_chains import collapse


def accumulate_in_place(statements, bindings, values):
    """`statements` (a block of a pullback, and the blocks nested in it) with each chain
    of sums of `unindex` results into one cotangent made one `unindex_all` (or
    `unindex_tiles`); `values` are the function's names bound once
    (`slice_chains.bound_values`)."""
    scatter = bindings.name_of(unindex)
    if scatter is None:
        return statements
    return _Block(scatter, bindings, values).rewrite(statements)


class _Block:
    def __init__(self, scatter, bindings, values):
        self.scatter = scatter
        self.bindings = bindings
        self.values = values

    def rewrite(self, statements):
        out = list(statements)
        chains = {}  # cotangent name -> (array name, [positions], [(term, index)])
        for position, stmt in enumerate(statements):
            out[position] = stmt = nodes.with_blocks(stmt, self.rewrite)
            target = nodes.single_target(stmt)
            link = self.link(stmt, target, chains)
            touched, stored = nodes.reads(stmt) | nodes.stores(stmt), nodes.stores(stmt)
            for total in [t for t, chain in chains.items()
                          if t != link and (t in touched or stored & _read_by(chain))]:
                self.close(out, total, *chains.pop(total))
            if link is not None:
                _, positions, parts = chains[link]
                positions.append(position)
                parts.append(tuple(stmt.value.right.args[:3:2]))
                continue
            started = self.scattered(stmt)
            if started is not None:
                chains[target] = (started.args[1].id, [position],
                                  [(started.args[0], started.args[2])])
        for total, chain in chains.items():
            self.close(out, total, *chain)
        return [stmt for stmt in out if stmt is not None]

    def scattered(self, stmt):
        """For `d = unindex(g, x, index)` with a name `x`, the call."""
        value = stmt.value if nodes.single_target(stmt) is not None else None
        if self.is_scatter(value) and nodes.is_name(value.args[1]):
            return value
        return None

    def link(self, stmt, target, chains):
        """`d` for `d = d + unindex(g, x, index)` where `d` is a chain's sum of
        `unindex(..., x, ...)`, else None."""
        if target not in chains or not isinstance(stmt.value, nodes.BinOp):
            return None
        left, op, right = stmt.value.left, stmt.value.op, stmt.value.right
        if (isinstance(op, nodes.Add) and nodes.is_name(left, target) and self.is_scatter(right)
                and nodes.is_name(right.args[1], chains[target][0])
                and target not in nodes.reads(right)):
            return target
        return None

    def close(self, out, total, array, positions, parts):
        """Replace a chain of two sums or more by one `unindex_all` (or `unindex_tiles`)
        at its last sum."""
        if len(positions) < 2:
            return
        slice_name = self.bindings.name_of(slice)
        tiles = slice_name and slice_chains.chain([index for _, index in parts], slice_name,
                                                  self.values)
        if tiles:
            order, axis = tiles
            parts = [parts[position] for position in order]
            helper, extra = self.bindings.object("unindex_tiles", unindex_tiles), [
                nodes.constant(axis)]
        else:
            helper, extra = self.bindings.object("unindex_all", unindex_all), []
        terms = nodes.tuple_([nodes.clone(term) for term, _ in parts])
        indices = nodes.tuple_([nodes.clone(index) for _, index in parts])
        collapse(out, positions, total,
                 nodes.call(nodes.name(helper), [terms, nodes.name(array), indices, *extra]))

    def is_scatter(self, node):
        return (isinstance(node, nodes.Call) and nodes.is_name(node.func, self.scatter)
                and len(node.args) == 3 and not node.keywords)


def _read_by(chain):
    """The names the terms and indices of a chain read, and its array."""
    array, _, parts = chain
    names = {array}
    for term, index in parts:
        names |= nodes.reads(term) | nodes.reads(index)
    return names
