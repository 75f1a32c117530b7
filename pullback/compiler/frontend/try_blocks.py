"""`try` statements as an `if` on whether the block raised, before flow and ANF.

    try:                                     failed, error = try_started()
        L = np.linalg.cholesky(K)            if failed:          # attempt: (LinAlgError, error)
    except np.linalg.LinAlgError:    ->          L = np.linalg.cholesky(K + eps * I)
        L = np.linalg.cholesky(K + eps * I)  else:
                                                 L = np.linalg.cholesky(K)

The `if` carries `attempt`; every stage reads it as an `if` whose test the forward
computes, so the derivative follows the path the forward took. Only the reverse
pass's forward writes it as Python's `try`: the else branch (the try block) inside
`try:`, the handler inside `except`, which begins by setting `failed` (`try_failed`).
Several handlers become one, testing `isinstance(error, ...)` in their order. The
`else:` clause is a second `if` on `failed`, since Python does not catch what it raises.

On the handler's path, the derivative is that of the program in which the try block
did not run at all. Python's differs when a variable the block assigned before it
raised is read on that path: such a variable is refused, unless its assignment is
the block's last statement (after which nothing in the block can raise).

A `return`, `break` or `continue` inside the statement sets a flag (and `result`),
what follows it in its part runs only when no flag is set, and after the statement
`if returned: return result` (`break`, `continue`) leaves as it would have; a `return`
inside a loop also breaks out of it, and out of each loop around it.

`try: B finally: F` is a try statement catching any exception around `B` (and its
handlers), then `F`, then `if failed: raise error`; the exits `B` took are taken
after that. A `return`, `break` or `continue` in `F` is refused (it would discard
the exception), and so is `F` reading a variable the statement may have assigned
when it raised.
"""

from ...errors import unsupported
from ...runtime import handlers
from ..syntax import nodes, scopes
from . import flow

_LOOPS = (nodes.For, nodes.While)
_SCOPES = (nodes.FunctionDef, nodes.Lambda)
_EXITS = (nodes.Return, nodes.Break, nodes.Continue)


def lower_try_blocks(tree, helpers, origin):
    """The body of FunctionDef `tree` with each `try` statement lowered (see the module
    docstring); `helpers` makes the calls of pullback's helpers (`naming.HelperCalls`)."""
    if not any(isinstance(node, nodes.Try) for node in nodes.walk_scope(*tree.body)):
        return tree.body
    shared = {name for node in nodes.walk_scope(*tree.body)
              if isinstance(node, (nodes.Global, nodes.Nonlocal)) for name in node.names}
    local = ({name for name, n in scopes.assignments(tree).items() if n}
             | {p.id for p in nodes.parameters(tree.args)}) - shared
    lowering = _Lowering(helpers, origin, local)
    lowering.assigned = {p.id for p in nodes.parameters(tree.args)}
    return lowering.block(tree.body, set())


