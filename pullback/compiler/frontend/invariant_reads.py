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
- nothing in the function updates a value in place or calls a function that might
  (its calls are of primitives, of NumPy's methods, and of ANF's helpers);
- `v` is assigned there only, and read only in the loop.

Reads in nested loops move to the body of the loop around them first, and on from
there when they can.
"""

import numpy as np

from ...errors import TransformError
from ...rules import registry
from ..analysis import kinds
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
        container = self.known.get(stmt.value.value.id)
        if container is None or isinstance(stmt.value, nodes.Attribute) != (
                container.type not in (dict, list, tuple)):
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
    """Whether no statement of `tree` updates a value in place or calls what might: every
    call is of a primitive not declared updating, of a method NumPy's arrays have that
    updates nothing, or one of ANF's helpers."""
    for node in nodes.walk(tree):
        if getattr(node, "updates", None) is not None:
            return False
        if isinstance(node, (nodes.Subscript, nodes.Attribute)) and not isinstance(
                node.ctx, nodes.Load):
            return False
        if isinstance(node, nodes.Call) and not _harmless(node, callees):
            return False
    return True


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
