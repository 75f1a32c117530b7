"""A primitive's tangent rule, from its spec, and that rule inlined at one call.

Every primitive with a reverse rule has a tangent rule, read from the same spec
(`rules.registry`), in this order:

- *applied*: a `linear` primitive's tangent is the primitive applied to the tangents
  of its differentiable arguments (`np.reshape(x_dot, shape)`; zeros for those that
  are constants: `np.sum(x_dot, initial=zeros_of(c))`); a `multilinear`
  one's is the sum, over its differentiable arguments, of the primitive with that
  argument replaced by its tangent (`x_dot @ y + x @ y_dot`). Written where the
  primitive is called, with the call's own syntax.
- *written*: statements of the template assigning `t[z]`, the result's tangent, in
  terms of `t[x]`, the arguments' (`t[z] = -(z @ t[a] @ z)`).
- *elementwise*: when every `d[x] = ...` of the reverse rule multiplies `d[z]`
  elementwise (by factors, `select` masks, a sign; `unbroadcast` summing it back to
  `x`'s shape), the map is its own transpose: `t[z]` is the sum over the parameters of
  the same expression with `t[x]` for `d[z]`, broadcast to the result's shape.

The differentiable parameters are those the reverse rule assigns `d[x]`.
A tangent that is zero (an argument that is a constant) is dropped where the rule
reads it: `t[x] * y` vanishes, `a + t[y]` is `a`, a linear map of it is zero.
"""

import dataclasses
import functools

from ...rules import registry
from ...runtime import cotangents
from .. import templates
from ..syntax import nodes


@dataclasses.dataclass(frozen=True)
class TangentRule:
    """How a primitive's tangent is computed (see the module docstring).

    Attributes:
      how: "applied", "written" or "elementwise".
      params: the differentiable parameters.
      statements: for "written" and "elementwise", the template's statements
        computing `t[z]`: temporaries, then `t[z] = expr`.
      multilinear: for "applied", a sum of one term per parameter.
    """

    how: str
    params: tuple
    statements: tuple = ()
    multilinear: bool = False


def rule_of(spec):
    """The `TangentRule` of primitive `spec` (a `registry.Spec` with a template), or
    None when its template neither writes one nor allows one to be derived."""
    return _derived(spec.template, spec.linear, spec.multilinear)


@functools.cache
def _derived(template, linear, multilinear):
    tree, result = templates.parsed(template)
    params = tuple(_differentiable(tree))
    written = templates.rule_statements(tree, "t")
    if linear or multilinear:
        return TangentRule("applied", params, multilinear=multilinear)
    if written:
        return TangentRule("written", params, tuple(written))
    elementwise = _elementwise(tree, result, params)
    if elementwise is not None:
        return TangentRule("elementwise", params, elementwise)
    return None


def _differentiable(tree):
    """The parameters template `tree` gives a cotangent (`d[x] = ...`), in order."""
    return [stmt.targets[0].slice.id for stmt in tree.body
            if isinstance(stmt, nodes.Assign) and isinstance(stmt.targets[0], nodes.Subscript)
            and nodes.is_name(stmt.targets[0].value, "d")]


def _elementwise(tree, result, params):
    """The statements `t[z] = sum of terms` of a reverse rule that only multiplies
    `d[z]` elementwise, or None."""
    statements = templates.rule_statements(tree, "d")
    temporaries = [s for s in statements if isinstance(s.targets[0], nodes.Name)]
    if any(_reads_cotangent(s.value) for s in temporaries):
        return None
    terms = []
    for stmt in statements:
        if stmt in temporaries:
            continue
        param = stmt.targets[0].slice.id
        term = _transposed(stmt.value, param, result)
        if term is None:
            return None
        terms.append(term)
    total = terms[0]
    for term in terms[1:]:
        total = nodes.binop(total, nodes.Add(), term)
    target = nodes.Subscript(value=nodes.name("t"), slice=nodes.name(result),
                             ctx=nodes.Store())
    return tuple(temporaries) + (nodes.Assign(targets=[target], value=total),)