class _Lowering:
    def __init__(self, helpers, origin, local):
        self.namer = helpers.namer
        self.origin = origin
        self.helper_call = helpers
        self.local = local  # the function's local variables, which ANF gives versions
        self.assigned = set()  # the variables assigned before the statement being lowered

    def block(self, body, after):
        """`body` lowered; `after`: the names read after it (a loop's, again)."""
        out = []
        read_after = [set()]  # what the statements after each one read, last first
        for stmt in reversed(body[1:]):
            read_after.append(read_after[-1] | _reads([stmt]))
        for stmt, read in zip(body, reversed(read_after)):
            later = read | after
            if isinstance(stmt, nodes.Try):
                out.extend(self.try_(stmt, later))
                self.assigned |= _assigned([stmt])
                continue
            if isinstance(stmt, _LOOPS):
                inside = _reads([stmt]) | later
                stmt.body, stmt.orelse = self.block(stmt.body, inside), self.block(
                    stmt.orelse, later)
            elif isinstance(stmt, nodes.If):
                stmt.body, stmt.orelse = self.block(stmt.body, later), self.block(
                    stmt.orelse, later)
            self.assigned |= _assigned([stmt])
            out.append(stmt)
        return out

    def try_(self, stmt, after):
        """Try statement `stmt` lowered; `after`: the names read after it."""
        lineno = nodes.lineno_of(stmt)
        exits = _Exits(self.namer)
        if stmt.finalbody:
            inside = self.finally_(stmt, after, exits)
        else:
            inside = self.attempt(stmt, after, exits)
        return exits.initial(lineno) + inside + exits.after(lineno)

    def attempt(self, stmt, after, exits):
        """A try statement without `finally`, its exits setting the flags of `exits`."""
        lineno = nodes.lineno_of(stmt)
        failed, error, handlers_, out = self.flag(stmt, after)
        unbound = self.unbound_on_handling(stmt)
        body = exits.lowered(self.block(stmt.body, after))
        left_block = list(exits.flags.values())
        handling = [nodes.assign(var, nodes.constant(None), lineno) for var in unbound]
        attempt = nodes.if_(nodes.name(failed), handling + self.handlers(
            handlers_, error, exits, after), body, lineno)
        types = [_types(h) for h in handlers_]
        attempt.attempt = (types[0] if len(types) == 1 else self.helper_call(
            handlers.caught_types, types), nodes.name(error))
        orelse = exits.lowered(self.block(stmt.orelse, after))
        out.append(attempt)
        if orelse:
            out.append(nodes.if_(nodes.name(failed), [nodes.pass_(lineno)], [
                _unless(left_block, orelse, lineno)] if left_block else orelse, lineno))
        return out

    def finally_(self, stmt, after, exits):
        """`try: B finally: F` as a try statement catching any exception around B (with
        its handlers), then F, then the exception raised again; the exits B takes are
        taken after F."""
        lineno = nodes.lineno_of(stmt)
        exit_ = next(_exits(stmt.finalbody), None)
        if exit_ is not None:
            raise unsupported(f"a {type(exit_).__name__.lower()} in a finally clause", exit_,
                              self.origin, "it would discard the exception the try block "
                              "raised; take it after the try statement")
        final = self.block(stmt.finalbody, after)
        later = _reads(final) | after
        if stmt.handlers:
            block = self.attempt(nodes.replaced(stmt, finalbody=[]), later, exits)
        else:
            block = exits.lowered(self.block(stmt.body, later))
        for var in sorted(_risky(block) & _reads(final) & self.local):
            raise unsupported(
                f"reading {var} in a finally clause after the try statement assigns it",
                stmt.finalbody[0], self.origin,
                f"when an exception leaves the try statement, Python would see the value "
                f"{var} had then; read {var} after the try statement instead")
        failed, error = self.namer.fresh("failed"), self.namer.fresh("error")
        started = nodes.unpack([failed, error], self.helper_call(handlers.try_started, []),
                               lineno)
        attempt = nodes.if_(nodes.name(failed), [nodes.pass_(lineno)], block, lineno)
        attempt.attempt = (nodes.name("BaseException"), nodes.name(error))
        reraise = nodes.located(nodes.Raise(exc=nodes.name(error), cause=None), lineno)
        return [started, attempt] + final + [nodes.if_(nodes.name(failed), [reraise], [],
                                                        lineno)]

    def unbound_on_handling(self, stmt):
        """The variables the try block and the `else` clause both assign that nothing
        assigned before. Unbound where a handler runs, they are set to None there: ANF
        joins their versions after the `else` clause, copying them on every path, the
        handler's too. Only a program Python would stop with UnboundLocalError reads
        that None."""
        if not stmt.orelse:
            return []
        return sorted(_assigned(stmt.body) & _assigned(stmt.orelse) & self.local
                      - self.assigned)

    def flag(self, stmt, after):
        """`(failed, error, handlers, statements)`: the names of the flag and of what was
        caught, the handlers, and the statements setting the flag before the try. A
        forward's own try sets its flag already, and its handler's first statement, which
        sets it again, is made anew; the user's is checked (`check_live`)."""
        if self.is_generated(stmt):
            first, *rest = stmt.handlers[0].body
            failed, error = (target.id for target in first.targets[0].elts)
            return failed, error, [nodes.replaced(stmt.handlers[0], body=rest)], []
        self.check_live(stmt.body, stmt.handlers, after)
        failed, error = self.namer.fresh("failed"), self.namer.fresh("error")
        started = nodes.unpack([failed, error], self.helper_call(handlers.try_started, []),
                               nodes.lineno_of(stmt))
        return failed, error, stmt.handlers, [started]

    def handlers(self, handlers_, error, exits, after):
        """The handlers as one block: `name = error` where a handler names the exception,
        and `isinstance` tests where there are several."""
        blocks = []
        for handler in handlers_:
            lineno = nodes.lineno_of(handler)
            bound = [] if handler.name is None else [
                nodes.assign(handler.name.id, nodes.name(error), lineno)]
            blocks.append((handler, bound + exits.lowered(self.block(handler.body, after))))
        chosen = blocks[-1][1]
        for handler, block in reversed(blocks[:-1]):
            test = nodes.call(nodes.name("isinstance"), [nodes.name(error), _types(handler)])
            chosen = [nodes.if_(test, block, chosen, nodes.lineno_of(handler))]
        return chosen or [nodes.pass_(nodes.lineno_of(handlers_[0]))]

    def check_live(self, block, handlers_, after):
        """Refuse a variable the try block assigns before its last statement that the
        handlers' path reads: Python reads the value the block gave it before raising."""
        risky = _risky(block) & self.local
        for handler in handlers_:
            exposed, assigned = _exposed_reads(handler.body)
            for var in sorted(risky):
                if var in exposed or (var not in assigned and var in after):
                    raise unsupported(
                        f"reading {var} after an exception in the try block that assigns it",
                        handler, self.origin,
                        f"Python would see the value {var} had when the exception was "
                        f"raised; assign {var} before the try statement, or in each "
                        "handler")

    def is_generated(self, stmt):
        """Whether `stmt` is a forward's (differentiated again): its one handler begins
        with `failed, error = try_failed(caught, error)`, pullback's own helper."""
        if len(stmt.handlers) != 1 or not stmt.handlers[0].body:
            return False
        first = stmt.handlers[0].body[0]
        call = getattr(first, "value", None)
        return (isinstance(first, nodes.Assign) and isinstance(call, nodes.Call)
                and isinstance(call.func, nodes.Name) and call.func.id in self.origin.helpers
                and self.origin.cells[call.func.id].cell_contents is handlers.try_failed)


