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

This module is φ: it walks the statements forwards with the abstract
interpreter (`analysis.interpret`), which tells for each statement the kinds of
its values and how it is differentiated (a `Step`). φ emits the primal (and the
forwards of calls), one emitter per kind of step (`forward_code.EMITTERS`), and records one
operation per statement it differentiates (`ops`). ρ, in `backward`, reads them
in reverse order and writes the pullback.
"""

from ...errors import TransformError
from ...runtime import custom, dispatch, loops
from .. import ir, templates
from ..analysis import interpret, kinds
from ..forward_code import ForwardCode, Result, stops_early
from ..syntax import nodes
from ..syntax.scopes import unassigned
from . import backward
from .ops import Branch, Build, Call, Closure, Copy, Primitive, Unpack


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


class _Reverse(ForwardCode):
    """φ of one function: its statements, as the interpreter (`facts`) reads them, each
    emitted with the forward code of its `Step` and recorded as an op for ρ."""

    def __init__(self, tree, origin, param_kinds, namer, bindings, calls, freevars=None):
        super().__init__(tree, origin, param_kinds, namer, bindings, calls, freevars)
        self.shape_of = self.facts.shape_of

    @property
    def kinds(self):
        """The kind of each variable read so far (see `interpret`)."""
        return self.facts.kinds

    def run(self, forward_name):
        """The `Result`: the forward function `forward_name`, with its pullback."""
        return self.assemble(forward_name, *self.walk())

    def assemble(self, forward_name, forward, ops, ret, summary):
        """The `Result` of φ's `walk`: the forward code, then the pullback (ρ of `ops`)."""
        pullback = backward.Backward(self).pullback(ops, ret, summary.result_kind)
        out = nodes.tuple_([nodes.clone(ret.value), nodes.name(pullback.name)])
        args, entry = self.signature()
        fwd = nodes.function_def(forward_name, args,
                                 entry + forward + [pullback, nodes.return_(out, ret.lineno)],
                                 self.tree.lineno)
        return Result(fwd, summary.result_kind, summary.globals_used, summary.kinds,
                      summary.shapes, summary.updated, summary.exits, summary.shares)

    def walk(self):
        """φ of the function's statements: `(forward code, ops, its return, Summary)`."""
        *body, ret = self.tree.body
        forward, ops = self.forward_block(body)
        summary = self.facts.finish(ret)
        self.guard(forward, summary.guards, ret, self.first_emitted)
        return forward, ops, ret, summary

    def signature(self):
        """The forward's parameters, the user's, and the statements giving a parameter's
        value on entry its own name, where a closure reads the parameter assigned again
        (`x_1 = x`; the closure reads `x`, which the forward assigns later)."""
        entry = self.facts.entry
        if not entry:
            return self.tree.args, []
        args = nodes.clone(self.tree.args)
        user = {version: param for param, version in entry.items()}
        for param in nodes.parameters(args):
            param.id = user.get(param.id, param.id)
        return args, [nodes.assign(version, nodes.name(param), self.tree.lineno)
                      for param, version in entry.items()]

    # -- the walk --------------------------------------------------------------

    def forward_block(self, statements):
        forward, ops = [], []
        for position, stmt in enumerate(statements):
            self.facts.at(statements, position)
            if isinstance(stmt, nodes.If):
                emitted, op = self.forward_if(stmt)
            else:
                emitted, op = self.forward_statement(stmt)
            forward.extend(emitted)
            if emitted:
                self.first_emitted[id(stmt)] = emitted[0]
            if isinstance(op, list):
                ops.extend(op)
            elif op is not None:
                ops.append(op)
        _group_closures(ops)
        self.check_groups_complete(statements, ops)
        return forward, ops

    def forward_if(self, stmt):
        known = self.facts.test(stmt)
        if known is not None:  # `isinstance` on a value whose type the kinds tell
            return self.forward_block(unassigned(self.tree, stmt, known) + (
                stmt.body if known else stmt.orelse))
        before = self.facts.save()
        body, body_ops = self.forward_block(stmt.body)
        after_body = self.facts.restore(before)
        orelse, else_ops = self.forward_block(stmt.orelse)
        self.facts.join(after_body)
        forward = (self.attempt(stmt, body, orelse) if getattr(stmt, "attempt", None)
                   else nodes.if_(stmt.test, body, orelse, stmt.lineno))
        op = Branch(stmt.test, body_ops, else_ops, stmt.lineno) if body_ops or else_ops else None
        return [forward], op

    def forward_statement(self, stmt):
        """The forward code and the op of a statement other than an `if`: by the
        `Step` the interpreter made of it, by its emitter (`forward_code.EMITTERS`)."""
        self.bind_helper(stmt)
        step = self.facts.statement(stmt)
        emitted, op = ([stmt], None) if step is None else self.step_code(stmt, step)
        self.facts.after(stmt)
        return emitted, op

    def check_groups_complete(self, statements, ops):
        """Refuse a read of a closure of a recursive group before the group's last
        definition: its cotangent would come after `unroll` gave the group's to the
        variables they read (see `_group_closures`)."""
        defined = {op.target for op in ops if isinstance(op, Closure)}
        for op in ops:
            later = [var for var in op.later if self.kind_of(nodes.name(var)).active] if (
                isinstance(op, Closure)) else []  # a function found constant has no cotangent
            elsewhere = [var for var in later if var not in defined]
            if elsewhere or isinstance(op, Closure) and op.label and later:
                what, var = op.label or op.target, (elsewhere or later)[0]
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

    # -- one emitter per kind of step --------------------------------------------

    def copy(self, stmt, step):
        return [stmt], Copy(step.target, step.source, self.lineno)

    def primitive(self, stmt, step):
        listings, stmt, step = self.listed_iterators(stmt, step)
        code, ops = [], []
        for listing, listing_step in listings:
            listing_code, op = self.primitive(listing, listing_step)
            code, ops = code + listing_code, ops + [op]
        self.located(templates.bind, step.rule, step.args, step.keywords)
        op = Primitive(step.target, step.rule, step.args, step.keywords, self.lineno)
        return code + [self.as_run(stmt, step)], ops + [op] if ops else op

    def build(self, stmt, step):
        return [stmt], Build(step.target, step.keywords, step.args, self.lineno, step.source)

    def unpack(self, stmt, step):
        return [stmt], Unpack(step.target, step.source, step.kinds, self.lineno)

    def closure(self, stmt, step):
        """φ of a nested `def` or `lambda` is the closure itself."""
        return [stmt], Closure(step.target, step.source.captured, self.lineno,
                               defaults=step.args, later=step.later)

    def static_call(self, stmt, step):
        """`y, y_pb = g_fwd(...)`, the forward of `g` compiled for these kinds."""
        forward_name = self.bindings.cell(step.callee.name, step.callee.cell)
        target = step.target or self.dropped(stmt)
        pullback = self.namer.pullback(target)
        value = self.call_of(stmt, step)
        call = nodes.call(nodes.name(forward_name), value.args, value.keywords)
        return [nodes.unpack([target, pullback], call, self.lineno)], Call(
            target, pullback, [None] + step.args, self.lineno)

    def custom_call(self, stmt, step):
        """`y, y_pb = custom_forward(f_fwd, f_bwd, ...)` for a function with a
        hand-written derivative (see `custom`); for one with a rule in forward mode,
        `custom_jvp_forward(rule, ...)`, the rule's transpose."""
        pullback = self.namer.pullback(step.target)
        driver, names = self.custom_driver(step.fn, dispatch.custom_jvp_forward,
                                           custom.custom_forward)
        call = nodes.call(driver, names + stmt.value.args)
        return [nodes.unpack([step.target, pullback], call, self.lineno)], Call(
            step.target, pullback, [None] + stmt.value.args, self.lineno)

    def dynamic_call(self, stmt, step):
        """`y, y_pb = forward(f, ...)`: `f` is transformed when the call happens.

        The pullback returns the cotangent of `f` (its environment; a method's
        object) and one per argument as written, or, for `f(*args, **kwargs)`,
        one for `args` and one for `kwargs`.
        """
        value, target = self.call_of(stmt, step), step.target or self.dropped(stmt)
        pullback = self.namer.pullback(target)
        method = self.facts.callees.is_method(value.func)
        if method:
            helper = self.calls.forward_method if step.target else self.calls.effect_method
            head = [value.func.value, nodes.constant(value.func.attr)]
        else:
            helper = self.calls.forward if step.target else self.calls.effect
            head = [value.func]
        forward = self.bindings.object(helper.__name__, helper)
        call = nodes.call(nodes.name(forward), head + value.args, value.keywords)
        callee = value.func.value if method else value.func
        arguments = [a.value if isinstance(a, nodes.Starred) else a for a in value.args]
        bound = [callee] + arguments + [k.value for k in value.keywords]
        return [nodes.unpack([target, pullback], call, self.lineno)], Call(
            target, pullback, bound, self.lineno, split=interpret.is_split(value))

    def dropped(self, stmt):
        """A name for the value of a call whose value the user drops (`log(x)`)."""
        return self.namer.fresh((nodes.dotted_path(stmt.value.func) or "call").split(".")[-1]
                                + "_result")

    def loop(self, stmt, step):
        """φ of `iterate(loop_body, items, *state)`: the body transformed once, for the
        kinds the interpreter settled on. When its forward makes no function, the
        loop runs inline and keeps the values its pullback reads (`cached_loop`);
        else the body is a forward function which `iterate_fwd` runs, keeping each
        iteration's pullback (see `loops`). The loop's pullback gives the cotangents
        of the body (its environment), of the items and of the state's initial
        values; ρ is that of a call."""
        target, body = step.target, step.callee
        body_name, items, *inits = stmt.value.args
        before, ops = [], []
        if isinstance(self.kind_of(items), kinds.Items) and kinds.element(
                self.kind_of(items)).active:
            before, op = self.materialize_items(items)
            items, ops = nodes.name(before[0].targets[0].id), [op]
        inner = _Reverse(nodes.clone(body), self.origin, step.kinds, self.namer,
                         self.bindings, self.calls, body.captured)
        pullback = self.namer.pullback(target)
        ops += [Closure(body.name, body.captured, self.lineno, later=step.later,
                        label="the loop"),
                Call(target, pullback, [None, body_name, items] + inits, self.lineno)]
        walked = inner.walk()
        if _makes_functions(walked[0]) or inner.facts.entry:
            name = self.namer.fresh(body.name + "_fwd")
            driver = self.bindings.object("iterate_fwd", loops.iterate_fwd)
            call = nodes.call(nodes.name(driver), [nodes.name(name), items] + inits)
            return before + [inner.assemble(name, *walked).tree,
                             nodes.unpack([target, pullback], call, self.lineno)], ops
        return before + [inner.cached_loop(step, walked, items, inits, pullback,
                                           self.lineno)], ops

    def cached_loop(self, step, walked, items, inits, pullback, lineno):
        """The loop whose body this is, keeping the values its pullback reads (an
        `ir.CachedLoop`), from φ's `walk` of the body: its forward, and the body of
        its pullback, reading the cotangents of the state from new names."""
        forward, ops, ret, summary = walked
        forward = [s for s in forward if not isinstance(s, (nodes.Global, nodes.Nonlocal))]
        # (declared by the enclosing function, which the loop is now part of)
        item, *params = nodes.parameter_names(self.tree.args)
        carried = [self.namer.fresh(f"d{p}_carried") for p in params]
        rho = backward.Backward(self)
        seed = nodes.tuple_([rho.zero()] + list(map(nodes.name, carried)))
        return ir.CachedLoop(
            forward=forward, step=rho.body(ops, ret, summary.result_kind, seed), items=items,
            inits=inits, target=step.target, pullback_name=pullback, item=item,
            params=params, iteration=ret.value.id, carried=carried,
            cache=self.namer.fresh(self.tree.name + "_cache"),
            env=[(v, step.kinds[v]) for v in self.freevars],
            stops=stops_early(forward, ret.value.id), kinds=dict(self.kinds), lineno=lineno)

    def materialize_items(self, items):
        """`list(items)` for an iterator (zip, enumerate, ...) with differentiable items,
        so that the derivative of the loop's derivative can see them too."""
        assign, step = self.listing(self.namer.fresh(items.id + "_list"), items.id)
        _, op = self.primitive(assign, step)
        return [assign], op

    def primal_loop(self, stmt, step):
        """A loop without differentiable values runs as it is, with `loops.iterate`."""
        return self.primal_loop_code(stmt, step), None

    def loop_body(self, stmt, step):
        """A loop's body is transformed where the loop calls it."""
        return [], None

    # -- helpers ----------------------------------------------------------------

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


def _makes_functions(forward):
    """Whether a loop body's forward code defines a function (a `def`, a `lambda`, a
    loop's pullback): inline in the loop, it would see the variables of the last
    iteration, not its own."""
    return any(isinstance(node, (nodes.FunctionDef, nodes.Lambda, ir.CachedLoop))
               for stmt in forward for node in nodes.walk(stmt))


def _defined(stmt):
    """The closure `stmt` defines (`def g` or `g = lambda ...`), else None."""
    if isinstance(stmt, nodes.FunctionDef):
        return stmt.name
    if isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Lambda):
        return stmt.targets[0].id
    return None
