"""Stage 2: A-normal form.

`to_anf(tree, origin)` rewrites a parsed function so that every intermediate
value has a name and every statement does one thing. Later passes assume the
forms listed here and nothing more; `check_anf` verifies them.

Atoms (A)::

    A ::= Name | Constant | R
    R ::= a dotted reference rooted at a global or a helper's cell (np.pi)

Statements, in a function body or an `if` branch::

    x = A                       copy
    x = A op A                  BinOp
    x = op A                    UnaryOp (-, +, not, ~)
    x = A cmp A                 Compare with a single operator
    x = F(A, ..., k=A, ...)     Call; F is R, a local Name, or A.method; or F(*A, **A)
    x = A.attr                  Attribute of a local value
    x = A[I]                    Subscript; I ::= A | A?:A?:A? | (I, ...)
    x = (A, ...) | [A, ...] | {A: A, ...} | {A, ...}   items may be *A, dict items **A
    x = f"...{A}..."            JoinedStr
    x, y, ... = A               unpacking into names
    x = lambda ...: ...         a closure; its defaults are atoms, its body as written
    def g(...): ...             a closure; the same
    def loop_body(i, *s): S*    a loop's body, itself in these forms (`loop` set)
    x = iterate(loop_body, A, A, ...)   the loop (see below)
    F(A, ..., k=A, ...)         a call whose value is dropped
    import m as x | from m import f as x    each name bound is a version (`as` added)
    if A: S* else: S*           test is an atom; an empty branch is `pass`
    assert A[, A]
    raise A
    return A                    exactly one, the last statement of the body

Single assignment: on any execution path every local name is assigned once.
The first binding of a user variable keeps its name, later ones get versions
(`x`, `x_1`, ...); a variable assigned in an `if` branch has one name after
the `if` (both branches assign it, or copy the earlier version). `x += e`,
`a = b = e`, `a, (b, c) = e`, `x: T = e`, `x := e`, chained comparisons,
`and`/`or`, conditional expressions and early returns are desugared into
these forms. A call with starred arguments becomes `F(*args, **kwargs)` on a
tuple and a dict built just before it.

Closures: each nested `def` and `lambda` carries `captured`, the sorted names
it reads from this function (its `co_freevars`). A captured variable has one
value from the point it is captured: it is assigned once under its own name
(with several assignments before the capture, the last one takes the name).
Assigning it after the capture, assigning a
captured parameter, or capturing a variable not assigned yet (other than a
function `def`ined later, as in mutual recursion) raises TransformError:
Python closures read the variable when they run.

Updates are new values: `x[i] = v` becomes `x_1 = with_item(x, i, v)`
(`x[i][j] = v` updates `x[i]`, then `x`), `xs.append(v)` and `xs.extend(ys)`
become `xs_1 = appended(xs, v)` and `xs_1 = extended(xs, ys)`, `xs.pop(i)`
becomes `popped = popped(xs, i)` and `xs_1, value = popped` (see `mutation`).
These assignments, and the `x_1 = x + e` that `x += e` becomes, carry
`updates = ("x", "x")`: the user variable and the name of its value before the
update, which Python makes in place on an array or list (see `aliases`).

Loops become functions: `for x in xs: S` becomes a `def loop_body(x, *state)`
whose body is S in these forms, returning `(flag, *state)` at every exit,
followed by `loop = iterate(loop_body, xs, *state)` and
`loop_flag, *state = loop` (see `flow` and `loops`); a `while` loop iterates
over `None`. Comprehensions and generator expressions are loops appending to
a new list (set, dict). Calls of pullback's own functions carry `helper`, the
function.
"""

import collections

from ...errors import TransformError, unsupported
from ...runtime import loops, mutation
from ..syntax import annotations, nodes, scopes
from ..syntax.naming import HelperCalls, Namer
from . import (
    flow,
    generators,
    late_binding,
    lazy_iterators,
    super_calls,
    try_blocks,
    with_blocks,
)

_UNSUPPORTED_STATEMENTS = {
    "AsyncFor": "an async for loop",
    "AsyncWith": "an async with statement",
    "TryStar": "a try statement with except*",
    "AsyncFunctionDef": "an async function",
    "ClassDef": "a class definition",
    "Global": "a global statement in a nested function",
    "Nonlocal": "a nonlocal statement in a nested function",
    "Match": "a match statement",
}
_UNSUPPORTED_EXPRESSIONS = {
    "Await": "await",
}
RETURN = "<return>"
CALLED_AT_ONCE = "<called at once>"  # the name of a lambda called where it is made
_UPDATES = {"append": mutation.appended, "extend": mutation.extended}
_LIST_UPDATES = (*flow.UPDATING_METHODS, "insert", "remove", "clear", "sort", "reverse",
                 "popitem", "setdefault")  # the methods of a list or dict that update it


def to_anf(tree, origin):
    """Rewrite FunctionDef `tree` into A-normal form (see the module docstring).

    Args:
      tree: a gast FunctionDef from `parse.parse_function`.
      origin: its `parse.Origin`, for error messages.

    Returns:
      A new FunctionDef in A-normal form.

    Raises:
      TransformError: naming the file:line of a construct ANF cannot express.
    """
    tree = nodes.clone(tree)
    lazy_iterators.check_lazy_iterators(tree, origin)
    tree.body = _items_deleted_by_pop(tree.body, set(scopes.assignments(tree)) | set(
        _parameters(tree.args)))
    namer = Namer.for_tree(tree)
    helpers = HelperCalls(namer)
    tree.body = with_blocks.lower_with_blocks(tree.body, helpers)
    tree = super_calls.lower_super_calls(tree, helpers)
    tree = generators.lower_generator(tree, namer, origin)
    tree.body = try_blocks.lower_try_blocks(tree, helpers, origin)
    counts = scopes.assignments(tree)
    _count_updates(tree, counts)
    late_binding.lift_late_bound(tree, counts)
    cells, defined = _mark_captured(tree, origin, counts)
    declared, tree.body = _declarations(tree.body)
    body = flow.lower_exits(tree.body, namer)
    flow.mark_carried(body, _parameters(tree.args), shared=[n for d in declared for n in d.names])
    body = _with_final_return(_lift_returns(body), tree.lineno)
    params = _parameters(tree.args)
    normalizer = _Normalizer(helpers, origin, params, cells, counts, defined, declared)
    normalizer.uses = _ClosureUses(body)
    _name_entry_values(tree, normalizer)
    normalizer.comprehension_counts.update(
        n.id for c in nodes.walk(tree) if isinstance(c, _COMPREHENSIONS)
        for g in c.generators for n in nodes.walk(g.target) if isinstance(n, nodes.Name))
    tree.body = normalizer.function_body(body)
    for old, new in normalizer.renames.items():
        _rename(tree.body, old, new)
        _rename([tree.args], old, new)
    tree.parameter_versions = {param: version.id for param, version in zip(
        params, nodes.parameters(tree.args)) if version.id != param}
    _drop_unread_copies(tree, normalizer.shared)
    _capture_loop_state(tree, origin)
    check_anf(tree)
    return tree


class _ClosureUses:
    """Where a function's code (its nested functions' too) reads each name, and the
    lines of its loops: whether a variable closures read may be assigned again."""

    DEEP = "<deeper>"  # the owner of a read in an unnamed function, or two functions deep

    def __init__(self, body):
        calls = {id(n.func) for stmt in body for n in nodes.walk(stmt)
                 if isinstance(n, nodes.Call) and isinstance(n.func, nodes.Name)}
        named = {id(n.value): n.targets[0].id for stmt in body for n in nodes.walk(stmt)
                 if isinstance(n, nodes.Assign) and isinstance(n.value, nodes.Lambda)
                 and len(n.targets) == 1 and isinstance(n.targets[0], nodes.Name)}
        self.reads = collections.defaultdict(list)  # name -> [(line, called, owner)]
        self.loops = []  # (first line, last line) of each loop
        self.generators = {n.name for stmt in body for n in nodes.walk(stmt)
                           if isinstance(n, nodes.FunctionDef) and late_binding.yields(n)}
        pending = [(stmt, None) for stmt in body]
        while pending:
            node, owner = pending.pop()
            if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Load):
                self.reads[node.id].append((getattr(node, "lineno", None), id(node) in calls,
                                            owner))
            if isinstance(node, (nodes.For, nodes.While)) and owner is None:
                lines = [n.lineno for n in nodes.walk(node) if getattr(n, "lineno", None)]
                self.loops.append((min(lines), max(lines)))
            if isinstance(node, (nodes.FunctionDef, nodes.Lambda)):
                name = node.name if isinstance(node, nodes.FunctionDef) else named.get(id(node))
                owner = (name or self.DEEP) if owner is None else self.DEEP
            pending.extend((child, owner) for child in nodes.iter_child_nodes(node))

    def settled(self, var, closures, lineno):
        """Whether `var`, which `closures` read, may be assigned again at line `lineno`:
        each of them is a lambda called where it is made, or is named, not a generator
        function, and only called by name, in the function's own code never after that
        line nor in a loop around it,
        and in its nested functions only in named ones of which the same holds; and no
        nested function reads `var` there. Then no closure would see the new value."""
        around = [(a, b) for a, b in self.loops if a <= lineno <= b]

        def later(line):  # a read made by an earlier stage, of no line: any time
            return line is None or line > lineno or any(a <= line <= b for a, b in around)

        def quiet(name, seen):  # no call of closure `name` comes after the assignment
            if name == CALLED_AT_ONCE or name in seen:
                return True
            if name in self.generators:
                return False  # its body runs when its items are taken, any time
            return name not in (None, self.DEEP) and all(
                called and (not later(line) if owner is None else quiet(owner, seen | {name}))
                for line, called, owner in self.reads[name])

        if any(owner is not None and later(line) for line, _, owner in self.reads[var]):
            return False
        return all(quiet(name, frozenset()) for name in closures)


