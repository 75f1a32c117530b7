"""Stage 3 (optimise), after inlining: a loop's reads of items of containers nothing
changes, made once before the loop.

A loop reading its weights from a dict, `params["w"]` at every step, reads the same
array at every step. Read inside the loop, the item is a value of the step: the
forward caches it per step, and the pullback adds a dict holding its cotangent to
the dict's cotangent at every step. Read before the loop, it is a variable of the
loop's environment like any other, whose cotangent the pullback sums once after the
loop from the steps' terms (`optimize/loop_sums.py`), as it does for a weight passed
as an argument::

    for t in range(steps):                  params_w = params['w']
        params_w = params['w']         ->   for t in range(steps):
        h = np.tanh(h @ params_w)               h = np.tanh(h @ params_w)

A read `v = c[k]` or `v = c.k` in a loop's body (in its branches too) moves when

- `c` is a parameter of the function the function never assigns, or an item moved
  before it, and `k` a constant;
- the kinds of the call show the item there (a dict's key, a tuple's position, a
  record's field), so that the read, made now even when the loop runs no step,
  cannot fail;
- nothing in the function updates in place a value it did not make (`i += 1`,
  `xs[t] = h` on `xs = np.zeros(n)` and `outs.append(h)` on `outs = []` may stay;
  an item updated in place, `x[i] += v`, may not), or calls a function that might
  (its calls are of primitives, of NumPy's methods, and of ANF's helpers);
- `v` is assigned there only, and read only in the loop.

Reads in nested loops move to the body of the loop around them first, and on from
there when they can.
"""

import collections

import numpy as np

from ...errors import TransformError
from ...rules import registry
from ...runtime import loops
from ..analysis import aliases, kinds
from ..analysis.callees import Callees
from ..syntax import nodes


def hoisted(tree, origin, param_kinds):
    """FunctionDef `tree` (in ANF, inlined, from `origin`) with its loops' invariant item
    reads made before them (a new tree), or `tree` itself when none moves."""
    stores = nodes.store_counts(tree)
    local = set(stores) | set(nodes.parameter_names(tree.args))
    callees = Callees(origin, tree, lambda: local, lambda atom: kinds.ANY,
                      lambda message, construct: TransformError(message), {})
    if not _changes_nothing(tree, callees):
        return tree
    known = {name: kind for name, kind in param_kinds.items()
             if isinstance(kind, kinds.Container) and not stores.get(name)}
    if not known:
        return tree
    new = nodes.clone(tree)
    mover = _Mover(known, stores, nodes.read_counts(new))
    new.body = mover.block(new.body)
    return new if mover.moved else tree


class _Mover:
    def __init__(self, known, stores, reads):
        self.known = known  # a container read in no loop as a new value -> its kind
        self.stores = stores
        self.reads = reads  # in the whole function
        self.moved = False

    def block(self, statements):
        """`statements` with the invariant reads of the loops among them moved before
        each loop."""
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            elif getattr(stmt, "loop", False):
                stmt.body = self.block(stmt.body)
                out += self.moved_from(stmt)
            out.append(stmt)
        return out

    def moved_from(self, body):
        """The reads moved out of loop body `body` (removed from it)."""
        moved = []
        body.body = self.taken(body.body, nodes.read_counts(body), moved)
        if moved:
            read = nodes.names_in(body)
            body.captured = sorted({name for name in body.captured if name in read}
                                   | {nodes.single_target(s) for s in moved})
            self.moved = True
        return moved

    def taken(self, statements, inside, moved):
        """`statements` of a loop body (in its branches too), which reads the names as
        often as `inside` counts, without the reads that may move out of it, which are
        appended to `moved`."""
        kept = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                stmt.body = self.taken(stmt.body, inside, moved)
                stmt.orelse = self.taken(stmt.orelse, inside, moved)
                stmt.body = stmt.body or [nodes.pass_(nodes.lineno_of(stmt))]
            read = None if isinstance(stmt, nodes.If) else self.invariant_read(stmt, inside)
            if read is None:
                kept.append(stmt)
            else:
                self.known[read[0]] = read[1]
                moved.append(stmt)
        return kept

    def invariant_read(self, stmt, inside):
        """`(target, kind of the item)` when `stmt` is a read `target = c[k]` that may move
        out of the loop body whose reads `inside` counts, else None."""
        target = nodes.single_target(stmt)
        key = _key(stmt.value) if target is not None else None
        if key is None:
            return None
        container = self.known.get(stmt.value.value.id)  # an item moved may be an array
        if not isinstance(container, kinds.Container) or isinstance(
                stmt.value, nodes.Attribute) != (container.type not in (dict, list, tuple)):
            return None  # items by subscript, a record's fields by attribute
        item = container.item(key)
        if item is None or self.stores[target] != 1 or self.reads[target] > inside[target]:
            return None  # assigned elsewhere too, or read outside the loop
        return target, item


def _key(value):
    """The key of a read `c[k]` or `c.k` of a container named `c`, `k` a constant,
    else None."""
    if isinstance(value, nodes.Subscript) and nodes.is_name(value.value) and isinstance(
            value.slice, nodes.Constant):
        return value.slice.value
    if isinstance(value, nodes.Attribute) and nodes.is_name(value.value):
        return value.attr
    return None


