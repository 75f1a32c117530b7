"""Stage 4 (optimize): values a pullback reads only for their shape held as their shape.

The rules of broadcasting operations and reductions give cotangents summed or
broadcast back to an operand's shape, `unbroadcast(dz, x)` and `unreduce(ds, x)`,
and that is often the pullback's only read of `x`: of the intermediate arrays of
bundle adjustment's projection, of an MLP's pre-activations, of the terms of an
LSTM's gates. A closure (or a loop's cache) holding `x` for it keeps the whole
array alive until the pullback has run, for a tuple of ints. As autograd keeps an
operand's metadata rather than the operand, the forward binds `x_shape =
shape_of(x)` after each assignment of `x`, and the pullback gives the helper the
shape (`unbroadcast_to(dz, x_shape)`); `x` is freed as the primal frees it::

    plus = times + b                  plus = times + b
                                      plus_shape = shape_of(plus)
    def f_pullback(dout):             def f_pullback(dout):
        dplus = unbroadcast(dout, plus)   dplus = unbroadcast_to(dout, plus_shape)

Which helpers read an argument only for its shape, and their versions given the
shape, are facts of their specs (`Spec.shaped`). It applies to a variable of the
forward function whose kind is an array's (a number costs nothing to hold),
assigned only by assignments of that function (in its blocks and its loops'
bodies), never to a part of another value, which holds it anyway (`p["b"]`,
`x[:n]`, `w, b = params`), when every read of it that outlives the
forward (in a function defined there: a pullback, a closure; in a cached loop's
step) is such a read, and a loop's step reads it from the step's own iteration (a
value the loop reads from outside it keeps its `unbroadcast`, which `loop_sums`
makes one `unbroadcast_all` after the loop). It runs after the rewrite rules,
which see the helpers as before, and before the loops are written
(`loop_caches`), whose caches then hold the shapes. Derivatives of derivatives read
`shape_of` (a constant; a symbolic zero's is `ZERO`, in a pullback's own code) and
the helpers' versions (linear, with their rules) as they read the rest.
"""

import collections

from ...rules import registry
from ...runtime import cotangents
from .. import ir
from ..analysis import kinds
from ..syntax import nodes


def hold_shapes(forward, bindings, namer, kinds_of):
    """The generated forward function `forward` with the variables its pullbacks read
    only for their shape held as their shape (see the module docstring); `kinds_of`
    gains the kinds of the names it adds."""
    shaped = {}
    for spec in registry.specs():
        name = spec.shaped and bindings.name_of(spec.primitive)
        if name:
            shaped[name] = spec.shaped
    if not shaped:
        return forward
    return _Scope(forward, bindings, namer, kinds_of, shaped).rewritten()


