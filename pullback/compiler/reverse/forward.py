"""Stage 3: reverse-mode rules, from an ANF function to its forward and pullback.

`reverse(tree, ...)` turns `def f(a, b)` (in A-normal form) into::

    def f_fwd(a, b):
        <the statements of f>            # φ: the primal, plus `y, y_pb = g_fwd(x)` for calls
        def f_pullback(dout):
            <one block per statement of f, in reverse order>   # ρ
            return ZERO, da, db
        return out, f_pullback

One pullback closure per function; each primitive's template is inlined in it.
`f_pullback` returns the cotangent of the function itself (its environment, the
paper's [...]; `ZERO` for a function without free variables) followed by one
cotangent per parameter of `f`.

This module is φ: it walks the statements forwards, emits the primal (and the
forwards of calls) and records one operation per statement it differentiates
(`ops`). ρ, in `backward`, reads them in reverse order and writes the pullback.
The analyses it consults as it reads are its neighbours: kinds and shapes
(`analysis.kinds`), updates in place (`analysis.updates`), cancelled shifts
(`analysis.invariance`) and callees (`callees`).
"""

import dataclasses
import operator
import types

import numpy as np

from ... import errors
from ...errors import TransformError
from ...rules import registry
from ...runtime import calls, custom, introspection, loops, mutation, records, structures
from ..analysis import invariance, kinds, updates
from ..syntax import nodes, operators
from . import backward, callees, instantiate
from .ops import Branch, Build, Call, Closure, Copy, Primitive, Unpack

_SET_REFUSED = ("a set holding a differentiable value: a set has no order in which to hold "
                "the cotangents of its members; use a list or a tuple")
_REPEAT_REFUSED = ("repeating a list or tuple that holds a differentiable value (xs * n) is "
                   "not supported: build it with a comprehension, [x for _ in range(n)], or "
                   "use an array and np.tile")

@dataclasses.dataclass
class Result:
    """What `reverse` produces.

    Attributes:
      tree: the forward function (a gast FunctionDef).
      result_kind: the kind of the function's return value.
      globals_used: the global (or builtin) objects the transformation looked
        up, by name: calls of them were compiled for exactly these objects.
      kinds: the kind of every variable of the function.
      shapes: a token for every variable, equal for variables known to have one
        shape ("scalar" for scalars), or None.
      updated: the parameters and free variables it updates in place (as Python runs it).
      exits: for a loop's body, the variables (its parameters, free variables and
        its own values) whose memory each item of the state it returns may share,
        and those it may hold: a pair of sets per item.
    """

    tree: object
    result_kind: object
    globals_used: dict
    kinds: dict
    shapes: dict
    updated: list = dataclasses.field(default_factory=list)
    exits: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Callee:
    """A Python function called from the function being transformed.

    Attributes:
      cell: the closure cell that holds (or will hold) its forward function.
      name: the name generated code should preferably give it (`g_fwd`).
      result_kind: the kind of its result.
      updated: its parameters it updates in place.
    """

    cell: object
    name: str
    result_kind: object
    updated: tuple = ()


def reverse(tree, origin, param_kinds, namer, bindings, calls, name):
    """Build the forward function with its pullback for ANF function `tree`.

    Args:
      tree: a FunctionDef in A-normal form (see `anf`).
      origin: its `parse.Origin`.
      param_kinds: the kind of each parameter (see `kinds`).
      namer: the `naming.Namer` of the generated code.
      bindings: the `bindings.Bindings` of the generated code.
      calls: how calls are compiled: `calls.resolve(fn, param_kinds) -> Callee`
        gives the forward of a Python function called from `tree`, and
        `calls.forward` is the dispatcher for callees known only at run time.
      name: the name of the forward function.

    Returns:
      A `Result`.
    """
    return _Reverse(tree, origin, param_kinds, namer, bindings, calls).run(name)