def _name_entry_values(tree, normalizer):
    """Give a parameter that a closure reads and the function assigns a name of its own
    for its value on entry (`x_1`), the forward's signature keeping `x` (see
    `tree.parameter_versions`): the version the closure reads takes the name `x`, as
    any captured variable's does (`capture`). Captured before it is assigned, it is
    refused (late binding), or, assigned on another path only, renamed back."""
    for param in nodes.parameters(tree.args):
        if param.id in normalizer.cells and normalizer.counts[param.id]:
            entry = normalizer.namer.fresh(param.id)
            normalizer.versions[param.id] = entry
            normalizer.bound.add(entry)
            param.id = entry


def _count_updates(tree, counts):
    """Add to `counts` (the bindings of each name of FunctionDef `tree`) the updates
    that ANF makes new versions of the function's own variables: `x[i] = v`,
    `xs.append(v)`, `xs.extend(ys)`, `xs.pop()`. A variable a closure captures takes
    its own name at its last version, so an earlier version must not have it."""
    bound = {name for name, n in counts.items() if n} | set(_parameters(tree.args))
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, scopes.SCOPES):
            continue
        updated = None
        if isinstance(node, nodes.Subscript) and isinstance(node.ctx, nodes.Store):
            updated = _root_name(node)
        elif (isinstance(node, nodes.Call) and isinstance(node.func, nodes.Attribute)
              and isinstance(node.func.value, nodes.Name)
              and (node.func.attr in _UPDATES or node.func.attr == "pop")):
            updated = node.func.value.id
        if updated in bound:
            counts[updated] += 1
        pending.extend(nodes.iter_child_nodes(node))


def _declarations(body):
    """The `global` and `nonlocal` statements of a function's own body (at any depth of
    its blocks, not in nested functions), and the body without them."""
    found = []

    def without(block):
        kept = []
        for stmt in block:
            if isinstance(stmt, (nodes.Global, nodes.Nonlocal)):
                found.append(stmt)
                continue
            kept.append(nodes.with_blocks(stmt, without))
        return kept

    return found, without(body)


def _refuse_declarations(node, origin):
    """Refuse a `nonlocal` or `global` in nested function `node` before its scope is read
    (alone, a `nonlocal` is a syntax error)."""
    for inner in nodes.walk(node):
        kind = type(inner).__name__
        if kind in ("Nonlocal", "Global"):
            raise unsupported(_UNSUPPORTED_STATEMENTS[kind], inner, origin, "not yet")


def _drop_unread_copies(tree, shared):
    """Remove the copies `x = y` (joins after an `if`) that no later statement reads,
    such as the join of a variable in a branch that leaves a loop's body; a copy into
    a variable declared `global` or `nonlocal` (one of `shared`) is read outside."""
    tree.body = _live_statements(tree.body, set(shared), shared)


def _live_statements(statements, live, shared):
    """`statements` without dead copies; `live` (the names read after them) becomes
    the names read before them."""
    kept = []
    for stmt in reversed(statements):
        if isinstance(stmt, nodes.If):
            in_body, in_else = set(live), set(live)
            stmt.body = _live_statements(stmt.body, in_body, shared) or [nodes.Pass()]
            stmt.orelse = _live_statements(stmt.orelse, in_else, shared)
            live |= in_body | in_else
        elif getattr(stmt, "loop", False):
            stmt.body = _live_statements(stmt.body, set(shared), shared)
        elif (isinstance(stmt, nodes.Assign) and isinstance(stmt.targets[0], nodes.Name)
              and isinstance(stmt.value, nodes.Name) and stmt.targets[0].id not in live):
            continue
        live |= nodes.reads(stmt)
        kept.append(stmt)
    return kept[::-1]


def _mark_captured(tree, origin, counts):
    """Give each nested function its `captured` names; return all captured locals.
    `counts` are the function's `scopes.assignments`."""
    local = set(_parameters(tree.args)) | {name for name, n in counts.items() if n}
    outer = local | set(origin.cells)
    cells = set()
    nested = scopes.nested_functions(tree)
    for node in nested:
        _refuse_declarations(node, origin)
        node.captured = sorted(scopes.free_names(node) & outer)
        cells.update(name for name in node.captured if name in local)
    return cells, {n.name for n in nested if isinstance(n, nodes.FunctionDef)}


def _parameters(args):
    return [p.id for p in nodes.parameters(args)]


# -- early returns -------------------------------------------------------------


def _lift_returns(body):
    """Move the statements after an `if` that may return into its branches."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, nodes.If) and _may_return(stmt):
            rest = body[i + 1 :]
            stmt.body = _lift_returns(_extend_unless_returns(stmt.body, rest))
            stmt.orelse = _lift_returns(_extend_unless_returns(stmt.orelse, rest))
            return body[:i] + [stmt]
        if isinstance(stmt, nodes.Return):
            return body[: i + 1]
    return body


def _extend_unless_returns(branch, rest):
    return branch if branch and isinstance(branch[-1], nodes.Return) else branch + nodes.clone(rest)


def _may_return(stmt):
    """Whether `stmt` contains a `return` of this function (not of a loop's body)."""
    if isinstance(stmt, nodes.Return):
        return True
    if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef, nodes.Lambda)):
        return False
    return any(_may_return(child) for child in nodes.iter_child_nodes(stmt))


def _with_final_return(body, lineno):
    """Make every path through `body` end in a `return` (an implicit one on the line of
    the last statement, or `lineno`, the function's)."""
    last = body[-1] if body else None
    if isinstance(last, nodes.Return):
        return body
    if isinstance(last, nodes.If) and _may_return(last):
        last.body = _with_final_return(last.body, lineno)
        last.orelse = _with_final_return(last.orelse, lineno)
        return body
    line = nodes.lineno_of(last) if last is not None else None
    return body + [nodes.return_(nodes.constant(None), line if line is not None else lineno)]


# -- normalisation -------------------------------------------------------------


