"""Generator functions as functions returning the list of what they yield.

    def powers(x, n):                       def powers(x, n):
        for k in range(n):                      items = []
            yield x ** k             ->         for k in range(n):
                                                    items.append(x ** k)
                                                return items

A generator the function calls is run to its end when it is called, and the
caller iterates over the list: `sum(gen())`, `list(gen())`, `for v in gen()`,
`zip` and `enumerate` see the same items in the same order. `yield from it`
extends the list with `it`'s items, and `return` ends it (a value returned is the
`StopIteration`'s, which iteration drops). The list has the derivatives of its
items like any list the function builds.

Refused, since running to the end would change what the program does: a `yield`
whose value is used (the caller could `send` one), and a `while True` loop with
no `break` or `return`, which never ends.
"""

from ...errors import unsupported
from ..syntax import nodes

_SCOPES = (nodes.FunctionDef, nodes.Lambda)
_YIELDS = (nodes.Yield, nodes.YieldFrom)


def lower_generator(tree, namer, origin):
    """`tree` (a FunctionDef) with its body building and returning the list of what it
    yields, when it is a generator function; else `tree` as it is."""
    if not any(isinstance(node, _YIELDS) for node in nodes.walk_scope(*tree.body)):
        return tree
    items = namer.fresh("items")
    lowering = _Lowering(items, origin)
    tree.body = ([nodes.assign(items, nodes.list_([]), tree.lineno)]
                 + lowering.block(tree.body)
                 + [nodes.return_(nodes.name(items), nodes.lineno_of(tree.body[-1]))])
    return tree


class _Lowering:
    def __init__(self, items, origin):
        self.items = items
        self.origin = origin

    def block(self, body):
        return [self.statement(stmt) for stmt in body]

    def statement(self, stmt):
        lineno = nodes.lineno_of(stmt)
        value = stmt.value if isinstance(stmt, nodes.Expr) else None
        if isinstance(value, _YIELDS):
            method = "append" if isinstance(value, nodes.Yield) else "extend"
            item = value.value if value.value is not None else nodes.constant(None)
            return nodes.expr(nodes.call(nodes.attribute(nodes.name(self.items), method),
                                         [item]), lineno)
        if isinstance(stmt, nodes.Return):
            return nodes.return_(nodes.name(self.items), lineno)
        if isinstance(stmt, nodes.While) and _never_ends(stmt):
            raise unsupported("a generator whose while True loop never ends", stmt,
                              self.origin, "pullback runs a generator to its end when it "
                              "is called: give the loop an end, or take items from a "
                              "finite generator")
        if isinstance(stmt, (nodes.If, nodes.For, nodes.While, nodes.Try)):
            stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
        if isinstance(stmt, nodes.Try):
            stmt.finalbody = self.block(stmt.finalbody)
            for handler in stmt.handlers:
                handler.body = self.block(handler.body)
        for node in nodes.walk_scope(stmt):
            if isinstance(node, _YIELDS):
                raise unsupported("a yield whose value is used", node, self.origin,
                                  "a generator's items are computed when it is called, "
                                  "so nothing can be sent to it: yield as a statement")
        return stmt


def _never_ends(loop):
    """Whether `while` loop `loop` has a constant true test and no `break` or `return`
    of its own."""
    test = loop.test
    if not (isinstance(test, nodes.Constant) and test.value):
        return False
    pending = [(node, True) for node in loop.body]
    while pending:
        node, own = pending.pop()
        if isinstance(node, nodes.Return) or own and isinstance(node, nodes.Break):
            return False
        if not isinstance(node, _SCOPES):
            inner = own and not isinstance(node, (nodes.For, nodes.While))
            pending.extend((child, inner) for child in nodes.iter_child_nodes(node))
    return True
