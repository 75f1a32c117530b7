"""Stage 4 (optimize): a cotangent summed from several terms is summed once.

The reverse rules add each contribution to a cotangent where they meet it (the
paper's ⊕=), so a value read several times gets a chain of sums::

    dparams = add(dparams, dparams_2)
    ...
    dparams = add(dparams, dparams_3)
    ...
    dparams = add(dparams, dparams_4)

Each `add` of containers of arrays makes new arrays for the running sum. Where
nothing else reads or changes the running sum between the sums, nor the terms
after they are computed, the chain becomes one sum at the place of its last
link, which makes one array per leaf and adds the other terms into it in place::

    dparams = add_all((dparams, dparams_2, dparams_3, dparams_4))
"""

from ...runtime.cotangents import add, add_all
from ..syntax import nodes


def sum_once(statements, bindings):
    """`statements` (a block of a pullback, and the blocks nested in it) with each
    chain of `add`s into one variable made one `add_all`."""
    name = bindings.name_of(add)
    if name is None:
        return statements
    return _Chains(name, bindings).rewrite(statements)


class _Chains:
    def __init__(self, add_name, bindings):
        self.add_name = add_name
        self.bindings = bindings

    def rewrite(self, statements):
        out = list(statements)
        chains = {}  # running sum -> ([positions of its sums in `out`], [terms])
        for position, stmt in enumerate(statements):
            out[position] = stmt = nodes.with_blocks(stmt, self.rewrite)
            link = self.link(stmt)
            touched = nodes.reads(stmt) | nodes.stores(stmt)
            for total in [t for t, (_, terms) in chains.items()
                          if (t in touched or touched & set(terms)) and t != link]:
                self.close(out, total, *chains.pop(total))
            if link is None:
                continue
            positions, terms = chains.setdefault(link, ([], []))
            positions.append(position)
            terms.append(stmt.value.args[1].id)
        for total, (positions, terms) in chains.items():
            self.close(out, total, positions, terms)
        return [stmt for stmt in out if stmt is not None]

    def link(self, stmt):
        """For `total = add(total, term)` with a name `term` other than `total`, `total`."""
        target = nodes.single_target(stmt)
        value = stmt.value if target is not None else None
        if (isinstance(value, nodes.Call) and nodes.is_name(value.func, self.add_name)
                and len(value.args) == 2 and not value.keywords
                and nodes.is_name(value.args[0], target) and nodes.is_name(value.args[1])
                and value.args[1].id != target):
            return target
        return None

    def close(self, out, total, positions, terms):
        """Replace a chain of two sums or more by one `add_all` at its last sum."""
        if len(positions) < 2:
            return
        helper = nodes.name(self.bindings.object("add_all", add_all))
        summands = nodes.tuple_([nodes.name(total)] + [nodes.name(t) for t in terms])
        collapse(out, positions, total, nodes.call(helper, [summands]))


def collapse(out, positions, total, value):
    """Drop the statements of `out` at `positions` (a chain of sums into `total`) and
    put `total = value` where the last of them was (None marks a dropped one)."""
    last = out[positions[-1]]
    for position in positions[:-1]:
        out[position] = None
    out[positions[-1]] = nodes.assign(total, value, nodes.lineno_of(last))
