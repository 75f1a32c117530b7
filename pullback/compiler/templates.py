"""A rule's template read and inlined at one call site: the stages' use of `rules.registry`.

The template's parameters become the call's argument atoms, its result the
call's result, `d[result]` the name of its cotangent, and each `d[x] = e` a
contribution to the cotangent of the argument bound to `x` (`instantiate`, for the
reverse rules). Names the body assigns are renamed apart; other names are looked up
in the template's module. Forward mode reads the same templates' tangent rules
(`tangent.rules`): `parsed`, `bind`, `rule_statements` and `Substituter` serve both.
"""

import builtins
import dataclasses
import functools
import inspect
import textwrap

import numpy as np

from ..errors import TransformError
from ..rules import registry
from ..runtime import cotangents
from .syntax import nodes, operators


@functools.cache
def parsed(template):
    """`(FunctionDef, result name)` of a rule's template, parsed once."""
    source = textwrap.dedent(inspect.getsource(template))
    tree = nodes.parse(source).body[0]
    tree.decorator_list = []
    return tree, (tree.args.posonlyargs + tree.args.args)[0].id


@dataclasses.dataclass
class Instance:
    """A template instantiated at one call site.

    Attributes:
      statements: `(kind, payload)` pairs in order: ("assign", stmt) for a
        temporary of the template, ("cotangent", (parameter, expr)) for
        `d[parameter] = expr`.
      arguments: the atom bound to each parameter (a node, or a tuple node for
        a *args parameter).
    """

    statements: list
    arguments: dict


def bind(rule, args, keywords):
    """The template parameter each argument atom binds to.

    Raises:
      TransformError: when the arguments do not fit the template's signature,
        or pass `out=` (results written into an argument are not supported).
    """
    keywords = dict(keywords)
    try:
        layout = rule.layout(len(args), tuple(keywords))
    except TypeError as error:
        raise TransformError(f"{registry.describe(rule.primitive)}: {error}",
                             construct=registry.describe(rule.primitive)) from None
    arguments = {name: _placed(part, args, keywords) for name, part in layout.items()}
    out = arguments["out"] if isinstance(layout.get("out"), registry.Slot) else None
    if out is not None and not (isinstance(out, nodes.Constant) and out.value is None):
        raise TransformError(f"{registry.describe(rule.primitive)} with out=: writing results into "
                             "an existing array is not supported", construct="out=")
    return {name: _as_node(value) for name, value in arguments.items()}


def _placed(part, args, keywords):
    """A part of a `Rule.layout` with the call's arguments in place of its slots."""
    if isinstance(part, registry.Slot):
        return args[part.key] if isinstance(part.key, int) else keywords[part.key]
    if isinstance(part, tuple):
        return tuple(_placed(item, args, keywords) for item in part)
    if isinstance(part, dict):
        return {key: _placed(item, args, keywords) for key, item in part.items()}
    return part


def instantiate(rule, args, keywords, result, cotangent, namer, helper, shape_of=None):
    """Inline `rule`'s template for one call.

    Args:
      rule: the Rule.
      args, keywords: the call's argument atoms (nodes) and (name, atom) pairs.
      result: the name of the call's result variable.
      cotangent: the name of the variable holding its cotangent.
      namer: a `naming.Namer` for the template's temporaries.
      helper: `helper(name, obj) -> str`, the generated code's name for an
        object the template refers to by `name` in its module.
      shape_of: `shape_of(atom)`, a token equal for atoms known to have the
        same shape ("scalar" for scalars), or None: `unbroadcast(g, x)` where
        `x` has the result's shape, and `unreduce(g, x, ...)` of a scalar `x`,
        are just `g`.

    Returns:
      An `Instance`. Subexpressions of constants are evaluated, and `e * 1`,
      `e / 1` and `e ** 1` simplified, so templates specialise to the call.
    """
    tree, result_param = parsed(rule.template)
    arguments = bind(rule, args, keywords)
    names = {result_param: nodes.name(result), **arguments}
    for target in _assigned_names(tree):
        names[target] = nodes.name(namer.fresh(target))
    shape_of = shape_of or (lambda atom: None)
    shapes = {p: shape_of(atom) for p, atom in arguments.items()}
    shapes[result_param] = shape_of(nodes.name(result))
    substituter = Substituter(names, cotangent, result_param, rule.template.__globals__,
                               helper, shapes)
    statements = []
    for stmt in rule_statements(tree, "d"):
        stmt = substituter.copy(stmt)
        target = stmt.targets[0]
        if _is_cotangent_target(target):
            statements.append(("cotangent", (target.slice.id, stmt.value)))
        else:
            statements.append(("assign", stmt))
    return Instance(statements, arguments)


