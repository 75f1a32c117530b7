"""Rewrite rules on the sums of a pullback's IR (`ir.Sum`): one cotangent, one sum.

The reverse rules collect every contribution to a cotangent into one `Sum`
(the paper's ⊕), so what is known about the terms is in one place:

- `zeros`: `ZERO` adds nothing;
- `flatten`: a sum of a sum read only there is one sum;
- `twice`: the same term twice is the term times two (`x * x`: `dx = dz * x * 2`),
  exact in floating point, as the sum is;
- `summed_helpers`: terms made by one helper from the same fixed arguments are
  summed by the helper's sum over lists, which its spec declares
  (`Spec.summed`): the slices of an array scattered into one buffer
  (`unindex_all`), a bias's broadcasts summed before they are reduced
  (`unbroadcast_all`), a weight's products made as one (`matmul_right_all`);
- `joined_slices`: slices of an array that follow one another along an axis,
  scattered by `unindex_all`, are joined (`unindex_tiles`, with `slice_chains`);
- `items_added`: the cotangents of some items of a tuple, list, dict or array added
  to a cotangent of the whole are added at their items (`add_at`), not made into a
  cotangent of every item first.
"""

from ...runtime.structures import add_at, unindex, unindex_all, unindex_tiles
from .. import ir
from ..syntax import nodes
from . import slice_chains


def zeros(node, context):
    """`SUM(a, ZERO, b)` -> `SUM(a, b)`; a sum of one term is the term, of none `ZERO`."""
    if not isinstance(node, ir.Sum):
        return None
    terms = [term for term in node.terms if not context.is_zero(term)]
    if len(terms) == len(node.terms) and len(terms) > 1:
        return None
    return ir.sum_of(terms, node.kind, context.zero)


def flatten(node, context):
    """`SUM(a, s)` with `s = SUM(b, c)` read only here -> `SUM(a, b, c)`."""
    if not isinstance(node, ir.Sum):
        return None
    terms, changed = [], False
    for term in node.terms:
        inner = term if isinstance(term, ir.Sum) else context.read_once(term)
        if isinstance(inner, ir.Sum) and inner.kind == node.kind:
            terms += nodes.clone(inner.terms)
            changed = True
        else:
            terms.append(term)
    return ir.Sum(terms, node.kind) if changed else None


def twice(node, context):
    """`SUM(a, e, e)` -> `SUM(a, e * 2)` for numbers and arrays."""
    if not isinstance(node, ir.Sum) or node.kind != ir.NUMBER:
        return None
    keys = [key(term) for term in node.terms]
    for i, k in enumerate(keys):
        if k is not None and k in keys[i + 1:]:
            j = keys.index(k, i + 1)
            terms = list(node.terms)
            terms[i] = nodes.binop(terms[i], nodes.Mult(), nodes.constant(2))
            del terms[j]
            return ir.Sum(terms, node.kind)
    return None


def summed_helpers(node, context):
    """`SUM(h(g1, x1, w), h(g2, x2, w))` -> `SUM(h_all((g1, g2), (x1, x2), w))` for a
    helper `h` whose spec gives its sum over lists `h_all` and the positions of the
    arguments that may change (here 0 and 1), the others being the same expressions.
    A term may be the call or a name bound to it read only there."""
    if not isinstance(node, ir.Sum) or not context.summed:
        return None
    groups = {}
    for position, term in enumerate(node.terms):
        call = _summable(term, context)
        if call is not None:
            fixed = [key(arg) for i, arg in enumerate(call.args)
                     if i not in context.summed[call.func.id][1]]
            if None not in fixed:
                groups.setdefault((call.func.id, *fixed), []).append((position, call))
    groups = [members for members in groups.values() if len(members) > 1]
    if not groups:
        return None
    terms = list(node.terms)
    for members in groups:
        first = members[0][1]
        total, changing = context.summed[first.func.id]
        args = [nodes.tuple_([nodes.clone(call.args[i]) for _, call in members])
                if i in changing else nodes.clone(arg) for i, arg in enumerate(first.args)]
        helper = nodes.name(context.bindings.object(total.__name__, total))
        terms[members[0][0]] = nodes.call(helper, args)
        for position, _ in members[1:]:
            terms[position] = None
    return ir.sum_of([t for t in terms if t is not None], node.kind, context.zero)


