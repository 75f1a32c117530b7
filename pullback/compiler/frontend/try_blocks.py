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

A `return` ending the block, the handler or the else clause sets `result` and a flag,
and the function returns after the statement; any other `return`, `break` or
`continue` inside the statement, and `finally`, are refused.
"""

from ...errors import unsupported
from ...runtime import handlers
from ..syntax import nodes
from . import flow

_LOOPS = (nodes.For, nodes.While)
_SCOPES = (nodes.FunctionDef, nodes.Lambda)
_EXITS = (nodes.Return, nodes.Break, nodes.Continue)


def lower_try_blocks(body, namer, origin, helpers):
    """`body` (a function's) with each `try` statement lowered (see the module docstring).
    `helpers`: the names of pullback's cells in generated code, whose own `try`
    statements (a forward's, differentiated again) need no check."""
    return _Lowering(namer, origin, helpers).block(body, set())


class _Lowering:
    def __init__(self, namer, origin, helpers):
        self.namer = namer
        self.origin = origin
        self.helpers = helpers
        self.names = {}

    def block(self, body, after):
        """`body` lowered; `after`: the names read after it (a loop's, again)."""
        out = []
        for i, stmt in enumerate(body):
            later = _reads(body[i + 1:]) | after
            if isinstance(stmt, nodes.Try):
                out.extend(self.try_(stmt, later))
                continue
            if isinstance(stmt, _LOOPS):
                inside = _reads([stmt]) | later
                stmt.body, stmt.orelse = self.block(stmt.body, inside), self.block(
                    stmt.orelse, later)
            elif isinstance(stmt, nodes.If):
                stmt.body, stmt.orelse = self.block(stmt.body, later), self.block(
                    stmt.orelse, later)
            out.append(stmt)
        return out

    def try_(self, stmt, after):
        lineno = nodes.lineno_of(stmt)
        if stmt.finalbody:
            raise unsupported("a finally clause", stmt.finalbody[0], self.origin,
                              "put its statements after the try statement, or in a with "
                              "block's context manager")
        generated = self.is_generated(stmt)
        handlers_ = stmt.handlers
        if generated:  # its `failed, error = try_failed(caught)` is made again, as its own
            flagged = handlers_[0].body[0].targets[0].elts
            handlers_ = [nodes.replaced(handlers_[0], body=handlers_[0].body[1:])]
        parts = [stmt.body] + [h.body for h in handlers_] + [stmt.orelse]
        returned = any(part and isinstance(part[-1], nodes.Return) for part in parts)
        self.refuse_exits(parts)
        if not generated:
            self.check_live(stmt.body, handlers_, after)
        if generated:  # its `failed, error = try_started()` comes before it
            failed, error, out = flagged[0].id, flagged[1].id, []
        else:
            failed, error = self.namer.fresh("failed"), self.namer.fresh("error")
            out = [nodes.unpack([failed, error], self.helper_call(handlers.try_started, []),
                                lineno)]
        result = self.namer.fresh("result") if returned else None
        flag = self.namer.fresh("returned") if returned else None
        if returned:
            out += [nodes.assign(result, nodes.constant(None), lineno),
                    nodes.assign(flag, nodes.constant(False), lineno)]
        body = self.part(stmt.body, result, flag, after)
        handler = self.handlers(handlers_, error, result, flag, after)
        attempt = nodes.if_(nodes.name(failed), handler, body, lineno)
        types = [_types(h) for h in handlers_]
        attempt.attempt = (types[0] if len(types) == 1 else self.helper_call(
            handlers.caught_types, types), nodes.name(error))
        out.append(attempt)
        if stmt.orelse:
            out.append(nodes.if_(nodes.name(failed), [nodes.pass_(lineno)],
                                 self.part(stmt.orelse, result, flag, after), lineno))
        if returned:
            out.append(nodes.if_(nodes.name(flag), [nodes.return_(nodes.name(result), lineno)],
                                 [], lineno))
        return out

    def part(self, statements, result, flag, after):
        """A block, handler or else clause lowered; its final `return e` sets the result."""
        statements = self.block(statements, after)
        if statements and isinstance(statements[-1], nodes.Return):
            last = statements[-1]
            value = last.value if last.value is not None else nodes.constant(None)
            lineno = nodes.lineno_of(last)
            statements = statements[:-1] + [nodes.assign(result, value, lineno),
                                             nodes.assign(flag, nodes.constant(True), lineno)]
        return statements

    def handlers(self, handlers_, error, result, flag, after):
        """The handlers as one block: `name = error` where a handler names the exception,
        and `isinstance` tests where there are several."""
        blocks = []
        for handler in handlers_:
            lineno = nodes.lineno_of(handler)
            bound = [] if handler.name is None else [
                nodes.assign(handler.name.id, nodes.name(error), lineno)]
            blocks.append((handler, bound + self.part(handler.body, result, flag, after)))
        chosen = blocks[-1][1]
        for handler, block in reversed(blocks[:-1]):
            test = nodes.call(nodes.name("isinstance"), [nodes.name(error), _types(handler)])
            chosen = [nodes.if_(test, block, chosen, nodes.lineno_of(handler))]
        return chosen or [nodes.pass_(nodes.lineno_of(handlers_[0]))]

    def refuse_exits(self, parts):
        """Refuse a `return`, `break` or `continue` leaving the statement other than a
        `return` ending one of its parts."""
        for part in parts:
            for i, stmt in enumerate(part):
                last = i == len(part) - 1
                for node in _exits([stmt]):
                    if not (last and node is stmt and isinstance(stmt, nodes.Return)):
                        raise unsupported(
                            f"a {type(node).__name__.lower()} inside a try statement", node,
                            self.origin, "only at the end of the try block, a handler or "
                            "the else clause: set a variable, and return after the statement")

    def check_live(self, block, handlers_, after):
        """Refuse a variable the try block assigns before its last statement that the
        handlers' path reads: Python reads the value the block gave it before raising."""
        risky = _assigned(block[:-1])
        if block and not isinstance(block[-1], (nodes.Assign, nodes.AugAssign, nodes.AnnAssign,
                                                 nodes.Expr, nodes.Return)):
            risky |= _assigned(block[-1:])
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
        with `failed, error = try_failed(caught)`, pullback's own helper."""
        if len(stmt.handlers) != 1 or not stmt.handlers[0].body:
            return False
        first = stmt.handlers[0].body[0]
        call = getattr(first, "value", None)
        return (isinstance(first, nodes.Assign) and isinstance(call, nodes.Call)
                and isinstance(call.func, nodes.Name) and call.func.id in self.helpers
                and self.origin.cells[call.func.id].cell_contents is handlers.try_failed)

    def helper_call(self, helper, args):
        """A call of pullback's `helper`, marked as such."""
        if helper not in self.names:
            self.names[helper] = self.namer.fresh(helper.__name__)
        call = nodes.call(nodes.name(self.names[helper]), args)
        call.helper = helper
        return call


def _types(handler):
    return handler.type if handler.type is not None else nodes.name("BaseException")


def _own(statements):
    """The nodes of `statements`, not those of the functions nested in them."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, _SCOPES):
            pending.extend(nodes.iter_child_nodes(node))


def _exits(statements):
    """The `return`s of `statements`, and their `break`s and `continue`s outside loops."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, _EXITS):
            yield node
        if isinstance(node, _LOOPS):
            pending.extend(n for n in _own(node.body + node.orelse)
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
    for node in _own(statements):
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
