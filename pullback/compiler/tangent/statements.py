"""Stage 3, forward mode: each statement followed by its tangent statement (τ).

`tangent(tree, ...)` turns `def f(a, b)` (in A-normal form) into::

    def f_jvp(tangents, a, b):
        _, a_dot, b_dot = tangents       # the tangent of f itself (its free variables'), a's, b's
        <each statement of f, followed by its tangent statement>
        return (out, out_dot)

which computes `f(a, b)` and its derivative in the direction of the tangents in one
pass, keeping nothing: `y = np.sin(x)` is followed by `y_dot = x_dot * np.cos(x)`.
The tangent of `x` is `x_dot`; a value that is a constant (its kind is not active)
has none, and the tangent rules drop it where they would read it (symbolic zeros,
as the reverse rules' `ZERO`). Every function's derivative has this calling
convention: the tangents of its environment and of each parameter, in signature
order, first; its result paired with the result's tangent.

Like φ (`reverse.forward`), τ walks the statements with the abstract interpreter
(`analysis.interpret`), which decides how each statement is differentiated (a
`Step`); one emitter per kind of step (`forward_code.EMITTERS`) writes its tangent:

- a primitive: its tangent rule inlined (`rules`);
- a copy, a container built or unpacked: the same on the tangents;
- a nested `def` or `lambda`: the closure as written, and its tangent, the tuple of
  its free variables' tangents (seed 003's map-closure over bundles);
- a call of a Python function: its derivative, `y, y_dot = g_jvp((ZERO, x_dot), x)`,
  compiled for the kinds of the arguments or, for a value, resolved when the call
  happens (`jvp_call`);
- a loop: its body's derivative, run by `loops.iterate_jvp`;
- an `if`: the same `if`, each branch with its tangents.

The result is Python that pullback transforms again, in either mode.
"""

from ...rules import registry
from ...runtime import calls, dispatch, loops, structures, tangents
from ...runtime.cotangents import ZERO
from ..analysis import interpret, kinds
from ..forward_code import ForwardCode, Result, stops_early
from ..syntax import nodes
from ..syntax.scopes import unassigned
from . import rules


def tangent(tree, origin, param_kinds, namer, bindings, calls_, name):
    """The derivative of ANF function `tree` in forward mode (see the module docstring).

    Args:
      tree: a FunctionDef in A-normal form.
      origin: its `parse.Origin`.
      param_kinds: the kind of each parameter and free variable.
      namer: the `naming.Namer` of the generated code.
      bindings: the `bindings.Bindings` of the generated code.
      calls_: how calls are compiled (`calls_.resolve(fn, kinds)` gives the derivative
        of a Python function called from `tree`).
      name: the name of the generated function.

    Returns:
      A `forward_code.Result` (its `tree` is the generated function).
    """
    return _Tangent(tree, origin, param_kinds, namer, bindings, calls_).run(name)