def _summable(term, context):
    """The call of a summable helper `term` is or names (read only here), else None."""
    call = term if isinstance(term, nodes.Call) else context.read_once(term)
    if (isinstance(call, nodes.Call) and nodes.is_name(call.func)
            and call.func.id in context.summed and not call.keywords
            and len(call.args) == len(context.summed[call.func.id][1]) + 1):
        return call
    return None


def joined_slices(node, context):
    """`unindex_all((g1, g2), x, (slice(None, n), slice(n, None)))` ->
    `unindex_tiles((g1, g2), x, (...), 0)`, the slices in the order they follow one
    another along the axis (`slice_chains.chain`)."""
    if not context.calls(node, unindex_all) or len(node.args) != 3:
        return None
    gs, x, indices = node.args
    if not (isinstance(gs, nodes.Tuple) and isinstance(indices, nodes.Tuple)):
        return None
    found = slice_chains.chain(indices.elts, context.bindings.name_of(slice), context.values)
    if not found:
        return None
    order, axis = found
    helper = nodes.name(context.bindings.object("unindex_tiles", unindex_tiles))
    return nodes.call(helper, [nodes.tuple_([gs.elts[i] for i in order]), x,
                               nodes.tuple_([indices.elts[i] for i in order]),
                               nodes.constant(axis)])


def items_added(node, context):
    """`SUM(t, unindex_all(gs, x, indices))` -> `add_at(t, gs, x, indices)` (and
    `unindex(g, x, i)` as `unindex_all((g,), x, (i,))`): the cotangents of some items
    of a tuple, list, dict or array `x` added at their items of a copy of `t` (or, in
    a loop's own copy, of `t` itself: `add_at_into`), the other terms summed into `t`;
    `add_at` makes the scatter and the sum where it cannot. A term may be the call or
    a name bound to it read only there. One scatter is taken out, the last:
    `summed_helpers` has already put the scatters into one `x` in one."""
    if not isinstance(node, ir.Sum) or len(node.terms) < 2:
        return None
    for position in reversed(range(len(node.terms))):
        scatter = _item_scatter(node.terms[position], context)
        if scatter is not None:
            break
    else:
        return None
    rest = [term for i, term in enumerate(node.terms) if i != position]
    helper = nodes.name(context.bindings.object("add_at", add_at))
    return nodes.call(helper, [ir.sum_of(rest, node.kind, context.zero), *scatter])


def _item_scatter(term, context):
    """`(gs, x, indices)` of a term that is (or names, read only there) a scatter of
    item cotangents into a cotangent of the tuple, list or dict `x`, else None."""
    call = term if isinstance(term, nodes.Call) else context.read_once(term)
    if not isinstance(call, nodes.Call) or len(call.args) != 3:
        return None
    gs, x, indices = call.args
    if not nodes.is_name(x):
        return None
    if context.calls(call, unindex_all):
        return nodes.clone(gs), nodes.clone(x), nodes.clone(indices)
    if context.calls(call, unindex):
        return (nodes.tuple_([nodes.clone(gs)]), nodes.clone(x),
                nodes.tuple_([nodes.clone(indices)]))
    return None


def key(expr):
    """A text equal for equal expressions, or None when `expr` holds a constant other
    than a number or string (an array's text may abbreviate it)."""
    for node in nodes.walk(expr):
        if isinstance(node, nodes.Constant) and not isinstance(
                node.value, (int, float, str, type(None))):
            return None
    return nodes.dump(expr)
