"""Stage 3 (optimise): small functions are inlined where they are called.

A call of another Python function costs the forward a call, a tuple and a
closure (the callee's pullback), and the pullback another call and tuple: for
`sigmoid(z)`, written as four NumPy operations, as much as its arithmetic on
small arrays. Seed 001 (section 3.3.3) inlines such pullbacks. Here the
callee's body, in A-normal form, takes the place of the call before the
reverse rules run, its variables renamed apart, its parameters replaced by the
arguments and its result named as the call's target::

    sigmoid_gates = sigmoid(gates)          v_0_5_times_z = 0.5 * gates
                                       ->   tanh_v_0_5_times_z = np.tanh(v_0_5_times_z)
                                            plus = tanh_v_0_5_times_z + 1.0
                                            sigmoid_gates = 0.5 * plus

so that the reverse rules make one pullback for both, with the kinds of the
caller's arguments. A callee is inlined when it is a plain function of the
same module and file (no closure cells, no `*args`, no hand-written or
registered derivative), its own body has no loops, nested functions or updates
in place, does not call itself, and is at most `LIMIT` statements long after
the small functions it calls are inlined in turn. `pullback.source(f,
optimize=False)` shows the code without inlining.
"""

import functools
import types

from ...errors import TransformError
from ...rules import registry
from ...runtime import custom, introspection
from ...runtime.calls import defaults, signature
from ..syntax import nodes, operators
from ..syntax.naming import Namer
from . import anf, parse

LIMIT = 60
GROWTH = 400  # the statements a function may grow to by inlining
_ATOMS = (int, float, str, bool, type(None))
_CALLEES = {}  # (code, globals) -> the callee's ANF tree, or None when it is not inlined
_MISSING = object()


def inline_calls(tree, origin):
    """FunctionDef `tree` (in ANF, from `origin`) with the calls of small functions of
    its module inlined (a new tree; `tree` is unchanged), and the globals it read to
    find them, by name."""
    inliner = _Inliner(origin, tree, frozenset())
    body = inliner.block(tree.body)
    if not inliner.used:
        return tree, {}
    new = nodes.clone(tree)
    new.body = body
    return new, inliner.used


class _Inliner:
    def __init__(self, origin, tree, stack):
        self.origin = origin
        self.tree = tree
        self.stack = stack
        self.used = {}

    @functools.cached_property
    def locals(self):
        return _local_names(self.tree) | set(self.origin.cells)

    @functools.cached_property
    def namer(self):
        return Namer.for_tree(self.tree)

    @functools.cached_property
    def size(self):
        return _size(self.tree.body)

    def block(self, statements):
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                stmt = nodes.replaced(stmt, body=self.block(stmt.body),
                                      orelse=self.block(stmt.orelse))
            elif getattr(stmt, "loop", False):
                stmt = nodes.replaced(stmt, body=self.block(stmt.body))
            else:
                inlined = self.inlined(stmt)
                if inlined is not None:
                    out.extend(inlined)
                    continue
            out.append(stmt)
        return out

    def inlined(self, stmt):
        """The statements replacing `target = f(...)` when `f` is inlined, else None."""
        call = _call_of(stmt)
        fn = self.origin.globals.get(call.func.id) if call is not None else None
        if not self.inlinable(fn) or call.func.id in self.locals:
            return None
        callee = _callee(fn, self.stack)
        if callee is None or callee.size > LIMIT or self.size + callee.size > GROWTH:
            return None
        try:
            bound = signature(fn).bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError:
            return None
        if _free_names(callee) & self.locals:
            return None
        statements = self.renamed(callee, fn, bound, stmt.targets[0].id)
        if statements is None:
            return None
        self.used[call.func.id] = fn
        self.used.update(getattr(callee, "inlined", {}))
        self.size += len(statements)
        return statements

    def inlinable(self, fn):
        return (isinstance(fn, types.FunctionType) and fn.__globals__ is self.origin.globals
                and fn.__code__.co_filename == self.origin.filename and not fn.__closure__
                and introspection.has_fixed_parameters(fn)
                and fn.__code__ not in self.stack and not custom.is_custom(fn)
                and registry.rule_for(fn) is None and not registry.is_nondifferentiable(fn)
                and not fn.__module__.startswith("pullback"))

    def renamed(self, callee, fn, bound, target):
        """The callee's statements for one call: parameters replaced by the arguments
        (or their defaults), the other variables renamed apart, the result assigned to
        `target`."""
        replacements, defaults_ = {}, defaults(fn)
        for param in signature(fn).parameters.values():
            if param.name in bound.arguments:
                replacements[param.name] = bound.arguments[param.name]
            elif isinstance(defaults_.get(param.name, _MISSING), _ATOMS):
                replacements[param.name] = nodes.constant(defaults_[param.name])
            else:
                return None
        body = nodes.clone(callee.body)
        result = body.pop().value
        returned = result.id if isinstance(result, nodes.Name) else None
        for name in sorted(_local_names(callee) - set(replacements)):
            new = target if name == returned else self.namer.fresh(name)
            replacements[name] = nodes.name(new)
            self.locals.add(new)
        substitute = _Substitution(replacements)
        body = [substitute.visit(stmt) for stmt in body]
        result = substitute.visit(result)
        own = {replacements[name].id for name in _local_names(callee)
               if name in replacements and isinstance(replacements[name], nodes.Name)}
        body, result = _folded(body, result, own - {target}, self.namer)
        if not nodes.is_name(result, target):
            lineno = nodes.lineno_of(body[-1]) if body else callee.lineno
            body.append(nodes.assign(target, result, lineno))
        return body


