"""Stage 4 (optimize): loops keep a cache of values instead of a closure per iteration.

The reverse pass turns a loop into a forward body, which returns each iteration's
pullback closure, and a call of `loops.iterate_fwd`, which keeps those closures in
a trail (see `loops`). That is general, but every iteration pays for a call, a
closure and the generic `add` of the environment's cotangents. Here a loop whose
body defines no function but its pullback is rewritten the way a person writes an
adjoint by hand (seed 001, section 4.3): the forward runs inline and appends the
values the pullback reads to a cache, and the loop's pullback runs the body's
pullback statements over the cache in reverse, carrying the state's cotangents
and summing the environment's::

    loop_body_cache = []                        def loop_pb(dloop):
    x_1 = x                                         _, dx_1 = dloop
    for _ in range_steps:                           da_sum = ZERO
        x_2 = a * x_1                               for x_1, in reversed(loop_body_cache):
        loop_body_cache.append((x_1,))                  dx_2 = dx_1
        x_1 = x_2                                       da = dx_2 * x_1
    loop = ('done', x_1)                                dx_1 = dx_2 * a
                                                        da_sum = da_sum + da
                                                    return (ZERO, (da_sum,), ZERO, dx_1)

The result is ordinary Python that pullback transforms again (lists, `append`,
`reversed`, tuples), so derivatives of derivatives go through it. Loops whose
body defines other functions keep their closures: inlined, those functions would
all see the variables of the last iteration.
"""

from ...runtime.cotangents import ZERO, add, add_into
from ...runtime.iteration import like_items
from ...runtime.loops import DONE, NEXT
from ..analysis import kinds
from ..syntax import nodes
from .loop_sums import collect_sums


def cache_loops(statements, bindings, namer):
    """`statements` with each loop driven by `iterate_fwd` (at any depth) rewritten
    to cache its values, where its body allows (see the module docstring)."""
    out = []
    bodies = {}
    for stmt in statements:
        stmt = _with_inner_loops_cached(stmt, bindings, namer)
        env = getattr(stmt, "loop_env", None)
        body = bodies.get(stmt.value.args[0].id) if env is not None else None
        if body is not None and _cacheable(body):
            out.remove(body)
            out += _Rewrite(stmt, body, env, bindings, namer).statements()
            continue
        if isinstance(stmt, nodes.FunctionDef):
            bodies[stmt.name] = stmt
        out.append(stmt)
    return out


def _with_inner_loops_cached(stmt, bindings, namer):
    if isinstance(stmt, nodes.FunctionDef):
        return nodes.replaced(stmt, body=cache_loops(stmt.body, bindings, namer))
    if isinstance(stmt, nodes.If):
        return nodes.replaced(stmt, body=cache_loops(stmt.body, bindings, namer),
                              orelse=cache_loops(stmt.orelse, bindings, namer))
    return stmt


def _cacheable(body):
    """Whether a loop body's forward has the shape the rewrite needs: statements, its
    pullback's def, and `return (iteration, pullback)`, with no other function,
    return in the forward part or in the pullback."""
    if len(body.body) < 2:
        return False
    pullback, ret = body.body[-2:]
    if not (isinstance(pullback, nodes.FunctionDef) and isinstance(ret, nodes.Return)
            and isinstance(ret.value, nodes.Tuple) and len(ret.value.elts) == 2
            and nodes.is_name(ret.value.elts[0]) and nodes.is_name(ret.value.elts[1], pullback.name)
            and len(pullback.args.args) == 1 and _returns_tuple(pullback)):
        return False
    forbidden = (nodes.FunctionDef, nodes.Lambda, nodes.Return)
    inner = [n for stmt in body.body[:-2] for n in nodes.walk(stmt)]
    inner += [n for stmt in pullback.body[:-1] for n in nodes.walk(stmt)]
    return not any(isinstance(n, forbidden) for n in inner)


def _returns_tuple(pullback):
    last = pullback.body[-1]
    return (isinstance(last, nodes.Return) and isinstance(last.value, nodes.Tuple)
            and len(last.value.elts) >= 2)


