"""Stage 4: simplifications of the generated code.

Pullbacks are pure: every statement in them only computes values. So a
statement whose results nothing reads is dropped (`dead_code`), which removes
the parts of inlined templates that served cotangents nobody needs.
"""

from . import nodes


def optimize(forward):
    """Optimize the pullbacks nested in generated forward function `forward` in place."""
    for stmt in forward.body:
        if isinstance(stmt, nodes.FunctionDef):
            stmt.body = dead_code(stmt.body, set())
    return forward


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
            live |= _reads(stmt.value)
        elif isinstance(stmt, nodes.If):
            body_live, else_live = set(live), set(live)
            stmt.body = dead_code(stmt.body, body_live) or [nodes.Pass()]
            stmt.orelse = dead_code(stmt.orelse, else_live)
            if _is_empty(stmt):
                continue
            live.clear()
            live.update(body_live | else_live | _reads(stmt.test))
        else:
            live |= _reads(stmt)
        kept.append(stmt)
    return kept[::-1]


def _is_empty(stmt):
    return all(isinstance(s, nodes.Pass) for s in stmt.body) and not stmt.orelse


def _names(target):
    if isinstance(target, nodes.Name):
        return {target.id}
    elts = [e.value if isinstance(e, nodes.Starred) else e for e in target.elts]
    return {e.id for e in elts} - {"_"}


def _reads(node):
    return {n.id for n in nodes.walk(node) if isinstance(n, nodes.Name)
            and isinstance(n.ctx, nodes.Load)}
