"""Stage 4 (optimize): a name copied from another read as that other name.

The reverse rules name the cotangent of every variable, so a cotangent passed on
unchanged gets a second name: the cotangent of an inlined callee's result is the
cotangent of the caller's variable it was assigned to (`dtimes = dh`, then
`dc_1 = dc` and `dc_1 = dc_1 + ...`). A person writes `dh` where `dtimes` is read,
and `dc_1 = dc + ...`. `propagate_copies` does, from the copy to where either name
is assigned again, and `dead_code` then drops the copies nothing reads. A `return`
keeps its names: they are the parameters' cotangents (`return (ZERO, da, db)`),
which is also how `loop_caches` finds the cotangents a loop's step carries.
"""

from ..syntax import nodes


def propagate_copies(statements, copies=None):
    """`statements` (a block of a pullback, and the blocks nested in it) with the reads
    of each name copied from another (`a = b`) replaced by the other name while both
    keep their values. `copies` maps the copies made before the block to their
    sources (updated to those holding after it)."""
    copies = {} if copies is None else copies
    out = []
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            stmt = nodes.replaced(stmt, test=_substituted(stmt.test, copies),
                                  body=propagate_copies(stmt.body, dict(copies)),
                                  orelse=propagate_copies(stmt.orelse, dict(copies)))
        elif isinstance(stmt, (nodes.For, nodes.While)):
            _forget(copies, nodes.stores(stmt))
            stmt = _substituted_loop(stmt, copies)
        elif isinstance(stmt, nodes.Assign) and not _defers_reads(stmt.value):
            stmt = nodes.replaced(stmt, value=_substituted(stmt.value, copies))
        elif not isinstance(stmt, (nodes.FunctionDef, nodes.Return)) and not _defers_reads(stmt):
            stmt = _substituted(stmt, copies)
        _forget(copies, nodes.stores(stmt))
        target = nodes.single_target(stmt)
        if target is not None and isinstance(stmt.value, nodes.Name) and (
                stmt.value.id != target):
            copies[target] = stmt.value.id
        out.append(stmt)
    return out


def coalesce_copies(statements, reads=None):
    """`statements` with each copy `w = v` whose source `v` the block makes before it and
    nothing else reads made where `v` is: the statements before it in its block assign
    `w` instead of `v`, and the copy goes. A branch of an `if` that passes on a value
    it computed (`dxs_3 = add_at(...)`, then `dxs_4 = dxs_3`, where the other branch
    passes `dxs_4 = dxs_6`) then computes it under the name the branches join in."""
    reads = nodes.read_counts(statements) if reads is None else reads
    out = []
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            stmt = nodes.replaced(stmt, body=coalesce_copies(stmt.body, reads),
                                  orelse=coalesce_copies(stmt.orelse, reads))
        target = nodes.single_target(stmt)
        source = stmt.value.id if target is not None and nodes.is_name(stmt.value) else None
        if source is not None and source != target and reads[source] == 1 and (
                _made_before(out, source, target)):
            out = [nodes.renamed(s, {source: target}) for s in out]
            continue
        out.append(stmt)
    return out


def _made_before(statements, source, target):
    """Whether `statements` assign `source` on every path through them, and neither read
    nor assign `target` (nor hold a function, whose reads happen later)."""
    if any(target in nodes.names_in(s) or _defers_reads(s) for s in statements):
        return False
    return _always_assigns(statements, source)


def _always_assigns(statements, name):
    """Whether every path through `statements` assigns `name` (in both branches of an `if`)."""
    return any(isinstance(s, nodes.Assign) and name in nodes.stores(s) or isinstance(
        s, nodes.If) and _always_assigns(s.body, name) and _always_assigns(s.orelse, name)
        for s in statements)


def _substituted_loop(stmt, copies):
    """A loop whose body and header read the copies that none of it assigns."""
    iterable = getattr(stmt, "iter", None)
    fields = {"body": propagate_copies(stmt.body, dict(copies)),
              "orelse": propagate_copies(stmt.orelse, dict(copies))}
    if iterable is not None:
        fields["iter"] = _substituted(iterable, copies)
    else:
        fields["test"] = _substituted(stmt.test, copies)
    return nodes.replaced(stmt, **fields)


def _forget(copies, stored):
    """Drop the copies that are, or are copied from, a name in `stored`."""
    for name in [a for a, b in copies.items() if a in stored or b in stored]:
        del copies[name]


def _defers_reads(node):
    """Whether `node` holds a function or lambda, whose reads happen when it is called."""
    return any(isinstance(n, (nodes.Lambda, nodes.FunctionDef)) for n in nodes.walk(node))


def _substituted(node, copies):
    """A copy of expression or statement `node` reading each copy's source instead."""
    if not copies or not nodes.reads(node) & copies.keys():
        return node
    new = nodes.clone(node)
    for n in nodes.walk(new):
        if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Load) and n.id in copies:
            n.id = copies[n.id]
    return new