class _Normalizer:
    def __init__(self, helpers, origin, params, cells, counts, defined, declared=()):
        self.namer = helpers.namer
        self.declared = list(declared)  # its `global` and `nonlocal` statements
        self.shared = {name for stmt in declared for name in stmt.names}
        self.origin = origin
        self.versions = {p: p for p in params}  # each local's current name on this path
        self.bound = set(params)
        self.params = set(params)
        self.cells = cells  # locals read by nested functions
        self.counts = counts  # how often each local is assigned
        self.deleted = {}  # a local `del` unbound -> (its version then, the line of the del)
        self.captured_at = {}  # captured local -> the line of the first nested function
        #                        reading it on this path
        self.defined = defined  # the names of the nested `def`s
        self.renames = {}  # versions of captured variables that take the variable's name
        self.own_named = set()  # captured variables given their own name in this function
        #                        (or loop body, which becomes a function of its own)
        self.entries = []  # the versions on entering each enclosing `if`
        self.out = []
        self.lineno = None
        self.depth = 0
        self.returned = None
        self.carried = None  # the state of the loop whose body is being normalized
        self.helpers = helpers  # calls of pullback's functions (`iterate`, `appended`)
        self.comprehension_counts = collections.Counter()  # bindings in comprehensions
        self.capturers = collections.defaultdict(list)  # captured local -> the names of
        #                                                 the closures reading it (None:
        #                                                 a lambda no name holds;
        #                                                 CALLED_AT_ONCE)
        self.uses = None  # the function's `_ClosureUses`
        self.lambda_name = None  # the name the lambda being read is assigned to

    # statements

    def function_body(self, statements):
        """The ANF of a function's body (or a loop's), ending in its one `return`, after
        the function's `global` and `nonlocal` statements."""
        out = self.block(statements)
        result = self.versions[RETURN]
        if isinstance(result, str):
            result = nodes.name(result)
        return nodes.clone(self.declared) + out + [
            nodes.return_(result, nodes.lineno_of(statements[-1]))]

    def block(self, statements):
        saved, self.out = self.out, []
        for stmt in statements:
            self.lineno = nodes.lineno_of(stmt)
            self.statement(stmt)
        result, self.out = self.out, saved
        return result

    def statement(self, stmt):
        self.handler("stmt_", stmt, _UNSUPPORTED_STATEMENTS, "statement")(stmt)

    def handler(self, prefix, node, refused, what):
        """The method for `node`'s class, or the TransformError that refuses it."""
        kind = type(node).__name__
        if kind in refused:
            raise unsupported(refused[kind], node, self.origin, "not yet")
        method = getattr(self, prefix + kind, None)
        if method is None:
            raise unsupported(f"the {what} {kind}", node, self.origin)
        return method

    def stmt_Assign(self, stmt):
        targets = stmt.targets
        if len(targets) == 1:
            self.bind_target(targets[0], stmt.value)
            return
        value = self.atom(stmt.value)
        for target in targets:
            self.bind_target(target, value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.bind_target(stmt.target, stmt.value)

    def stmt_AugAssign(self, stmt):
        target = stmt.target
        if isinstance(target, nodes.Subscript):
            start = len(self.out)
            index = self.index(target.slice)
            current = self.atom(nodes.Subscript(value=target.value, slice=index,
                                                ctx=nodes.Load()))
            parts = [s.targets[0].id for s in self.out[start:] if isinstance(s, nodes.Assign)
                     and isinstance(s.targets[0], nodes.Name)]
            value = self.atom(nodes.binop(current, stmt.op, stmt.value))
            root = _root_name(target)
            # Python adds to an array item in place, then writes it back
            self.out[-1].updates = (root, current.id)
            self.out[-1].written_back = [self.versions.get(root, root)] + parts
            self.update_item(target.value, self.index_value(index), value)
            return
        if not isinstance(target, nodes.Name):
            raise unsupported("augmented assignment to an attribute", stmt, self.origin,
                              "objects are read, not updated")
        self.check_bound(target.id)
        before = self.versions.get(target.id, target.id)
        value = nodes.binop(nodes.name(target.id), stmt.op, stmt.value)
        self.bind_target(nodes.store(target.id), value)
        if target.id not in self.shared:
            self.out[-1].updates = (target.id, before)

    def stmt_Expr(self, stmt):
        value = stmt.value
        if isinstance(value, (nodes.Constant, nodes.Name)):
            return
        if self.local_method(value) == "pop":
            self.pop(value)
            return
        if self.item_method(value) == "pop":
            self.pop_item(value)
            return
        if self.item_method(value) in _UPDATES:
            self.update_item_by(value)
            return
        if self.local_method(value) in _UPDATES:
            func = value.func
            update = self.helper_call(_UPDATES[func.attr],
                                      [self.load(func.value)] + [self.atom(a) for a in value.args])
            self.emit_update(func.value.id, update)
            return
        if isinstance(value, nodes.Call):
            self.emit(nodes.expr(self.flatten(value)))
        else:
            self.atom(value)

    def stmt_Delete(self, stmt):
        """`del x` unbinds local variable `x`, which no later statement may read (`del
        x[i]` is `x.pop(i)` by now: `_items_deleted_by_pop`)."""
        for target in stmt.targets:
            if isinstance(target, nodes.Name):
                self.unbind(target.id)
            else:
                what = ("a slice" if isinstance(target, nodes.Subscript) and isinstance(
                    target.slice, nodes.Slice) else "an attribute" if isinstance(
                    target, nodes.Attribute) else "an item of a value the function does not "
                    "own (a global, an attribute)")
                raise unsupported(f"del of {what}", target, self.origin,
                                  "build the list or dict without it instead (xs[:i] + "
                                  "xs[j:], {k: v for k, v in d.items() if k != key})")

    def unbind(self, var):
        """`del var`: later reads of `var`'s version now are refused (`check_bound`). A
        local with no version here was assigned in a loop only (its variable, say), whose
        last value Python keeps after it."""
        if var in self.shared or var in self.cells or (
                var not in self.versions and not self.counts.get(var)):
            why = ("it is declared global or nonlocal" if var in self.shared else
                   "a nested function reads it" if var in self.cells else
                   "the function does not assign it")
            raise TransformError(f"del {var} is not supported: {why}", self.origin.filename,
                                 self.lineno, "del")
        self.check_bound(var)
        self.deleted[var] = (self.versions.get(var), self.lineno)

    def refuse_deleted_from_before(self, entry, deleted):
        """Refuse a loop body that ends with a variable it did not assign (its version
        at `entry`, the iteration's start) unbound by a `del` of its own (not among
        `deleted` before it): Python raises at the next iteration's `del` or read."""
        for var, (version, line) in self.deleted.items():
            if deleted.get(var) != (version, line) and entry.get(
                    var) == version == self.versions.get(var):
                raise TransformError(
                    f"del {var} in a loop that does not assign {var} again: Python raises "
                    f"at the next iteration's del or read of it. Delete it after the loop",
                    self.origin.filename, line, "del")

    def is_deleted(self, var):
        """Whether `var` is unbound by a `del` on this path."""
        deleted = self.deleted.get(var)
        return deleted is not None and self.versions.get(var) == deleted[0]

    def check_bound(self, var):
        """Refuse a read of `var` after `del var` (with no assignment between): Python
        raises UnboundLocalError there."""
        if self.is_deleted(var):
            raise TransformError(
                f"{var} is read after del {var} at line {self.deleted[var][1]}: Python raises "
                f"UnboundLocalError here. Assign {var} again first, or delete it after its "
                f"last read", self.origin.filename, self.lineno, "del")

    def stmt_Return(self, stmt):
        value = stmt.value if stmt.value is not None else nodes.constant(None)
        if hasattr(stmt, "exit"):
            value = nodes.tuple_([nodes.constant(stmt.exit)] + list(map(nodes.name, self.carried)))
        if self.depth == 0 and _is_atom_or_reference(value):
            self.versions[RETURN] = self.atom(value)
            return
        if self.returned is None:
            self.returned = self.namer.fresh("out" if self.carried is None else "iteration")
        self.bind_value(self.returned, value)
        self.versions[RETURN] = self.returned

    def stmt_If(self, stmt):
        test = self.atom(stmt.test)
        lineno = self.lineno
        attempt = getattr(stmt, "attempt", None)
        if attempt is not None:  # a try statement's: what it catches, and the name of that
            attempt = (self.atom(attempt[0]), self.load(attempt[1]))
        before, captured, deleted = self.versions, self.captured_at, self.deleted
        self.depth += 1
        self.entries.append(before)
        self.versions, self.captured_at = dict(before), dict(captured)
        self.deleted = dict(deleted)
        body = self.block(stmt.body)
        after_body, captured_in_body, deleted_in_body = (self.versions, self.captured_at,
                                                         self.deleted)
        self.versions, self.captured_at = dict(before), dict(captured)
        self.deleted = dict(deleted)
        orelse = self.block(stmt.orelse)
        after_else = self.versions
        self.captured_at = {**captured_in_body, **self.captured_at}  # captured on either path
        self.entries.pop()
        self.depth -= 1
        self.versions = _join(*(self.renamed(v) for v in (before, after_body)), body,
                              self.renamed(after_else), orelse, lineno)
        self.deleted = self.still_deleted([(deleted_in_body, after_body),
                                           (self.deleted, after_else)])
        self.lineno = lineno
        self.emit(nodes.if_(test, body, orelse))
        if attempt is not None:
            self.out[-1].attempt = attempt

    def still_deleted(self, paths):
        """`deleted` after paths joined, from each path's `(deleted, versions)` at its end:
        a variable unbound on one path stays unbound (Python raises on that path)."""
        return {var: (self.versions.get(var), line) for deleted, versions in paths
                for var, (version, line) in deleted.items() if versions.get(var) == version}

    def renamed(self, versions):
        """`versions` with the names a captured variable's version will take (`renames`):
        a branch that captures it has the variable's own name, the other the version
        that becomes it, and they need no join."""
        return {var: self.renames.get(name, name) for var, name in versions.items()}

    def stmt_For(self, stmt):
        self.loop(stmt, self.atom(stmt.iter), stmt.target)

    def stmt_While(self, stmt):
        self.loop(stmt, nodes.constant(None), None)

    def loop(self, stmt, items, target):
        """`loop_body` for the loop's body, then `iterate(loop_body, items, *state)`."""
        lineno = self.lineno
        inits = [nodes.name(self.versions[v]) if v in self.versions and not self.is_deleted(v)
                 else nodes.constant(None) for v in stmt.carried]
        body = self.loop_body(stmt, target)
        self.lineno = lineno
        self.emit(body)
        call = self.helper_call(loops.iterate, [nodes.name(body.name), items] + inits)
        result = self.namer.fresh("loop")
        self.emit(nodes.assign(result, call))
        flag = self.define(stmt.flag) if getattr(stmt, "flag", None) else None
        self.emit(nodes.unpack([flag] + [self.define(v) for v in stmt.carried],
                               nodes.name(result)))

    def loop_body(self, stmt, target):
        """The function `loop_body(item, *state)` running one iteration of `stmt`."""
        name = self.namer.fresh("loop_body")
        saved = self.versions, self.depth, self.returned, self.carried, self.own_named
        self.versions = {k: v for k, v in self.versions.items() if k != RETURN}
        self.depth, self.returned, self.carried = 0, None, stmt.carried
        self.own_named = set()
        state = [self.define(v) for v in stmt.carried]
        if isinstance(target, nodes.Name):
            item, unpack = self.define(target.id), []
        else:
            item = self.namer.fresh("item" if target is not None else "_")
            unpack = [] if target is None else [
                nodes.assign(target, nodes.name(item), nodes.lineno_of(stmt))]
        entry, deleted = dict(self.versions), dict(self.deleted)
        body = self.function_body(_lift_returns(unpack + stmt.body))
        self.refuse_deleted_from_before(entry, deleted)
        at_end = self.versions
        self.versions, self.depth, self.returned, self.carried, self.own_named = saved
        self.deleted = self.still_deleted([(self.deleted, at_end)])
        node = nodes.function_def(name, [item] + state, body, self.lineno)
        node.loop = True
        return node

    def stmt_Assert(self, stmt):
        msg = self.atom(stmt.msg) if stmt.msg is not None else None
        self.emit(nodes.located(nodes.Assert(test=self.atom(stmt.test), msg=msg), self.lineno))

    def stmt_Raise(self, stmt):
        exc = self.atom(stmt.exc) if stmt.exc is not None else None
        self.emit(nodes.located(nodes.Raise(exc=exc, cause=None), self.lineno))

    def stmt_Pass(self, stmt):
        pass

    def stmt_Import(self, stmt):
        """`import a.b as c` binds a version of `c` (`import a.b` binds `a`, which must
        not be assigned before)."""
        names = []
        for alias in stmt.names:
            bound = alias.asname or alias.name.split(".")[0]
            name = self.define(bound)
            if name != bound and alias.asname is None and "." in alias.name:
                raise unsupported(f"import {alias.name} after assigning {bound}", stmt,
                                  self.origin, f"write import {alias.name} as another name")
            names.append(nodes.alias(alias.name, None if name == alias.name.split(".")[0]
                                     and alias.asname is None else name))
        self.emit(nodes.Import(names=names))

    def stmt_ImportFrom(self, stmt):
        """`from m import x as y` binds a version of `y`."""
        if stmt.level:
            raise unsupported("a relative import inside a function", stmt, self.origin,
                              "import the module at the top of the file")
        names = []
        for alias in stmt.names:
            if alias.name == "*":
                raise unsupported("import *", stmt, self.origin, "name what you import")
            name = self.define(alias.asname or alias.name)
            names.append(nodes.alias(alias.name, None if name == alias.name else name))
        self.emit(nodes.ImportFrom(module=stmt.module, names=names, level=0))

    def stmt_FunctionDef(self, stmt):
        if stmt.decorator_list:
            raise unsupported("a decorated nested function", stmt, self.origin, "not yet")
        if stmt.name in self.versions:  # assigned before on this path
            raise unsupported(f"defining {stmt.name} again after it was assigned", stmt,
                              self.origin)
        self.closure_defaults(stmt.args)
        stmt.returns = None
        self.capture(stmt, stmt.name)
        self.bound.add(stmt.name)
        self.versions[stmt.name] = stmt.name
        self.emit(stmt)

    def closure_defaults(self, args):
        """Evaluate a nested function's default values here, as atoms."""
        args.defaults = [self.atom(d) for d in args.defaults]
        args.kw_defaults = [None if d is None else self.atom(d) for d in args.kw_defaults]
        for param in nodes.parameters(args):
            param.annotation = None

    # binding

    def bind_target(self, target, value):
        if isinstance(target, nodes.Name) and target.id in self.shared:
            self.emit(nodes.assign(target.id, self.atom(value)))  # the global itself
        elif isinstance(target, nodes.Name):
            name = self.new_name(target.id)
            if isinstance(value, nodes.Lambda):
                self.lambda_name = target.id
            self.bind_value(name, value)
            self.versions[target.id] = name
        elif isinstance(target, nodes.Subscript):
            value = self.atom(value)
            self.update_item(target.value, self.index_value(self.index(target.slice)), value)
        elif isinstance(target, (nodes.Tuple, nodes.List)) and _same_arity(target, value) and (
                not nodes.names_in(target) & nodes.names_in(value)):
            atoms = [self.atom(v) for v in value.elts]
            for elt, atom in zip(target.elts, atoms):
                self.bind_target(elt, atom)
        elif isinstance(target, (nodes.Tuple, nodes.List)):
            self.bind_unpacking(target, self.atom(value))
        else:
            raise unsupported("assignment to an attribute", target, self.origin,
                              "objects are read, not updated")

    def update_item_by(self, call):
        """`x[i].append(v)` (or `extend`) on an item of a local variable: the item updated,
        then written back into `x`, as `x[i][j] = v` is (`update_in_item`)."""
        args = [self.atom(a) for a in call.args]
        updated, write_back = self.update_in_item(call.func.value, _UPDATES[call.func.attr],
                                                  args)
        write_back(updated)

    def pop_item(self, call):
        """`x[i].pop(k)` on an item of a local variable: `xs_1, value = popped(x[i], k)`,
        `xs_1` written back into `x`; the value is the result."""
        args = [self.atom(a) for a in call.args]
        pair, write_back = self.update_in_item(call.func.value, mutation.popped, args)
        rest, value = self.namer.fresh("items"), self.namer.fresh("value")
        self.emit(nodes.unpack([rest, value], pair))
        write_back(nodes.name(rest))
        return nodes.name(value)

    def update_in_item(self, item, helper, args):
        """`helper(x[i], *args)` for the item `item` (`x[i]`, of a local variable `x`),
        which the statement updates in place: Python changes the item, which any other
        name for it sees, but `x` and the parts read to reach the item, which are
        written back. Its result, and the function writing a new item back into `x`
        (at the index evaluated once)."""
        inner_index = self.index(item.slice)
        start = len(self.out)
        inner = self.atom(nodes.Subscript(value=item.value, slice=inner_index,
                                          ctx=nodes.Load()))
        parts = [s.targets[0].id for s in self.out[start:] if isinstance(s, nodes.Assign)
                 and isinstance(s.targets[0], nodes.Name)]
        result = self.named(self.helper_call(helper, [inner] + args), "updated", flat=True)
        root = _root_name(item)
        self.out[-1].updates = (root, inner.id)
        self.out[-1].written_back = [self.versions.get(root, root)] + parts
        return result, lambda new: self.update_item(item.value, self.index_value(inner_index),
                                                    new)

    def update_item(self, container, index, value):
        """`x[index] = value` as `x_1 = with_item(x, index, value)`; `x[i][j] = v`
        updates `x[i]` first, then `x`."""
        if isinstance(container, nodes.Subscript):
            updated, write_back = self.update_in_item(container, mutation.with_item,
                                                      [index, value])
            write_back(updated)
            return
        if not (isinstance(container, nodes.Name) and container.id in self.versions):
            raise unsupported("assignment to an item of a value that is not a local variable",
                              container, self.origin,
                              "only the function's own arrays, lists and dicts are updated")
        update = self.helper_call(mutation.with_item, [self.load(container), index, value])
        self.emit_update(container.id, update)

    def emit_update(self, var, value):
        """`var_1 = value`, where `value` is `var` updated (by `with_item`, `appended`, ...):
        its first argument, the version read before the others were (a closure among them
        may have given `var` its own name since)."""
        before = value.args[0].id
        self.emit(nodes.assign(self.define(var), value))
        self.out[-1].updates = (var, before)

    def index_value(self, index):
        """An atom for the value of subscript syntax (`nodes.index_value`), its slices
        and tuples named."""
        return nodes.index_value(index, lambda parts: nodes.call("slice", parts),
                                 lambda node, hint: self.named(node, hint, flat=True))

    def helper_call(self, fn, args):
        """A call of pullback's `fn`, marked for the reverse pass (`naming.HelperCalls`)."""
        return self.helpers(fn, args)

    def item_method(self, expr):
        """The method name in `x[i].method(...)` on an item (of an item...) of a local
        variable `x`, else None."""
        receiver = expr.func.value if isinstance(expr, nodes.Call) and isinstance(
            expr.func, nodes.Attribute) else None
        if not isinstance(receiver, nodes.Subscript) or expr.keywords or any(
                isinstance(a, nodes.Starred) for a in expr.args):
            return None
        while isinstance(receiver, nodes.Subscript):
            receiver = receiver.value
        return expr.func.attr if isinstance(receiver, nodes.Name) and (
            receiver.id in self.versions) else None

    def local_method(self, expr):
        """The method name in `x.method(...)` on a local variable `x`, else None."""
        if (isinstance(expr, nodes.Call) and isinstance(expr.func, nodes.Attribute)
                and isinstance(expr.func.value, nodes.Name)
                and expr.func.value.id in self.versions and not expr.keywords
                and not any(isinstance(a, nodes.Starred) for a in expr.args)):
            return expr.func.attr
        return None

    def bind_unpacking(self, target, value):
        if any(isinstance(t, nodes.Starred) for t in target.elts):
            self.bind_starred(target, value)
            return
        stores, nested = [], []
        for elt in target.elts:
            if isinstance(elt, nodes.Name):
                stores.append(self.define(elt.id))
            else:
                temp = self.namer.fresh("items")
                stores.append(temp)
                nested.append((elt, nodes.name(temp)))
        targets = nodes.tuple_([nodes.store(s) for s in stores], nodes.Store())
        self.emit(nodes.assign(targets, value, self.lineno))
        for elt, temp in nested:
            self.bind_target(elt, temp)

    def bind_starred(self, target, value):
        """`a, *rest, b = value` as `a = value[0]`, `rest = list(value[1:-1])`,
        `b = value[-1]`."""
        elts = target.elts
        star = next(i for i, e in enumerate(elts) if isinstance(e, nodes.Starred))
        after = len(elts) - star - 1
        for i, elt in enumerate(elts):
            if i == star:
                upper = nodes.constant(-after) if after else None
                part = nodes.Subscript(value=value, slice=nodes.Slice(nodes.constant(star), upper,
                                                                      None), ctx=nodes.Load())
                self.bind_target(elt.value, nodes.call("list", [part]))
            else:
                index = nodes.constant(i if i < star else i - len(elts))
                self.bind_target(elt, nodes.Subscript(value=value, slice=index,
                                                      ctx=nodes.Load()))

    def bind_value(self, name, value):
        """`name = value`, with `value` flattened to one operation."""
        if _is_conditional(value):
            self.conditional(value, name)
            return
        value = self.atom(value) if self.is_atomic(value) else self.flatten(value)
        self.emit(nodes.assign(name, value, self.lineno))

    def is_atomic(self, expr):
        """Whether `atom(expr)` binds no temporary for `expr` itself."""
        return (
            isinstance(expr, (nodes.Name, nodes.Constant, nodes.NamedExpr) + _COMPREHENSIONS)
            or self.is_reference(expr)
            or _folded_constant(expr) is not None
        )

    def new_name(self, var):
        """A new single-assignment name for user variable `var` (not yet in scope). A
        variable a closure reads is assigned again only where no closure can see the new
        value (`_ClosureUses.settled`); the closures keep the variable's own name."""
        if var in self.captured_at and var in self.bound and self.uses.settled(
                var, self.capturers[var], self.lineno):
            name = self.namer.fresh(var)
            self.bound.update((var, name))
            return name
        if var in self.captured_at and var in self.bound:
            raise TransformError(
                f"{var} is read by the nested function at line {self.captured_at[var]} and "
                "assigned again here; the closure would see the new value, which is not "
                "supported: assign the new value to another name",
                self.origin.filename, self.lineno, "late binding")
        if var in self.captured_at:
            name = var
            self.own_named.add(var)
        elif var in self.bound or (var in self.cells and self.counts[var] > 1):
            name = self.namer.fresh(var)
        else:
            name = var
        self.bound.update((var, name))
        return name

    def capture(self, node, name=None):
        """Fix the values of the variables nested function `node` (called `name`, if a
        name holds it) reads."""
        for var in node.captured:
            self.check_bound(var)
            self.capturers[var].append(name)
            current = self.versions.get(var)
            if var in self.origin.cells:
                continue
            if var in self.captured_at:
                self.bind_captured_again(var, current)
                continue
            if current is None and var not in self.defined:
                raise TransformError(
                    f"{var} is read by a nested function defined here before it is assigned; "
                    f"assign {var} first (only functions defined with `def` may come later)",
                    self.origin.filename, self.lineno, "late binding")
            if current not in (None, var):
                self.take_own_name(var, current)
            self.captured_at[var] = self.lineno

    def bind_captured_again(self, var, current):
        """`var`, captured already, is read by another closure where its version is
        `current`: a closure in a loop's body (a function of its own) bound the name
        `var` there only, so it is bound here too. Bound here already, to an earlier
        version, the closure would read that one: refused."""
        if current in (None, var) or self.renames.get(current) == var:
            return
        if var in self.own_named:
            raise TransformError(
                f"{var} is read by the nested function defined here, after it was assigned "
                f"again (a nested function at line {self.captured_at[var]} read it before); "
                "the closures would see different values, which is not supported: assign "
                "the new value to another name", self.origin.filename, self.lineno,
                "late binding")
        self.emit(nodes.assign(var, nodes.name(current), self.lineno))
        self.versions[var] = var
        self.own_named.add(var)

    def take_own_name(self, var, current):
        """Name `var`'s version `current` as the variable itself, which closures read.
        A version from before an enclosing `if` is on the other branch's paths too, where
        another version may take the name: it is copied instead of renamed."""
        if any(current in entry.values() for entry in self.entries):
            self.emit(nodes.assign(var, nodes.name(current), self.lineno))
        else:
            self.renames[current] = var
        self.versions[var] = var
        self.bound.add(var)
        self.own_named.add(var)

    def captured_here(self, var):
        """Whether `var`'s version changed because a closure captured it (`capture`), which
        renames it, rather than because something assigned it."""
        return self.versions.get(var) == var and var in self.captured_at

    def define(self, var):
        """A new single-assignment name for `var`, in scope from now on."""
        name = self.new_name(var)
        self.versions[var] = name
        return name

    def emit(self, stmt):
        nodes.located(stmt, self.lineno)
        self.out.append(stmt)

    # expressions

    def atom(self, expr):
        """An atom holding the value of `expr`, binding temporaries as needed."""
        if isinstance(expr, nodes.Name):
            return self.load(expr)
        if isinstance(expr, nodes.Constant) or self.is_reference(expr):
            return expr
        folded = _folded_constant(expr)
        if folded is not None:
            return folded
        if isinstance(expr, nodes.NamedExpr):
            value = self.atom(expr.value)
            self.emit(nodes.assign(self.define(expr.target.id), value, self.lineno))
            return nodes.name(self.versions[expr.target.id])
        if _is_conditional(expr):
            return self.conditional(expr)
        if isinstance(expr, _COMPREHENSIONS):
            return self.comprehension(expr)
        flat = self.flatten(expr)
        temp = self.namer.for_value(flat)
        self.emit(nodes.assign(temp, flat, self.lineno))
        return nodes.name(temp)

    def load(self, name):
        self.check_bound(name.id)
        return nodes.name(self.versions.get(name.id, name.id))

    def is_reference(self, expr):
        """Whether `expr` is a dotted name rooted at a global or at one of pullback's
        helpers (`np.pi`), which does not change. A user's free variable is read like
        a local: `y.a` of a record `y` is a field, with a cotangent."""
        path = nodes.dotted_path(expr)
        if path is None:
            return False
        root = path.split(".")[0]
        return root not in self.versions and (
            root not in self.origin.cells or root in self.origin.helpers)

    def flatten(self, expr):
        """`expr` as one operation on atoms."""
        return self.handler("expr_", expr, _UNSUPPORTED_EXPRESSIONS, "expression")(expr)

    def expr_BinOp(self, expr):
        return nodes.binop(self.atom(expr.left), expr.op, self.atom(expr.right))

    def expr_UnaryOp(self, expr):
        return nodes.UnaryOp(op=expr.op, operand=self.atom(expr.operand))

    def expr_Compare(self, expr):
        return nodes.Compare(left=self.atom(expr.left), ops=expr.ops,
                             comparators=[self.atom(expr.comparators[0])])

    def expr_Call(self, expr):
        if self.local_method(expr) == "pop":
            return self.pop(expr)
        if self.item_method(expr) == "pop":
            return self.pop_item(expr)
        func = expr.func
        if isinstance(func, nodes.Attribute) and not self.is_reference(func):
            func = nodes.attribute(self.atom(func.value), func.attr)
        elif not self.is_reference(func):
            if isinstance(func, nodes.Lambda):  # `(lambda t: ...)(x)`: called here only
                self.lambda_name = CALLED_AT_ONCE
            func = self.atom(func)
        if any(isinstance(a, nodes.Starred) for a in expr.args) or any(
            k.arg is None for k in expr.keywords
        ):
            return self.starred_call(func, expr)
        args = [self.atom(a) for a in expr.args]
        keywords = [nodes.kw(k.arg, self.atom(k.value)) for k in expr.keywords]
        call = nodes.call(func, args, keywords)
        if hasattr(expr, "helper"):
            call.helper = expr.helper
        return call

    def pop(self, expr):
        """`xs.pop(i)` as `xs_1, value = popped(xs, i)`; the value is the result."""
        receiver = expr.func.value
        args = [self.load(receiver)] + [self.atom(a) for a in expr.args]
        pair = self.named(self.helper_call(mutation.popped, args), "popped", flat=True)
        self.out[-1].updates = (receiver.id, args[0].id)
        value = self.namer.fresh("value")
        self.emit(nodes.unpack([self.define(receiver.id), value], pair))
        return nodes.name(value)

    def starred_call(self, func, expr):
        """`f(a, *xs, k=c, **kw)` as `f(*args, **kwargs)` on a tuple and a dict."""
        if len(expr.args) == 1 and isinstance(expr.args[0], nodes.Starred):
            args = self.atom(expr.args[0].value)
        else:
            args = self.named(nodes.tuple_(expr.args), "args")
        items = nodes.Dict(keys=[None if k.arg is None else nodes.constant(k.arg)
                                 for k in expr.keywords],
                           values=[k.value for k in expr.keywords])
        kwargs = self.named(items, "kwargs")
        starred = [nodes.Starred(value=args, ctx=nodes.Load())]
        return nodes.call(func, starred, [nodes.kw(None, kwargs)])

    def named(self, expr, base, flat=False):
        """A fresh name `base` bound to `expr`, flattened (unless `flat` already)."""
        name = self.namer.fresh(base)
        self.emit(nodes.assign(name, expr if flat else self.flatten(expr), self.lineno))
        return nodes.name(name)

    def expr_Lambda(self, expr):
        self.closure_defaults(expr.args)
        name, self.lambda_name = self.lambda_name, None
        self.capture(expr, name)
        return expr

    def expr_Attribute(self, expr):
        if expr.attr in _LIST_UPDATES and isinstance(expr.value, nodes.Name) and (
                expr.value.id in self.versions):  # `add = xs.append`: not called here
            raise unsupported(f"taking the method {expr.value.id}.{expr.attr} as a value",
                              expr, self.origin, f"pullback follows the updates a list's or "
                              f"dict's method makes where it is called on the variable: "
                              f"call {expr.value.id}.{expr.attr}(...) itself")
        return nodes.attribute(self.atom(expr.value), expr.attr)

    def expr_Subscript(self, expr):
        return nodes.Subscript(value=self.atom(expr.value), slice=self.index(expr.slice),
                               ctx=nodes.Load())

    def index(self, index):
        if isinstance(index, nodes.Slice):
            return nodes.Slice(*(self.atom(p) if p is not None else None
                                 for p in (index.lower, index.upper, index.step)))
        if isinstance(index, nodes.Tuple):
            return nodes.tuple_([self.index(e) for e in index.elts])
        return self.atom(index)

    def expr_Tuple(self, expr):
        return nodes.tuple_(self.items(expr.elts))

    def expr_List(self, expr):
        return nodes.list_(self.items(expr.elts))

    def expr_Set(self, expr):
        return nodes.Set(elts=self.items(expr.elts))

    def items(self, elts):
        """Atoms for the items of a literal; `*x` stays starred."""
        return [nodes.Starred(value=self.atom(e.value), ctx=nodes.Load())
                if isinstance(e, nodes.Starred) else self.atom(e) for e in elts]

    def expr_Dict(self, expr):
        return nodes.Dict(keys=[None if k is None else self.atom(k) for k in expr.keys],
                          values=[self.atom(v) for v in expr.values])

    def expr_JoinedStr(self, expr):
        values = []
        for value in expr.values:
            if isinstance(value, nodes.FormattedValue):
                value = nodes.FormattedValue(value=self.atom(value.value),
                                             conversion=value.conversion,
                                             format_spec=value.format_spec)
            values.append(value)
        return nodes.JoinedStr(values=values)

    # comprehensions

    def comprehension(self, expr):
        """`[e for x in xs if c]` (and set, dict and generator comprehensions) as a
        loop that appends to a new list: a name for the list it builds."""
        if any(isinstance(n, nodes.NamedExpr) for n in nodes.walk(expr)):
            raise unsupported("an assignment expression in a comprehension", expr, self.origin)
        expr = self.comprehension_scope(expr)
        result, empty, update, value = _COMPREHENSION_FORMS[type(expr)]
        result = self.namer.fresh(result)
        body = [nodes.assign(result, self.helper_call(update, [nodes.name(result)] + value(expr)),
                             self.lineno)]
        for generator in reversed(expr.generators):
            for test in reversed(generator.ifs):
                body = [nodes.if_(test, body, [], self.lineno)]
            loop = nodes.located(nodes.For(target=generator.target, iter=generator.iter,
                                           body=body + [flow.exit_(flow.NEXT, self.lineno)],
                                           orelse=[], type_comment=None), self.lineno)
            loop.carried = [result]
            body = [loop]
        self.bind_target(nodes.store(result), empty())
        self.statement(body[0])
        return self.load(nodes.name(result))

    def comprehension_scope(self, expr):
        """A copy of comprehension `expr` whose variables have names of their own,
        as they are local to the comprehension."""
        expr = nodes.clone(expr)
        names = sorted({n.id for g in expr.generators for n in nodes.walk(g.target)
                        if isinstance(n, nodes.Name)})
        fresh = {name: self.namer.fresh(name) for name in names
                 if name in self.params or name in self.origin.cells
                 or self.counts[name] > self.comprehension_counts[name]}
        first = expr.generators[0].iter
        self.refuse_shadowed_captures(expr, first, fresh)
        for node in nodes.walk(expr):
            if isinstance(node, nodes.Name) and node.id in fresh and not _within(node, first):
                node.id = fresh[node.id]
        return expr

    def refuse_shadowed_captures(self, expr, first, renamed):
        """Refuse a closure in comprehension `expr` that reads one of its variables
        `renamed` apart from a variable outside it of the same name: the closure's code
        is the user's, which must read the variable under its own name. (The first
        iterable, `first`, is evaluated outside the comprehension.)"""
        for node in nodes.walk(expr):
            if isinstance(node, (nodes.Lambda, nodes.FunctionDef)) and not _within(node, first):
                shadowed = sorted(scopes.free_names(node) & set(renamed))
                if shadowed:
                    raise TransformError(
                        f"the function defined here reads {shadowed[0]}, a variable of the "
                        f"comprehension that has the name of a variable outside it: give the "
                        f"comprehension's variable another name",
                        self.origin.filename, getattr(node, "lineno", self.lineno),
                        "closure in a comprehension")

    # control flow inside expressions

    def conditional(self, expr, result=None):
        """`and`, `or`, `x if c else y` and chained comparisons, as `if` statements."""
        if isinstance(expr, nodes.IfExp):
            return self.choose(self.atom(expr.test), expr.body, expr.orelse, result)
        if isinstance(expr, nodes.BoolOp):
            first = self.atom(expr.values[0])
            rest = expr.values[1:]
            rest = rest[0] if len(rest) == 1 else nodes.BoolOp(op=expr.op, values=rest)
            if isinstance(expr.op, nodes.And):
                return self.choose(first, rest, first, result)
            return self.choose(first, first, rest, result)
        return self.chain(self.atom(expr.left), expr.ops, expr.comparators, result)

    def chain(self, left, ops, comparators, result=None):
        """`a < b < c`: `b` evaluated once, `c` only when `a < b`."""
        right = self.atom(comparators[0])
        first = nodes.Compare(left=left, ops=[ops[0]], comparators=[right])
        if len(ops) == 1:
            if result is None:
                return self.atom(first)
            self.emit(nodes.assign(result, first, self.lineno))
            return nodes.name(result)
        first = self.atom(first)
        rest = _Deferred(lambda name: self.chain(right, ops[1:], comparators[1:], name))
        return self.choose(first, rest, first, result)

    def choose(self, test, then, orelse, result=None):
        """A name bound to `then` when `test` is true, else to `orelse`."""
        result = result or self.namer.fresh("choice")
        before = dict(self.versions)
        self.entries.append(before)  # a closure in a branch copies the version it names
        body, captured_in_body = self.branch(then, result)
        alternative, captured_in_else = self.branch(orelse, result)
        self.entries.pop()
        for var in sorted(captured_in_body | captured_in_else):
            for branch, captured in ((body, captured_in_body), (alternative, captured_in_else)):
                if var not in captured:  # the other path names the variable's version too
                    branch.append(nodes.assign(var, nodes.name(before[var]), self.lineno))
            self.versions[var] = var
        self.emit(nodes.if_(test, body, alternative))
        return nodes.name(result)

    def branch(self, expr, result):
        """The statements binding `result` to `expr` on one path of a conditional
        expression, and the variables a closure in them named by their own name, from the
        version they had before (a comprehension's own variables end with it)."""
        saved_out, saved_versions = self.out, dict(self.versions)
        self.out = []
        if isinstance(expr, _Deferred):
            expr.evaluate(result)
        else:
            self.bind_value(result, expr)
        if any(self.versions.get(k) != v and not self.captured_here(k)
               for k, v in saved_versions.items()):
            raise unsupported("an assignment expression inside and/or/if-else", expr,
                              self.origin)
        captured = {k for k, v in saved_versions.items()
                    if v != k and self.versions.get(k) == k and self.captured_here(k)}
        self.versions = saved_versions
        body, self.out = self.out, saved_out
        return body, captured


_COMPREHENSIONS = (nodes.ListComp, nodes.GeneratorExp, nodes.SetComp, nodes.DictComp)
# A list a comprehension builds is its own, and no one sees it until it is built: it is
# appended to in place (a primal loop runs so; a differentiated one runs the copying
# update, which `optimize.in_place_lists` makes in place again where that holds).
_COMPREHENSION_FORMS = {  # type: (name of the result, its empty value, the update, its args)
    nodes.ListComp: ("items", lambda: nodes.list_([]), mutation.appended_into,
                     lambda e: [e.elt]),
    nodes.GeneratorExp: ("items", lambda: nodes.list_([]), mutation.appended_into,
                         lambda e: [e.elt]),
    nodes.SetComp: ("members", lambda: nodes.call("set"), mutation.with_member,
                    lambda e: [e.elt]),
    nodes.DictComp: ("mapping", lambda: nodes.Dict(keys=[], values=[]), mutation.with_item,
                     lambda e: [e.key, e.value]),
}


def _within(node, tree):
    return any(n is node for n in nodes.walk(tree))


class _Deferred:
    """An expression whose statements are emitted only where it is evaluated."""

    def __init__(self, evaluate):
        self.evaluate = evaluate


def _is_chain(expr):
    return isinstance(expr, nodes.Compare) and len(expr.ops) > 1


def _is_conditional(expr):
    return isinstance(expr, (nodes.BoolOp, nodes.IfExp)) or _is_chain(expr)


def _same_arity(target, value):
    return (
        isinstance(value, (nodes.Tuple, nodes.List))
        and len(value.elts) == len(target.elts)
        and not any(isinstance(e, nodes.Starred) for e in target.elts + value.elts)
    )


def _items_deleted_by_pop(statements, local):
    """`statements` with `del x[i]` (`del x[i][j]`, ...: an item, not a slice, of a
    variable among `local`) written as the list's or dict's `x.pop(i)`, its value
    dropped, before the loops' state is found (`flow`): the same update of `x`. Nested
    functions are left for their own transformation."""
    out = []
    for stmt in statements:
        if isinstance(stmt, nodes.Delete):
            out.extend(_deletes(stmt, local))
            continue
        for field in ("body", "orelse", "finalbody"):
            if not isinstance(stmt, (nodes.FunctionDef, nodes.ClassDef)) and isinstance(
                    getattr(stmt, field, None), list):
                setattr(stmt, field, _items_deleted_by_pop(getattr(stmt, field), local))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = _items_deleted_by_pop(handler.body, local)
        out.append(stmt)
    return out


def _deletes(stmt, local):
    """The statements of `del a, b, ...`, one per target, in order."""
    out = []
    for target in stmt.targets:
        if isinstance(target, nodes.Subscript) and not isinstance(
                target.slice, nodes.Slice) and _root_name(target) in local:
            pop = nodes.Attribute(value=target.value, attr="pop", ctx=nodes.LOAD)
            out.append(nodes.expr(nodes.call(pop, [target.slice]), stmt.lineno))
        else:
            out.append(nodes.located(nodes.Delete(targets=[target]), stmt.lineno))
    return out


def _root_name(target):
    while isinstance(target, (nodes.Subscript, nodes.Attribute)):
        target = target.value
    return target.id if isinstance(target, nodes.Name) else None


def _is_atom(expr):
    return isinstance(expr, (nodes.Name, nodes.Constant))


def _folded_constant(expr):
    """`-1` and `+2.5` as constants rather than operations."""
    if (
        isinstance(expr, nodes.UnaryOp)
        and isinstance(expr.op, (nodes.USub, nodes.UAdd))
        and isinstance(expr.operand, nodes.Constant)
        and isinstance(expr.operand.value, (int, float, complex))
        and not isinstance(expr.operand.value, bool)
    ):
        value = expr.operand.value
        return nodes.constant(-value if isinstance(expr.op, nodes.USub) else value)
    return None


# -- loop bodies as closures ----------------------------------------------------


def _capture_loop_state(tree, origin):
    """Give each loop body its `captured` names, once names are final, and check
    the closures created inside loops."""
    if not any(getattr(stmt, "loop", False) for stmt in nodes.statements(tree)):
        return
    local = set(origin.cells) | set(_parameters(tree.args))
    for node in (part for stmt in tree.body for part in nodes.walk(stmt)):
        if isinstance(node, nodes.Name) and not isinstance(node.ctx, nodes.Load):
            local.add(node.id)
        elif isinstance(node, nodes.FunctionDef):
            local.add(node.name)
    _check_loop_bodies(tree.body, local, set(), origin)


def _check_loop_bodies(statements, local, iteration, origin):
    """Mark the loop bodies among `statements`; `iteration` holds the variables of
    the iterations of the loops around them."""
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            _check_loop_bodies(stmt.body, local, iteration, origin)
            _check_loop_bodies(stmt.orelse, local, iteration, origin)
        elif getattr(stmt, "loop", False):
            stmt.captured = sorted(scopes.free_names(stmt) & local)
            stored = {n.id for n in nodes.walk(stmt) if isinstance(n, nodes.Name)
                      and isinstance(n.ctx, nodes.Store)}
            own = iteration | set(_parameters(stmt.args)) | (
                stored - _invariant_copies(stmt, stored | set(_parameters(stmt.args))))
            _check_loop_bodies(stmt.body, local, own, origin)
            for inner in stmt.body:
                _check_escapes(inner, stmt.body, own, origin)


def _invariant_copies(body, assigned):
    """The names loop body `body` assigns only copies of a name it does not assign
    (`assigned`: the names it stores, and its parameters), as `bind_captured_again`
    binds a captured parameter's name again: they hold the same value in every
    iteration, so a closure reading them sees no later value."""
    copies = collections.defaultdict(list)
    for node in nodes.walk(body):
        if isinstance(node, nodes.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], nodes.Name):
            copies[node.targets[0].id].append(node.value)
    stores = nodes.store_counts(body)
    return {name for name, values in copies.items() if len(values) == stores[name]
            and all(isinstance(v, nodes.Name) and v.id not in assigned for v in values)}


