"""How loops exit and what they carry: what ANF needs to turn a loop into a function.

`lower_exits` rewrites every loop of a function body, before ANF names
anything, so that leaving an iteration is a `return` from its body:
`continue` and the end of the body return the flag 'next', `break` returns
'break', and `return e` assigns `e` to a result variable and returns
'return'. These returns carry `exit`, the flag; ANF completes them with the
loop's state. After the loop, `if loop_flag == 'return': return result` and
`if loop_flag == 'done': <the else clause>` take over what the loop's
`return` and `else` did. A `while` loop's body becomes
`if <test>: <body> else: <exit 'done'>`.

`mark_carried` then gives each loop `carried`: the variables it assigns that
an iteration may read before assigning them (values from the iteration
before) or that are read outside the loop, as the function's own variables: a
name a nested function, lambda or comprehension binds itself (`sum(x * x for x
in xs)` after a loop assigning `x`) is another variable.
"""

import collections

from ..syntax import nodes, scopes

NEXT, BREAK, RETURN, DONE = "next", "break", "return", "done"
UPDATING_METHODS = ("append", "extend", "pop")
_LOOPS = (nodes.For, nodes.While)


def lower_exits(body, namer):
    """`body` with each loop's exits lowered (see the module docstring)."""
    return _Exits(namer).block(body)


class _Exits:
    def __init__(self, namer):
        self.namer = namer
        self.result = None  # the variable holding a value returned inside a loop

    def block(self, body):
        out = []
        for stmt in body:
            if isinstance(stmt, _LOOPS):
                out.extend(self.loop(stmt))
                continue
            if isinstance(stmt, nodes.If):
                stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            out.append(stmt)
        return out

    def loop(self, loop):
        lineno = nodes.lineno_of(loop)
        returns = []
        body = self.exits(self.block(loop.body), returns) + [exit_(NEXT, lineno)]
        if isinstance(loop, nodes.While) and not _is_true(loop.test):
            body = [nodes.if_(loop.test, body, [exit_(DONE, lineno)], lineno)]
        loop.body = body
        after = []
        if returns or loop.orelse:
            loop.flag = self.namer.fresh("loop_flag")
        if returns:
            after.append(_flag_test(loop.flag, RETURN, [
                nodes.return_(nodes.name(self.result), lineno)], lineno))
        if loop.orelse:
            after.append(_flag_test(loop.flag, DONE, self.block(loop.orelse), lineno))
            loop.orelse = []
        return [loop] + after

    def exits(self, body, returns):
        """`break`, `continue` and `return` in `body` (not in inner loops) as exits."""
        out = []
        for stmt in body:
            lineno = nodes.lineno_of(stmt)
            if isinstance(stmt, nodes.Break):
                out.append(exit_(BREAK, lineno))
            elif isinstance(stmt, nodes.Continue):
                out.append(exit_(NEXT, lineno))
            elif isinstance(stmt, nodes.Return) and not hasattr(stmt, "exit"):
                self.result = self.result or self.namer.fresh("result")
                value = stmt.value if stmt.value is not None else nodes.constant(None)
                out += [nodes.assign(self.result, value, lineno), exit_(RETURN, lineno)]
                returns.append(stmt)
            elif isinstance(stmt, nodes.If):
                stmt.body = self.exits(stmt.body, returns)
                stmt.orelse = self.exits(stmt.orelse, returns)
                out.append(stmt)
            else:
                out.append(stmt)
        return out


def exit_(flag, lineno):
    """The `return` that ends an iteration with `flag`."""
    node = nodes.return_(None, lineno)
    node.exit = flag
    return node


def _flag_test(flag, value, body, lineno):
    test = nodes.Compare(left=nodes.name(flag), ops=[nodes.Eq()],
                         comparators=[nodes.constant(value)])
    return nodes.if_(test, body, [], lineno)


def _is_true(test):
    return isinstance(test, nodes.Constant) and bool(test.value)


# -- what a loop carries --------------------------------------------------------


def mark_carried(body, params, shared=()):
    """Give every loop in `body` (a function's, exits lowered, with parameters
    `params`) its `carried` names; the names `shared` (declared `global` or `nonlocal`)
    are not local, and never carried."""
    loops = list(_loops(body))
    if not loops:
        return
    local = set(params)
    for stmt in body:
        for node in nodes.walk_scope(stmt):
            if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Store):
                local.add(node.id)
            elif isinstance(node, nodes.FunctionDef):
                local.add(node.name)
    local -= set(shared)
    loads = _own_reads(body)
    for loop in loops:
        inside = _own_reads([loop])
        assigned = [v for v in _stores(loop, local) if v in local]
        exposed = set()
        _exposed(loop.body, _target_names(loop), set(assigned), exposed, local)
        loop.carried = [v for v in assigned
                        if v in exposed or loads[v] > inside[v]]