class _Reverse:
    def __init__(self, tree, origin, param_kinds, namer, bindings, calls, freevars=None):
        self.tree = tree
        self.origin = origin
        self.namer = namer
        self.bindings = bindings
        self.calls = calls
        self.params = nodes.parameter_names(tree.args)
        self.freevars = list(origin.cells) if freevars is None else freevars
        self.loop_bodies = {}
        self.entry = getattr(tree, "parameter_versions", {})  # see `anf.capture`
        param_kinds = {self.entry.get(p, p): kind for p, kind in param_kinds.items()}
        unknown = set(param_kinds) - set(self.params) - set(self.freevars)
        if unknown:
            raise AssertionError(f"kinds for {sorted(unknown)}, which {tree.name} does not have")
        self.kinds = {p: param_kinds.get(p, kinds.CONST) for p in self.params + self.freevars}
        self.shapes = {p: "scalar" if k.shape == "scalar" else p for p, k in self.kinds.items()}
        self.lineno = tree.lineno
        self.callees = callees.Callees(origin, tree, lambda: self.kinds, self.kind_of, self.error)
        self.updates = updates.Updates(self, self.params + self.freevars, [
            name for name, kind in self.kinds.items() if kind.shape == "array"])
        self.known = {}  # a test's variable -> its value, when the kinds decide it
        self.place = None  # (the statements of the block being read, the position in it)
        self.blocks = {}  # id of a block's statements -> its `invariance.Block`
        self.reads = None  # how often the function reads each name, once asked

    def run(self, forward_name):
        *body, ret = self.tree.body
        forward, ops = self.forward_block(body)
        self.updates.read(ret, ret.lineno)
        self.updates.check()
        result_kind = self.kind_of(ret.value)
        pullback = backward.Backward(self).pullback(ops, ret, result_kind)
        out = nodes.tuple_([nodes.clone(ret.value), nodes.name(pullback.name)])
        args, entry = self.signature()
        fwd = nodes.function_def(forward_name, args,
                                 entry + forward + [pullback, nodes.return_(out, ret.lineno)],
                                 self.tree.lineno)
        user = {version: param for param, version in self.entry.items()}
        exits = self.updates.reached_by_exits()
        return Result(fwd, result_kind, self.callees.globals_used, self.kinds, self.shapes,
                      [user.get(p, p) for p in self.updates.updated(self.params + self.freevars)],
                      exits)

    def signature(self):
        """The forward's parameters, the user's, and the statements giving a parameter's
        value on entry its own name, where a closure reads the parameter assigned again
        (`x_1 = x`; the closure reads `x`, which the forward assigns later)."""
        if not self.entry:
            return self.tree.args, []
        args = nodes.clone(self.tree.args)
        user = {version: param for param, version in self.entry.items()}
        for param in nodes.parameters(args):
            param.id = user.get(param.id, param.id)
        return args, [nodes.assign(version, nodes.name(param), self.tree.lineno)
                      for param, version in self.entry.items()]

    # -- the forward pass ------------------------------------------------------

    def forward_block(self, statements):
        forward, ops = [], []
        for position, stmt in enumerate(statements):
            self.lineno = nodes.lineno_of(stmt)
            self.place = (statements, position)
            if isinstance(stmt, nodes.If):
                self.updates.read(stmt.test, self.lineno)
            emitted, op = self.forward_statement(stmt)
            if not isinstance(stmt, nodes.If):
                self.updates.track(stmt)
            forward.extend(emitted)
            if isinstance(op, list):
                ops.extend(op)
            elif op is not None:
                ops.append(op)
        _group_closures(ops)
        self.check_groups_complete(statements, ops)
        return forward, ops

    def check_groups_complete(self, statements, ops):
        """Refuse a read of a closure of a recursive group before the group's last
        definition: its cotangent would come after `unroll` gave the group's to the
        variables they read (see `_group_closures`)."""
        defined = {op.target for op in ops if isinstance(op, Closure)}
        for op in ops:
            elsewhere = [var for var in op.later if var not in defined] if isinstance(
                op, Closure) else []
            if elsewhere or isinstance(op, Closure) and op.label and op.later:
                what, var = op.label or op.target, (elsewhere or op.later)[0]
                raise TransformError(
                    f"{what} reads {var}, a function defined after it but not beside it (in "
                    f"a branch, or after a loop): define {var} before {what}",
                    self.origin.filename, op.lineno, "closure reading a later function")
            if not (isinstance(op, Closure) and op.group):
                continue
            defaulted = next((m for m in op.group if any(
                self.kind_of(d).active for d in m.defaults)), None)
            if defaulted is not None:
                raise TransformError(
                    f"{defaulted.target} calls itself (or a function that calls it back) and "
                    f"has a differentiable default value: pass that value as an argument",
                    self.origin.filename, defaulted.lineno,
                    "recursive closure with a differentiable default")
            members = {member.target for member in op.group}
            positions = [i for i, stmt in enumerate(statements) if _defined(stmt) in members]
            for stmt in statements[positions[0] + 1 : positions[-1]]:
                early = sorted(nodes.reads(stmt) & members) if _defined(stmt) not in members \
                    else []
                if early:
                    raise TransformError(
                        f"{early[0]} is used here before {op.target}, which it calls, is "
                        f"defined: define the functions that call one another together, "
                        f"before using any of them",
                        self.origin.filename, nodes.lineno_of(stmt), "mutual recursion")

    def forward_statement(self, stmt):
        if isinstance(stmt, nodes.If):
            return self.forward_if(stmt)
        if isinstance(stmt, nodes.FunctionDef) and getattr(stmt, "loop", False):
            self.loop_bodies[stmt.name] = stmt  # transformed where the loop calls it
            return [], None
        if isinstance(stmt, nodes.FunctionDef):
            return [stmt], self.closure(stmt.name, stmt)
        if isinstance(stmt, nodes.Assign):
            target = stmt.targets[0]
            if isinstance(target, nodes.Tuple):
                return [stmt], self.unpack([t.id for t in target.elts], stmt.value)
            return self.assign(target.id, stmt.value, stmt)
        if isinstance(stmt, nodes.Expr):
            self.check_effect(stmt.value)
        return [stmt], None

    def forward_if(self, stmt):
        known = self.known.get(stmt.test.id) if isinstance(stmt.test, nodes.Name) else None
        if known is not None:  # `isinstance` on a value whose type the kinds tell
            return self.forward_block(stmt.body if known else stmt.orelse)
        before, shapes = dict(self.kinds), dict(self.shapes)
        body, body_ops = self.forward_block(stmt.body)
        after_body, self.kinds = self.kinds, dict(before)
        body_shapes, self.shapes = self.shapes, shapes
        orelse, else_ops = self.forward_block(stmt.orelse)
        for var in set(after_body) | set(self.kinds):
            self.kinds[var] = kinds.join(after_body.get(var), self.kinds.get(var))
        for var in body_shapes.keys() & self.shapes.keys():
            if body_shapes[var] != self.shapes[var]:
                self.shapes[var] = None
        self.shapes.update({v: s for v, s in body_shapes.items() if v not in self.shapes})
        forward = nodes.if_(stmt.test, body, orelse, stmt.lineno)
        op = Branch(stmt.test, body_ops, else_ops, stmt.lineno) if body_ops or else_ops else None
        return [forward], op

    def assign(self, target, value, stmt):
        """Forward code and operation for `target = value`."""
        if isinstance(value, nodes.Name) and value.id in self.kinds:
            self.kinds[target] = self.kinds[value.id]
            self.shapes[target] = self.shapes.get(value.id)
            return [stmt], Copy(target, value.id, self.lineno)
        if isinstance(value, (nodes.Name, nodes.Constant)) or self.callees.is_reference(value):
            self.kinds[target] = self.kind_of(value)
            return [stmt], None
        if isinstance(value, (nodes.Tuple, nodes.List, nodes.Dict)):
            return [stmt], self.build(target, value)
        if isinstance(value, nodes.Lambda):
            return [stmt], self.closure(target, value)
        if isinstance(value, nodes.Call):
            return self.call(target, value, stmt)
        return [stmt], self.operation(target, value, stmt)

    def operation(self, target, value, stmt):
        """BinOp, UnaryOp, Compare, Attribute and Subscript: primitives by table."""
        if isinstance(value, nodes.BinOp):
            operands = [value.left, value.right]
            operator_ = operators.BINARY[type(value.op)]
            if operator_ is operator.add and any(kinds.is_sequence(self.kind_of(a))
                                                  for a in operands):
                operator_ = operator.concat
            if operator_ is operator.mul and _repeats(self.kind_of, operands):
                raise self.error(_REPEAT_REFUSED, "sequence repetition")
            return self.primitive(target, operator_, operands, [])
        if isinstance(value, nodes.UnaryOp):
            return self.primitive(target, operators.UNARY[type(value.op)], [value.operand], [])
        if isinstance(value, nodes.Attribute):
            return self.attribute(target, value)
        if isinstance(value, nodes.Subscript):
            return self.subscript(target, value)
        if isinstance(value, nodes.Set) and any(self.kind_of(v).active for v in value.elts):
            raise self.error(_SET_REFUSED, "set")
        self.kinds[target] = kinds.CONST
        return None

    def attribute(self, target, value):
        """`x.attr`: a NumPy attribute of an array, else a field of an object (see
        `records`), the object's cotangent mirroring its fields."""
        receiver = self.kind_of(value.value)
        if not receiver.active:
            self.kinds[target] = kinds.CONST
            return None
        if receiver is kinds.ARRAY:
            if not hasattr(np.ndarray, value.attr):
                raise self.error(f"NumPy arrays have no attribute .{value.attr}",
                                 f"attribute .{value.attr}")
            return self.primitive(target, getattr(np.ndarray, value.attr), [value.value], [])
        op = self.primitive(target, records.field, [value.value, nodes.constant(value.attr)],
                            [])
        self.kinds[target] = kinds.field(receiver, value.attr)
        return op

    def subscript(self, target, value):
        container = self.kind_of(value.value)
        index = self.index_value(value.slice)
        op = self.primitive(target, operator.getitem, [value.value, index], [])
        if isinstance(container, kinds.Container) and isinstance(index, nodes.Constant):
            self.kinds[target] = container.item(index.value) or kinds.element(container)
        elif isinstance(container, kinds.Container) and not isinstance(value.slice, nodes.Slice):
            self.kinds[target] = kinds.element(container)
        elif isinstance(container, kinds.Container) and kinds.is_sequence(container):
            self.kinds[target] = _sliced(container, value.slice) or kinds.Items(
                kinds.element(container))
        elif isinstance(container, kinds.Items):
            self.kinds[target] = container if isinstance(value.slice, nodes.Slice) else (
                container.element)
        elif container.active:
            self.kinds[target] = kinds.ARRAY if container is kinds.ARRAY else kinds.ANY
        return op

    def closure(self, target, node):
        """φ of a nested `def` or `lambda` is the closure itself. It is active when a
        variable it reads is (or may be: one not assigned yet), or a default value."""
        defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        later = [var for var in node.captured if var not in self.kinds]
        active = bool(later) or any(self.kinds[var].active for var in node.captured) or any(
            self.kind_of(d).active for d in defaults)
        self.kinds[target] = kinds.ANY if active else kinds.CONST
        return Closure(target, node.captured, self.lineno, defaults=defaults,
                       later=later) if active else None

    def build(self, target, value):
        if _unpacks(value):
            if isinstance(value, nodes.Dict):
                helper, parts = structures.undict, value.values
                layout = [nodes.constant(None) if k is None else k for k in value.keys]
            else:
                helper = structures.unstar
                parts = [v.value if isinstance(v, nodes.Starred) else v for v in value.elts]
                layout = [nodes.constant(isinstance(v, nodes.Starred)) for v in value.elts]
            active = any(self.kind_of(p).active for p in parts)
            self.kinds[target] = kinds.ANY if active else kinds.CONST
            return Build(target, layout, parts, self.lineno, helper) if active else None
        if isinstance(value, nodes.Dict):
            keys = value.keys
            values = value.values
            if not all(isinstance(k, nodes.Constant) for k in keys):
                items = [self.kind_of(v) for v in values]
                self.kinds[target] = kinds.ANY if any(k.active for k in items) else kinds.CONST
                return Build(target, keys, values, self.lineno)
            container = kinds.container(dict, [k.value for k in keys], map(self.kind_of, values))
        else:
            keys = [nodes.constant(i) for i in range(len(value.elts))]
            values = value.elts
            type_ = tuple if isinstance(value, nodes.Tuple) else list
            container = kinds.sequence(type_, map(self.kind_of, values))
        self.kinds[target] = container
        return Build(target, keys, values, self.lineno) if container.active else None

    def unpack(self, targets, source):
        container = self.kind_of(source)
        for i, target in enumerate(targets):
            if isinstance(container, kinds.Container):
                self.kinds[target] = container.item(i) or kinds.element(container)
            else:
                self.kinds[target] = kinds.element(container)
        if not container.active or not isinstance(source, nodes.Name):
            return None
        return Unpack(targets, source.id, container, self.lineno)

    def call(self, target, value, stmt):
        """Forward code and operation for `target = f(...)`."""
        helper = getattr(value, "helper", None)
        if helper is loops.iterate:
            return self.loop(target, value)
        if helper is not None:
            value.func = nodes.name(self.bindings.helper(value.func.id, helper))
        fn = helper or self.callees.callee(value.func)
        args = [a.value if isinstance(a, nodes.Starred) else a for a in value.args]
        if fn is not None and self.callees.is_method(value.func):
            args = [value.func.value] + args
        keywords = [(k.arg, k.value) for k in value.keywords]
        active = any(self.kind_of(a).active for a in args + [v for _, v in keywords])
        if fn is None or _is_split(value):
            callee = value.func.value if self.callees.is_method(value.func) else value.func
            if active or self.kind_of(callee).active:
                return self.dynamic_call(target, value)
        elif active and not registry.is_nondifferentiable(fn):
            if registry.rule_for(fn) is not None:
                op = self.primitive(target, fn, args, keywords)
                if op is not None and self.is_cancelled_shift(target, fn, args, keywords):
                    self.kinds[target] = kinds.constant(self.kinds[target])
                    return [stmt], None
                return [stmt], op
            if custom.vjp_of(fn) is not None:
                return self.custom_call(target, fn, value)
            if fn is mutation.with_member:  # a set comprehension
                raise self.error(_SET_REFUSED, "set")
            if isinstance(fn, types.FunctionType) and introspection.has_fixed_parameters(fn):
                return self.static_call(target, fn, value)
            if isinstance(fn, types.FunctionType):
                return self.dynamic_call(target, value)
            raise self.no_rule(fn)
        self.kinds[target] = self.constant_result(fn, args, keywords)
        if fn is isinstance and len(args) == 2:
            self.known[target] = self.type_test(*args)
        return [stmt], None

    def type_test(self, value, types_):
        """`isinstance(value, types_)` when the kind of `value` decides it, else None."""
        kind = self.kind_of(value)
        cls = self.callees.callee(types_) if nodes.dotted_path(types_) is not None else None
        if kind.shape == "array":
            known = np.ndarray
        elif isinstance(kind, kinds.Container):
            known = kind.type
        else:
            return None
        builtin = (tuple, list, dict, set, str)
        decided = cls in builtin or known not in (tuple, list, dict, np.ndarray)
        return issubclass(known, cls) if isinstance(cls, type) and decided else None

    def loop(self, target, value):
        """φ of `iterate(loop_body, items, *state)`: the body transformed once into a
        forward function, which `iterate_fwd` runs (see `loops`). The loop's
        pullback gives the cotangents of the body (its environment), of the
        items and of the state's initial values; ρ is that of a call."""
        body_name, items, *inits = value.args
        body = self.loop_bodies.pop(body_name.id)
        item = kinds.element(self.kind_of(items))
        state = [self.kind_of(a) for a in inits]
        outer = {v: self.kinds.get(v, kinds.ANY) for v in body.captured}  # ANY: defined later
        if not any(k.active for k in [item, *state, *outer.values()]):
            return self.primal_loop(target, value, body)
        before, ops = [], []
        if isinstance(self.kind_of(items), kinds.Items) and item.active:
            before, op = self.materialize_items(items)
            items, ops = nodes.name(before[0].targets[0].id), [op]
        name = self.namer.fresh(body.name + "_fwd")
        result, state = self.loop_body(body, name, outer, item, state)
        self.updates.loop(target, body, items, inits, result)
        forward = result.tree
        self.kinds[body.name] = kinds.ANY if any(k.active for k in outer.values()) else (
            kinds.CONST)
        self.kinds[target] = kinds.sequence(tuple, [kinds.CONST] + state)
        driver = self.bindings.object("iterate_fwd", loops.iterate_fwd)
        pullback = self.namer.pullback(target)
        call = nodes.call(nodes.name(driver), [nodes.name(name), items] + inits)
        later = [var for var in body.captured if var not in self.kinds]
        ops += [Closure(body.name, body.captured, self.lineno, later=later, label="the loop"),
                Call(target, pullback, [None, body_name, items] + inits, self.lineno)]
        run = nodes.unpack([target, pullback], call, self.lineno)
        run.loop_env = [(v, outer[v]) for v in body.captured]  # for `loop_caches`
        return before + [forward, run], ops

    def materialize_items(self, items):
        """`list(items)` for an iterator (zip, enumerate, ...) with differentiable items,
        so that the derivative of the loop's derivative can see them too."""
        listed = self.namer.fresh(items.id + "_list")
        call = nodes.call(nodes.name(self.bindings.object("list", list)), [items])
        return [nodes.assign(listed, call, self.lineno)], self.primitive(listed, list, [items],
                                                                        [])

    def loop_body(self, body, name, outer, item, state):
        """The forward of a loop body, for the kinds its state takes in any iteration.

        The state's kinds are those of its initial values joined with those the
        body returns, until they no longer change; only the last attempt's
        names stay taken.
        """
        taken = set(self.namer.taken)
        while True:
            param_kinds = dict(outer)
            param_kinds.update(zip(nodes.parameter_names(body.args), [item] + state))
            result = _Reverse(nodes.clone(body), self.origin, param_kinds, self.namer,
                              self.bindings, self.calls, body.captured).run(name)
            returned = [kinds.item(result.result_kind, i + 1) for i in range(len(state))]
            joined = [kinds.join(a, b) for a, b in zip(state, returned)]
            if joined == state:
                self.callees.globals_used.update(result.globals_used)
                return result, state
            state = joined
            self.namer.taken = taken | set(self.bindings.cells)

    def primal_loop(self, target, value, body):
        """A loop without differentiable values runs as it is, with `loops.iterate`."""
        if any(hasattr(node, "updates") for node in nodes.walk(body)):
            param_kinds = {p: kinds.CONST for p in nodes.parameter_names(body.args) + body.captured}
            checked = _Reverse(nodes.clone(body), self.origin, param_kinds, self.namer,
                               self.bindings, self.calls, body.captured).run(body.name)
            self.updates.track_loop(target, body, value.args[1], value.args[2:],
                                    checked.updated)
        for node in [value] + list(nodes.walk(body)):
            helper = getattr(node, "helper", None)
            if helper is not None:
                node.func = nodes.name(self.bindings.helper(node.func.id, helper))
        self.kinds[target] = kinds.CONST
        return [body, nodes.assign(target, value, self.lineno)], None

    def static_call(self, target, fn, value):
        signature = calls.signature(fn)
        try:
            bound = signature.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        except TypeError as error:
            raise self.error(f"calling {fn.__qualname__}: {error}", fn.__qualname__) from None
        params = list(signature.parameters)
        arguments = [bound.arguments.get(p) for p in params]
        callee = self.located_in_user_code(self.calls.resolve, value.func, fn, {
            p: self.kind_of(a) if a is not None else kinds.CONST
            for p, a in zip(params, arguments)})
        forward_name = self.bindings.cell(callee.name, callee.cell)
        pullback = self.namer.pullback(target)
        call = nodes.call(nodes.name(forward_name), value.args, value.keywords)
        stmt = nodes.unpack([target, pullback], call, self.lineno)
        self.kinds[target] = callee.result_kind
        self.updates.track_call_updates(fn, dict(zip(params, arguments)), callee.updated)
        return [stmt], Call(target, pullback, [None] + arguments, self.lineno)

    def located_in_user_code(self, resolve, func, fn, param_kinds):
        """`resolve(fn, param_kinds)`, a TransformError met inside a library's `fn`
        named at this call, written `func`, when this function is the user's."""
        try:
            return resolve(fn, param_kinds)
        except TransformError as error:
            if not errors.in_library(error.filename) or errors.in_library(
                    self.origin.filename):
                raise
            name, full = nodes.dotted_path(func) or fn.__qualname__, registry.describe(fn)
            called = name if full.endswith(name) and full.count(".") == name.count(
                ".") else f"{name} ({full})"
            raise errors.into_library(error, called, self.origin.filename,
                                      self.lineno) from None

    def custom_call(self, target, fn, value):
        """`y, y_pb = custom_forward(f_fwd, f_bwd, ...)` for a function with a
        hand-written derivative (see `custom`)."""
        if value.keywords or _is_split(value):
            raise self.error(f"{fn.__qualname__} has a custom derivative: call it with "
                             "positional arguments only", fn.__qualname__)
        fwd, bwd = custom.vjp_of(fn)
        pullback = self.namer.pullback(target)
        names = [nodes.name(self.bindings.object(f.__name__, f)) for f in (fwd, bwd)]
        driver = self.bindings.object("custom_forward", custom.custom_forward)
        call = nodes.call(nodes.name(driver), names + value.args)
        self.kinds[target] = kinds.ANY
        return [nodes.unpack([target, pullback], call, self.lineno)], Call(
            target, pullback, [None] + value.args, self.lineno)

    def dynamic_call(self, target, value):
        """`y, y_pb = forward(f, ...)`: `f` is transformed when the call happens.

        The pullback returns the cotangent of `f` (its environment; a method's
        object) and one per argument as written, or, for `f(*args, **kwargs)`,
        one for `args` and one for `kwargs`.
        """
        pullback = self.namer.pullback(target)
        if self.callees.is_method(value.func):
            forward = self.bindings.object("forward_method", self.calls.forward_method)
            head = [value.func.value, nodes.constant(value.func.attr)]
        else:
            forward = self.bindings.object("forward", self.calls.forward)
            head = [value.func]
        call = nodes.call(nodes.name(forward), head + value.args, value.keywords)
        stmt = nodes.unpack([target, pullback], call, self.lineno)
        self.kinds[target] = kinds.ANY
        callee = value.func.value if self.callees.is_method(value.func) else value.func
        arguments = [a.value if isinstance(a, nodes.Starred) else a for a in value.args]
        bound = [callee] + arguments + [k.value for k in value.keywords]
        return [stmt], Call(target, pullback, bound, self.lineno, split=_is_split(value))

    def primitive(self, target, fn, args, keywords):
        rule = registry.rule_for(fn)
        arg_kinds = [self.kind_of(a) for a in args + [v for _, v in keywords]]
        if registry.is_nondifferentiable(fn) or not any(k.active for k in arg_kinds):
            self.kinds[target] = self.constant_result(fn, args, keywords)
            return None
        if rule is None:
            raise self.no_rule(fn)
        self.located(instantiate.bind, rule, args, keywords)
        self.kinds[target] = _result_kind(rule, arg_kinds)
        self.shapes[target] = self.result_shape(rule, target, args)
        return Primitive(target, rule, args, keywords, self.lineno)

    def is_cancelled_shift(self, target, fn, args, keywords):
        """Whether `target = fn(...)` is a shift that what the function computes from
        it cancels, its cotangent zero (see `invariance`)."""
        shift = invariance.shift_of(fn, args, keywords, self.kinds[target].shape == "scalar")
        if shift is None:
            return False
        statements, position = self.place
        block = self.blocks.get(id(statements))
        if block is None:
            block = self.blocks[id(statements)] = invariance.Block(statements)
        return invariance.cancelled(target, shift, block, position, self.function_reads,
                                    self.callees.global_callee,
                                    lambda atom: self.kind_of(atom).shape == "scalar")

    def function_reads(self):
        """How often the function reads each name (the tree only ever changes the
        names of pullback's helpers it calls)."""
        if self.reads is None:
            self.reads = nodes.read_counts(self.tree)
        return self.reads

    def constant_result(self, fn, args, keywords):
        """The kind of the result of a call of `fn` that has no derivative here."""
        if fn is None:
            return kinds.CONST
        if registry.is_nondifferentiable(fn):
            return registry.constant_result(fn) or kinds.CONST
        rule = registry.rule_for(fn)
        if rule is None:
            return kinds.CONST
        return _result_kind(rule, [self.kind_of(a) for a in args + [v for _, v in keywords]])


    def check_effect(self, value):
        """A call whose value is dropped may only see constants (or be print-like).

        Its only use would be a side effect on a differentiable value, which
        pullback cannot see.
        """
        if not isinstance(value, nodes.Call):
            return
        fn = None if self.callees.is_method(value.func) else self.callees.callee(value.func)
        args = value.args + [k.value for k in value.keywords]
        if self.callees.is_method(value.func):
            args = args + [value.func.value]
        if any(self.kind_of(a).active for a in args) and not (
            fn is not None and registry.is_nondifferentiable(fn)
        ):
            what = nodes.dotted_path(value.func) or f"method .{value.func.attr}"
            raise self.error(
                f"calling {what} without using its result, with a differentiable argument: "
                "its only effect would be to mutate a value, which is not yet supported",
                what,
            )

    # -- helpers ----------------------------------------------------------------

    def kind_of(self, atom):
        if isinstance(atom, nodes.Name):
            return self.kinds.get(atom.id, kinds.CONST)
        if isinstance(atom, nodes.Tuple):
            return kinds.promote([self.kind_of(e) for e in atom.elts] or [kinds.CONST])
        if isinstance(atom, nodes.Constant) and isinstance(atom.value, (int, float)):
            return kinds.CONST_SCALAR
        return kinds.CONST

    def index_value(self, index):
        """Subscript syntax as a value (`nodes.index_value`), reading `slice` from a cell."""
        def slice_call(parts):
            return nodes.call(nodes.name(self.bindings.object("slice", slice)), parts)

        return nodes.index_value(index, slice_call)

    def no_rule(self, fn):
        name = registry.describe(fn)
        return self.error(
            f"no derivative rule for {name}, called here with a differentiable argument; "
            f"register one with @pullback.adjoint({name}) (see docs/rules.md)",
            name,
        )

    def shape_of(self, atom):
        """A token shared by atoms known to have the same shape ("scalar"), or None."""
        if self.kind_of(atom).shape == "scalar":
            return "scalar"
        if isinstance(atom, nodes.Name):
            return self.shapes.get(atom.id)
        return None

    def result_shape(self, rule, target, args):
        """The shape token of a primitive's result: an elementwise operation on
        operands of one shape (and scalars) has that shape."""
        if rule.result == "scalar":
            return "scalar"
        if rule.result != "elementwise":
            return target
        shapes = {self.shape_of(a) for a in args} - {"scalar"}
        if not shapes:
            return "scalar"
        return shapes.pop() if len(shapes) == 1 and None not in shapes else target

    def located(self, step, *args):
        """Run `step(*args)`, giving a TransformError it raises this statement's line."""
        try:
            return step(*args)
        except TransformError as error:
            if error.lineno is not None:
                raise
            raise self.error(error.message, error.construct) from None

    def error(self, message, construct):
        return TransformError(message, self.origin.filename, self.lineno, construct)


