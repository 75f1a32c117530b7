"""`with` blocks as the calls Python makes for them, before anything else runs.

    with np.errstate(divide="ignore") as state:      context = np.errstate(divide="ignore")
        y = np.log(x)                        ->      state = enter_context(context)
    return y                                         y = np.log(x)
                                                     exit_context(context)
                                                     return y

`enter_context` and `exit_context` (`runtime.contexts`) call the context manager's
`__enter__` and `__exit__` as the `with` statement does. The block's statements are
then the function's own, so every construct and every later stage treats them as
code without the `with`. A `return`, `break` or `continue` that leaves a block exits
its contexts first, innermost first, after the returned value is computed.

An exception raised inside the block is not caught here. The handler of a `try`
statement around the block exits the contexts the exception left open
(`runtime.handlers.try_failed`), and so does the entry point running generated code
(`runtime.contexts.closing`), giving `__exit__` the exception as Python would; one
that suppresses it is refused: the derivative of a block that stopped part way is
not what pullback computed.

The context manager is not differentiated: its `__enter__` and `__exit__` run as they
are, and one built from differentiable values is refused (`rules.python_objects`).
"""

from ...runtime import contexts
from ..syntax import nodes

_LOOPS = (nodes.For, nodes.While)


def lower_with_blocks(body, helpers):
    """`body` (a function's) with each `with` statement lowered. A nested function's
    are left as they are: the forward keeps its source, and it is lowered when it is
    transformed itself."""
    return _Lowering(helpers).block(body, [], 0)


class _Lowering:
    def __init__(self, helpers):
        self.namer = helpers.namer
        self.helpers = helpers  # `naming.HelperCalls`

    def block(self, body, entered, loop_start):
        """`body` lowered, inside the contexts named `entered`; those from `loop_start` on
        were entered in the innermost loop, and a `break` or `continue` exits them."""
        out = []
        for stmt in body:
            out.extend(self.statement(stmt, entered, loop_start))
        return out

    def statement(self, stmt, entered, loop_start):
        lineno = nodes.lineno_of(stmt)
        if isinstance(stmt, nodes.With):
            return self.with_(stmt, entered, loop_start)
        if isinstance(stmt, nodes.Return) and entered:
            return self.returned(stmt, entered, lineno)
        if isinstance(stmt, (nodes.Break, nodes.Continue)):
            return self.exits(entered[loop_start:], lineno) + [stmt]
        if isinstance(stmt, _LOOPS):
            stmt.body = self.block(stmt.body, entered, len(entered))
            stmt.orelse = self.block(stmt.orelse, entered, loop_start)
        elif isinstance(stmt, nodes.If):
            stmt.body = self.block(stmt.body, entered, loop_start)
            stmt.orelse = self.block(stmt.orelse, entered, loop_start)
        elif isinstance(stmt, nodes.Try):
            stmt.body = self.block(stmt.body, entered, loop_start)
            for handler in stmt.handlers:
                handler.body = self.block(handler.body, entered, loop_start)
            stmt.orelse = self.block(stmt.orelse, entered, loop_start)
            stmt.finalbody = self.block(stmt.finalbody, entered, loop_start)
        return [stmt]

    def with_(self, stmt, entered, loop_start):
        """`context = manager; target = enter_context(context)` per item, the block,
        and `exit_context(context)` per item, innermost first."""
        lineno = nodes.lineno_of(stmt)
        out, names = [], []
        for item in stmt.items:
            context = self.namer.fresh("context")
            out.append(nodes.assign(context, item.context_expr, lineno))
            enter = self.helpers(contexts.enter_context, [nodes.name(context)])
            out.append(nodes.expr(enter, lineno) if item.optional_vars is None else
                       nodes.located(nodes.Assign(targets=[item.optional_vars], value=enter,
                                                  type_comment=None), lineno))
            names.append(context)
        body = self.block(stmt.body, entered + names, loop_start)
        out.extend(body)
        if not (body and isinstance(body[-1], (nodes.Return, nodes.Break, nodes.Continue))):
            out.extend(self.exits(names, lineno))
        return out

    def returned(self, stmt, entered, lineno):
        """`return e` inside contexts: `e` computed inside them, then returned outside."""
        out = []
        if stmt.value is not None and not isinstance(stmt.value, (nodes.Constant, nodes.Name)):
            result = self.namer.fresh("result")
            out.append(nodes.assign(result, stmt.value, lineno))
            stmt.value = nodes.name(result)
        return out + self.exits(entered, lineno) + [stmt]

    def exits(self, names, lineno):
        """`exit_context(name)` for each of the contexts `names`, innermost first."""
        return [nodes.expr(self.helpers(contexts.exit_context, [nodes.name(name)]), lineno)
                for name in reversed(names)]