class _Tangent(ForwardCode):
    """τ of one function (or loop body): its statements as the interpreter (`facts`) reads
    them, each with its tangent statement."""

    def __init__(self, tree, origin, param_kinds, namer, bindings, calls_, freevars=None,
                 names=None):
        super().__init__(tree, origin, param_kinds, namer, bindings, calls_, freevars)
        self.names = {} if names is None else names  # variable -> its tangent's name
        self.structured = set()  # tangents known to be displays (unpacked as they are)
        self.pending = {}  # a group's functions defined so far -> what `group` reads
        self.closures_read = None  # the variables closures read, once asked

    def run(self, name):
        """The `Result`: the generated function `name`."""
        code, ret, summary = self.walk()
        param = self.namer.fresh("tangents")
        args, entry = self.signature(param)
        out = nodes.tuple_([nodes.clone(ret.value), self.tangent_or_zero(ret.value)])
        fn = nodes.function_def(name, args, entry + code + [nodes.return_(out, ret.lineno)],
                                self.tree.lineno)
        return Result(fn, summary.result_kind, summary.globals_used, summary.kinds,
                      summary.shapes, summary.updated, summary.exits, summary.shares)

    def walk(self):
        """τ of the function's statements: `(code, its return statement, Summary)`."""
        *body, ret = self.tree.body
        code = self.block(body)
        summary = self.facts.finish(ret)
        self.guard(code, summary.guards, ret, self.first_emitted)
        return code, ret, summary

    def signature(self, param):
        """The parameters, `tangents` first, and the statements reading the tangents of
        the environment and the parameters from it (and a parameter's value on entry
        under its own name: see `anf.capture`)."""
        args = nodes.clone(self.tree.args)
        entry = self.facts.entry
        user = {version: p for p, version in entry.items()}
        for node in nodes.parameters(args):
            node.id = user.get(node.id, node.id)
        first = args.posonlyargs if args.posonlyargs else args.args
        first.insert(0, nodes.param(param))
        env = self.environment()
        targets = [env] + [self.tangent_name(user.get(p, p), p) if self.active(p) else None
                           for p in self.params]
        code = []
        if any(targets):
            code.append(nodes.unpack(targets, nodes.name(param), self.tree.lineno))
        if env:
            code.append(nodes.unpack([self.tangent_name(v) if self.active(v) else None
                                      for v in self.freevars], nodes.name(env),
                                     self.tree.lineno))
        for p, version in entry.items():  # the tangent has the version's name already
            code.append(nodes.assign(version, nodes.name(p), self.tree.lineno))
        return args, code

    def environment(self):
        """The name of the tangent of the function's free variables, when one is active
        (a loop's body reads their tangents from the function around it)."""
        if getattr(self.tree, "loop", False):
            return None
        if any(self.active(v) for v in self.freevars):
            return self.namer.fresh("env_dot")
        return None

    # -- the walk --------------------------------------------------------------

    def block(self, statements):
        code = []
        for position, stmt in enumerate(statements):
            self.facts.at(statements, position)
            emitted = self.if_(stmt) if isinstance(stmt, nodes.If) else self.statement(stmt)
            if emitted:
                self.first_emitted[id(stmt)] = emitted[0]
            code.extend(emitted)
        return code

    def if_(self, stmt):
        known = self.facts.test(stmt)
        if known is not None:
            return self.block(unassigned(self.tree, stmt, known) + (
                stmt.body if known else stmt.orelse))
        before = self.facts.save()
        body = self.block(stmt.body)
        after_body = self.facts.restore(before)
        orelse = self.block(stmt.orelse)
        after_else = dict(self.kinds)
        self.facts.join(after_body)
        assigned = (set(after_body[0]) | set(after_else)) - set(before[0])
        body += self.zeros_at_join(assigned, after_body[0])
        orelse += self.zeros_at_join(assigned, after_else)
        if getattr(stmt, "attempt", None):
            return [self.attempt(stmt, body, orelse)]
        return [nodes.if_(stmt.test, body, orelse, stmt.lineno)]

    def zeros_at_join(self, assigned, branch_kinds):
        """`v_dot = ZERO` at the end of a branch for each variable of `assigned` (those
        either branch assigns) active after the `if` but not in this branch: a constant
        here, or, if a closure reads it, not assigned here (a closure made after the
        `if` reads its tangent, as generated code does, when the other branch was
        taken)."""
        code = []
        for var in sorted(assigned):
            if var not in branch_kinds and var not in self.captured():
                continue
            if self.active(var) and not branch_kinds.get(var, kinds.CONST).active:
                name = self.tangent_name(var)
                self.structured.discard(name)
                code.append(nodes.assign(name, self.zero(), self.lineno))
        return code

    def captured(self):
        """The variables the function's closures read."""
        if self.closures_read is None:
            self.closures_read = {v for node in nodes.walk(self.tree)
                                  for v in getattr(node, "captured", ())}
        return self.closures_read

    def statement(self, stmt):
        self.bind_helper(stmt)
        step = self.facts.statement(stmt)
        emitted = [stmt] if step is None else self.step_code(stmt, step)
        if step is None and self.pending:  # a function found constant, which a group reads
            emitted += self.group(stmt)
        self.facts.after(stmt)
        return emitted

    # -- one emitter per kind of step --------------------------------------------

    def copy(self, stmt, step):
        return [stmt] + self.assign_tangent(step.target, self.tangent_of(nodes.name(step.source)))

    def primitive(self, stmt, step):
        listings, stmt, step = self.listed_iterators(stmt, step)
        code = [line for listing in listings for line in self.primitive(*listing)]
        return code + self.primitive_tangent(stmt, step)

    def primitive_tangent(self, stmt, step):
        """A primitive call and its tangent rule's code after it."""
        rule = rules.rule_of(step.rule)
        if rule is None:
            raise self.error(
                f"no tangent rule for {_describe(step.fn)}: its template writes none and "
                "none can be derived; give it one (t[z] = ..., see docs/rules.md)",
                _describe(step.fn))
        method = isinstance(stmt.value, nodes.Call) and self.facts.callees.is_method(
            stmt.value.func)
        context = rules.Context(step.target, self.namer, self.bindings.object,
                                self.shape_of, self.zero().id, method)
        instance = self.located(rules.instantiate_rule, rule, step.rule, stmt.value, step.args,
                                step.keywords, self.tangent_of, context)
        code = [nodes.located(s, self.lineno) for s in instance.statements]
        return [self.as_run(stmt, step)] + code + self.assign_tangent(step.target,
                                                                      instance.value)

    def build(self, stmt, step):
        dots = [self.tangent_or_zero(v) for v in step.args]
        target = step.target
        if step.source in (structures.unstar, structures.undict):
            transpose = structures.restar if step.source is structures.unstar else (
                structures.redict)
            helper = nodes.name(self.bindings.object(transpose.__name__, transpose))
            value = nodes.call(helper, [nodes.tuple_(dots), nodes.tuple_(step.args),
                                        nodes.tuple_(step.keywords)])
            return [stmt] + self.assign_tangent(target, value)
        if isinstance(stmt.value, nodes.List):
            display = nodes.list_(dots)
        elif isinstance(stmt.value, nodes.Tuple):
            display = nodes.tuple_(dots)
        elif step.source is None and isinstance(stmt.value, nodes.Call) and all(
                isinstance(k, nodes.Constant) and type(k.value) is int for k in step.keywords):
            by_position = dict(zip((k.value for k in step.keywords), dots))  # a named tuple
            display = nodes.tuple_([by_position.get(i, self.zero())
                                    for i in range(max(by_position) + 1)])
        else:  # a dict, a record's fields
            display = nodes.Dict(keys=[nodes.clone(k) for k in step.keywords], values=dots)
            if step.fn is not None:  # dict(d, k=v): d's keys, with the tangent ZERO
                zeros = nodes.name(self.bindings.object("zero_mapping", tangents.zero_mapping))
                display.keys.insert(0, None)
                display.values.insert(0, nodes.call(zeros, [step.fn]))
        code = self.assign_tangent(target, display)
        self.structured.add(self.tangent_name(target))
        return [stmt] + code

    def unpack(self, stmt, step):
        targets = [self.tangent_name(t) if self.active(t) else None for t in step.target]
        if not any(targets):
            return [stmt]
        source = self.tangent_of(nodes.name(step.source))
        if source is None:
            return [stmt] + [nodes.assign(t, self.zero(), self.lineno) for t in targets if t]
        if source.id not in self.structured:
            helper = nodes.name(self.bindings.object("unpacked", tangents.unpacked))
            source = nodes.call(helper, [source, nodes.constant(len(targets)),
                                         nodes.name(step.source)])
        return [stmt, nodes.unpack(targets, source, self.lineno)]

    def closure(self, stmt, step):
        """A nested `def` or `lambda` is itself; its tangent holds its free variables'
        tangents, then its defaults' (as its cotangent does, `calls.with_defaults`).
        Functions that read one defined after them (recursion) form a group, whose
        tangent is given to each once the last is defined (`group_tangent`)."""
        node = step.source
        if step.later or any(step.target in later for later, _, _ in self.pending.values()):
            self.pending[step.target] = (step.later, node.captured, step.args)
            return [stmt] + self.group(stmt)
        held = [self.tangent_or_zero(nodes.name(v)) for v in node.captured]
        held += [self.tangent_or_zero(d) for d in step.args]
        code = self.assign_tangent(step.target, nodes.tuple_(held))
        self.structured.add(self.tangent_name(step.target))
        return [stmt] + code

    def group(self, stmt):
        """The tangents of the functions of `pending` once every function they read is
        defined: one `GroupTangent`, holding the tangents of the variables they read."""
        members = sorted(self.pending)
        if any(var not in self.kinds for later, _, _ in self.pending.values()
               for var in later):
            return []
        defaulted = next((m for m in members if any(
            self.kind_of(d).active for d in self.pending[m][2])), None)
        if defaulted is not None:
            raise self.error(f"{defaulted} calls itself (or a function that calls it back) "
                             "and has a differentiable default value: pass that value as an "
                             "argument", "recursive closure with a differentiable default")
        read = sorted({v for _, captured, _ in self.pending.values() for v in captured}
                      - set(members))
        self.pending.clear()
        values = nodes.Dict(keys=[nodes.constant(v) for v in read],
                            values=[self.tangent_or_zero(nodes.name(v)) for v in read])
        helper = nodes.name(self.bindings.object("group_tangent", tangents.group_tangent))
        call = nodes.call(helper, [values, nodes.tuple_(map(nodes.constant, members))])
        first = self.tangent_name(members[0])
        code = [nodes.assign(first, call, self.lineno)]
        code += [nodes.assign(self.tangent_name(m), nodes.name(first), self.lineno)
                 for m in members[1:] if self.active(m)]
        return code

    def static_call(self, stmt, step):
        """`y, y_dot = g_jvp((ZERO, x_dot), x)`: `g`'s derivative for these kinds."""
        name = self.bindings.cell(step.callee.name, step.callee.cell)
        dots = nodes.tuple_([self.zero()] + [self.tangent_or_zero(a) if a is not None
                                             else self.zero() for a in step.args])
        value = self.call_of(stmt, step)
        call = nodes.call(nodes.name(name), [dots] + value.args, value.keywords)
        return [self.call_result(stmt, step, call)]

    def custom_call(self, stmt, step):
        """A function with a hand-written derivative: its rule in forward mode
        (`custom_jvp`), or the transpose of its backward function (`custom_vjp`,
        `dispatch.custom_tangent`)."""
        driver, names = self.custom_driver(step.fn, dispatch.custom_jvp_tangent,
                                           dispatch.custom_tangent)
        dots = nodes.tuple_([self.tangent_or_zero(a) for a in stmt.value.args])
        call = nodes.call(driver, names + [dots] + stmt.value.args)
        return [self.call_result(stmt, step, call)]

    def dynamic_call(self, stmt, step):
        """`y, y_dot = jvp_call(f, (f_dot, x_dot), x)`: `f`'s derivative is found when the
        call happens; the tangents are those of `f` (its environment, a method's object)
        and of each argument as written."""
        value = self.call_of(stmt, step)
        method = self.facts.callees.is_method(value.func)
        if method:
            helper = dispatch.jvp_method if step.target else dispatch.jvp_effect_method
            head, callee = [value.func.value, nodes.constant(value.func.attr)], value.func.value
        else:
            helper, head, callee = (dispatch.jvp_call if step.target else dispatch.jvp_effect,
                                    [value.func], value.func)
        driver = nodes.name(self.bindings.object(helper.__name__, helper))
        if interpret.is_split(value):
            args, kwargs = value.args[0].value, value.keywords[0].value
            join = nodes.name(self.bindings.object("join_cotangents", calls.join_cotangents))
            parts = nodes.tuple_([self.tangent_or_zero(a) for a in (callee, args, kwargs)])
            dots = nodes.call(join, [parts, nodes.clone(args), nodes.clone(kwargs)])
        else:
            atoms = [callee] + value.args + [k.value for k in value.keywords]
            dots = nodes.tuple_([self.tangent_or_zero(a) for a in atoms])
        call = nodes.call(driver, head + [dots] + value.args, value.keywords)
        return [self.call_result(stmt, step, call)]

    def call_result(self, stmt, step, call):
        """`y, y_dot = call`, or `call` alone for a call whose value is dropped."""
        if step.target is None:
            return nodes.expr(call, self.lineno)
        targets = [step.target, self.tangent_name(step.target) if self.active(step.target)
                   else None]
        return nodes.unpack(targets, call, self.lineno)

    def loop(self, stmt, step):
        """`iterate(loop_body, items, *state)`: the body's statements with their tangents,
        run inline in a `for` loop carrying the state and its tangents. A body that
        defines functions (which would see the variables of the last iteration, not
        their own) is instead a function, the body's derivative, that `iterate_jvp`
        calls for each item; it reads the tangents of what it captures from this
        function, as its variables."""
        body = step.callee
        inner = _Tangent(nodes.clone(body), self.origin, step.kinds, self.namer, self.bindings,
                         self.calls, body.captured, self.names)
        walked = inner.walk()
        if _makes_functions(walked[0]) or inner.facts.entry:
            return self.loop_function(stmt, step, inner)
        return inner.inline_loop(stmt, step, walked, self)

    def loop_function(self, stmt, step, inner):
        """The loop as `iterate_jvp` of the body's derivative, a function."""
        _, items, *inits = stmt.value.args
        inner = _Tangent(nodes.clone(step.callee), self.origin, step.kinds, self.namer,
                         self.bindings, self.calls, step.callee.captured, self.names)
        name = self.namer.fresh(step.callee.name + "_jvp")
        result = inner.run(name)
        driver = nodes.name(self.bindings.object("iterate_jvp", loops.iterate_jvp))
        dots = nodes.tuple_([self.tangent_or_zero(a) for a in [items] + inits])
        call = nodes.call(driver, [nodes.name(name), dots, items] + inits)
        target = self.tangent_name(step.target)
        self.structured.add(target)
        return [result.tree, nodes.unpack([step.target, target], call, self.lineno)]

    def inline_loop(self, stmt, step, walked, outer):
        """The loop whose body this is, inline (see `loop`): its state's names start as
        the initial values and their tangents, each iteration ends by moving the new
        values (and tangents) into them, and stops on a flag other than 'next'."""
        code, ret, _ = walked
        code = [s for s in code if not isinstance(s, (nodes.Global, nodes.Nonlocal))]
        _, items, *inits = stmt.value.args
        item, *params = nodes.parameter_names(self.tree.args)
        iteration = ret.value.id
        before = []
        for param, init in zip(params, inits):
            if not nodes.is_name(init, param):
                before.append(nodes.assign(param, init, outer.lineno))
            if self.active(param):
                before.append(nodes.assign(self.tangent_name(param),
                                           outer.tangent_or_zero(init), outer.lineno))
        flag = self.namer.fresh("flag") if stops_early(code, iteration) else None
        update = self.state_update(code, iteration, params, flag)
        loop = self.for_loop(items, item, code + update, outer)
        if flag:
            before.append(nodes.assign(flag, nodes.constant(loops.NEXT), outer.lineno))
            finished = nodes.IfExp(
                test=nodes.compare(nodes.name(flag), nodes.Eq(), nodes.constant(loops.NEXT)),
                body=nodes.constant(loops.DONE), orelse=nodes.name(flag))
        else:
            finished = nodes.constant(loops.DONE)
        after = [nodes.assign(step.target, nodes.tuple_([finished] + list(map(nodes.name, params))),
                              outer.lineno)]
        if outer.active(step.target):
            target = outer.tangent_name(step.target)
            after.append(nodes.assign(target, nodes.tuple_(
                [self.zero()] + [self.tangent_or_zero(nodes.name(p)) for p in params]),
                outer.lineno))
            outer.structured.add(target)
        return before + [loop] + after

    def state_update(self, code, iteration, params, flag):
        """The statements ending an iteration: the state (and its tangents) from the
        iteration's result, and a `break` on a flag other than 'next'."""
        last = code[-2:] if len(code) >= 2 else []
        names = [p for p in params if self.active(p)]
        display = [s.value for s in last if isinstance(s, nodes.Assign)
                   and isinstance(s.value, nodes.Tuple)
                   and s.targets[0].id in (iteration, self.names.get(iteration))]
        if not flag and len(display) == len(last) == (2 if names else 1) and (
                nodes.is_name(last[0].targets[0], iteration)):
            del code[-len(last):]
            moves = list(zip(params, display[0].elts[1:]))
            if names:
                moves += [(self.tangent_name(p), v) for p, v in zip(params, display[1].elts[1:])
                          if self.active(p)]
            moves = [(p, v) for p, v in moves if not nodes.is_name(v, p)]
            return [nodes.unpack([p for p, _ in moves], nodes.tuple_([v for _, v in moves]),
                                 self.lineno)] if moves else []
        update = [nodes.unpack([flag] + params, nodes.name(iteration), self.lineno)]
        if names:
            dots = self.tangent_or_zero(nodes.name(iteration))
            if dots.id not in self.structured:
                helper = nodes.name(self.bindings.object("unpacked", tangents.unpacked))
                dots = nodes.call(helper, [dots, nodes.constant(len(params) + 1),
                                           nodes.name(iteration)])
            update.append(nodes.unpack([None] + [self.tangent_name(p) if self.active(p)
                                                 else None for p in params], dots, self.lineno))
        if flag:
            stop = nodes.compare(nodes.name(flag), nodes.NotEq(), nodes.constant(loops.NEXT))
            update.append(nodes.if_(stop, [nodes.break_(self.lineno)], lineno=self.lineno))
        return update

    def for_loop(self, items, item, body, outer):
        """`for item in items` (with each item's tangent when it has one), or `while True`
        for a `while` loop (its items are None)."""
        if isinstance(items, nodes.Constant) and items.value is None:
            return nodes.while_true([nodes.assign(item, nodes.constant(None), outer.lineno)]
                                    + body, outer.lineno)
        if not self.active(item):
            return nodes.for_(item, items, body, outer.lineno)
        helper = nodes.name(self.bindings.object("item_tangents", tangents.item_tangents))
        pairs = nodes.call(nodes.name(self.bindings.object("zip", zip)), [
            items, nodes.call(helper, [outer.tangent_or_zero(items), items])])
        target = nodes.tuple_([nodes.store(item), nodes.store(self.tangent_name(item))],
                              nodes.Store())
        return nodes.for_(target, pairs, body, outer.lineno)

    def primal_loop(self, stmt, step):
        """A loop without differentiable values runs as it is."""
        return self.primal_loop_code(stmt, step)

    def loop_body(self, stmt, step):
        """A loop's body is differentiated where the loop calls it."""
        return []

    # -- tangents ----------------------------------------------------------------

    @property
    def kinds(self):
        return self.facts.kinds

    def active(self, var):
        return self.kinds.get(var, kinds.CONST).active

    def tangent_name(self, var, version=None):
        """The name of `var`'s tangent (`x_dot`); `version`: the name `var` has in the
        function's body, whose tangent the name is too."""
        key = version or var
        if key not in self.names:
            self.names[key] = self.namer.fresh(var + "_dot")
        return self.names[key]

    def tangent_of(self, atom):
        """The tangent of an atom as a node, or None when it is zero."""
        if isinstance(atom, nodes.Name) and self.active(atom.id):
            return nodes.name(self.tangent_name(atom.id))
        if isinstance(atom, nodes.Tuple) and self.kind_of(atom).active:
            return nodes.tuple_([self.tangent_or_zero(e) for e in atom.elts])
        return None

    def shape_of(self, atom):
        """The shape token of an atom (`interpret`'s), a tangent having its value's."""
        if isinstance(atom, nodes.Name) and atom.id not in self.kinds:
            primal = self.primals().get(atom.id)
            if primal is not None:
                return self.facts.shape_of(nodes.name(primal))
        return self.facts.shape_of(atom)

    def primals(self):
        """The variable each tangent name is the tangent of."""
        return {name: var for var, name in self.names.items()}

    def tangent_or_zero(self, atom):
        found = self.tangent_of(atom)
        return found if found is not None else self.zero()

    def assign_tangent(self, target, value):
        """`target_dot = value` when `target` is active (`ZERO` for a value of None)."""
        if not self.active(target):
            return []
        return [nodes.assign(self.tangent_name(target),
                             value if value is not None else self.zero(), self.lineno)]

    def zero(self):
        return nodes.name(self.bindings.object("ZERO", ZERO))

    # -- helpers ----------------------------------------------------------------

def _makes_functions(code):
    """Whether a loop body's code defines a function (a `def`, a `lambda`, a loop's body):
    inline in the loop, it would see the variables of the last iteration, not its own."""
    return any(isinstance(node, (nodes.FunctionDef, nodes.Lambda))
               for stmt in code for node in nodes.walk(stmt))


def _describe(fn):
    return registry.describe(fn)