class _Exits:
    """The `return`s, `break`s and `continue`s leaving one try statement, as flags set
    where they were, tested after the statement (`if returned: return result`)."""

    KINDS = {nodes.Return: "returned", nodes.Break: "broke", nodes.Continue: "continued"}

    def __init__(self, namer):
        self.namer = namer
        self.flags = {}  # exit statement class -> its flag's name
        self.result = None

    def lowered(self, statements):
        """`statements` with each exit setting its flag, and what follows a statement that
        may exit run only when it did not."""
        out = []
        for i, stmt in enumerate(statements):
            if isinstance(stmt, _EXITS):
                return out + self.taken(stmt)
            returns = _LOOPS + (nodes.If,)
            if isinstance(stmt, returns) and next(_exits([stmt]), None) is not None:
                if isinstance(stmt, nodes.If):
                    stmt.body, stmt.orelse = self.lowered(stmt.body), self.lowered(stmt.orelse)
                else:
                    stmt.body, stmt.orelse = self.in_loop(stmt.body), self.lowered(stmt.orelse)
                rest = statements[i + 1:]
                guarded = [_unless(list(self.flags.values()), self.lowered(rest),
                                   nodes.lineno_of(rest[0]))] if rest else []
                return out + [stmt] + guarded
            out.append(stmt)
        return out

    def in_loop(self, statements):
        """A loop's body with each `return` in it setting the flag and leaving the loop,
        and each loop in it that does followed by a test of the flag."""
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.Return):
                return out + self.taken(stmt) + [nodes.located(nodes.Break(), stmt.lineno)]
            out.append(stmt)
            if isinstance(stmt, nodes.If):
                stmt.body, stmt.orelse = self.in_loop(stmt.body), self.in_loop(stmt.orelse)
            elif isinstance(stmt, _LOOPS) and _returns(stmt):
                stmt.body, stmt.orelse = self.in_loop(stmt.body), self.in_loop(stmt.orelse)
                flag = nodes.name(self.flags[nodes.Return])
                out.append(nodes.if_(flag, [nodes.located(nodes.Break(), stmt.lineno)], [],
                                     stmt.lineno))
        return out

    def taken(self, stmt):
        """The statements standing for exit `stmt`: its flag set, and `result` for a return."""
        lineno = nodes.lineno_of(stmt)
        kind = type(stmt)
        if kind not in self.flags:
            self.flags[kind] = self.namer.fresh(self.KINDS[kind])
        out = [nodes.assign(self.flags[kind], nodes.constant(True), lineno)]
        if kind is nodes.Return:
            self.result = self.result or self.namer.fresh("result")
            value = stmt.value if stmt.value is not None else nodes.constant(None)
            out.insert(0, nodes.assign(self.result, value, lineno))
        return out

    def initial(self, lineno):
        """The flags, and the result, before the statement."""
        out = [nodes.assign(flag, nodes.constant(False), lineno) for flag in self.flags.values()]
        if self.result is not None:
            out.append(nodes.assign(self.result, nodes.constant(None), lineno))
        return out

    def after(self, lineno):
        """The exits taken after the statement, by their flags."""
        exits = {nodes.Return: lambda: nodes.return_(nodes.name(self.result), lineno),
                 nodes.Break: lambda: nodes.located(nodes.Break(), lineno),
                 nodes.Continue: lambda: nodes.located(nodes.Continue(), lineno)}
        return [nodes.if_(nodes.name(flag), [exits[kind]()], [], lineno)
                for kind, flag in self.flags.items()]


