"""Stage 4 (optimize): a recursion's cotangent of a parameter it passes on unchanged,
summed once.

A recursive function reading a parameter it passes unchanged to each of its calls of
itself (`forward(params, node.left)`) gets that parameter's cotangent back from each
call's pullback, adds it to its own contributions and returns the sum: one sum of the
whole cotangent (a dict of every weight's, say) per call, each of size of the
parameter, where a loop sums its steps once after it (`loop_sums`). Here each call's
pullback is asked for its contributions as they are (its new argument `nested`), the
pullback collects its own with its calls' into a tree (`runtime.terms.collected`, in
constant time) and the outermost call, which its caller calls as before, sums the
tree once (`summed_once`). Before::

    def forward_pullback(dout):
        ...
        _, dparams_1, _ = forward_right_pb(dright)
        _, dparams_2, _ = forward_left_pb(dleft)
        dparams_3 = SUM(dparams, dparams_1, dparams_2)
        return (ZERO, dparams_3, ZERO)

after::

    def forward_pullback(dout, nested=False):
        ...
        _, dparams_1, _ = forward_right_pb(dright, True)
        _, dparams_2, _ = forward_left_pb(dleft, True)
        dparams_own = SUM(dparams)
        dparams_3 = collected((dparams_own, dparams_1, dparams_2))
        return (ZERO, summed_once(dparams_3, nested), ZERO)

It holds for the parameters the function never assigns and passes, by position, as
themselves to every call of itself, when each call is a statement of the forward
function's own blocks (not in a loop or a nested function), its pullback is called
once, by a statement of the pullback's blocks, and the cotangent that call returns
for the parameter is read once, as a term of the sum the pullback returns for it.
Runs on the pullback's IR, before the rewrite rules (which then simplify the sums
left), so the unoptimised code keeps the plain recursion.
"""

import re

from ...runtime import terms
from .. import ir
from ..syntax import nodes


def collect_recursion_terms(forward, bindings, namer):
    """`forward` (a generated forward function, its pullback in IR) with the cotangents
    of the parameters its calls of itself receive unchanged collected and summed once
    (see the module docstring); `forward` itself when none is."""
    pullback = _pullback_of(forward)
    calls = _calls_of_itself(forward) if pullback is not None else None
    if not calls:
        return forward
    pullback_calls = _pullback_calls(forward, pullback, [pb for _, pb in calls])
    if pullback_calls is None:
        return forward
    ret = pullback.body[-1]
    if not (isinstance(ret, nodes.Return) and isinstance(ret.value, nodes.Tuple)):
        return forward
    sums = {}
    for position in _unchanged(forward, [call for call, _ in calls]):
        found = _sum_of_calls(pullback, ret, position,
                              [targets[position + 1] for targets in pullback_calls.values()])
        if found is not None:
            sums[position] = found
    if not sums:
        return forward
    body = [_Collect(forward.name, pullback, sums, pullback_calls, bindings, namer).rewritten(stmt)
            if stmt is pullback else stmt for stmt in forward.body]
    return nodes.replaced(forward, body=body)


def _pullback_of(forward):
    """The pullback `forward` defines in its own block, or None."""
    found = [stmt for stmt in forward.body
             if isinstance(stmt, nodes.FunctionDef) and getattr(stmt, "pullback", False)]
    return found[0] if len(found) == 1 else None


def _blocks(statements):
    """The statements of `statements` and of the `if`s in them (not of loops, `try`s or
    nested functions)."""
    for stmt in statements:
        yield stmt
        if isinstance(stmt, nodes.If):
            yield from _blocks(stmt.body)
            yield from _blocks(stmt.orelse)


def _calls_of_itself(forward):
    """`[(call, pullback's name)]` for each `value, pb = forward(...)` in the forward's
    blocks, positional arguments only; None when the function reads its own name
    elsewhere."""
    found = []
    for stmt in _blocks(forward.body):
        if not (isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Call)
                and nodes.is_name(stmt.value.func, forward.name)):
            continue
        call, target = stmt.value, stmt.targets[0]
        if (call.keywords or any(isinstance(a, nodes.Starred) for a in call.args)
                or not isinstance(target, nodes.Tuple) or len(target.elts) != 2
                or not all(nodes.is_name(t) for t in target.elts)):
            return None
        found.append((call, target.elts[1].id))
    reads = nodes.read_counts(forward.body)
    return found if reads[forward.name] == len(found) else None


def _unchanged(forward, calls):
    """The positions of the parameters `forward` never assigns and passes as themselves,
    at their own position, to each of `calls`."""
    assigned = nodes.stores(forward)
    positions = []
    for position, param in enumerate(forward.args.args):
        if param.id not in assigned and all(
                len(call.args) > position and nodes.is_name(call.args[position], param.id)
                for call in calls):
            positions.append(position)
    return positions


