"""Stage 4 (optimize): a loop's sums of products and broadcasts, made once after it.

In a loop's cached pullback (`loop_caches`) every step adds a term to the
cotangent of each array the body reads from its environment: a weight `w` read
as `x @ w` or `w @ x`, a bias `b` added as `z + b`, a table `xs` read as
`xs[t]`. Each term comes from a linear helper and is an array of the variable's
size, made and added at every step::

    for x, ... in reversed(loop_body_cache):
        ...
        dw = matmul_right(dz, x, w)
        dw_sum = add_into(dw_sum, dw)

A person collects the steps' operands and forms the gradient once, in one product
of the stacked operands. Where the helper's spec gives its sum over lists
(`summed`: `matmul_left_all`, `matmul_right_all`, `unbroadcast_all`,
`unindex_all`), its other argument does
not change from step to step and nothing else reads the term, the loop collects
the arguments that change and the sum is made after it::

    dz_all = []
    x_all = []
    for x, ... in reversed(loop_body_cache):
        ...
        dz_all.append(dz)
        x_all.append(x)
    dw_sum = matmul_right_all(dz_all, x_all, w)

The lists hold one value per step, as the cache does; the generated code stays in
the subset pullback transforms (lists, `append`), so derivatives of derivatives go
through it.
"""


from ...rules import registry
from ..analysis import kinds
from ..syntax import nodes


def collect_sums(statements, sums, varying, bindings, namer):
    """The sums of a loop's pullback that can be made after the loop, made so.

    Args:
      statements: the body of the backward loop (one step's pullback).
      sums: `(kind, total, value)` for each cotangent summed over the steps.
      varying: the names that may change from one step to the next.
      bindings, namer: the generated function's (for the helpers and the lists).

    Returns:
      `(statements, lists, after, kept)`: the body with each collected term's
      assignment replaced by appends to lists, the lists' definitions (before the
      loop), the sums' definitions (after it), and the sums still made in it.
    """
    collector = _Collector(statements, varying, bindings, namer)
    kept, after = [], []
    for kind, total, value in sums:
        made = collector.collect(total, value) if kind != kinds.SCALAR else None
        if made is None:
            kept.append((kind, total, value))
        else:
            after.append(made)
    return collector.body(), collector.lists, after, kept


class _Collector:
    def __init__(self, statements, varying, bindings, namer):
        self.statements = list(statements)
        self.varying = varying
        self.bindings = bindings
        self.namer = namer
        # helper's name: (its sum over the steps, the positions of the arguments that
        # change per step), from the helpers' specs
        self.helpers = {bindings.name_of(spec.primitive): spec.summed
                        for spec in registry.specs()
                        if spec.summed and bindings.name_of(spec.primitive) is not None}
        self.stores = nodes.store_counts(list(statements))
        self.reads = set().union(*map(nodes.reads, statements)) if statements else set()
        self.appends = {}  # position of a collected term -> its appends
        self.shared = {}  # name not stored in the body -> the list collecting it
        self.lists = []

    def collect(self, total, value):
        """`total = helper_all(...)` for the term `value`, its assignment replaced by
        appends; None when the term cannot be collected."""
        position = self.term(value)
        if position is None:
            return None
        call = self.statements[position].value
        summed, changing = self.helpers[call.func.id]
        lineno = nodes.lineno_of(self.statements[position])
        args, appends = [], []
        for index, arg in enumerate(call.args):
            if index not in changing:
                args.append(nodes.clone(arg))
            elif nodes.is_name(arg) and arg.id in self.shared:
                args.append(nodes.name(self.shared[arg.id]))  # appended by an earlier term
            else:
                target = self.list_for(arg, value.id, index, lineno)
                append = nodes.call(nodes.attribute(nodes.name(target), "append"), [arg])
                appends.append(nodes.expr(append, lineno))
                args.append(nodes.name(target))
        self.appends[position] = appends
        helper = nodes.name(self.bindings.object(summed.__name__, summed))
        return nodes.assign(total, nodes.call(helper, args), lineno)

    def term(self, value):
        """The position of the statement `value = helper(...)` making the term `value`,
        when it is the only one storing it, nothing else reads it and the helper's
        fixed argument does not change from step to step; else None."""
        if not nodes.is_name(value) or self.stores[value.id] != 1 or value.id in self.reads:
            return None
        for position, stmt in enumerate(self.statements):
            if nodes.single_target(stmt) == value.id:
                return position if self.collectable(stmt.value) else None
        return None

    def collectable(self, call):
        if not (isinstance(call, nodes.Call) and nodes.is_name(call.func)
                and call.func.id in self.helpers and not call.keywords):
            return False
        _, changing = self.helpers[call.func.id]
        if len(call.args) != len(changing) + 1:
            return False
        return all(self.fixed(arg) for index, arg in enumerate(call.args) if index not in changing)

    def fixed(self, arg):
        """Whether `arg` has the same value at every step."""
        if isinstance(arg, nodes.Constant):
            return True
        return nodes.is_name(arg) and arg.id not in self.varying and arg.id not in self.stores

    def list_for(self, arg, term, index, lineno):
        """A new list collecting `arg`, named after it (or after the term); when the
        body does not store `arg` (a cached value), later terms reading it share it."""
        base = arg.id + "_all" if nodes.is_name(arg) else (
            f"{term}_{'gs' if index == 0 else 'args'}")
        name = self.namer.fresh(base)
        self.lists.append(nodes.assign(name, nodes.list_([]), lineno))
        if nodes.is_name(arg) and arg.id not in self.stores:
            self.shared[arg.id] = name
        return name

    def body(self):
        out = []
        for position, stmt in enumerate(self.statements):
            out += self.appends.get(position, [stmt])
        return out
