"""Calls of a method through `super()`, as calls of the method's function on the object.

    return super().f(x) + 1.0   ->   return super_method(__class__, self, 'f')(self, x) + 1.0

`super()` makes a proxy whose attributes are the methods of the classes after the
method's own in the object's order. The derivative follows values, and a proxy holds
its object out of sight; so the method is looked up when the call runs
(`runtime.dispatch.super_method`, a constant: the function) and called on the object
itself, whose fields the derivative then reaches. `super()` with no arguments stands
for `super(__class__, self)`, the method's class and first parameter. A nested
function's calls are lowered when it is transformed itself.
"""

from ...runtime import dispatch
from ..syntax import nodes


def lower_super_calls(tree, helpers):
    """FunctionDef `tree` with each `super(...).name(args)` in its own body (not in nested
    functions) a call of `dispatch.super_method` and then of the function it gives."""
    params = tree.args.posonlyargs + tree.args.args
    first = params[0].id if params else None
    for stmt in tree.body:
        _Lowering(helpers, first).visit(stmt)
    return tree


class _Lowering(nodes.NodeTransformer):
    def __init__(self, helpers, first):
        self.helpers = helpers
        self.first = first

    def visit_FunctionDef(self, node):
        return node  # lowered when it is transformed

    visit_Lambda = visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node):
        self.generic_visit(node)
        proxy = node.func.value if isinstance(node.func, nodes.Attribute) else None
        arguments = self.proxy_arguments(proxy)
        if arguments is None:
            return node
        cls, obj = arguments
        method = self.helpers(dispatch.super_method, [cls, obj, nodes.constant(node.func.attr)])
        return nodes.replaced(node, func=method, args=[nodes.clone(obj)] + node.args)

    def proxy_arguments(self, node):
        """`(class, object)` of `super(class, object)`, or of `super()` in a method; None
        for anything else."""
        if not (isinstance(node, nodes.Call) and nodes.is_name(node.func, "super")
                and not node.keywords):
            return None
        if len(node.args) == 2:
            return node.args
        if not node.args and self.first is not None:
            return nodes.name("__class__"), nodes.name(self.first)
        return None
