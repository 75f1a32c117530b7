"""Stage 4 (optimize): a loop keeping a cache of values, written as Python.

The loop rule (`reverse.forward`) emits a loop whose body defines no function as an
`ir.CachedLoop`: one iteration's forward, and one iteration's pullback (its
`step`), which `optimize` rewrites as any pullback. This is the adjoint a person
writes by hand (seed 001, section 4.3): the forward runs inline and appends the
values the step reads to a cache, and the loop's pullback runs the step over the
cache in reverse, carrying the state's cotangents and summing the environment's::

    loop_body_cache = []                        def loop_pb(dloop):
    x_1 = x                                         _, dx_1 = dloop
    for _ in range_steps:                           da_sum = ZERO
        x_2 = a * x_1                               for x_1, in reversed(loop_body_cache):
        loop_body_cache.append((x_1,))                  dx_2 = dx_1
        x_1 = x_2                                       da = dx_2 * x_1
    loop = ('done', x_1)                                dx_1 = dx_2 * a
                                                        da_sum = da_sum + da
                                                    return (ZERO, (da_sum,), ZERO, dx_1)

The cache holds what the optimised step reads, so it is chosen here, after the
rewrite rules. Sums over the environment that can be made once after the loop are
(`loop_sums`). The result is ordinary Python that pullback transforms again
(lists, `append`, `reversed`, tuples), so derivatives of derivatives go through it.
Loops whose body defines functions keep a closure per iteration (`loops.iterate_fwd`):
inlined, those functions would all see the variables of the last iteration.
"""

from ...runtime import structures
from ...runtime.cotangents import ZERO, add, add_into
from ...runtime.iteration import like_items
from ...runtime.loops import DONE, NEXT
from .. import ir
from ..analysis import kinds
from ..syntax import nodes
from .loop_sums import collect_sums


def lower_loops(statements, bindings, namer, collect=True):
    """`statements` of forward code with each `ir.CachedLoop` in them (at any depth)
    written as Python: the loop, and the definition of its pullback (see the module
    docstring); `collect`: make the sums over the environment after the loop where
    they can be (`loop_sums`)."""
    out = []
    for stmt in statements:
        if isinstance(stmt, ir.CachedLoop):
            out += _Lowering(stmt, bindings, namer, collect).statements()
        elif isinstance(stmt, (nodes.If, nodes.Try)):
            out.append(nodes.with_blocks(
                stmt, lambda block: lower_loops(block, bindings, namer, collect)))
        elif isinstance(stmt, nodes.FunctionDef) and not getattr(stmt, "pullback", False):
            out.append(nodes.replaced(stmt, body=lower_loops(stmt.body, bindings, namer,
                                                             collect)))
        else:
            out.append(stmt)
    return out


