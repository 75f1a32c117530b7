"""Closures reading a variable assigned again: the variable passed at each call.

    w = x * 2.0                              w = x * 2.0
    g = lambda t: w * t              ->      g = lambda t, *, w: w * t
    w = x * 3.0                              w = x * 3.0
    return g(1.0)                            return g(1.0, w=w)

A Python closure reads its free variables when it is called, not when it is made:
`g(1.0)` above sees `w = x * 3.0`. A nested function that is only ever called by
name in the function's own code (never passed on, stored or returned, nor called from
another nested function or itself) takes each free variable the function assigns
more than once as a keyword-only parameter, and each of its calls passes the
variable's value there, which is what the closure would have read. It then reads no
variable that changes, and every later stage sees a function of its arguments; ANF's
single-assignment names stay as they are. The nested function, transformed itself,
is read from the source, which `parse` gives the parameters its code has.

A closure that escapes keeps its free variables, and ANF refuses the assignments it
could see (`anf._ClosureUses`). So does one called from another nested function,
which is read from the source too, where the call passes nothing.
"""

import dataclasses

from ..syntax import nodes, scopes

_COMPREHENSIONS = (nodes.ListComp, nodes.SetComp, nodes.DictComp, nodes.GeneratorExp)


def lift_late_bound(tree, counts):
    """Give each nested function of FunctionDef `tree` that is only called by name the
    variables it reads that `tree` assigns again, or first below it (`counts`: how
    often each of its names is bound or updated), as keyword-only parameters, passed
    at each call."""
    params = {p.id for p in nodes.parameters(tree.args)}
    changing = {name for name, n in counts.items() if n > 1 or n and name in params}
    for function, name in _named_functions(tree):
        if yields(function):
            continue  # a generator's body runs when its items are taken, not at the call
        later = _assigned_after(tree, function.lineno)
        lifted = sorted(_free_names(function) & (changing | later))
        if not lifted or counts[name] != 1 or not _takes_keywords(function, lifted):
            continue
        uses = _Uses(name, set(lifted))
        uses.visit_all(tree.body, frozenset())
        if uses.escapes:
            continue
        function.args.kwonlyargs += [nodes.param(var) for var in lifted]
        function.args.kw_defaults += [None] * len(lifted)
        for call in uses.calls:
            call.keywords += [nodes.kw(var, nodes.name(var)) for var in lifted]


def _named_functions(tree):
    """`(node, name)` for each `def` and each lambda assigned to a name in `tree`'s own
    body, at any depth of its blocks."""
    for node in nodes.walk_scope(*tree.body):
        if isinstance(node, nodes.FunctionDef) and not node.decorator_list:
            yield node, node.name
        elif (isinstance(node, nodes.Assign) and isinstance(node.value, nodes.Lambda)
              and len(node.targets) == 1 and isinstance(node.targets[0], nodes.Name)):
            yield node.value, node.targets[0].id


def yields(function):
    """Whether `function` is a generator function."""
    return isinstance(function, nodes.FunctionDef) and any(
        isinstance(n, (nodes.Yield, nodes.YieldFrom)) for n in nodes.walk_scope(*function.body))


def _assigned_after(tree, lineno):
    """The names `tree`'s own code assigns below line `lineno`."""
    return {node.id for node in nodes.walk_scope(*tree.body) if isinstance(node, nodes.Name)
            and isinstance(node.ctx, nodes.Store) and getattr(node, "lineno", 0) > lineno}


def _takes_keywords(function, names):
    """Whether `function` can take `names` as new keyword-only parameters: it has no
    `**kwargs` (which a caller's keywords could fill) and no parameter of those names."""
    args = function.args
    return args.kwarg is None and not set(names) & {p.id for p in nodes.parameters(args)}


@dataclasses.dataclass
class _Uses:
    """The calls of the nested function `name`; `escapes` when it is read otherwise,
    called with `**`, or called in a nested function, or in a comprehension binding one
    of the `lifted` names (which a call passing them would read instead)."""

    name: str
    lifted: set
    calls: list = dataclasses.field(default_factory=list)
    escapes: bool = False

    def visit_all(self, statements, bound):
        for node in statements:
            self.visit(node, bound)

    def visit(self, node, bound):
        if isinstance(node, nodes.Call) and _is_name(node.func, self.name):
            if bound & self.lifted or any(k.arg is None for k in node.keywords):
                self.escapes = True
            self.calls.append(node)
            self.visit_all(node.args + [k.value for k in node.keywords], bound)
            return
        if _is_name(node, self.name) and isinstance(node.ctx, nodes.Load):
            self.escapes = True
            return
        if isinstance(node, scopes.SCOPES):
            self.escapes |= _reads(node, self.name)
            self.visit_all(scopes.evaluated_outside(node), bound)
            return
        if isinstance(node, _COMPREHENSIONS):
            bound = bound | _bound_in(node)
        for child in nodes.iter_child_nodes(node):
            self.visit(child, bound)


def _is_name(node, name):
    return isinstance(node, nodes.Name) and node.id == name


def _bound_in(comprehension):
    """The names a comprehension binds for itself."""
    return {n.id for g in comprehension.generators for n in nodes.walk(g.target)
            if isinstance(n, nodes.Name)}


def _reads(function, name):
    """Whether nested `def` or `lambda` `function` may read `name` from outside itself."""
    return _declares(function) or name in scopes.free_names(function)


def _free_names(function):
    """`scopes.free_names(function)`, none for one with a `nonlocal` or `global`
    statement (which ANF refuses, and Python's symbol table cannot read alone)."""
    return set() if _declares(function) else scopes.free_names(function)


def _declares(function):
    return any(isinstance(n, (nodes.Nonlocal, nodes.Global)) for n in nodes.walk(function))