def _repeats(kind_of, operands):
    """Whether `a * b` repeats a differentiable list or tuple: one is, and the other is a
    constant that may be an int (not an array; not a float literal, which Python refuses)."""
    for items, count in (operands, operands[::-1]):
        times = kind_of(count)
        float_literal = isinstance(count, nodes.Constant) and isinstance(count.value, float)
        if (kinds.is_sequence(kind_of(items)) and kind_of(items).active and not times.active
                and times.shape != "array" and not float_literal):
            return True
    return False


def _group_closures(ops):
    """Mark closures that read a closure defined after them (a forward reference, as in
    recursion: every cycle of reads has one) as one group with it, handled by the last
    of them: the first the pullback meets, so that the variables they read get their
    cotangents before the pullback passes their assignments. A closure that reads only
    closures defined before it is not grouped: its ρ at its own definition, which the
    pullback meets after every use of it, adds its cotangent to theirs before it meets
    their definitions."""
    closures = {op.target: op for op in ops if isinstance(op, Closure)}
    order = {name: i for i, name in enumerate(closures)}
    group_of = {name: {name} for name in closures}
    for op in closures.values():
        for var in op.captured:
            if var in closures and order[var] >= order[op.target]:
                merged = group_of[var] | group_of[op.target]
                for name in merged:
                    group_of[name] = merged
    for op in closures.values():
        members = group_of[op.target]
        if len(members) > 1 or op.target in op.captured:
            ordered = [other for other in closures.values() if other.target in members]
            op.group = ordered if op is ordered[-1] else []


