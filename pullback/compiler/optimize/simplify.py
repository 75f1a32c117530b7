"""Stage 4: simplifications of the generated code.

Pullbacks are pure: every statement in them only computes values, and each name
is bound once on each path (`ir`). A recursion's pullback first collects its calls'
cotangents of the parameters they pass on unchanged, to be summed once by the
outermost call (`recursion_terms`). Then pullbacks' bodies are rewritten by general rules to a
fixed point (`rewrite`: sums, products, tuple displays, copies and dead code), and
each sum is written as Python (`ir.lower`). The values pullbacks read only for their
shape are held as their shape (`shape_reads`). Then the loops that keep caches of
values instead of a closure per iteration are written as Python (`loop_caches`),
their sums over the environment made once after them (`loop_sums`), and the lists
they update by index updated in place where no one reads the earlier versions
(`in_place_lists`).
The input tree is not modified, so the stage before optimisation stays
inspectable (`pullback.source(f, optimize=False)`, `lowered`).
"""

from .. import ir
from ..syntax import nodes
from . import rewrite
from .in_place_lists import update_in_place
from .inline_items import write_inline
from .loop_caches import lower_loops
from .recursion_terms import collect_recursion_terms
from .shape_reads import hold_shapes
from .slice_chains import bound_values


def optimize(forward, bindings, namer, kinds_of, shapes):
    """The generated forward function `forward` with its pullbacks rewritten
    (`rewrite`) and written as Python (`ir.lower`), and its loops caching values
    (`loop_caches`); new names come from `namer`, new helpers from `bindings`;
    `kinds_of` is the kind of each variable and `shapes` its shape token
    (`reverse.Result`).

    `forward` itself is left as it was; unchanged statements are shared.
    """
    forward = collect_recursion_terms(forward, bindings, namer)
    kinds_of = _with_loop_kinds(forward, kinds_of)
    context = rewrite.Context(bindings, kinds_of, shapes, bound_values(forward))

    def optimized(body):
        return ir.lower(rewrite.rewrite(body, context, dead_code), bindings)

    shaped = hold_shapes(nodes.replaced(forward, body=_pullbacks(forward.body, optimized)),
                         bindings, namer, kinds_of)
    body = lower_loops(shaped.body, bindings, namer)
    body = update_in_place(body, bindings, namer, kinds_of)
    return nodes.replaced(forward, body=write_inline(body, bindings, namer, kinds_of))


def _with_loop_kinds(forward, kinds_of):
    """`kinds_of` and the kinds of the variables of the bodies of the loops in `forward`
    (`ir.CachedLoop.kinds`), which the forward code binds too."""
    found = dict(kinds_of)
    for node in nodes.walk(forward):
        if isinstance(node, ir.CachedLoop):
            for name, kind in node.kinds.items():
                found.setdefault(name, kind)
    return found


def lowered(forward, bindings, namer):
    """The generated forward function `forward` with the sums in its pullbacks (at any
    depth) and its loops written as Python, not optimized (`ir.lower`, `loop_caches`)."""
    body = _pullbacks(forward.body, lambda body: ir.lower(body, bindings))
    return nodes.replaced(forward, body=lower_loops(body, bindings, namer, collect=False))


def _pullbacks(statements, change):
    """`statements` of forward code with `change` applied to the body of each pullback
    in them, at any depth (loop bodies have their own; a cached loop's step is one)."""
    out = []
    for stmt in statements:
        if getattr(stmt, "pullback", False):
            stmt = nodes.replaced(stmt, body=change(stmt.body))
        elif isinstance(stmt, ir.CachedLoop):
            stmt = nodes.replaced(stmt, step=change(stmt.step))
        elif isinstance(stmt, (nodes.If, nodes.Try)):
            stmt = nodes.with_blocks(stmt, lambda block: _pullbacks(block, change))
        elif isinstance(stmt, nodes.FunctionDef) and not hasattr(stmt, "captured"):
            stmt = nodes.replaced(stmt, body=_pullbacks(stmt.body, change))
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


def _is_empty(stmt):
    return all(isinstance(s, nodes.Pass) for s in stmt.body) and not stmt.orelse


def _names(target):
    if isinstance(target, nodes.Name):
        return {target.id}
    elts = [e.value if isinstance(e, nodes.Starred) else e for e in target.elts]
    return {e.id for e in elts} - {"_"}