class _Lowering:
    """One `ir.CachedLoop` written as Python."""

    def __init__(self, loop, bindings, namer, collect):
        self.loop = loop
        self.lineno = loop.lineno
        self.bindings = bindings
        self.namer = namer
        self.collect = collect
        self.zero = bindings.object("ZERO", ZERO)
        self.varying = {loop.item, *loop.params} | _stored(loop.forward)
        *self.step, self.ret = loop.step
        self.cached = sorted(set().union(*map(nodes.reads, loop.step)) & self.varying)
        self.flag = namer.fresh("flag") if loop.stops else None  # None: always 'next'
        self.carried = self.carried_names()
        rename = _Rename(dict(zip(loop.carried, self.carried)))
        self.step = [rename.visit(stmt) for stmt in nodes.clone(self.step)]
        self.env_ct, self.item_ct, *self.state_cts = rename.visit(
            nodes.clone(self.ret.value)).elts

    def statements(self):
        """The forward loop and the definition of its pullback."""
        return self.forward_loop() + [self.pullback_def()]

    # -- forward -----------------------------------------------------------------

    def forward_loop(self):
        loop = self.loop
        before = [nodes.assign(nodes.store(loop.cache), nodes.list_([]), self.lineno)]
        before += [nodes.assign(p, init, self.lineno)
                   for p, init in zip(loop.params, loop.inits) if not nodes.is_name(init, p)]
        before += [nodes.assign(v, nodes.constant(None), self.lineno)
                   for v in self.cached if v not in loop.params and v != loop.item
                   and v not in _assigned_at_top(loop.forward)]
        forward, state = self.state_update()
        append = nodes.call(nodes.attribute(nodes.name(loop.cache), "append"),
                            [nodes.tuple_([nodes.name(v) for v in self.cached])])
        body = forward + [nodes.expr(append, self.lineno)] + state
        if self.flag:
            flag = nodes.name(self.flag)
            before.append(nodes.assign(self.flag, nodes.constant(NEXT), self.lineno))
            stop = nodes.compare(flag, nodes.NotEq(), nodes.constant(NEXT))
            body.append(nodes.if_(stop, [nodes.break_(self.lineno)], lineno=self.lineno))
            finished = nodes.IfExp(test=nodes.compare(flag, nodes.Eq(), nodes.constant(NEXT)),
                                   body=nodes.constant(DONE), orelse=nodes.name(self.flag))
        else:
            finished = nodes.constant(DONE)
        result = nodes.tuple_([finished] + [nodes.name(p) for p in loop.params])
        return before + [self.for_loop(body), nodes.assign(loop.target, result, self.lineno)]

    def state_update(self):
        """The forward statements, and those passing the state to the next iteration:
        `x_1 = x_2` when the body ends in `iteration = ('next', x_2)`, else an unpacking."""
        loop = self.loop
        last = loop.forward[-1] if loop.forward else None
        if (self.flag or not isinstance(last, nodes.Assign)
                or not nodes.is_name(last.targets[0], loop.iteration)
                or not isinstance(last.value, nodes.Tuple)):
            return loop.forward, [nodes.unpack([self.flag] + loop.params,
                                               nodes.name(loop.iteration), self.lineno)]
        values = last.value.elts[1:]
        changed = [(p, v) for p, v in zip(loop.params, values) if not nodes.is_name(v, p)]
        if not changed:
            return loop.forward[:-1], []
        return loop.forward[:-1], [_parallel_assign(changed, self.lineno)]

    def for_loop(self, body):
        """`for item in items`, or `while True` for a `while` loop (its items are None)."""
        loop = self.loop
        if isinstance(loop.items, nodes.Constant) and loop.items.value is None:
            return nodes.while_true([nodes.assign(loop.item, nodes.constant(None), self.lineno)]
                                    + body, self.lineno)
        return nodes.for_(loop.item, loop.items, body, self.lineno)

    # -- pullback ----------------------------------------------------------------

    def pullback_def(self):
        loop = self.loop
        dloop = self.namer.fresh("d" + loop.target)
        step, carried, sums = self.step, self.carried, self.sums(self.env_ct)
        lists, after, in_loop = [], [], sums
        if self.collect:
            step, lists, after, in_loop = collect_sums(step, sums, self.varying,
                                                       self.bindings, self.namer)
        items_ct = None if self.is_zero(self.item_ct) else self.namer.fresh(
            "d" + (loop.items.id if nodes.is_name(loop.items) else "items"))
        body = [nodes.if_(nodes.compare(nodes.name(dloop), nodes.Is(), nodes.name(self.zero)),
                          [nodes.assign(c, nodes.name(self.zero), self.lineno) for c in carried],
                          [nodes.unpack([None] + carried, nodes.name(dloop), self.lineno)],
                          self.lineno)]
        body += [nodes.assign(s, nodes.name(self.zero), self.lineno) for _, s, _ in in_loop]
        body += lists
        if items_ct:
            body.append(nodes.assign(items_ct, nodes.list_([]), self.lineno))
        body.append(self.backward_loop(step, carried, self.state_cts, in_loop, items_ct))
        body += after
        body.append(nodes.return_(nodes.tuple_(
            [nodes.name(self.zero), self.env_result(self.env_ct, sums),
             self.items_result(items_ct)] + [nodes.name(c) for c in carried]), self.lineno))
        node = nodes.function_def(loop.pullback_name, [dloop], body, self.lineno)
        node.pullback = True
        node.states = dict(zip(carried, loop.params))  # cotangent -> the state it is of
        return node

    def backward_loop(self, body, carried, state_cts, sums, items_ct):
        for kind, total, value in sums:
            scatter = self.scatter(body, kind, value, state_cts + [self.item_ct])
            if scatter is not None:
                body.remove(scatter)
                body.append(nodes.assign(total, self.items_added(total, scatter.value),
                                         self.lineno))
                continue
            body.append(nodes.assign(total, self.sum(kind, total, value), self.lineno))
        if items_ct:
            append = nodes.call(nodes.attribute(nodes.name(items_ct), "append"),
                                [self.item_ct])
            body.append(nodes.expr(append, self.lineno))
        moved = [(c, v) for c, v in zip(carried, state_cts) if not nodes.is_name(v, c)]
        if moved:
            body.append(_parallel_assign(moved, self.lineno))
        values = (nodes.tuple_([nodes.store(v) for v in self.cached], nodes.Store())
                  if self.cached else nodes.store("_"))
        backwards = nodes.call(nodes.name(self.bindings.object("reversed", reversed)),
                               [nodes.name(self.loop.cache)])
        return nodes.for_(values, backwards, body, self.lineno)

    def carried_names(self):
        """The names carrying the state's cotangents from one iteration to the one
        before: the step's own name for one, where it is a name the step assigns once
        after its last read of the cotangent coming in, so that the step updates it
        in place; else a new name, which the step's result is moved to."""
        state_cts = self.ret.value.elts[2:]
        names = [v.id for v in state_cts if nodes.is_name(v)]
        out = []
        for incoming, value, param in zip(self.loop.carried, state_cts, self.loop.params):
            own = value.id if nodes.is_name(value) and names.count(value.id) == 1 else None
            if own is None or not self.assigned_after_reads(own, incoming):
                own = self.namer.fresh("d" + param)
            out.append(own)
        return out

    def assigned_after_reads(self, name, incoming):
        """Whether the step assigns `name` once, in a statement at its top after which
        nothing reads `incoming` (what it returns included, but `name`)."""
        stores = [i for i, stmt in enumerate(self.step) if name in nodes.stores(stmt)]
        if len(stores) != 1 or not isinstance(self.step[stores[0]], nodes.Assign):
            return False
        later = self.step[stores[0] + 1:] + [
            v for v in self.ret.value.elts if not nodes.is_name(v, name)]
        return not any(incoming in nodes.reads(node) for node in later)

    def sums(self, env_ct):
        """`(kind, total, value)` for each cotangent the pullback gives the environment:
        one per variable when it returns them as a tuple, else one for the whole."""
        if isinstance(env_ct, nodes.Tuple) and len(env_ct.elts) == len(self.loop.env):
            pairs = [(var, kind, value) for (var, kind), value in zip(self.loop.env, env_ct.elts)]
        else:
            pairs = [("env", kinds.ANY, env_ct)]
        return [(kind, self.namer.fresh(f"d{var}_sum"), value)
                for var, kind, value in pairs if not self.is_zero(value)]

    def sum(self, kind, total, value):
        """`total + value` for scalars, `add_into(total, value)` for arrays (the
        running sum is the loop's own buffer), `add(total, value)` otherwise."""
        if kind == kinds.SCALAR:
            return nodes.binop(nodes.name(total), nodes.Add(), value)
        helper = add_into if kinds.is_array(kind) else add
        return nodes.call(nodes.name(self.bindings.object(helper.__name__, helper)),
                          [nodes.name(total), value])

    def scatter(self, body, kind, value, others):
        """The statement of `body` defining the name `value`, the step's cotangent of a
        list, dict or array it reads items of, as `unindex_all(gs, xs, indices)` or
        `unindex(g, xs, index)`, when nothing else (nor `others`) reads it; else None."""
        if not nodes.is_name(value) or not (kinds.is_sequence(kind) or kinds.is_array(
                kind) or isinstance(kind, kinds.Container) and kind.type is dict):
            return None
        found = [s for s in body if nodes.single_target(s) == value.id]
        if len(found) != 1 or not any(self.bindings.calls(found[0].value, f) for f in (
                structures.unindex, structures.unindex_all)) or len(found[0].value.args) != 3:
            return None
        reads = nodes.read_counts(body + [n for n in others if n is not None])
        return found[0] if reads[value.id] == 0 else None

    def items_added(self, total, scatter):
        """`add_at_into(total, gs, xs, indices)`: the running sum `total`, which only the
        loop holds (the first step's scatter makes it), with the scatter `scatter` of
        cotangents of items added at their items in place."""
        gs, xs, index = scatter.args
        if self.bindings.calls(scatter, structures.unindex):
            gs, index = nodes.tuple_([gs]), nodes.tuple_([index])
        helper = nodes.name(self.bindings.object("add_at_into", structures.add_at_into))
        return nodes.call(helper, [nodes.name(total), gs, xs, index])

    def env_result(self, env_ct, sums):
        totals = {id(value): total for _, total, value in sums}
        if isinstance(env_ct, nodes.Tuple) and len(env_ct.elts) == len(self.loop.env):
            return nodes.tuple_([self.total_or_zero(totals, v) for v in env_ct.elts])
        return self.total_or_zero(totals, env_ct)

    def total_or_zero(self, totals, value):
        return nodes.name(totals.get(id(value), self.zero))

    def items_result(self, items_ct):
        if items_ct is None:
            return nodes.name(self.zero)
        forward_order = nodes.Subscript(
            value=nodes.name(items_ct), ctx=nodes.Load(),
            slice=nodes.Slice(lower=None, upper=None, step=nodes.constant(-1)))
        return nodes.call(nodes.name(self.bindings.object("like_items", like_items)),
                          [forward_order, self.loop.items])

    def is_zero(self, node):
        return nodes.is_name(node, self.zero)


class _Rename(nodes.NodeTransformer):
    """Renames the names read, by `renames`."""

    def __init__(self, renames):
        self.renames = renames

    def visit_Name(self, node):
        if isinstance(node.ctx, nodes.Load) and node.id in self.renames:
            return nodes.name(self.renames[node.id])
        return node


def _parallel_assign(pairs, lineno):
    """`a = x` for one pair `(a, x)`, `a, b = (x, y)` for several."""
    if len(pairs) == 1:
        return nodes.assign(pairs[0][0], pairs[0][1], lineno)
    targets = nodes.tuple_([nodes.store(name) for name, _ in pairs], nodes.Store())
    return nodes.assign(targets, nodes.tuple_([value for _, value in pairs]), lineno)


def _stored(statements):
    return {n.id for stmt in statements for n in nodes.walk(stmt)
            if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Store)}


def _assigned_at_top(statements):
    return {name for stmt in statements if isinstance(stmt, nodes.Assign)
            for name in nodes.names_in(stmt.targets[0])}