_SCALING = (nodes.Mult, nodes.Div)


def _transposed(expr, param, result):
    """`expr`, an elementwise map of `d[result]`, with `t[param]` in its place and
    `unbroadcast(., param)` dropped, or None if `expr` is not such a map."""
    if _is_cotangent(expr, result):
        return nodes.Subscript(value=nodes.name("t"), slice=nodes.name(param), ctx=nodes.Load())
    if isinstance(expr, nodes.UnaryOp) and isinstance(expr.op, (nodes.USub, nodes.UAdd)):
        operand = _transposed(expr.operand, param, result)
        return None if operand is None else nodes.replaced(expr, operand=operand)
    if isinstance(expr, nodes.BinOp) and isinstance(expr.op, _SCALING):
        left, right = _reads_cotangent(expr.left), _reads_cotangent(expr.right)
        if left and not right:
            inner = _transposed(expr.left, param, result)
            return None if inner is None else nodes.replaced(expr, left=inner)
        if right and not left and isinstance(expr.op, nodes.Mult):
            inner = _transposed(expr.right, param, result)
            return None if inner is None else nodes.replaced(expr, right=inner)
        return None
    if isinstance(expr, nodes.Call) and nodes.dotted_path(expr.func) in _DIAGONAL_CALLS:
        position = _DIAGONAL_CALLS[nodes.dotted_path(expr.func)]
        if len(expr.args) <= position or expr.keywords or any(
                _reads_cotangent(a) for i, a in enumerate(expr.args) if i != position):
            return None
        inner = _transposed(expr.args[position], param, result)
        if inner is None:
            return None
        if nodes.dotted_path(expr.func) == "unbroadcast":
            return inner if nodes.is_name(expr.args[1], param) else None
        args = list(expr.args)
        args[position] = inner
        return nodes.replaced(expr, args=args)
    return None


_DIAGONAL_CALLS = {"unbroadcast": 0, "select": 1}
"""Helpers of reverse rules that are elementwise maps of their argument at a position:
their transposes are themselves (`select`) or broadcasting (`unbroadcast`)."""


def _is_cotangent(node, result):
    return (isinstance(node, nodes.Subscript) and nodes.is_name(node.value, "d")
            and nodes.is_name(node.slice, result))


def _reads_cotangent(node):
    return any(isinstance(n, nodes.Subscript) and nodes.is_name(n.value, "d")
               for n in nodes.walk(node))


# -- a rule at one call --------------------------------------------------------------


@dataclasses.dataclass
class Instance:
    """A tangent rule at one call: `statements` computing temporaries, then the
    expression of the result's tangent (`value`), or None when it is zero."""

    statements: list
    value: object


def instantiate_rule(rule, spec, call, args, keywords, tangent_of, context):
    """The tangent of `call` (the primitive's call as written: a Call, BinOp, UnaryOp,
    Attribute or Subscript node), whose argument atoms are `args` and `keywords` (as
    the interpreter read them: a method's object first, `context.method`).

    Args:
      rule: its `TangentRule`.
      spec: the primitive's `registry.Spec`.
      tangent_of: `tangent_of(atom)`, the tangent of an argument atom as a node, or
        None when it is zero.
      context: a `Context` for names and shapes.

    Returns:
      An `Instance`.
    """
    arguments = templates.bind(spec, args, keywords)
    if rule.how == "applied":
        return Instance([], _applied(rule, spec, call, args, keywords, tangent_of, context))
    return _from_template(rule, spec, arguments, tangent_of, context)


@dataclasses.dataclass
class Context:
    """What instantiating a rule needs of the function it is inlined in.

    Attributes:
      result: the name of the primitive's result.
      namer: names the template's temporaries.
      helper: `helper(name, obj)`, the generated code's name for an object.
      shape_of: a token equal for atoms of one shape ("scalar"), or None.
      zero: the name under which generated code reads `ZERO`.
      method: whether the call is of a method of a value (`y.reshape(2, 2)`).
    """

    result: str
    namer: object
    helper: object
    shape_of: object
    zero: str
    method: bool = False