def _check_escapes(stmt, body, iteration, origin):
    """`_check_escape` for each closure `stmt` makes, in the loop body `body`."""
    if isinstance(stmt, nodes.If):
        for inner in stmt.body + stmt.orelse:
            _check_escapes(inner, body, iteration, origin)
    else:
        _check_escape(stmt, body, iteration, origin)


def _check_escape(stmt, statements, iteration, origin):
    """Refuse a closure made in a loop, reading a variable of the iteration, that
    outlives the iteration: Python's closure would see the variable's later values."""
    closure = _closure_made_by(stmt)
    if closure is None:
        return
    name, node = closure
    read = sorted(set(node.captured) & iteration)
    if read and not _only_called(name, statements, stmt):
        raise TransformError(
            f"the function defined here reads {read[0]}, which the loop assigns, and is "
            "used after its iteration (stored, returned or passed on); Python would "
            f"call it with a later value of {read[0]}: pass {read[0]} as an argument "
            "or a default value instead",
            origin.filename, nodes.lineno_of(stmt), "late binding")


def _closure_made_by(stmt):
    if isinstance(stmt, nodes.FunctionDef):
        return None if getattr(stmt, "loop", False) else (stmt.name, stmt)
    if isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Lambda):
        return stmt.targets[0].id, stmt.value
    return None