def _own_reads(statements):
    """How often each name is read in `statements` as a variable of their function's
    scope (`x += e` reads `x`): a nested function, lambda or comprehension reads the
    names it takes from outside (`scopes.free_names`), once each, not those it binds
    itself, and the parts evaluated outside it as any statement does."""
    found = collections.Counter()
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Load):
            found[node.id] += 1
        elif isinstance(node, nodes.AugAssign) and isinstance(node.target, nodes.Name):
            found[node.target.id] += 1
        if isinstance(node, scopes.SCOPES):
            found.update(scopes.free_names(node))
            todo += scopes.evaluated_outside(node)
        elif isinstance(node, _COMPREHENSIONS):  # a scope of its own but for its first
            first, *rest = node.generators        # iterable (symtable inlines it in 3.12)
            targets = set().union(*(nodes.names_in(g.target) for g in node.generators))
            inner = [n for g in rest for n in (g.iter, *g.ifs)] + list(first.ifs) + [
                n for n in nodes.iter_child_nodes(node) if not isinstance(n, nodes.comprehension)]
            found.update({name: count for name, count in _own_reads(inner).items()
                          if name not in targets})
            todo.append(first.iter)
        else:
            todo += nodes.iter_child_nodes(node)
    return found


_COMPREHENSIONS = (nodes.ListComp, nodes.SetComp, nodes.DictComp, nodes.GeneratorExp)


def _loops(body):
    for stmt in body:
        for node in nodes.walk_scope(stmt):
            if isinstance(node, _LOOPS):
                yield node


def _stores(node, local):
    """The names `node` assigns or updates in its own scope, in order of first
    assignment: an item assignment `x[i] = v` or a call `x.append(v)` (`x[i].append(v)`)
    updates the local variable `x` (see `anf`)."""
    found = {}
    for n in nodes.walk_scope(node):
        if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Store):
            found.setdefault(n.id)
        elif isinstance(n, nodes.FunctionDef):
            found.setdefault(n.name)
        elif isinstance(n, nodes.Subscript) and isinstance(n.ctx, nodes.Store):
            found.setdefault(_root(n))
        elif (isinstance(n, nodes.Call) and isinstance(n.func, nodes.Attribute)
              and n.func.attr in UPDATING_METHODS and _root(n.func.value) is not None):
            found.setdefault(_root(n.func.value))  # `xs.append(v)`, `x[i].append(v)`
    return [name for name in found if name in local]


def _root(target):
    while isinstance(target, (nodes.Subscript, nodes.Attribute)):
        target = target.value
    return target.id if isinstance(target, nodes.Name) else None


def _target_names(loop):
    if isinstance(loop, nodes.While):
        return set()
    return nodes.names_in(loop.target)


def _exposed(body, defined, assigned, found, local):
    """Add to `found` the names of `assigned` that `body` may read before assigning. A
    nested function (a `def`, a lambda assigned to a name) reading a function `def`ined
    after it in the same block (mutual recursion) reads it when called, not before its
    definition."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, nodes.FunctionDef) or isinstance(stmt, nodes.Assign) and isinstance(
                stmt.value, nodes.Lambda):
            later = {s.name for s in body[i + 1:] if isinstance(s, nodes.FunctionDef)}
            _read(stmt, defined | later, assigned, found)
            defined.update(_stores(stmt, local))
        elif isinstance(stmt, nodes.If):
            _read(stmt.test, defined, assigned, found)
            in_body, in_else = set(defined), set(defined)
            _exposed(stmt.body, in_body, assigned, found, local)
            _exposed(stmt.orelse, in_else, assigned, found, local)
            defined |= in_body & in_else
        elif isinstance(stmt, _LOOPS):
            _read(stmt.iter if isinstance(stmt, nodes.For) else stmt.test, defined, assigned,
                  found)
            _exposed(stmt.body, defined | _target_names(stmt), assigned, found, local)
        else:
            _read(stmt, defined, assigned, found)
            defined.update(_stores(stmt, local))


def _read(node, defined, assigned, found):
    for name, _ in nodes.read_counts(node).items():
        if name in assigned and name not in defined:
            found.add(name)