def _applied(rule, spec, call, args, keywords, tangent_of, context):
    """The tangent of a linear or multilinear primitive: `call` with tangents in place
    of its differentiable arguments."""
    layout = spec.layout(len(args), tuple(name for name, _ in keywords))
    slots = [slot for param in rule.params for slot in _slots(layout.get(param))]
    atoms = {slot.key: (args[slot.key] if isinstance(slot.key, int) else dict(keywords)[
        slot.key]) for slot in slots}
    if not rule.multilinear:
        replaced = {key: tangent_of(atom) for key, atom in atoms.items()}
        if all(value is None for value in replaced.values()):
            return None
        replaced = {key: value if value is not None else _zeros_of(atom, context)
                    for (key, value), atom in zip(replaced.items(), atoms.values())}
        return _substituted(call, replaced, context.method)
    terms = []
    for key, atom in atoms.items():
        tangent = tangent_of(atom)
        if tangent is not None:
            terms.append(_substituted(call, {key: tangent}, context.method))
    return _sum(terms)


def _slots(part):
    if isinstance(part, registry.Slot):
        return [part]
    if isinstance(part, tuple):
        return [slot for item in part for slot in _slots(item)]
    return []


def _zeros_of(atom, context):
    """Zeros shaped like argument `atom`, where a linear map needs a value."""
    from ...runtime import tangents
    return nodes.call(nodes.name(context.helper("zeros_of", tangents.zeros_of)),
                      [nodes.clone(atom)])


def _substituted(call, replaced, method):
    """A copy of primitive call `call` with the arguments at keys `replaced` (positions,
    counting the object first for a `method`, and keywords) replaced by the nodes given."""
    call = nodes.clone(call)
    if isinstance(call, nodes.BinOp):
        operands = [call.left, call.right]
        call.left, call.right = [replaced.get(i, a) for i, a in enumerate(operands)]
    elif isinstance(call, nodes.UnaryOp):
        call.operand = replaced.get(0, call.operand)
    elif isinstance(call, (nodes.Attribute, nodes.Subscript)):
        call.value = replaced.get(0, call.value)
    elif method:
        call.func.value = replaced.get(0, call.func.value)
        call.args = [replaced.get(i + 1, a) for i, a in enumerate(call.args)]
    else:
        call.args = [replaced.get(i, a) for i, a in enumerate(call.args)]
    for keyword in getattr(call, "keywords", ()):
        keyword.value = replaced.get(keyword.arg, keyword.value)
    return call


def _sum(terms):
    if not terms:
        return None
    total = terms[0]
    for term in terms[1:]:
        total = nodes.binop(total, nodes.Add(), term)
    return total


def _from_template(rule, spec, arguments, tangent_of, context):
    """A written or elementwise rule: the template's statements with the call's atoms,
    tangents and names, zeros folded away."""
    tree, result_param = templates.parsed(spec.template)
    names = {result_param: nodes.name(context.result), **arguments}
    for stmt in rule.statements:
        target = stmt.targets[0]
        if isinstance(target, nodes.Name):
            names[target.id] = nodes.name(context.namer.fresh(target.id))
    tangents = {param: _tangent_atom(atom, tangent_of) for param, atom in arguments.items()}
    substituter = _Substituter(names, tangents, result_param, spec.template.__globals__,
                               context)
    statements, value = [], None
    for stmt in rule.statements:
        copied = substituter.copy(stmt.value)
        target = stmt.targets[0]
        if isinstance(target, nodes.Name):
            if substituter.is_zero(copied):
                substituter.names[target.id] = None
            else:
                statements.append(nodes.assign(names[target.id].id, copied))
            continue
        value = None if substituter.is_zero(copied) else copied
    if value is not None and rule.how == "elementwise":
        value = _broadcast(value, context)
    return Instance(statements, value)


def _tangent_atom(atom, tangent_of):
    """The tangent of a parameter's atom: a node, a tuple node for `*args`, or None."""
    if isinstance(atom, nodes.Tuple):
        items = [_tangent_atom(item, tangent_of) for item in atom.elts]
        if all(item is None for item in items):
            return None
        return items
    if isinstance(atom, nodes.Name):
        return tangent_of(atom)
    return None