def _only_called(name, body, definition):
    """Whether `name` is only ever called in `body`, or passed to a function call."""
    for stmt in body:
        for node in _walk_except(stmt, definition):
            if isinstance(node, nodes.Call):
                args = node.args + [k.value for k in node.keywords]
                stores = isinstance(node.func, nodes.Attribute) or hasattr(node, "helper")
                if stores and any(nodes.is_name(a, name) for a in args):
                    return False
            elif isinstance(node, (nodes.Tuple, nodes.List, nodes.Dict, nodes.Set)):
                elts = node.values if isinstance(node, nodes.Dict) else node.elts
                if any(nodes.is_name(e, name) for e in elts):
                    return False
            if isinstance(node, nodes.Assign) and nodes.is_name(node.value, name):
                return False
    return True


def _walk_except(node, skipped):
    if node is skipped:
        return
    yield node
    for child in nodes.iter_child_nodes(node):
        yield from _walk_except(child, skipped)


# -- joins after an if ---------------------------------------------------------


def _join(before, after_body, body, after_else, orelse, lineno):
    """One name per variable after an `if`, renaming or copying inside branches.

    Returns, which assign the same name in every branch, need no join. A version
    named as the variable itself is a captured one (see `capture`), which closures
    read by that name: the other branch's version takes it.
    """
    joined = dict(before)
    for var in sorted(set(after_body) | set(after_else)):
        in_body, in_else = after_body.get(var), after_else.get(var)
        if in_body == in_else:
            joined[var] = in_body
            continue
        existing = before.get(var)
        captured_in_else = in_else == var != existing
        if in_body is not None and in_body != existing and not captured_in_else:
            target, mine, other, other_version = in_body, body, orelse, in_else
        else:  # a closure in `orelse` reads the variable by its own name: keep it
            target, mine, other, other_version = in_else, orelse, body, in_body
        if target == var and other_version not in (None, existing) and _assigns(other, var):
            # the other branch also named a version `var`, for its closures, before its
            # last: the last takes no second `var`, and this branch copies into it
            _copy_into(mine, other_version, nodes.name(var), lineno)
            target = other_version
        else:
            _rename_or_copy(other, other_version, target, existing, lineno)
        joined[var] = target
    return joined


