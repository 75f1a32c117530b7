"""ρ: the pullback, from the operations the forward pass (φ, `forward`) recorded.

Each operation of `ops` has one backward rule here (`RULES`), run in reverse
order: it reads the cotangent of what the operation made and contributes to the
cotangents of what it read (the paper's ⊕=, `contribute`). Contributions are
collected, not added where they are made: the cotangent of `x` is written once,
as one `ir.Sum` of them all, where the walk back reaches `x`'s definition (or the
end, for parameters and free variables). A variable that receives no
contribution has the symbolic zero and generates no code; nor does a variable
whose kind is not active. The body is in the IR of `compiler/ir.py`.
"""

from ...runtime import calls, cotangents, structures
from .. import ir, templates
from ..analysis import kinds
from ..syntax import nodes
from . import ops as ops_
from .ops import Branch, Build, Call, Closure, Copy, Primitive, Unpack


class Backward:
    """The backward pass of one function, after its forward pass `forward` (a
    `forward._Reverse`, whose kinds, shapes, names and bindings it reads, and whose
    `lineno` it moves to each operation so that errors name its line)."""

    def __init__(self, forward):
        self.forward = forward
        self.namer = forward.namer
        self.bindings = forward.bindings
        self.terms = {}  # variable -> the contributions to its cotangent so far
        self.written = []  # the sums `cotangent` wrote, for `block` to put in place
        self.cotangent_names = {}
        self.names = {}  # variable -> the names `new_name` gave its cotangents

    @property
    def lineno(self):
        """The line of the operation being read."""
        return self.forward.lineno

    def pullback(self, ops, ret, result_kind):
        """The pullback closure of the function, from the ops φ recorded (`ops`), its
        return statement and the kind of what it returns."""
        name = self.namer.fresh(self.forward.tree.name.rstrip("_") + "_pullback")
        returned = ret.value.id if isinstance(ret.value, nodes.Name) else None
        param = self.new_name(returned or "out")
        body = self.body(ops, ret, result_kind, nodes.name(param))
        node = nodes.function_def(name, [param], body, ret.lineno)
        node.pullback = True
        return node

    def body(self, ops, ret, result_kind, seed):
        """The pullback's body, given `seed`, the cotangent of what the function returns:
        ρ of `ops`, then `return (denv, dparam, ...)`."""
        body = []
        if isinstance(ret.value, nodes.Name) and result_kind.active:
            self.terms[ret.value.id] = [(seed, ret.lineno)]
            body = self.block(ops)
        env = self.zero()
        if any(self.terms.get(v) for v in self.forward.freevars):
            env = nodes.tuple_([self.cotangent_atom(v) for v in self.forward.freevars])
        results = [env] + [self.cotangent_atom(p) for p in self.forward.params]
        body += self.take_written()
        body.append(nodes.return_(nodes.tuple_(results)))
        return body

    def block(self, ops):
        out = []
        for op in reversed(ops):
            self.forward.lineno = op.lineno
            statements = RULES[type(op)](self, op)
            out += self.take_written() + statements
        return out

    def take_written(self):
        written, self.written = self.written, []
        return written

    def copy(self, op):
        if self.terms.get(op.target):
            self.contribute(op.source, nodes.name(self.cotangent(op.target)))
        return []

    def primitive(self, op):
        if not self.terms.get(op.target):
            return []
        instance = self.forward.located(
            templates.instantiate, op.rule, op.args, op.keywords, op.target,
            self.cotangent(op.target), self.namer, self.bindings.object, self.forward.shape_of,
        )
        out = []
        for kind, payload in instance.statements:
            if kind == "assign":
                out.append(nodes.located(payload, self.lineno))
                continue
            param, expr = payload
            atom = instance.arguments.get(param)
            if isinstance(atom, nodes.Name):
                self.contribute(atom.id, expr)
            elif isinstance(atom, nodes.Tuple) and self.forward.kind_of(atom).active:
                parts = self.namer.fresh(self.cotangent_name(param))
                out.append(nodes.assign(parts, expr, self.lineno))
                self.distribute(parts, [(nodes.constant(i), e) for i, e in enumerate(atom.elts)])
        return out

    def call(self, op):
        if not self.terms.get(op.target):
            return []
        targets, contributions = [], []
        for atom in op.bound:
            if not isinstance(atom, nodes.Name) or not self.forward.kind_of(atom).active:
                targets.append(None)
                continue
            targets.append(self.new_name(atom.id))
            contributions.append((atom.id, targets[-1]))
        call = nodes.call(nodes.name(op.pullback), [nodes.name(self.cotangent(op.target))])
        if op.split:
            split = self.bindings.object("split_cotangents", calls.split_cotangents)
            call = nodes.call(nodes.name(split), [call] + [nodes.clone(a) for a in op.bound[1:]])
        for var, target in contributions:
            self.contribute(var, nodes.name(target))
        return [nodes.unpack(targets, call, self.lineno)]

    def unpack(self, op):
        if not any(self.terms.get(t) for t in op.targets):
            return []
        items = [self.cotangent_atom(t) for t in op.targets]
        if isinstance(op.container, kinds.Container) and op.container.type in (tuple, list):
            packed = (nodes.tuple_ if op.container.type is tuple else nodes.list_)(items)
        else:
            repack = self.bindings.object("repack", structures.repack)
            packed = nodes.call(nodes.name(repack), [nodes.name(op.source), nodes.tuple_(items)])
        self.contribute(op.source, packed)
        return []

    def build(self, op):
        if not self.terms.get(op.target):
            return []
        if not op.unpacks:
            self.distribute(self.cotangent(op.target), zip(op.keys, op.values))
            return []
        parts = self.namer.fresh(self.cotangent_name(op.target) + "_parts")
        helper = nodes.name(self.bindings.object(op.unpacks.__name__, op.unpacks))
        split = nodes.call(helper, [nodes.name(self.cotangent(op.target)),
                                    nodes.tuple_(op.values), nodes.tuple_(op.keys)])
        self.distribute(parts, zip([nodes.constant(i) for i in range(len(op.values))],
                                   op.values))
        return [nodes.assign(parts, split, self.lineno)]

    def closure(self, op):
        """ρ of a closure: its cotangent holds its free variables' ([dw1, ..., dwl] ⊕= dg),
        then its defaults' (see `calls.with_defaults`)."""
        if op.group is not None:
            return self.closure_group(op.group)
        if not self.terms.get(op.target):
            return []
        held = list(map(nodes.name, op.captured)) + op.defaults
        positions = [nodes.constant(i) for i in range(len(held))]
        self.distribute(self.cotangent(op.target), zip(positions, held))
        return []

    def closure_group(self, group):
        """ρ of closures that read one another: their cotangents nest as deep as the
        recursion went, and `unroll` sums them per variable read."""
        if not any(self.terms.get(op.target) for op in group):
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
        self.distribute(totals, [(nodes.constant(v), nodes.name(v)) for v in read])
        return [nodes.assign(totals, nodes.call(unroll, [cotangents_, layouts]), self.lineno)]

    def distribute(self, container, items):
        """`dv ⊕= container[key]` for each (key, atom v) of `items` that is active."""
        for key, value in items:
            if isinstance(value, nodes.Name) and self.forward.kind_of(value).active:
                item = nodes.Subscript(value=nodes.name(container), slice=nodes.clone(key),
                                       ctx=nodes.Load())
                self.contribute(value.id, item)

    def branch(self, op):
        """ρ of an `if`: each branch's rules run from the contributions made after it;
        a cotangent either branch adds to is summed in both, under one name, from the
        sum of those made after (written before the `if`)."""
        defined = ops_.defines(op)
        out = [self.sum_before(var, op.lineno) for var in sorted(ops_.reads(op) - defined)
               if _summed(self.terms.get(var, ()))]
        before = {var: list(terms) for var, terms in self.terms.items()}
        body = self.block(op.body)
        after_body, self.terms = self.terms, {var: list(t) for var, t in before.items()}
        orelse = self.block(op.orelse)
        after_else, self.terms = self.terms, {var: t for var, t in before.items()
                                              if var not in defined}
        for var in sorted((set(after_body) | set(after_else)) - defined):
            in_body, in_else = after_body.get(var, []), after_else.get(var, [])
            if _same(in_body, in_else):
                continue
            name = self.new_name(var)
            body.append(self.sum_into(name, var, in_body, op.lineno))
            orelse.append(self.sum_into(name, var, in_else, op.lineno))
            self.terms[var] = [(nodes.name(name), op.lineno)]
        if not body and not orelse:
            return out
        return out + [nodes.if_(nodes.clone(op.test), body or [nodes.Pass()], orelse,
                                op.lineno)]

    def sum_before(self, var, lineno):
        """`dv = ` the sum of the contributions to `var` so far, which it then holds."""
        stmt = self.sum_into(self.new_name(var), var, self.terms[var], lineno)
        self.terms[var] = [(nodes.name(stmt.targets[0].id), nodes.lineno_of(stmt))]
        return stmt

    def contribute(self, var, expr, lineno=None):
        """Add `expr` to the cotangent of `var` (the paper's ⊕=); it comes from line
        `lineno` (the operation's)."""
        if var in self.forward.kinds and self.forward.kinds[var].active:
            self.terms.setdefault(var, []).append((expr, lineno or self.lineno))

    def cotangent(self, var):
        """The name holding the cotangent of `var`, which has contributions: their sum,
        written (`written`) unless it is one name already."""
        terms = self.terms[var]
        first = terms[0][0]
        if len(terms) == 1 and isinstance(first, nodes.Name) and (
                var not in self.forward.params or first.id in self.names.get(var, ())):
            return first.id
        self.written.append(self.sum_before(var, None))
        return self.written[-1].targets[0].id

    def sum_into(self, name, var, terms, lineno=None):
        """`name = ` the sum of the contributions `terms` to the cotangent of `var`, on
        their line when they come from one, else on `lineno` (the operation's)."""
        shape = self.forward.kinds[var].shape
        kind = ir.NUMBER if shape in ("scalar", "array") else ir.ANY
        lines = {line for _, line in terms}
        line = lines.pop() if len(lines) == 1 else lineno or self.lineno
        return nodes.assign(name, ir.sum_of([t for t, _ in terms], kind, self.zero().id), line)

    def new_name(self, var):
        """A name for a cotangent of `var` not assigned before: `dx`, then `dx_1`, ..."""
        name = self.cotangent_name(var)
        if var in self.names:  # its first name, `cotangent_name`, is taken
            name = self.namer.fresh(name)
        self.names.setdefault(var, set()).add(name)
        return name

    def cotangent_name(self, var):
        if var not in self.cotangent_names:
            self.cotangent_names[var] = self.namer.cotangent(var)
        return self.cotangent_names[var]

    def cotangent_atom(self, var):
        return nodes.name(self.cotangent(var)) if self.terms.get(var) else self.zero()

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


def _summed(terms):
    """Whether contributions `terms` are more than one name: a sum or an expression."""
    return len(terms) > 1 or bool(terms) and not isinstance(terms[0][0], nodes.Name)


def _same(terms, others):
    """Whether two lists of contributions are the same nodes."""
    return len(terms) == len(others) and all(a is b for a, b in zip(terms, others))
