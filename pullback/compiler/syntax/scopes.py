"""Python's scoping, as far as the transformation needs it: read from the syntax.

Which functions are nested directly in a function, which names a nested
function reads from the function around it (its free variables, which become
its closure cells), and how often a function assigns each of its own names.
Free variables are computed by the standard library's `symtable`, so they are
exactly the ones CPython puts in `co_freevars`.
"""

import collections
import symtable

from . import nodes

SCOPES = (nodes.FunctionDef, nodes.Lambda)


def nested_functions(tree):
    """The `def` and `lambda` nodes directly inside FunctionDef `tree`, in order."""
    found = []
    for stmt in tree.body:
        _collect_nested(stmt, found)
    return found


def user_functions(tree):
    """The user's `def` and `lambda` nodes nested in FunctionDef `tree` (in ANF),
    looking inside the functions ANF made of its loops (`loop` set), which are not
    the user's."""
    found = []
    for node in nested_functions(tree):
        if getattr(node, "loop", False):
            found.extend(user_functions(node))
        else:
            found.append(node)
    return found


def _collect_nested(node, found):
    if isinstance(node, SCOPES):
        found.append(node)
        for part in evaluated_outside(node):
            _collect_nested(part, found)
        return
    for child in nodes.iter_child_nodes(node):
        _collect_nested(child, found)


def evaluated_outside(node):
    """The parts of a `def` or `lambda` evaluated in the enclosing scope: defaults."""
    args = node.args
    parts = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
    if isinstance(node, nodes.FunctionDef):
        parts += node.decorator_list
    return parts


def free_names(node):
    """The names a `def` or `lambda` node reads from outside itself.

    They include the globals it reads; intersected with the names bound in
    the enclosing function, they are its free variables.
    """
    text = nodes.unparse(node)
    # The function's own table comes last: its defaults and annotations, evaluated
    # outside it, may hold comprehensions and lambdas of their own, which come first.
    table = symtable.symtable(text, "<nested>", "exec").get_children()[-1]
    return _implicit_globals(table)


def _implicit_globals(table):
    names = {s.get_name() for s in table.get_symbols()
             if s.is_global() and not s.is_declared_global()}
    for child in table.get_children():
        names |= _implicit_globals(child)
    return names


def kept_local(tree, dropped):
    """The names the statements `dropped` (a branch the kinds decide is not taken)
    assign that nothing else in FunctionDef `tree` assigns and a function nested in
    `tree` reads. Dropped with the branch, they would become globals in the nested
    function, which the derivative of its own code would then look up; assigned `None`
    instead, they stay the function's own variables, as unassigned as Python leaves them
    when the branch is not taken."""
    in_dropped = collections.Counter()
    for stmt in dropped:
        _count_bindings(stmt, in_dropped)
    counts = assignments(tree) if in_dropped else {}
    own = {name for name, count in in_dropped.items() if counts[name] == count}
    read = set().union(*(free_names(f) for f in nested_functions(tree))) if own else set()
    return sorted(own & read)


def unassigned(tree, stmt, known):
    """For `if` statement `stmt` of `tree` whose test the kinds decide (`known`), the
    statements assigning `None` to the names of its dropped branch that must stay local
    (`kept_local`)."""
    cache = stmt.__dict__.setdefault("kept_local", {})  # each stage asks, for either branch
    if known not in cache:
        cache[known] = kept_local(tree, stmt.orelse if known else stmt.body)
    names = cache[known]
    return [nodes.assign(name, nodes.constant(None), stmt.lineno) for name in names]


def assignments(tree):
    """How many times FunctionDef `tree` binds each name in its own scope."""
    counts = collections.Counter()
    for stmt in tree.body:
        _count_bindings(stmt, counts)
    return counts


def _count_bindings(node, counts):
    if isinstance(node, nodes.FunctionDef):
        counts[node.name] += 1
    if isinstance(node, SCOPES):
        for part in evaluated_outside(node):
            _count_bindings(part, counts)
        return
    if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Store):
        counts[node.id] += 1
    for child in nodes.iter_child_nodes(node):
        _count_bindings(child, counts)
