"""Stage 4: simplifications of the generated code.

Pullbacks are pure: every statement in them only computes values. The
cotangents of tuples of known length are written as displays
(`tuple_cotangents`), a statement whose results nothing reads is dropped
(`dead_code`), which removes
the parts of inlined templates that served cotangents nobody needs, a
contribution added twice is added once, doubled (`doubled`), and the powers of
two of a chain of products are multiplied once (`scales`). Then the
cotangents of an array's slices gather in one buffer (`accumulation`), or are
joined when they follow one another (`slice_chains`), a
cotangent summed from several terms is summed once (`sum_chains`), and loops
keep caches of values instead of a closure per iteration (`loop_caches`), their
sums over the environment made once after them (`loop_sums`). Last, a name
copied from another is read as that other name (`copies`), and the copies nothing
reads are dropped.
The input tree is not modified, so the stage before optimisation stays
inspectable (`pullback.source(f, optimize=False)`).
"""

from ..syntax import nodes
from .accumulation import accumulate_in_place
from .copies import propagate_copies
from .loop_caches import cache_loops
from .scalar_factors import scalar_factors
from .scales import gather_scales
from .slice_chains import bound_values
from .sum_chains import sum_once
from .tuple_cotangents import fold_tuples


def optimize(forward, bindings, namer, kinds_of, shapes):
    """The generated forward function `forward` with its pullbacks optimized and its
    loops caching values (`loop_caches`); new names come from `namer`, new
    helpers from `bindings`; `kinds_of` is the kind of each variable and `shapes`
    its shape token (`reverse.Result`).

    `forward` itself is left as it was; unchanged statements are shared.
    """
    context = (bindings, bound_values(forward), kinds_of, shapes)
    return nodes.replaced(forward, body=cache_loops(_optimized(forward.body, context),
                                                    bindings, namer))


def _optimized(statements, context):
    """`statements` of forward code, with the pullbacks in them (at any depth:
    loop bodies have their own) optimized; `context` is the bindings, the names bound
    once (`slice_chains.bound_values`), and the kinds and shape tokens of the variables."""
    bindings, values, kinds_of, shapes = context
    out = []
    for stmt in statements:
        if getattr(stmt, "pullback", False):
            body = fold_tuples(stmt.body, bindings, kinds_of)
            body = scalar_factors(dead_code(body, set()), bindings, kinds_of, shapes)
            body = gather_scales(doubled(body))
            body = sum_once(accumulate_in_place(body, bindings, values), bindings)
            body = dead_code(propagate_copies(body), set())
            stmt = nodes.replaced(stmt, body=body)
        elif isinstance(stmt, nodes.If):
            stmt = nodes.replaced(stmt, body=_optimized(stmt.body, context),
                                  orelse=_optimized(stmt.orelse, context))
        elif isinstance(stmt, nodes.FunctionDef) and not hasattr(stmt, "captured"):
            stmt = nodes.replaced(stmt, body=_optimized(stmt.body, context))
        out.append(stmt)
    return out


def dead_code(statements, live):
    """`statements` without the assignments whose targets are never read.

    Args:
      statements: a block of pure statements.
      live: the names read after the block (updated to those read before it).
    """
    kept = []
    for stmt in reversed(statements):
        if isinstance(stmt, nodes.Assign):
            targets = _names(stmt.targets[0])
            if not targets & live:
                continue
            live -= targets
            live |= nodes.reads(stmt.value)
        elif isinstance(stmt, nodes.If):
            body_live, else_live = set(live), set(live)
            stmt = nodes.replaced(stmt, body=dead_code(stmt.body, body_live) or [nodes.Pass()],
                                  orelse=dead_code(stmt.orelse, else_live))
            if _is_empty(stmt):
                continue
            live.clear()
            live.update(body_live | else_live | nodes.reads(stmt.test))
        else:
            live |= nodes.reads(stmt)
        kept.append(stmt)
    return kept[::-1]


def doubled(statements):
    """`statements` (a block of a pullback, and the blocks nested in it) where a cotangent
    gets the same contribution twice in a row (`x * x`: `dx = dz * x` then
    `dx = dx + dz * x`) with that contribution once, times two (exact in floating
    point, as the sum is). `+` in a pullback adds numbers or arrays (containers are
    summed by `add`)."""
    out = []
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            stmt = nodes.replaced(stmt, body=doubled(stmt.body), orelse=doubled(stmt.orelse))
        twice = _twice(out[-1], stmt) if out else None
        if twice is not None:
            out[-1] = twice
        else:
            out.append(stmt)
    return out


def _twice(first, second):
    """`d = e * 2` for `d = e; d = d + e` (and `d = d + e * 2` for `d = d + e` twice),
    else None."""
    target = nodes.single_target(second)
    if target is None or nodes.single_target(first) != target:
        return None
    term = _added_to(second.value, target)
    if term is None or target in nodes.reads(term) or _key(term) is None:
        return None
    if _key(first.value) == _key(term):
        return nodes.assign(target, nodes.binop(term, nodes.Mult(), nodes.constant(2)),
                            nodes.lineno_of(first))
    earlier = _added_to(first.value, target)
    if earlier is not None and _key(earlier) == _key(term):
        doubled_term = nodes.binop(term, nodes.Mult(), nodes.constant(2))
        return nodes.assign(target, nodes.binop(nodes.name(target), nodes.Add(), doubled_term),
                            nodes.lineno_of(first))
    return None


def _added_to(value, target):
    """`e` for `target + e`, else None."""
    if (isinstance(value, nodes.BinOp) and isinstance(value.op, nodes.Add)
            and nodes.is_name(value.left, target)):
        return value.right
    return None


def _key(expr):
    """A text equal for equal expressions, or None when `expr` holds a constant other
    than a number or string (an array's text may abbreviate it)."""
    for node in nodes.walk(expr):
        if isinstance(node, nodes.Constant) and not isinstance(
                node.value, (int, float, str, type(None))):
            return None
    return nodes.dump(expr)


def _is_empty(stmt):
    return all(isinstance(s, nodes.Pass) for s in stmt.body) and not stmt.orelse


def _names(target):
    if isinstance(target, nodes.Name):
        return {target.id}
    elts = [e.value if isinstance(e, nodes.Starred) else e for e in target.elts]
    return {e.id for e in elts} - {"_"}