class _Scope:
    """One function of forward code, its blocks and its cached loops' bodies."""

    def __init__(self, function, bindings, namer, kinds_of, shaped):
        self.function = function
        self.bindings = bindings
        self.namer = namer
        self.kinds_of = kinds_of
        self.shaped = shaped  # {a helper's name: (position, its version given a shape)}
        self.stored = collections.Counter()  # stores by assignments of names alone
        self.other_stores = set()  # names bound any other way
        self.sources = collections.defaultdict(list)  # (value, unpacked) per name's store
        self.held = collections.Counter()  # reads that outlive the forward
        self.shape_reads = collections.Counter()  # of them, `unbroadcast(g, x)`'s `x`
        self.parameters = {a.id for a in function.args.args + function.args.kwonlyargs}
        for extra in (function.args.vararg, function.args.kwarg):
            if extra is not None:
                self.parameters.add(extra.id)
        self.other_stores.update(self.parameters)
        self._scan(function.body, loop_stores=None)

    def rewritten(self):
        """The function with the shapes held, and its nested functions' own."""
        parts = self._parts()
        chosen = {name: None for name, count in self.shape_reads.items()
                  if count == self.held[name] and self.stored[name]
                  and not {name} & (self.other_stores | parts)
                  and _is_array(self.kinds_of.get(name))}
        for name in chosen:
            chosen[name] = self.namer.fresh(name + "_shape")
            self.kinds_of[chosen[name]] = kinds.CONST
        body = self._block(self.function.body, chosen)
        return nodes.replaced(self.function, body=body)

    # -- finding the names -------------------------------------------------------

    def _scan(self, statements, loop_stores):
        for stmt in statements:
            if isinstance(stmt, ir.CachedLoop):
                self._scan_loop(stmt)
            elif isinstance(stmt, nodes.FunctionDef):
                self.other_stores.add(stmt.name)
                self._scan_held(stmt, None)
            elif isinstance(stmt, nodes.Assign) and _simple_targets(stmt):
                self._count_stores(stmt, loop_stores)
                self._scan_expression(stmt.value)
            else:
                self._scan_other(stmt, loop_stores)

    def _scan_loop(self, loop):
        own = set()
        self._scan(loop.forward, own)
        for field in (loop.item, loop.iteration, loop.target, *loop.params):
            if isinstance(field, str):
                self.other_stores.add(field)
        for stmt in loop.step:
            self._scan_held(stmt, own)
        for node in (loop.items, *loop.inits):
            if isinstance(node, nodes.AST):
                self._scan_expression(node)

    def _scan_other(self, stmt, loop_stores):
        """A statement other than an assignment of names: its blocks scanned as forward
        code, the rest of it (a test, a `for` target, a handler's name) walked."""
        rest = {}
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                rest[field] = []
                for part in block:
                    if isinstance(part, nodes.AST) and hasattr(part, "body") and (
                            field == "handlers"):
                        self._scan(part.body, loop_stores)
                        self._scan_expression(nodes.replaced(part, body=[]))
                    else:
                        self._scan([part], loop_stores)
        self._scan_expression(nodes.replaced(stmt, **rest) if rest else stmt)

    def _parts(self):
        """The names that may be bound to a part of another value, which holds it anyway:
        an item, a field or a slice (`p["b"]`, `x[:n]`, a view), another name's value,
        or an item unpacked from a parameter or from such a part (`w, b = params[:2]`);
        not an item of a call's result (`h, c = pair` after `pair, pb = f_fwd(x)`)."""
        parts = set()
        while True:
            found = {name for name, sources in self.sources.items()
                     if any(self._is_part(value, unpacked, parts) for value, unpacked in sources)}
            if found <= parts:
                return parts
            parts |= found

    def _is_part(self, value, unpacked, parts):
        if isinstance(value, (nodes.Subscript, nodes.Attribute)):
            return True
        if not nodes.is_name(value):
            return False
        return not unpacked or value.id in self.parameters or value.id in parts

    def _count_stores(self, stmt, loop_stores):
        unpacked = not nodes.is_name(stmt.targets[0])
        for name in nodes.stores(stmt.targets[0]):
            self.sources[name].append((stmt.value, unpacked))
            self.stored[name] += 1
            if loop_stores is not None:
                loop_stores.add(name)

    def _scan_expression(self, node):
        """Stores in forward code that is not an assignment of names (a `for` target,
        a walrus, an `except ... as`), and the functions in it."""
        for part in nodes.walk(node):
            if isinstance(part, nodes.Name) and not isinstance(part.ctx, nodes.Load):
                self.other_stores.add(part.id)
            elif isinstance(part, (nodes.FunctionDef, nodes.Lambda)):
                self._scan_held(part, None)

    def _scan_held(self, node, loop_stores):
        """Reads in `node`, code that runs after the forward: a function's body, or a
        cached loop's step reading `loop_stores` from its iteration."""
        shaped = self._shape_arguments(node)
        for part in nodes.walk(node):
            if not isinstance(part, nodes.Name):
                continue
            if not isinstance(part.ctx, nodes.Load):
                self.other_stores.add(part.id)  # bound there too: not the forward's alone
            elif loop_stores is not None and part.id not in loop_stores:
                self.other_stores.add(part.id)  # read from outside the loop
            else:
                self.held[part.id] += 1
                self.shape_reads[part.id] += id(part) in shaped

    def _shape_arguments(self, node):
        found = (self._shape_read(part) for part in nodes.walk(node))
        return {id(read[1]) for read in found if read}

    def _shape_read(self, node):
        """`(position, name)` when `node` calls a helper reading the argument `name` at
        `position` only for its shape (`Spec.shaped`), else None."""
        if not (isinstance(node, nodes.Call) and isinstance(node.func, nodes.Name)):
            return None
        fact = self.shaped.get(node.func.id)
        if fact is None or len(node.args) <= fact[0] or not nodes.is_name(node.args[fact[0]]):
            return None
        return fact[0], node.args[fact[0]]

    # -- rewriting ---------------------------------------------------------------

    def _block(self, statements, chosen):
        out = []
        for stmt in statements:
            if isinstance(stmt, ir.CachedLoop):
                out.append(nodes.replaced(
                    stmt, forward=self._block(stmt.forward, chosen),
                    step=[self._summed_to_shapes(s, chosen) for s in stmt.step],
                    kinds={**stmt.kinds, **{chosen[n]: kinds.CONST for n in chosen
                                            if n in stmt.kinds}}))
            elif isinstance(stmt, nodes.FunctionDef) and getattr(stmt, "pullback", False):
                out.append(self._summed_to_shapes(stmt, chosen))
            elif isinstance(stmt, nodes.FunctionDef):
                inner = _Scope(stmt, self.bindings, self.namer, self.kinds_of,
                               self.shaped).rewritten()
                out.append(self._summed_to_shapes(inner, chosen))
            else:
                out.append(nodes.with_blocks(stmt, lambda block: self._block(block, chosen)))
                out += self._shapes_after(stmt, chosen)
        return out

    def _shapes_after(self, stmt, chosen):
        if not (isinstance(stmt, nodes.Assign) and _simple_targets(stmt)):
            return []
        shape_of = self.bindings.object("shape_of", cotangents.shape_of)
        return [nodes.assign(chosen[name], nodes.call(nodes.name(shape_of), [nodes.name(name)]),
                             getattr(stmt, "lineno", None))
                for name in sorted(nodes.stores(stmt.targets[0])) if name in chosen]

    def _summed_to_shapes(self, node, chosen):
        """`node` with each call reading a chosen `x` only for its shape given `x`'s shape
        (`unbroadcast(g, x)` → `unbroadcast_to(g, x_shape)`)."""
        def reads_chosen(part):
            read = self._shape_read(part)
            return read is not None and read[1].id in chosen

        if not any(map(reads_chosen, nodes.walk(node))):
            return node
        node = nodes.clone(node)
        for part in [part for part in nodes.walk(node) if reads_chosen(part)]:
            position, by_shape = self.shaped[part.func.id]
            part.func = nodes.name(self.bindings.object(by_shape.__name__, by_shape))
            part.args = list(part.args)
            part.args[position] = nodes.name(chosen[part.args[position].id])
        return node


def _simple_targets(stmt):
    """Whether assignment `stmt` binds names alone (`x = ...`, `a, b = ...`)."""
    target = stmt.targets[0]
    if nodes.is_name(target):
        return True
    return isinstance(target, nodes.Tuple) and all(nodes.is_name(e) for e in target.elts)


def _is_array(kind):
    return isinstance(kind, kinds.Kind) and kind.shape == "array"