def rule_statements(tree, marker):
    """The statements of template `tree` that one mode's rule needs: those assigning
    `marker[...]` (`d` for the reverse rule, `t` for the tangent rule) and the
    temporaries they read, in order."""
    body = [stmt for stmt in tree.body
            if not (isinstance(stmt, nodes.Expr) and isinstance(stmt.value, nodes.Constant))]
    needed, kept = set(), []
    for stmt in reversed(body):
        target = stmt.targets[0]
        wanted = (isinstance(target, nodes.Subscript) and nodes.is_name(target.value, marker)
                  or isinstance(target, nodes.Name) and target.id in needed)
        if wanted:
            needed |= nodes.reads(stmt.value)
            kept.append(stmt)
    return kept[::-1]


def _assigned_names(tree):
    found = []
    for stmt in tree.body:
        if isinstance(stmt, nodes.Assign) and isinstance(stmt.targets[0], nodes.Name):
            found.append(stmt.targets[0].id)
    return found


def _is_cotangent_target(target):
    return isinstance(target, nodes.Subscript) and nodes.is_name(target.value, "d")


def _as_node(value):
    if isinstance(value, tuple):
        return nodes.tuple_([_as_node(v) for v in value])
    if isinstance(value, dict):
        raise TransformError("templates cannot take **kwargs")
    if isinstance(value, nodes.AST):
        return value
    return nodes.constant(value)


_PURE_MODULES = ("math", "numpy")
_IDENTITY_RIGHT = (nodes.Mult, nodes.Div, nodes.Pow)