def _pullback_calls(forward, pullback, names):
    """`{pullback's name: the names its call's result is unpacked into}` for the
    pullbacks `names`, each called once in `forward`, by `targets = pb(g)` in the
    blocks of `pullback`; None otherwise."""
    reads = nodes.read_counts(forward.body)
    found = {}
    for stmt in _blocks(pullback.body):
        if (isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Call)
                and isinstance(stmt.value.func, nodes.Name) and stmt.value.func.id in names):
            call, target = stmt.value, stmt.targets[0]
            if (len(call.args) != 1 or call.keywords or not isinstance(target, nodes.Tuple)
                    or not all(nodes.is_name(t) for t in target.elts)):
                return None
            found[call.func.id] = [t.id for t in target.elts]
    if len(found) != len(names) or any(reads[name] != 1 for name in names):
        return None
    return found


def _sum_of_calls(pullback, ret, position, cotangents):
    """The statements `x = SUM(...)` of `pullback` that have the cotangents `cotangents`
    (names, read only there) among their terms, `x` being what the pullback returns for
    the parameter at `position`; None when that is not so."""
    returned = ret.value.elts[position + 1] if len(ret.value.elts) > position + 1 else None
    if not nodes.is_name(returned):
        return None
    reads = nodes.read_counts(pullback.body)
    if any(reads[name] != 1 for name in cotangents):
        return None
    found, seen = [], set()
    for stmt in _blocks(pullback.body):
        if nodes.single_target(stmt) == returned.id and isinstance(stmt.value, ir.Sum):
            mine = {t.id for t in stmt.value.terms if nodes.is_name(t)} & set(cotangents)
            if mine:
                found.append(stmt)
                seen |= mine
    return found if seen == set(cotangents) else None


class _Collect:
    """The rewrite of the pullback `pullback` of the recursive forward function `name`:
    `sums`, by parameter position, the statements summing the cotangents its calls of
    itself return (`_sum_of_calls`); `calls`, those calls' pullbacks and the names
    their results are unpacked into."""

    def __init__(self, name, pullback, sums, calls, bindings, namer):
        self.pullback = pullback
        self.sums = {id(stmt): position for position, found in sums.items() for stmt in found}
        self.positions = sorted(sums)
        self.calls = calls
        self.called = {targets[p + 1] for targets in calls.values() for p in self.positions}
        self.bindings = bindings
        self.namer = namer
        self.nested = namer.fresh("nested")

    def rewritten(self, pullback):
        """The pullback with its new parameter `nested`, its calls and sums rewritten,
        and its results for the parameters summed unless nested."""
        args = nodes.replaced(pullback.args,
                              args=[*pullback.args.args, nodes.param(self.nested)],
                              defaults=[*pullback.args.defaults, nodes.constant(False)])
        *body, ret = pullback.body
        summed = self.bindings.object("summed_once", terms.summed_once)
        elts = list(ret.value.elts)
        for position in self.positions:
            elts[position + 1] = nodes.call(nodes.name(summed), [
                elts[position + 1], nodes.name(self.nested)])
        ret = nodes.replaced(ret, value=nodes.tuple_(elts))
        return nodes.replaced(pullback, args=args, body=self.block(body) + [ret])

    def block(self, statements):
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                out.append(nodes.replaced(stmt, body=self.block(stmt.body),
                                          orelse=self.block(stmt.orelse)))
            elif id(stmt) in self.sums:
                out += self.collected(stmt)
            elif (isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.Call)
                  and nodes.is_name(stmt.value.func) and stmt.value.func.id in self.calls):
                call = nodes.replaced(stmt.value, args=[*stmt.value.args, nodes.constant(True)])
                out.append(nodes.replaced(stmt, value=call))
            else:
                out.append(stmt)
        return out

    def collected(self, stmt):
        """`dx_2 = SUM(own..., d1, d2)` -> `dx_own = SUM(own...)` and
        `dx_2 = collected((dx_own, d1, d2))`."""
        target = stmt.targets[0].id
        own = [t for t in stmt.value.terms if not (nodes.is_name(t) and t.id in self.called)]
        theirs = [t for t in stmt.value.terms if nodes.is_name(t) and t.id in self.called]
        collect = self.bindings.object("collected", terms.collected)
        if not own:
            return [nodes.replaced(stmt, value=nodes.call(nodes.name(collect), [
                nodes.tuple_(theirs)]))]
        name = self.namer.fresh(re.sub(r"_\d+$", "", target) + "_own")
        return [nodes.assign(name, ir.Sum(own, stmt.value.kind), stmt.lineno),
                nodes.replaced(stmt, value=nodes.call(nodes.name(collect), [
                    nodes.tuple_([nodes.name(name), *theirs])]))]
