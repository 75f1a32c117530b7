"""ρ: the pullback, from the operations the forward pass (φ, `forward`) recorded.

Each operation of `ops` has one backward rule here (`RULES`), run in reverse
order: it reads the cotangent of what the operation made and contributes to the
cotangents of what it read (the paper's ⊕=, `contribute`). The first
contribution to the cotangent of `x` binds `dx`; later ones add to it. A variable
that receives no contribution has the symbolic zero and generates no code; nor
does a variable whose kind is not active.
"""

from ...runtime import calls, cotangents, structures
from ..analysis import kinds
from ..syntax import nodes
from . import instantiate
from .ops import Branch, Build, Call, Closure, Copy, Primitive, Unpack


class Backward:
    """The backward pass of one function, after its forward pass `forward` (a
    `forward._Reverse`, whose kinds, shapes, names and bindings it reads, and whose
    `lineno` it moves to each operation so that errors name its line)."""

    def __init__(self, forward):
        self.forward = forward
        self.namer = forward.namer
        self.bindings = forward.bindings
        self.cot = {}  # variable -> the name holding its cotangent so far
        self.cotangent_names = {}

    @property
    def lineno(self):
        """The line of the operation being read."""
        return self.forward.lineno

    def pullback(self, ops, ret, result_kind):
        """The pullback closure of the function, from the ops φ recorded (`ops`), its
        return statement and the kind of what it returns."""
        name = self.namer.fresh(self.forward.tree.name.rstrip("_") + "_pullback")
        returned = ret.value.id if isinstance(ret.value, nodes.Name) else None
        param = self.cotangent_name(returned or "out")
        body = []
        if returned is not None and result_kind.active:
            self.cot[returned] = param
            body = self.block(ops)
        env = self.zero()
        if any(v in self.cot for v in self.forward.freevars):
            env = nodes.tuple_([self.cotangent_atom(v) for v in self.forward.freevars])
        results = [env] + [self.cotangent_atom(p) for p in self.forward.params]
        body.append(nodes.return_(nodes.tuple_(results)))
        node = nodes.function_def(name, [param], body, ret.lineno)
        node.pullback = True
        return node

    def block(self, ops):
        out = []
        for op in reversed(ops):
            self.forward.lineno = op.lineno
            out.extend(RULES[type(op)](self, op))
        return out

    def copy(self, op):
        if op.target not in self.cot:
            return []
        return self.contribute(op.source, nodes.name(self.cot[op.target]))

    def primitive(self, op):
        if op.target not in self.cot:
            return []
        instance = self.forward.located(
            instantiate.instantiate, op.rule, op.args, op.keywords, op.target, self.cot[op.target],
            self.namer, self.bindings.object, self.forward.shape_of,
        )
        out = []
        for kind, payload in instance.statements:
            if kind == "assign":
                out.append(nodes.located(payload, self.lineno))
                continue
            param, expr = payload
            atom = instance.arguments.get(param)
            if isinstance(atom, nodes.Name):
                out.extend(self.contribute(atom.id, expr))
            elif isinstance(atom, nodes.Tuple) and self.forward.kind_of(atom).active:
                parts = self.namer.fresh(self.cotangent_name(param))
                out.append(nodes.assign(parts, expr, self.lineno))
                out.extend(self.distribute(parts, [(nodes.constant(i), e)
                                                   for i, e in enumerate(atom.elts)]))
        return out

    def call(self, op):
        if op.target not in self.cot:
            return []
        targets, later, seen = [], [], set()
        for atom in op.bound:
            var = atom.id if isinstance(atom, nodes.Name) else None
            if var is None or not self.forward.kind_of(atom).active:
                targets.append(None)
            elif var not in self.cot and var not in seen:
                seen.add(var)
                name = self.cotangent_name(var)
                self.cot[var] = name
                targets.append(name)
            else:
                temp = self.namer.fresh(self.cotangent_name(var))
                targets.append(temp)
                later.append((var, temp))
        call = nodes.call(nodes.name(op.pullback), [nodes.name(self.cot[op.target])])
        if op.split:
            split = self.bindings.object("split_cotangents", calls.split_cotangents)
            call = nodes.call(nodes.name(split), [call] + [nodes.clone(a) for a in op.bound[1:]])
        out = [nodes.unpack(targets, call, self.lineno)]
        for var, temp in later:
            out.extend(self.contribute(var, nodes.name(temp)))
        return out

    def unpack(self, op):
        items = [nodes.name(self.cot[t]) if t in self.cot else self.zero() for t in op.targets]
        if not any(t in self.cot for t in op.targets):
            return []
        if isinstance(op.container, kinds.Container) and op.container.type in (tuple, list):
            packed = (nodes.tuple_ if op.container.type is tuple else nodes.list_)(items)
        else:
            repack = self.bindings.object("repack", structures.repack)
            packed = nodes.call(nodes.name(repack), [nodes.name(op.source), nodes.tuple_(items)])
        return self.contribute(op.source, packed)

    def build(self, op):
        if op.target not in self.cot:
            return []
        if not op.unpacks:
            return self.distribute(self.cot[op.target], zip(op.keys, op.values))
        parts = self.namer.fresh(self.cotangent_name(op.target) + "_parts")
        helper = nodes.name(self.bindings.object(op.unpacks.__name__, op.unpacks))
        split = nodes.call(helper, [nodes.name(self.cot[op.target]), nodes.tuple_(op.values),
                                    nodes.tuple_(op.keys)])
        positions = [nodes.constant(i) for i in range(len(op.values))]
        return [nodes.assign(parts, split, self.lineno)] + self.distribute(
            parts, zip(positions, op.values))

    def closure(self, op):
        """ρ of a closure: its cotangent holds its free variables' ([dw1, ..., dwl] ⊕= dg),
        then its defaults' (see `calls.with_defaults`)."""
        if op.group is not None:
            return self.closure_group(op.group)
        if op.target not in self.cot:
            return []
        held = list(map(nodes.name, op.captured)) + op.defaults
        positions = [nodes.constant(i) for i in range(len(held))]
        return self.distribute(self.cot[op.target], zip(positions, held))

    def closure_group(self, group):
        """ρ of closures that read one another: their cotangents nest as deep as the
        recursion went, and `unroll` sums them per variable read."""
        if not any(op.target in self.cot for op in group):
            return []
        names = [nodes.constant(op.target) for op in group]
        cotangents_ = nodes.Dict(keys=names, values=[self.cotangent_atom(op.target)
                                                     for op in group])
        layouts = nodes.Dict(keys=nodes.clone(names), values=[
            nodes.tuple_(map(nodes.constant, op.captured)) for op in group])
        unroll = nodes.name(self.bindings.object("unroll", structures.unroll))
        totals = self.namer.fresh(self.cotangent_name(group[0].target) + "_group")
        members = {op.target for op in group}
        read = sorted({v for op in group for v in op.captured} - members)
        return [nodes.assign(totals, nodes.call(unroll, [cotangents_, layouts]), self.lineno)] + (
            self.distribute(totals, [(nodes.constant(v), nodes.name(v)) for v in read]))

    def distribute(self, container, items):
        """`dv ⊕= container[key]` for each (key, atom v) of `items` that is active."""
        out = []
        for key, value in items:
            if isinstance(value, nodes.Name) and self.forward.kind_of(value).active:
                item = nodes.Subscript(value=nodes.name(container), slice=nodes.clone(key),
                                       ctx=nodes.Load())
                out.extend(self.contribute(value.id, item))
        return out

    def branch(self, op):
        before = dict(self.cot)
        body = self.block(op.body)
        after_body, self.cot = self.cot, dict(before)
        orelse = self.block(op.orelse)
        after_else = self.cot
        self.cot = dict(before)
        for var in sorted(set(after_body) | set(after_else)):
            in_body, in_else = after_body.get(var), after_else.get(var)
            if in_body == in_else:
                self.cot[var] = in_body
                continue
            name = self.cotangent_name(var)
            _assign_in(body, name, in_body, self.zero, op.lineno)
            _assign_in(orelse, name, in_else, self.zero, op.lineno)
            self.cot[var] = name
        if not body and not orelse:
            return []
        return [nodes.if_(nodes.clone(op.test), body or [nodes.Pass()], orelse, op.lineno)]

    def contribute(self, var, expr):
        """Add `expr` to the cotangent of `var` (the paper's ⊕=)."""
        if var not in self.forward.kinds or not self.forward.kinds[var].active:
            return []
        current = self.cot.get(var)
        if current is None and isinstance(expr, nodes.Name) and var not in self.forward.params:
            self.cot[var] = expr.id
            return []
        name = self.cotangent_name(var)
        self.cot[var] = name
        if current is not None:
            expr = self.add(var, nodes.name(current), expr)
        return [nodes.assign(name, expr, self.lineno)]

    def add(self, var, left, right):
        """`left ⊕ right` for cotangents of `var`: `+` for numbers and arrays (`-` for
        the sum with a negation, `dx - e` for `dx + -e`)."""
        if self.forward.kinds[var].shape in ("scalar", "array"):
            if isinstance(right, nodes.UnaryOp) and isinstance(right.op, nodes.USub):
                return nodes.binop(left, nodes.Sub(), right.operand)
            return nodes.binop(left, nodes.Add(), right)
        return nodes.call(nodes.name(self.bindings.object("add", cotangents.add)), [left, right])

    def cotangent_name(self, var):
        if var not in self.cotangent_names:
            self.cotangent_names[var] = self.namer.cotangent(var)
        return self.cotangent_names[var]

    def cotangent_atom(self, var):
        name = self.cot.get(var)
        return nodes.name(name) if name is not None else self.zero()

    def zero(self):
        return nodes.name(self.bindings.object("ZERO", cotangents.ZERO))


RULES = {
    Copy: Backward.copy,
    Primitive: Backward.primitive,
    Call: Backward.call,
    Unpack: Backward.unpack,
    Build: Backward.build,
    Closure: Backward.closure,
    Branch: Backward.branch,
}
"""The backward rule (ρ) of each kind of operation."""


def _assign_in(branch, name, value, zero, lineno):
    if value == name:
        return
    branch.append(nodes.assign(name, nodes.name(value) if value else zero(), lineno))