def _unless(flags, statements, lineno):
    """`statements` run when none of `flags` is set."""
    tested = [nodes.name(f) for f in flags]
    test = tested[0] if len(tested) == 1 else nodes.BoolOp(op=nodes.Or(), values=tested)
    return nodes.if_(test, [nodes.pass_(lineno)], statements, lineno)


def _types(handler):
    return handler.type if handler.type is not None else nodes.name("BaseException")


def _returns(loop):
    """Whether `loop` has a `return` of the function in it."""
    return any(isinstance(n, nodes.Return) for n in nodes.walk_scope(*loop.body, *loop.orelse))


def _exits(statements):
    """The `return`s of `statements`, and their `break`s and `continue`s outside loops."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, _EXITS):
            yield node
        if isinstance(node, _LOOPS):
            pending.extend(n for n in nodes.walk_scope(*node.body, *node.orelse)
                           if isinstance(n, nodes.Return))
        elif not isinstance(node, _SCOPES):
            pending.extend(nodes.iter_child_nodes(node))


def _reads(statements):
    """The names `statements` read, in nested functions too."""
    return {n.id for s in statements for n in nodes.walk(s)
            if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Load)}


def _assigned(statements):
    """The variables `statements` assign or update in place (`xs.append`, `x[i] = v`)."""
    found = set()
    for node in nodes.walk_scope(*statements):
        if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Store):
            found.add(node.id)
        elif isinstance(node, (nodes.Subscript, nodes.Attribute)) and isinstance(
                node.ctx, nodes.Store) or isinstance(node, nodes.Call) and isinstance(
                node.func, nodes.Attribute) and node.func.attr in flow.UPDATING_METHODS:
            root = node.func.value if isinstance(node, nodes.Call) else node.value
            while isinstance(root, (nodes.Subscript, nodes.Attribute)):
                root = root.value
            if isinstance(root, nodes.Name):
                found.add(root.id)
        elif isinstance(node, nodes.FunctionDef):
            found.add(node.name)
    return found


def _risky(block):
    """The variables `block` may have assigned when it raises: all it assigns but by its
    last statement, when that is a simple one (which assigns only if it did not raise).
    Only a local's assignment is a new version, which the handler's path would not see."""
    risky = _assigned(block[:-1])
    if block and not isinstance(block[-1], (nodes.Assign, nodes.AugAssign, nodes.AnnAssign,
                                             nodes.Expr, nodes.Return)):
        risky |= _assigned(block[-1:])
    return risky


def _exposed_reads(statements):
    """The names `statements` may read before assigning them, and those they assign on
    every path (at their top level)."""
    exposed, assigned = set(), set()
    for stmt in statements:
        exposed |= _reads([stmt]) - assigned
        if isinstance(stmt, (nodes.Assign, nodes.AnnAssign, nodes.AugAssign)):
            targets = stmt.targets if isinstance(stmt, nodes.Assign) else [stmt.target]
            assigned |= {n.id for t in targets for n in nodes.walk(t)
                         if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Store)}
    return exposed, assigned