class _Substitution(nodes.NodeTransformer):
    """Names replaced: a variable by another name, a parameter by its argument."""

    def __init__(self, replacements):
        self.replacements = replacements

    def visit_Name(self, node):
        replacement = self.replacements.get(node.id)
        if replacement is None:
            return node
        if isinstance(replacement, nodes.Name):
            node.id = replacement.id
            return node
        return nodes.clone(replacement)


def _folded(body, result, own, namer):
    """The callee's statements and result for one call with the operations on constants
    its arguments made (`"w_" + name` for `name="i"`) replaced by their values, and
    the callee's variables `own` so bound once replaced by the value where they are read:
    `p["w_" + name]` reads `p['w_i']`, an item whose key the later stages see, named
    after it (`p_w_i`)."""
    stores = nodes.store_counts(body)
    values, out = {}, []
    for stmt in body:
        keyed = _keyed_by(stmt, values)
        stmt = _Substitution(values).visit(stmt) if values else stmt
        target = nodes.single_target(stmt)
        once = target in own and stores[target] == 1
        value = _constant_of(stmt.value) if once else None
        if value is not None:
            values[target] = value
            continue
        if once and keyed:
            values[target] = nodes.name(namer.for_value(stmt.value))
            stmt = _Substitution(values).visit(stmt)
        out.append(stmt)
    return out, _Substitution(values).visit(result) if values else result


def _keyed_by(stmt, values):
    """Whether `stmt` reads an item by a key among the constants folded, `values`."""
    value = stmt.value if isinstance(stmt, nodes.Assign) else None
    return (isinstance(value, nodes.Subscript) and nodes.is_name(value.slice)
            and isinstance(values.get(value.slice.id), nodes.Constant))


def _constant_of(expr):
    """The constant an operation on constants makes (as Python's compiler folds
    `"w_" + "i"`), or None: for strings and numbers, when it raises nothing and makes
    a short string or a small number."""
    if not (isinstance(expr, nodes.BinOp) and isinstance(expr.left, nodes.Constant)
            and isinstance(expr.right, nodes.Constant) and type(expr.op) in operators.BINARY):
        return None
    left, right = expr.left.value, expr.right.value
    if not all(type(v) in (str, int, float) for v in (left, right)):
        return None
    if type(expr.op) is nodes.Pow or (isinstance(left, str) or isinstance(right, str)) and (
            type(expr.op) is not nodes.Add):
        return None  # no huge powers, no repeated or formatted strings
    try:
        value = operators.BINARY[type(expr.op)](left, right)
    except (ArithmeticError, TypeError, ValueError):
        return None
    if isinstance(value, int) and abs(value) > 2 ** 62:
        return None
    return nodes.constant(value)


def _callee(fn, stack):
    """`fn`'s body in ANF with its own small callees inlined, or None when it has
    loops, nested functions, updates or calls of itself. Kept while the functions
    inlined into it are still the globals they were."""
    key = (fn.__code__, id(fn.__globals__))
    found = _CALLEES.get(key, _MISSING)
    if found is not _MISSING and (found is None or all(
            fn.__globals__.get(name) is obj for name, obj in found.inlined.items())):
        return found
    _CALLEES[key] = found = None
    try:
        tree, origin = parse.parse_function(fn)
        normal = anf.to_anf(tree, origin)
    except TransformError:
        return None
    if _is_simple(normal, fn):
        inliner = _Inliner(origin, normal, stack | {fn.__code__})
        found = nodes.clone(normal)
        found.body = inliner.block(normal.body)
        found.inlined = inliner.used
        found.size = _size(found.body)
    _CALLEES[key] = found
    return found


def _is_simple(tree, fn):
    """Whether an ANF body has no loops, nested functions, updates in place, or calls
    of `fn` itself."""
    for node in _walk(tree.body):
        if isinstance(node, (nodes.FunctionDef, nodes.Lambda)) or getattr(node, "updates", None):
            return False
        if isinstance(node, nodes.Call) and nodes.is_name(node.func, fn.__name__):
            return False
    return True


def _call_of(stmt):
    """The call of `target = f(...)`, `f` a name and the arguments plain, else None."""
    if not (isinstance(stmt, nodes.Assign) and isinstance(stmt.targets[0], nodes.Name)
            and isinstance(stmt.value, nodes.Call) and isinstance(stmt.value.func, nodes.Name)
            and not getattr(stmt.value, "helper", None)):
        return None
    call = stmt.value
    if any(isinstance(a, nodes.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    return call


def _local_names(tree):
    """The parameters of FunctionDef `tree` and the names it assigns."""
    names = {p.id for p in nodes.parameters(tree.args)}
    for node in _walk(tree.body):
        if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Store):
            names.add(node.id)
    return names


def _free_names(tree):
    """The names an ANF function reads without assigning them (its globals)."""
    return {node.id for node in _walk(tree.body) if isinstance(node, nodes.Name)} - (
        _local_names(tree))


def _walk(statements):
    """Every node of a list of statements."""
    for stmt in statements:
        yield from nodes.walk(stmt)


def _size(statements):
    return sum(1 for stmt in statements for _ in nodes.statements(stmt))