def _defined(stmt):
    """The closure `stmt` defines (`def g` or `g = lambda ...`), else None."""
    if isinstance(stmt, nodes.FunctionDef):
        return stmt.name
    if isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Lambda):
        return stmt.targets[0].id
    return None


def _sliced(container, index):
    """The kind of `container[index]` for a tuple or list kind and a slice of constant
    bounds (`params[5:]`), else None."""
    bounds = [index.lower, index.upper, index.step]
    if not all(b is None or isinstance(b, nodes.Constant) and type(b.value) is int
               for b in bounds):
        return None
    part = slice(*[None if b is None else b.value for b in bounds])
    return kinds.sequence(container.type, container.items[part])


def _unpacks(value):
    """Whether a literal unpacks another value into itself (`*x`, `**d`)."""
    if isinstance(value, nodes.Dict):
        return any(k is None for k in value.keys)
    return any(isinstance(e, nodes.Starred) for e in value.elts)


def _is_split(call):
    """Whether a call passes `*args` or `**kwargs` (ANF then calls `f(*args, **kwargs)`)."""
    return any(isinstance(a, nodes.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords)



def _result_kind(rule, arg_kinds):
    if callable(rule.result):
        return rule.result(*arg_kinds)
    active = any(k.active for k in arg_kinds)
    if rule.result == "elementwise":
        return kinds.promote(arg_kinds)
    if rule.result == "scalar":
        return kinds.SCALAR if active else kinds.CONST_SCALAR
    if rule.result == "array" and active:
        return kinds.ARRAY
    return kinds.ANY if active else kinds.CONST