def _changes_nothing(tree, callees):
    """Whether no statement of `tree` updates in place a value it did not make, or calls
    what might: every call is of a primitive not declared updating, of a method NumPy's
    arrays have that updates nothing, or one of ANF's helpers."""
    own = None
    for node in nodes.walk(tree):
        updates = getattr(node, "updates", None)
        if updates is not None:
            own = _own_values(tree, callees) if own is None else own
            if getattr(node, "written_back", None) or updates[1] not in own:
                return False  # an item updated in place, or a value it may not have made
        if isinstance(node, (nodes.Subscript, nodes.Attribute)) and not isinstance(
                node.ctx, nodes.Load):
            return False
        if isinstance(node, nodes.Call) and not _harmless(node, callees):
            return False
    return True


def _own_values(tree, callees):
    """The variables of `tree` (in ANF) that only ever hold objects the function made: a
    constant, an arithmetic result, a new container, a primitive's new value, such an
    object updated in place (`outs_1 = appended(outs, h)` is `outs` in Python), or the
    state of a loop that starts and goes on as one of those. An update in place of
    one changes nothing a parameter holds."""
    sources = collections.defaultdict(set)  # variable -> the variables it may be (None: any)
    followed = collections.Counter()  # variable -> the assignments of it `sources` follows
    loops_run = {}  # a loop's result -> its `iterate(loop_body, items, *inits)`
    unpacks = []
    for node in nodes.walk(tree):
        target = nodes.single_target(node)
        if isinstance(node, nodes.Assign) and isinstance(node.targets[0], nodes.Tuple):
            unpacks.append(node)
        elif getattr(getattr(node, "value", None), "helper", None) is loops.iterate:
            loops_run[target] = node.value
        elif target is not None:
            updates = getattr(node, "updates", None)
            _follow(target, {updates[1]} if updates else _source(node.value, callees),
                    sources, followed)
    bodies = {b.name: b for b in nodes.walk(tree) if isinstance(b, nodes.FunctionDef)}
    assigned = nodes.store_counts(tree)
    for call in loops_run.values():
        assigned.update(_loop_sources(bodies[call.args[0].id], call.args[2:], sources,
                                      followed))
    for unpack in unpacks:  # `_, h_1, outs_1 = loop`: the state of the loop's body
        if nodes.is_name(unpack.value) and unpack.value.id in loops_run:
            _, *params = nodes.parameter_names(
                bodies[loops_run[unpack.value.id].args[0].id].args)
            for target, param in zip(unpack.targets[0].elts[1:], params):
                _follow(target.id, {param}, sources, followed)
    own = {name for name, count in assigned.items()
           if followed[name] == count and None not in sources[name]}
    while True:  # the largest set whose variables' sources are all in it
        kept = {name for name in own if sources[name] <= own}
        if kept == own:
            return own
        own = kept


def _follow(name, source, sources, followed):
    """One assignment of `name`, of a value that may be the variables `source` (None:
    not known)."""
    followed[name] += 1
    sources[name] |= {None} if source is None else source


def _source(value, callees):
    """The variables whose object the value of ANF expression `value` may be (an empty
    set for an object made there), or None when that is not known."""
    if isinstance(value, (nodes.Constant, nodes.BinOp, nodes.UnaryOp, nodes.Compare,
                          nodes.List, nodes.Tuple, nodes.Set, nodes.Dict, nodes.Lambda)):
        return set()
    if isinstance(value, nodes.Name):
        return {value.id}
    if not isinstance(value, nodes.Call):
        return None  # an item, an attribute: what a parameter may hold
    if callees.is_method(value.func):
        return set() if value.func.attr == "copy" and not value.args else None
    result = aliases.call_result(getattr(value, "helper", None) or callees.global_callee(
        value.func))
    if result in ("same", "view"):
        return _atom_source(value.args[0]) if value.args else set()
    return set() if result is not None else None


def _atom_source(atom):
    return {atom.id} if nodes.is_name(atom) else set() if isinstance(
        atom, nodes.Constant) else None


def _loop_sources(body, inits, sources, followed):
    """The sources of the state parameters of loop `body` (`loop_body(item, *state)`):
    their initial values `inits`, and the items of the states its exits return. Returns
    the parameters."""
    _, *params = nodes.parameter_names(body.args)
    values = collections.defaultdict(list)
    for stmt in nodes.walk(body):
        if nodes.single_target(stmt) is not None:
            values[stmt.targets[0].id].append(stmt.value)
    exits = [value for stmt in _returns(body.body)
             for value in (values[stmt.value.id] if nodes.is_name(stmt.value) else [None])]
    for position, (param, init) in enumerate(zip(params, inits), 1):
        found = [_atom_source(init)] + [
            _atom_source(state.elts[position]) if isinstance(state, nodes.Tuple)
            and position < len(state.elts) else None for state in exits]
        _follow(param, None if None in found else set().union(*found), sources, followed)
    return params


def _returns(statements):
    """The `return` statements of a block, in its branches too, not in functions it
    defines."""
    for stmt in statements:
        if isinstance(stmt, nodes.Return):
            yield stmt
        elif not isinstance(stmt, nodes.FunctionDef):
            for field in ("body", "orelse", "finalbody"):
                yield from _returns(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                yield from _returns(handler.body)


def _harmless(call, callees):
    if getattr(call, "helper", None):
        return True
    keywords = [k.arg for k in call.keywords]
    if callees.is_method(call.func):
        return hasattr(np.ndarray, call.func.attr) and not registry.updates_in_place(
            None, call.func.attr, keywords)
    fn = callees.global_callee(call.func)
    return fn is not None and registry.holds(fn, "updates") is False and (
        not registry.updates_in_place(fn, None, keywords))