class _Rewrite:
    """The cached form of one loop: `target, pb = iterate_fwd(body, items, *inits)`."""

    def __init__(self, call_stmt, body, env, bindings, namer):
        self.lineno = nodes.lineno_of(call_stmt)
        self.target, self.pb = [t.id for t in call_stmt.targets[0].elts]
        _, self.items, *self.inits = call_stmt.value.args
        self.env = env
        self.forward = body.body[:-2]
        self.pullback = body.body[-2]
        self.iteration = body.body[-1].value.elts[0].id
        self.item, *self.params = [a.id for a in body.args.args]
        self.bindings = bindings
        self.namer = namer
        self.zero = bindings.object("ZERO", ZERO)
        self.cache = namer.fresh(body.name.removesuffix("_fwd") + "_cache")
        self.varying = _bound_names(body)
        self.cached = sorted(_free_names(self.pullback) & self.varying)
        stops = _stops_early(self.forward, self.iteration)
        self.flag = namer.fresh("flag") if stops else None  # None: every iteration says 'next'

    def statements(self):
        """The forward loop and the definition of its pullback."""
        return self.forward_loop() + [self.pullback_def()]

    # -- forward -----------------------------------------------------------------

    def forward_loop(self):
        before = [nodes.assign(nodes.store(self.cache), nodes.list_([]), self.lineno)]
        before += [nodes.assign(p, init, self.lineno)
                   for p, init in zip(self.params, self.inits) if not nodes.is_name(init, p)]
        before += [nodes.assign(v, nodes.constant(None), self.lineno)
                   for v in self.cached if v not in self.params and v != self.item
                   and v not in _assigned_at_top(self.forward)]
        forward, state = self.state_update()
        append = nodes.call(nodes.attribute(nodes.name(self.cache), "append"),
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
        result = nodes.tuple_([finished] + [nodes.name(p) for p in self.params])
        return before + [self.loop(body), nodes.assign(self.target, result, self.lineno)]

    def state_update(self):
        """The forward statements, and those passing the state to the next iteration:
        `x_1 = x_2` when the body ends in `iteration = ('next', x_2)`, else an unpacking."""
        last = self.forward[-1] if self.forward else None
        if (self.flag or not isinstance(last, nodes.Assign)
                or not nodes.is_name(last.targets[0], self.iteration)
                or not isinstance(last.value, nodes.Tuple)):
            return self.forward, [nodes.unpack([self.flag] + self.params,
                                               nodes.name(self.iteration), self.lineno)]
        values = last.value.elts[1:]
        changed = [(p, v) for p, v in zip(self.params, values) if not nodes.is_name(v, p)]
        if not changed:
            return self.forward[:-1], []
        return self.forward[:-1], [_parallel_assign(changed, self.lineno)]

    def loop(self, body):
        """`for item in items`, or `while True` for a `while` loop (its items are None)."""
        if isinstance(self.items, nodes.Constant) and self.items.value is None:
            return nodes.while_true([nodes.assign(self.item, nodes.constant(None), self.lineno)]
                                    + body, self.lineno)
        return nodes.for_(self.item, self.items, body, self.lineno)

    # -- pullback ----------------------------------------------------------------

    def pullback_def(self):
        dloop = self.namer.fresh("d" + self.target)
        ret = self.pullback.body[-1].value
        env_ct, item_ct, *state_cts = ret.elts
        carried = self.carried(state_cts)
        sums = self.sums(env_ct)
        statements, lists, after, in_loop = collect_sums(
            self.reading_carried(carried), sums, self.varying, self.bindings, self.namer)
        items_ct = self.namer.fresh("d" + (self.items.id if nodes.is_name(self.items)
                                           else "items")) if not self.is_zero(item_ct) else None
        body = [nodes.if_(nodes.compare(nodes.name(dloop), nodes.Is(), nodes.name(self.zero)),
                          [nodes.assign(c, nodes.name(self.zero), self.lineno) for c in carried],
                          [nodes.unpack([None] + carried, nodes.name(dloop), self.lineno)],
                          self.lineno)]
        body += [nodes.assign(s, nodes.name(self.zero), self.lineno) for _, s, _ in in_loop]
        body += lists
        if items_ct:
            body.append(nodes.assign(items_ct, nodes.list_([]), self.lineno))
        body.append(self.backward_loop(statements, carried, state_cts, in_loop, item_ct,
                                       items_ct))
        body += after
        body.append(nodes.return_(nodes.tuple_(
            [nodes.name(self.zero), self.env_result(env_ct, sums), self.items_result(items_ct)]
            + [nodes.name(c) for c in carried]), self.lineno))
        node = nodes.function_def(self.pb, [dloop], body, self.lineno)
        node.pullback = True
        return node

    def backward_loop(self, body, carried, state_cts, sums, item_ct, items_ct):
        for kind, total, value in sums:
            body.append(nodes.assign(total, self.sum(kind, total, value), self.lineno))
        if items_ct:
            append = nodes.call(nodes.attribute(nodes.name(items_ct), "append"), [item_ct])
            body.append(nodes.expr(append, self.lineno))
        moved = [(c, v) for c, v in zip(carried, state_cts) if not nodes.is_name(v, c)]
        if moved:
            body.append(_parallel_assign(moved, self.lineno))
        values = (nodes.tuple_([nodes.store(v) for v in self.cached], nodes.Store())
                  if self.cached else nodes.store("_"))
        backwards = nodes.call(nodes.name(self.bindings.object("reversed", reversed)),
                               [nodes.name(self.cache)])
        return nodes.for_(values, backwards, body, self.lineno)

    def reading_carried(self, carried):
        """The statements of an iteration's pullback, reading the state's cotangents
        from the `carried` names: `diteration[k]` becomes the k-th of them, or,
        when the pullback uses its parameter otherwise, the parameter is bound to
        their tuple."""
        param = self.pullback.args.args[0].id
        statements = nodes.clone(self.pullback.body[:-1])
        reads = [n for stmt in statements for n in nodes.walk(stmt) if nodes.is_name(n, param)]
        picks = [n for stmt in statements for n in nodes.walk(stmt)
                 if isinstance(n, nodes.Subscript) and nodes.is_name(n.value, param)
                 and isinstance(n.slice, nodes.Constant) and type(n.slice.value) is int
                 and 1 <= n.slice.value <= len(carried)]
        if len(picks) < len(reads):
            seed = nodes.tuple_([nodes.name(self.zero)] + [nodes.name(c) for c in carried])
            return [nodes.assign(param, seed, self.lineno)] + statements
        return [_Substitute(param, carried).visit(stmt) for stmt in statements]

    def carried(self, state_cts):
        """The names carrying the state's cotangents from one iteration to the one
        before: the pullback's own names for them when they are distinct names."""
        names = [v.id for v in state_cts if nodes.is_name(v)]
        own = _stored(self.pullback.body)
        return [v.id if nodes.is_name(v) and names.count(v.id) == 1 and v.id in own
                else self.namer.fresh("d" + p) for v, p in zip(state_cts, self.params)]

    def sums(self, env_ct):
        """`(kind, total, value)` for each cotangent the pullback gives the environment:
        one per variable when it returns them as a tuple, else one for the whole."""
        if isinstance(env_ct, nodes.Tuple) and len(env_ct.elts) == len(self.env):
            pairs = [(var, kind, value) for (var, kind), value in zip(self.env, env_ct.elts)]
        else:
            pairs = [("env", kinds.ANY, env_ct)]
        return [(kind, self.namer.fresh(f"d{var}_sum"), value)
                for var, kind, value in pairs if not self.is_zero(value)]

    def sum(self, kind, total, value):
        """`total + value` for scalars, `add_into(total, value)` for arrays (the
        running sum is the loop's own buffer), `add(total, value)` otherwise."""
        if kind == kinds.SCALAR:
            return nodes.binop(nodes.name(total), nodes.Add(), value)
        helper = add_into if kind == kinds.ARRAY else add
        return nodes.call(nodes.name(self.bindings.object(helper.__name__, helper)),
                          [nodes.name(total), value])

    def env_result(self, env_ct, sums):
        totals = {id(value): total for _, total, value in sums}
        if isinstance(env_ct, nodes.Tuple) and len(env_ct.elts) == len(self.env):
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
                          [forward_order, self.items])

    def is_zero(self, node):
        return nodes.is_name(node, self.zero)