def _assigns(branch, var):
    """Whether the statements `branch` assign `var` (in their own scope)."""
    return any(isinstance(n, nodes.Name) and n.id == var and isinstance(n.ctx, nodes.Store)
               for n in nodes.walk_scope(*branch))


def _rename_or_copy(branch, version, target, existing, lineno):
    if version is None:
        return
    if version == existing:
        _copy_into(branch, target, nodes.name(version), lineno)
    else:
        _rename(branch, version, target)


def _copy_into(branch, target, value, lineno):
    """`target = value` at the end of `branch`, on the line of its last statement (or
    `lineno`, the `if`'s, in an empty one)."""
    last = nodes.lineno_of(branch[-1]) if branch else None
    branch.append(nodes.assign(target, value, last if last is not None else lineno))


def _rename(branch, old, new):
    for stmt in branch:
        for node in nodes.walk(stmt):
            if isinstance(node, nodes.Name) and node.id == old:
                node.id = new
            annotations.rename_version(node, old, new)


# -- the validator ---------------------------------------------------------------


def check_anf(tree):
    """Raise AssertionError unless FunctionDef `tree` has only the forms above, each
    local assigned once on any path and each statement on a line of the user's code
    (which messages name), each update naming a version it reads: a broken contract
    is a bug of pullback's."""
    _check_block(tree.body, top=True)
    if not tree.body or not isinstance(tree.body[-1], nodes.Return):
        raise AssertionError("ANF: the body must end with its only return")
    _check_single_assignment(tree.body, set(_parameters(tree.args)))
    annotations.check(tree)
    _check_updates(tree)