class Substituter:
    """Copy a template's statements with the call site's names, folding constants.
    A subclass may handle more kinds of node with methods `copy_<Node>`, as for
    the tangent rules (`compiler.tangent.rules`)."""

    def __init__(self, names, cotangent, result_param, module_globals, helper, shapes):
        self.names = names
        self.cotangent = cotangent
        self.result_param = result_param
        self.module_globals = module_globals
        self.helper = helper
        self.shapes = shapes

    def copy(self, node):
        """A copy of `node` (a node, a list of nodes or a field value)."""
        if isinstance(node, list):
            return [self.copy(item) for item in node]
        if not isinstance(node, nodes.AST) or not node._fields:
            return node
        return getattr(self, _COPY_METHODS.get(type(node), "copy_fields"))(node)

    def copy_fields(self, node):
        new = node.__class__.__new__(node.__class__)
        new.__dict__ = {key: self.copy(value) if isinstance(value, _NESTED) else value
                        for key, value in node.__dict__.items()}
        return new

    def copy_Subscript(self, node):
        if nodes.is_name(node.value, "d"):
            if isinstance(node.ctx, nodes.Store):
                return node
            if not nodes.is_name(node.slice, self.result_param):
                raise TransformError("a template may only read d[result]")
            return nodes.name(self.cotangent)
        return self.copy_fields(node)

    def copy_Call(self, node):
        fn = self.lookup(node.func)
        identity = registry.holds(fn, "identity") if fn is not None else None
        if identity is not None and self.passes(identity[1], node.args, identity[2]):
            return self.copy(node.args[identity[0]])
        node = self.copy_fields(node)
        if fn is np.where and len(node.args) == 3 and isinstance(node.args[0], nodes.Constant):
            # the branch a constant condition takes (in a template, the branches broadcast
            # with the operands around the call): `x ** np.where(2, 1, ...)` is `x`
            return node.args[1] if node.args[0].value else node.args[2]
        if _is_pure(fn) and all(isinstance(a, nodes.Constant) for a in node.args) and not (
            node.keywords
        ):
            return _constant_or(node, lambda: fn(*[a.value for a in node.args]))
        if getattr(fn, "__module__", None) == cotangents.__name__:
            node.args = _without_default_tail(fn, node.args)
        return node

    def passes(self, test, args, position):
        """Whether the template's argument atom `args[position]` passes `test` (one of
        `registry.IDENTITY_TESTS`) at this call site."""
        if position >= len(args):
            return False
        if test == "true":
            return nodes.is_constant(self.copy(args[position]), True)
        atom = args[position]
        shape = self.shapes.get(atom.id) if isinstance(atom, nodes.Name) else None
        if shape is None:
            return False
        return shape == ("scalar" if test == "scalar" else self.shapes[self.result_param])

    def copy_BinOp(self, node):
        node = self.copy_fields(node)
        left, right = node.left, node.right
        if isinstance(left, nodes.Constant) and isinstance(right, nodes.Constant):
            return _constant_or(node, lambda: _evaluate_binop(node.op, left.value, right.value))
        if _is_one(right) and isinstance(node.op, _IDENTITY_RIGHT):
            return left
        if _is_one(left) and isinstance(node.op, nodes.Mult):
            return right
        return node

    def copy_UnaryOp(self, node):
        node = self.copy_fields(node)
        if isinstance(node.op, nodes.USub) and isinstance(node.operand, nodes.Constant):
            return _constant_or(node, lambda: -node.operand.value)
        return node

    def copy_Name(self, node):
        if node.id in self.names:
            return nodes.clone(self.names[node.id])
        return nodes.name(self.helper(node.id, self.resolve(node.id)))

    def resolve(self, name):
        obj = self.module_globals.get(name, _MISSING)
        if obj is _MISSING:
            obj = getattr(builtins, name, _MISSING)
        if obj is _MISSING:
            raise TransformError(f"template refers to unknown name {name}")
        return obj

    def lookup(self, func):
        """The object a template's callee refers to (before substitution), or None."""
        path = nodes.dotted_path(func)
        if path is None or path.split(".")[0] in self.names:
            return None
        root, *attrs = path.split(".")
        obj = self.resolve(root)
        for attr in attrs:
            obj = getattr(obj, attr, None)
        return obj


_COPY_METHODS = {getattr(nodes, name.removeprefix("copy_")): name
                 for name in vars(Substituter)
                 if name.startswith("copy_") and name != "copy_fields"}
_NESTED = (nodes.AST, list)


def _without_default_tail(fn, args):
    """`args` without the trailing constants that equal `fn`'s defaults."""
    params = _parameters(fn)
    args = list(args)
    while args and len(args) <= len(params):
        last, param = args[-1], params[len(args) - 1]
        if not (isinstance(last, nodes.Constant) and param.default is not param.empty
                and type(last.value) is type(param.default) and last.value == param.default):
            break
        args.pop()
    return args


@functools.cache
def _parameters(fn):
    return list(inspect.signature(fn).parameters.values())


def _is_pure(fn):
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "")
    return callable(fn) and any(module == m or module.startswith(m + ".")
                                for m in _PURE_MODULES) and not isinstance(fn, type)


def _is_one(node):
    return isinstance(node, nodes.Constant) and not isinstance(node.value, bool) and (
        node.value == 1
    )


def _evaluate_binop(op, left, right):
    return operators.BINARY[type(op)](left, right)


def _constant_or(node, compute):
    """A Constant holding `compute()` when it is a plain number, else `node`."""
    try:
        value = compute()
    except (ArithmeticError, ValueError, TypeError):
        return node
    if isinstance(value, (bool, int, float)):
        return nodes.constant(value)
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        item = value.item()
        return nodes.constant(item) if isinstance(item, (int, float)) else node
    return node


_MISSING = object()