def _broadcast(value, context):
    """`value`, the sum of an elementwise rule's terms, broadcast to the result's shape
    unless each term reads a name of that shape.

    Each term, not the sum: a tangent may be `ZERO` at run time, and `x_dot + ZERO`
    has the shape of `x_dot` alone."""
    shape = context.shape_of(nodes.name(context.result))
    if shape is not None and all(
            any(context.shape_of(nodes.name(name)) == shape for name in nodes.reads(term))
            for term in _terms(value)):
        return value
    helper = context.helper("rebroadcast", cotangents.rebroadcast)
    return nodes.call(nodes.name(helper), [value, nodes.name(context.result)])


def _terms(value):
    """The terms of sum `value`, signs dropped."""
    if isinstance(value, nodes.BinOp) and isinstance(value.op, (nodes.Add, nodes.Sub)):
        return _terms(value.left) + _terms(value.right)
    if isinstance(value, nodes.UnaryOp) and isinstance(value.op, (nodes.USub, nodes.UAdd)):
        return _terms(value.operand)
    return [value]


class _Substituter(templates.Substituter):
    """Copy a template's tangent expressions: `t[x]` is the tangent of `x`'s argument,
    and a zero tangent is folded away where it is read linearly."""

    def __init__(self, names, tangents, result_param, module_globals, context):
        super().__init__(names, None, result_param, module_globals, context.helper, {})
        self.tangents = tangents
        self.zero = context.zero

    def is_zero(self, node):
        return node is None or nodes.is_name(node, self.zero)

    def zero_node(self):
        return nodes.name(self.zero)

    def copy_Name(self, node):
        if node.id in self.names and self.names[node.id] is None:
            return self.zero_node()  # a temporary that is zero
        return super().copy_Name(node)

    def copy_Subscript(self, node):
        if nodes.is_name(node.value, "t"):
            found = self.tangents.get(node.slice.id)
            if found is None:
                return self.zero_node()
            if isinstance(found, list):
                return nodes.tuple_([nodes.clone(i) if i is not None else self.zero_node()
                                     for i in found])
            return nodes.clone(found)
        node = super().copy_Subscript(node)
        return self.zero_node() if self.is_zero(node.value) else node

    def copy_BinOp(self, node):
        copied = super().copy_BinOp(node)
        if not isinstance(copied, nodes.BinOp):
            return copied
        left, right = self.is_zero(copied.left), self.is_zero(copied.right)
        op = copied.op
        if isinstance(op, nodes.Add) and isinstance(copied.right, nodes.UnaryOp) and isinstance(
                copied.right.op, nodes.USub) and not (left or right):
            return nodes.binop(copied.left, nodes.Sub(), copied.right.operand)  # a - b
        if isinstance(op, nodes.Add):
            return copied.right if left else copied.left if right else copied
        if isinstance(op, nodes.Sub):
            if right:
                return copied.left
            if left:
                return nodes.UnaryOp(op=nodes.USub(), operand=copied.right)
            return copied
        if isinstance(op, (nodes.Mult, nodes.MatMult)) and (left or right):
            return self.zero_node()
        if isinstance(op, (nodes.Div, nodes.FloorDiv)) and left:
            return self.zero_node()
        return copied

    def copy_UnaryOp(self, node):
        copied = super().copy_UnaryOp(node)
        if isinstance(copied, nodes.UnaryOp) and self.is_zero(copied.operand):
            return self.zero_node()
        return copied

    def copy_Call(self, node):
        fn = self.lookup(node.func)
        copied = super().copy_Call(node)
        if not isinstance(copied, nodes.Call) or fn is None:
            return copied
        spec = registry.spec_of(fn)
        if spec is not None and any(self.is_zero(a) and spec.absorbs_zero_at(i)
                                    for i, a in enumerate(copied.args)):
            return self.zero_node()
        return copied