class _Substitute(nodes.NodeTransformer):
    """Replaces `param[k]` by the k-th of the names `carried`."""

    def __init__(self, param, carried):
        self.param = param
        self.carried = carried

    def visit_Subscript(self, node):
        if nodes.is_name(node.value, self.param):
            return nodes.name(self.carried[node.slice.value - 1])
        return self.generic_visit(node)


def _parallel_assign(pairs, lineno):
    """`a = x` for one pair `(a, x)`, `a, b = (x, y)` for several."""
    if len(pairs) == 1:
        return nodes.assign(pairs[0][0], pairs[0][1], lineno)
    targets = nodes.tuple_([nodes.store(name) for name, _ in pairs], nodes.Store())
    return nodes.assign(targets, nodes.tuple_([value for _, value in pairs]), lineno)


def _stops_early(forward, iteration):
    """Whether some iteration may end with another flag than 'next' (break, return)."""
    return any(isinstance(n, nodes.Assign) and nodes.is_name(n.targets[0], iteration)
               and not _starts_with_next(n.value) for stmt in forward for n in nodes.walk(stmt))


def _starts_with_next(value):
    return (isinstance(value, nodes.Tuple) and value.elts
            and isinstance(value.elts[0], nodes.Constant) and value.elts[0].value == NEXT)


def _free_names(fn):
    """The names a function reads that it does not bind."""
    bound = {a.id for a in fn.args.args} | _stored(fn.body)
    return set().union(*map(nodes.reads, fn.body)) - bound


def _bound_names(fn):
    return {a.id for a in fn.args.args} | _stored(fn.body[:-2])


def _stored(statements):
    return {n.id for stmt in statements for n in nodes.walk(stmt)
            if isinstance(n, nodes.Name) and isinstance(n.ctx, nodes.Store)}


def _assigned_at_top(statements):
    return {name for stmt in statements if isinstance(stmt, nodes.Assign)
            for name in nodes.names_in(stmt.targets[0])}