def _check_updates(tree):
    """Raise AssertionError unless each update in place names, as the version it
    updates, a name its statement reads (a rename must follow it)."""
    for node in nodes.walk(tree):
        updates = getattr(node, "updates", None)
        if updates is not None and updates[1] not in nodes.reads(node.value):
            raise AssertionError(f"ANF: the update of {updates[0]} at line {node.lineno} "
                                 f"names {updates[1]}, which it does not read")


def _check_single_assignment(statements, assigned):
    """Raise AssertionError if a name is assigned twice on one path through
    `statements` (`assigned`: the names bound before them, updated)."""
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            body, orelse = set(assigned), set(assigned)
            _check_single_assignment(stmt.body, body)
            _check_single_assignment(stmt.orelse, orelse)
            assigned |= body | orelse
            continue
        if isinstance(stmt, nodes.FunctionDef):
            bound = [stmt.name]
        elif isinstance(stmt, nodes.Assign):
            target = stmt.targets[0]
            bound = [t.id for t in target.elts] if isinstance(target, nodes.Tuple) else [
                target.id]
        else:
            continue
        for name in bound:
            if name in assigned and name != "_":
                raise AssertionError(f"ANF: {name} assigned again, line {stmt.lineno}")
            assigned.add(name)


def _check_block(body, top=False):
    for i, stmt in enumerate(body):
        if getattr(stmt, "lineno", None) is None and not isinstance(stmt, nodes.Pass):
            raise AssertionError(f"ANF: {nodes.dump(stmt)[:200]} has no line of the user's")
        if isinstance(stmt, nodes.Return):
            if not (top and i == len(body) - 1):
                raise AssertionError(f"ANF: return before the end, line {stmt.lineno}")
            _require_atom(stmt.value)
        elif isinstance(stmt, nodes.Assign):
            _check_assign(stmt)
        elif isinstance(stmt, nodes.Expr):
            _check_operation(stmt.value, calls_only=True)
        elif isinstance(stmt, nodes.If):
            _require_atom(stmt.test)
            _check_block(stmt.body)
            _check_block(stmt.orelse)
        elif isinstance(stmt, nodes.Assert):
            _require_atom(stmt.test)
            if stmt.msg is not None:
                _require_atom(stmt.msg)
        elif isinstance(stmt, nodes.Raise):
            if stmt.exc is not None:
                _require_atom(stmt.exc)
        elif isinstance(stmt, nodes.FunctionDef):
            _check_closure(stmt)
            if getattr(stmt, "loop", False):
                check_anf(stmt)
        elif not isinstance(stmt, (nodes.Pass, nodes.Import, nodes.ImportFrom, nodes.Global,
                                   nodes.Nonlocal)):
            # Pass: a branch with nothing left in it
            raise AssertionError(f"ANF: unexpected statement {type(stmt).__name__}")


def _check_assign(stmt):
    if len(stmt.targets) != 1:
        raise AssertionError("ANF: one target per assignment")
    target = stmt.targets[0]
    if isinstance(target, nodes.Tuple):
        if not all(isinstance(t, nodes.Name) for t in target.elts):
            raise AssertionError("ANF: unpacking targets must be names")
        _require_atom(stmt.value)
    elif not isinstance(target, nodes.Name):
        raise AssertionError("ANF: assignment targets must be names")
    elif not _is_atom_or_reference(stmt.value):
        _check_operation(stmt.value)


def _check_operation(value, calls_only=False):
    if isinstance(value, nodes.Call):
        func = value.func
        if isinstance(func, nodes.Attribute) and nodes.dotted_path(func) is None:
            _require_atom(func.value)
        elif not _is_atom_or_reference(func):
            raise AssertionError("ANF: a callee must be an atom or a method of one")
        _require_atoms(_unstarred(value.args) + [k.value for k in value.keywords])
        return
    if calls_only:
        raise AssertionError("ANF: expression statements must be calls")
    if isinstance(value, nodes.BinOp):
        _require_atoms([value.left, value.right])
    elif isinstance(value, nodes.UnaryOp):
        _require_atom(value.operand)
    elif isinstance(value, nodes.Compare):
        if len(value.ops) != 1:
            raise AssertionError("ANF: one comparison operator")
        _require_atoms([value.left] + value.comparators)
    elif isinstance(value, nodes.Attribute):
        _require_atom(value.value)
    elif isinstance(value, nodes.Subscript):
        _require_atom(value.value)
        _check_index(value.slice)
    elif isinstance(value, (nodes.Tuple, nodes.List, nodes.Set)):
        _require_atoms(_unstarred(value.elts))
    elif isinstance(value, nodes.Dict):
        _require_atoms([k for k in value.keys if k is not None] + value.values)
    elif isinstance(value, nodes.Lambda):
        _check_closure(value)
    elif isinstance(value, nodes.JoinedStr):
        _require_atoms([v.value for v in value.values if isinstance(v, nodes.FormattedValue)])
    else:
        raise AssertionError(f"ANF: unexpected operation {type(value).__name__}")


def _check_closure(node):
    args = node.args
    _require_atoms(args.defaults + [d for d in args.kw_defaults if d is not None])
    if not hasattr(node, "captured"):
        raise AssertionError("ANF: a nested function without its captured names")


def _unstarred(values):
    return [v.value if isinstance(v, nodes.Starred) else v for v in values]


def _check_index(index):
    if isinstance(index, nodes.Slice):
        _require_atoms([p for p in (index.lower, index.upper, index.step) if p is not None])
    elif isinstance(index, nodes.Tuple):
        for elt in index.elts:
            _check_index(elt)
    else:
        _require_atom(index)


def _require_atoms(values):
    for value in values:
        _require_atom(value)


def _require_atom(value):
    if not _is_atom_or_reference(value):
        raise AssertionError(f"ANF: expected an atom, got {type(value).__name__}")


def _is_atom_or_reference(value):
    return _is_atom(value) or nodes.dotted_path(value) is not None
