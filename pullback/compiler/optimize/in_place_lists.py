"""Stage 4 (optimize): a list, array or dict a loop carries and updates by index or
appends to, updated in place.

ANF makes `xs[i] = v` a new list (`xs_1 = with_item(xs, i, v)`, see `runtime.mutation`),
so that every version keeps its value for the pullbacks that read it. A loop that
updates its list of states by index then copies the list at every step, and its
pullback copies the list's cotangent at every step (`without_item`, `add_at`): the
gradient costs time quadratic in the number of steps where the primal's is linear.

Where no one reads a version of the list after the loop's update but for its type
and length (which an update by an int index does not change), the update may as well
write into the list. `update_in_place` finds such a loop-carried list `v` and its
update `t = helper(v, ...)` (a chain of `with_item`, `without_item` and `add_at`,
each taking the list first) and makes the loop update a copy of its own::

    xs_2 = xs_1                                 xs_2 = copied(xs_1)
    for t in range_steps:                       for t in range_steps:
        xs_2_t = xs_2[t]                            xs_2_t = xs_2[t]
        xs_3 = with_item(xs_2, t_plus_1, v)         xs_3 = with_item_into(xs_2, t_plus_1, v)
        cache.append((t_plus_1, xs_2, xs_3))        cache.append((t_plus_1, xs_2, xs_3))
        xs_2 = xs_3                                 xs_2 = xs_3

It holds when, in the loop's body: the list is assigned only by the update or by
passing the updated list to the next step (`v = t`, or through the tuple a `while`
loop's step returns); it is read only for an item before the update (`v[k]`, or a
helper's argument it reads only at an index: `Spec.indexed`), for its type and
length anywhere (`len`, or a helper's argument it reads only so: `Spec.structural`),
or into the loop's cache, whose reader, the loop's pullback, reads that item of each
entry only for its type and length; the updated list is read only so or for an item;
and neither is read by a function defined in the body. An append (`appended`, and
`unappended` in the pullback) changes the length: then no version may be read after
its update at all, not even for its length; the cache keeps each version its
pullback reads as its length, taken as the step starts or right after the update
that makes it (`xs_1_version = list_version(xs_1)`, a `runtime.structures.ListVersion`
that the structural helpers read as the list). A trajectory, `xs.append(f(xs[-1]))`,
then appends in place: the cotangent of `xs[-1]` is a list of that length. The
helpers fall back to copying when the list is not a list or the index not an int.

An array (by any index: its shape and dtype stay) and a dict (by a key it holds) are
updated the same way. A part of an array is a view, which a later update changes, so
unless the kinds say the loop starts from a list or dict, a read `r = v[k]` whose
value is read after an update that follows it (its cache entry included) copies the
part (`r = item_of(v, k)`).
"""

import builtins
import dataclasses

from ...rules import registry
from ...runtime import mutation, structures
from ..analysis import kinds
from ..syntax import nodes


def update_in_place(statements, bindings, namer, kinds_of):
    """`statements` (a generated forward function's body, its loops written as Python by
    `loop_caches`) with each loop's update of a list it carries made in place, on a copy
    made before the loop, where nothing reads the list's earlier versions but for their
    type and length (see the module docstring). Loops in pullbacks too."""
    return _Rewriter(nodes.module(list(statements)), bindings, namer, kinds_of).block(statements)


class _Rewriter:
    """The rewrite of one forward function, `root` (read whole to find each cache's
    reader); `updates` are the generated names of the copying updates, `reads` what the
    helpers' specs say they read of their arguments (`_helper_reads`); new names come
    from `namer`; `kinds` are the function's variables' kinds."""

    def __init__(self, root, bindings, namer, kinds_of):
        self.root = root
        self.bindings = bindings
        self.namer = namer
        self.kinds = kinds_of
        names = {bindings.name_of(f): f for f in mutation.IN_PLACE}
        self.updates = {name: f for name, f in names.items() if name is not None}
        self.reads = _helper_reads(bindings)

    def block(self, statements):
        """`statements` rewritten, the loops nested in a loop before it."""
        out = []
        for stmt in statements:
            if isinstance(stmt, (nodes.For, nodes.While)):
                stmt = nodes.replaced(stmt, body=self.block(stmt.body),
                                      orelse=self.block(stmt.orelse))
                out += self.loop(stmt, out)
            elif isinstance(stmt, (nodes.If, nodes.Try)):
                out.append(nodes.with_blocks(stmt, self.block))
            elif isinstance(stmt, nodes.FunctionDef):
                out.append(nodes.replaced(stmt, body=self.block(stmt.body)))
            else:
                out.append(stmt)
        return out

    def loop(self, stmt, before):
        """The loop `stmt` with its updates in place, preceded by the copies they update;
        `before`: the statements of its block before it."""
        original, stmt = stmt, self.hoisted(stmt)
        body = _Body(stmt.body)
        bound = set().union(*(nodes.stores(s) for s in before))
        consumers = self.consumers(body)
        defined = {nodes.single_target(body.flat[ps[0]][0]) for ps in consumers.values() if ps}
        copies, plan = [], _Plan()
        for var in consumers:
            chain = self.chain(body, consumers, var)
            if not chain or var in defined - {chain[-1][1]} or var not in bound:
                continue
            cached = self.safe(stmt, body, var, chain)
            positions = {p for ps, _ in chain for p in ps}
            reads = body.outliving_reads([var] + [n for _, n in chain], positions) if (
                cached is not None and self.may_be_array(var, before, body, positions)) else set()
            if cached is None or reads is None:
                continue
            plan.changed.update(id(body.flat[p][0]) for p in positions)
            plan.copied_reads |= reads
            copies += self.copy(var, before, nodes.lineno_of(stmt))
            made = {name: ps[0] for ps, name in chain}  # the update making each version
            for entry, position, name in cached:
                update = body.flat[made[name]][0] if name in made else stmt
                made_by = id(update) if name in made else None
                if made_by not in plan.captures:
                    plan.captures[made_by] = self.capture(name, nodes.lineno_of(update))
                plan.versions.setdefault(entry, {})[position] = (
                    plan.captures[made_by].targets[0].id)
        if not plan.changed:
            return [original]
        start = [plan.captures.pop(None)] if None in plan.captures else []
        body = start + self.rewritten(stmt.body, plan)
        return copies + [nodes.replaced(stmt, body=body)]

    def hoisted(self, loop):
        """The loop `loop` with each read of the item an update zeroes that follows the update
        (`dv = dxs_2[i]` after `dxs_1 = without_item(dxs_2, i)`)
        moved to just before it. The reverse rules write a value's cotangent where the
        value is made: in a branch of an `if`, after the update before the `if`. The read
        is pure and reads what the update reads, so it cannot fail there; where the names
        it reads are bound by then and not bound again before it, it reads the same."""
        body = _Body(loop.body)
        zeroing = {}  # (list, index as text) -> the position of the update zeroing it
        for position, (stmt, _) in enumerate(body.flat):
            for call in self.chain_calls(stmt):
                if self.bindings.calls(call, mutation.without_item) and len(call.args) == 2 and (
                        nodes.is_name(call.args[0])):
                    zeroing.setdefault((call.args[0].id, nodes.dump(call.args[1])), position)
        moves, moved = {}, set()
        for position, (stmt, _) in enumerate(body.flat):
            update = self.zeroed_read(stmt, zeroing)
            if update is not None and body.after(position, update) and body.bound_before(
                    stmt, update, position):
                moves.setdefault(id(body.flat[update][0]), []).append(stmt)
                moved.add(id(stmt))
        return nodes.replaced(loop, body=_moved(loop.body, moves, moved)) if moves else loop

    def chain_calls(self, stmt):
        """The calls of the chain of updates a statement `v = helper(helper(...), ...)` makes."""
        found, value = [], stmt.value if nodes.single_target(stmt) else None
        while isinstance(value, nodes.Call) and value.args and not value.keywords:
            found.append(value)
            value = value.args[0]
        return found

    def zeroed_read(self, stmt, zeroing):
        """The position in `zeroing` of the update zeroing the item the statement
        `r = g[i]` (or `r = written_item(g, i, ...)`) reads, or None."""
        value = stmt.value if nodes.single_target(stmt) else None
        if isinstance(value, nodes.Subscript) and nodes.is_name(value.value):
            return zeroing.get((value.value.id, nodes.dump(value.slice)))
        if not (self.bindings.calls(value, mutation.written_item) and len(value.args) == 4
                and nodes.is_name(value.args[0])):
            return None
        return zeroing.get((value.args[0].id, nodes.dump(value.args[1])))

    def may_be_array(self, var, before, body, positions):
        """Whether the value the loop carries in `var` may be an array: by the kind of the
        value it starts as, or, for a cotangent, of the value whose cotangent one of its
        updates at `positions` in `body` adds to (`add_at(dxs, gs, xs, ...)`)."""
        for position in positions:
            for call in self.chain_calls(body.flat[position][0]):
                if self.bindings.calls(call, structures.add_at) and len(call.args) == 4 and (
                        nodes.is_name(call.args[2])) and _holds_items(
                        self.kinds.get(call.args[2].id)):
                    return False
        source = var
        for stmt in reversed(before):
            if var in nodes.stores(stmt):
                if nodes.single_target(stmt) == var and nodes.is_name(stmt.value):
                    source = stmt.value.id
                break
        return not _holds_items(self.kinds.get(source))

    def capture(self, name, lineno):
        """`name_version = list_version(name)`: what the loop's cache keeps of the
        version `name` of a list the step appends to in place, taken when it is made."""
        helper = nodes.name(self.bindings.object("list_version", structures.list_version))
        return nodes.assign(self.namer.fresh(name + "_version"),
                            nodes.call(helper, [nodes.name(name)]), lineno)

    def copy(self, var, before, lineno):
        """The statements copying the list `var` before the loop: the copy of another
        name into `var` just before it (`xs_2 = xs_1`, which nothing after reads) made
        `xs_2 = copied(xs_1)` in `before` itself, or else `xs_2 = copied(xs_2)`."""
        helper = nodes.name(self.bindings.object("copied", mutation.copied))
        for index in range(len(before) - 1, -1, -1):
            if var in nodes.stores(before[index]):
                source = before[index].value if nodes.single_target(before[index]) == var else None
                if nodes.is_name(source) and not any(var in nodes.reads(s)
                                                     for s in before[index + 1:]):
                    before[index] = nodes.replaced(before[index],
                                                   value=nodes.call(helper, [source]))
                    return []
                break
        return [nodes.assign(var, nodes.call(helper, [nodes.name(var)]), lineno)]

    def consumers(self, body):
        """`{list: positions}`: for each list the step updates, the positions in `body.flat`
        of its updates, none on one path with another (the branches of an `if` may each
        update it, or one pass it on as it is: `dxs_3 = dxs_1`), all making the same
        name; None where two are on one path or make different names."""
        found = {}
        for position, (stmt, _) in enumerate(body.flat):
            var = self.updated(stmt.value) if nodes.single_target(stmt) else None
            if var is not None:
                found.setdefault(var, []).append(position)
        for var, positions in found.items():
            made = {nodes.single_target(body.flat[p][0]) for p in positions}
            passed = [p for p, (s, _) in enumerate(body.flat) if nodes.single_target(s) in made
                      and nodes.is_name(s.value, var)]
            if len(made) == 1 and body.exclusive(positions + passed):
                found[var] = tuple(sorted(positions + passed))
            else:
                found[var] = tuple(positions) if len(positions) == 1 else None
        return found

    def chain(self, body, consumers, var):
        """`[(positions, name), ...]`: the updates one step makes of the list it carries
        in `var`, each of the list the one before made (`xs_2 = with_item(xs_1, ...)`,
        `xs_3 = with_item(xs_2, ...)`), at the positions of its alternatives in the
        branches (`consumers`); empty when one of them is updated twice on one path."""
        found, name = [], var
        while name in consumers:
            positions = consumers[name]
            if positions is None:
                return []
            name = nodes.single_target(body.flat[positions[0]][0])
            found.append((positions, name))
            if name == var or any(name == n for _, n in found[:-1]):
                break
        return found

    def updated(self, value):
        """The list a chain of updates `helper(helper(v, ...), ...)` updates, or None."""
        depth = 0
        while isinstance(value, nodes.Call) and nodes.is_name(value.func) and (
                value.func.id in self.updates) and value.args and not value.keywords:
            value, depth = value.args[0], depth + 1
        return value.id if depth and nodes.is_name(value) else None

    def resizes(self, value):
        """Whether the chain of updates `value` changes the list's length (`mutation.RESIZING`)."""
        while isinstance(value, nodes.Call) and nodes.is_name(value.func) and (
                value.func.id in self.updates):
            if self.updates[value.func.id] in mutation.RESIZING:
                return True
            value = value.args[0]
        return False

    def safe(self, loop, body, var, chain):
        """None unless the loop may make the updates `chain` of the list it carries in
        `var` in place (the module docstring); else, where the updates change its length,
        `(id, position, name)` for each cache entry's item that must keep the version
        `name` as its length (`list_version`)."""
        names = [var] + [name for _, name in chain]
        if isinstance(loop, nodes.For) and var in nodes.stores(loop.target):
            return None
        if any(set(names) & nodes.reads(s) for s in loop.orelse):
            return None
        updates = {position for positions, _ in chain for position in positions}
        updates |= body.skipping(names, chain)
        if not body.assigns_only_by_passing(var, names, updates) or not (
                body.carries(var, min(updates))):
            return None
        consumed = {name: positions for name, (positions, _) in zip(names, chain)}
        last = chain[-1][0]
        resizing = any(self.resizes(body.flat[position][0].value) for position in updates)
        cached = []
        for index, (stmt, _) in enumerate(body.flat):
            for kind, name, detail in _uses(stmt, set(names), self.reads, index in updates):
                stale = name in consumed and body.after_any(index, consumed[name]) and not (
                    name == var == chain[-1][1] and body.after_any(index, last))
                if kind == "item" or kind == "structural" and resizing:
                    if stale:
                        return None
                elif kind == "cached":
                    if not self.cache_reads_structure(*detail):
                        return None
                    if resizing:
                        if name == var and body.assigns_before(var, index):
                            return None
                        cached.append((id(stmt), detail[1], name))
                elif kind == "passed":
                    if not body.passes(detail, var, names):
                        return None
                elif kind not in ("structural", "update"):
                    return None
        if cached and any(len(positions) > 1 for positions, _ in chain):
            return None  # a version kept as its length is captured after the one update making it
        return cached

    def cache_reads_structure(self, cache, position):
        """Whether every loop over the list `cache` reads item `position` of each of its
        entries only for its type and length (and the function it is in reads that
        name nowhere else), and nothing else reads the list."""
        readers = 0
        for function in [self.root] + [n for n in nodes.walk(self.root)
                                       if isinstance(n, nodes.FunctionDef)]:
            for node in _own_statements(function.body):
                if not (isinstance(node, nodes.For) and _iterates(node.iter, cache)):
                    continue
                readers += 1
                if not isinstance(node.target, nodes.Tuple) or position >= len(
                        node.target.elts) or not nodes.is_name(node.target.elts[position]):
                    return False
                name = node.target.elts[position].id
                inside = [kind for stmt, _ in _Body(node.body).flat
                          for kind, _, _ in _uses(stmt, {name}, self.reads, False)]
                everywhere = sum(1 for n in nodes.walk(function) if nodes.is_name(n, name)
                                 and isinstance(n.ctx, nodes.Load))
                if len(inside) != everywhere or any(k != "structural" for k in inside):
                    return False
        loads = sum(1 for node in nodes.walk(self.root) if nodes.is_name(node, cache)
                    and isinstance(node.ctx, nodes.Load))
        appends = sum(1 for node in nodes.walk(self.root) if _appends_to(node, cache))
        return readers > 0 and loads == readers + appends

    def rewritten(self, statements, plan):
        """`statements` rewritten by `plan` (a `_Plan`)."""
        out = []
        for stmt in statements:
            captured = plan.captures.get(id(stmt))
            if id(stmt) in plan.changed:
                stmt = nodes.replaced(stmt, value=self.into(stmt.value))
            elif id(stmt) in plan.copied_reads:
                helper = nodes.name(self.bindings.object("item_of", mutation.item_of))
                stmt = nodes.replaced(stmt, value=nodes.call(
                    helper, [stmt.value.value, _index_expression(stmt.value.slice)]))
            elif id(stmt) in plan.versions:
                stmt = _with_entry_names(stmt, plan.versions[id(stmt)])
            elif isinstance(stmt, nodes.If):
                stmt = nodes.with_blocks(stmt, lambda block: self.rewritten(block, plan))
            out.append(stmt)
            if captured is not None:
                out.append(captured)
        return out

    def into(self, value):
        """The chain of updates `value` calling the versions writing into the list."""
        if not (isinstance(value, nodes.Call) and nodes.is_name(value.func)
                and value.func.id in self.updates):
            return value
        helper = mutation.IN_PLACE[self.updates[value.func.id]]
        return nodes.replaced(value, func=nodes.name(self.bindings.object(helper.__name__, helper)),
                              args=[self.into(value.args[0]), *value.args[1:]])


@dataclasses.dataclass
class _Plan:
    """How one loop's body is rewritten, each statement by its id: the updates `changed`
    to call the in-place helpers; the reads `copied_reads` (`r = v[k]`) to copy the part
    they read (`item_of`); the cache entries `versions` to keep, at each position given,
    the version captured under the name given; `captures`, the statement capturing a
    version (`list_version`) to put after the update that makes it (None: as the step
    starts)."""

    changed: set = dataclasses.field(default_factory=set)
    copied_reads: set = dataclasses.field(default_factory=set)
    versions: dict = dataclasses.field(default_factory=dict)
    captures: dict = dataclasses.field(default_factory=dict)


class _Body:
    """A loop body's statements in the order they run, each with the branches of the
    `if` statements it is in (`flat`); loops, functions and `try` statements nested
    in it are single statements."""

    def __init__(self, statements):
        self.flat = []
        self.ifs = 0
        self.add(statements, ())

    def add(self, statements, path):
        """Add `statements`, in the branches `path`, an `if`'s test before its branches."""
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                self.ifs += 1
                self.flat.append((nodes.expr(stmt.test, nodes.lineno_of(stmt)), path))
                branch = self.ifs
                self.add(stmt.body, path + ((branch, 0),))
                self.add(stmt.orelse, path + ((branch, 1),))
            else:
                self.flat.append((stmt, path))

    def after(self, index, position):
        """Whether the statement at `index` runs after the one at `position` in a step
        (later, and not in the other branch of an `if`)."""
        return index > position and _on_one_path(self.flat[index][1], self.flat[position][1])

    def outliving_reads(self, names, updates):
        """The ids of the statements `r = v[k]` reading a part of one of the versions
        `names` whose value is read after an update that follows (or, read after every
        update, anywhere after): a part of an array updated in place would change, so
        the read copies it (`item_of`). None if such a read's index is a slice written
        in the subscript, which `item_of` cannot be given."""
        found = set()
        for index, (stmt, _) in enumerate(self.flat):
            target = nodes.single_target(stmt)
            if target is None or not (isinstance(stmt.value, nodes.Subscript) and nodes.is_name(
                    stmt.value.value) and stmt.value.value.id in names):
                continue
            later = [u for u in updates if self.after(u, index)]
            start = min(later) if later else index
            if any(target in nodes.reads(s) for s, _ in self.flat[start + 1:]):
                if _index_expression(stmt.value.slice) is None:
                    return None
                found.add(id(stmt))
        return found

    def skipping(self, names, chain):
        """The positions of the statements `w = v` passing a version `v` of a list on as a
        later version `w` (`xs_3 = xs_1`, in the branch of an `if` where the other
        updates `xs_1` into `xs_2`, then `xs_3`): none of the updates between them
        (`chain`, from the versions `names`) runs in a step with it."""
        order = {}
        for position, name in enumerate(names):
            order.setdefault(name, position)
        found = set()
        for index, (stmt, _) in enumerate(self.flat):
            target = nodes.single_target(stmt)
            if target in order and nodes.is_name(stmt.value) and stmt.value.id in order and (
                    order[stmt.value.id] < order[target]):
                between = [p for positions, _ in chain[order[stmt.value.id]:order[target]]
                           for p in positions]
                if not any(self.after(index, p) or self.after(p, index) for p in between):
                    found.add(index)
        return found

    def after_any(self, index, positions):
        """Whether the statement at `index` runs after one of those at `positions`."""
        return any(self.after(index, position) for position in positions)

    def exclusive(self, positions):
        """Whether no two of the statements at `positions` run in one step."""
        return not any(self.after(a, b) for a in positions for b in positions)

    def bound_before(self, stmt, position, index):
        """Whether the names statement `stmt` (at `index`) reads are bound as the statement at
        `position` before it runs, and not bound again up to `index`, and its target is
        bound only by it."""
        target = nodes.single_target(stmt)
        if sum(target in nodes.stores(s) for s, _ in self.flat) != 1:
            return False
        read = nodes.reads(stmt.value)
        return not any(read & nodes.stores(other) for other, _ in self.flat[position:index])

    def assigns_before(self, var, index):
        """Whether a statement before the one at `index` assigns `var`."""
        return any(var in nodes.stores(stmt) for stmt, _ in self.flat[:index])

    def assigns_only_by_passing(self, var, names, updates):
        """Whether the body assigns the lists `names` (`var` and its updated versions) only
        by the updates at the positions `updates`, or, for `var`, by passing one of them
        on to the next step (`passes_to`)."""
        for index, (stmt, _) in enumerate(self.flat):
            stored = nodes.stores(stmt) & set(names)
            if not stored or index in updates and len(stored) == 1:
                continue
            if stored != {var} or not self.passes_to(stmt, var, names):
                return False
        return True

    def carries(self, var, first):
        """Whether the step passes the list on to the next one in `var` (it assigns `var`
        after its first update, at `first`), and no statement leaving the step (`break`,
        `continue`, `return`, `raise`) runs between that update and the last such
        assignment: a later step, or the code after the loop, reads `var` as updated."""
        passing = [i for i, (stmt, _) in enumerate(self.flat)
                   if var in nodes.stores(stmt) and self.after(i, first) or i == first
                   and nodes.single_target(stmt) == var]
        if not passing:
            return False
        return not any(isinstance(stmt, _LEAVING) and self.after(i, first) and i < passing[-1]
                       for i, (stmt, _) in enumerate(self.flat))

    def passes_to(self, stmt, var, names):
        """Whether `stmt` assigns `var` one of the lists `names`: `var = name`, a parallel
        assignment, or the unpacking of a step's result."""
        if not isinstance(stmt, nodes.Assign) or len(stmt.targets) != 1:
            return False
        target, value = stmt.targets[0], stmt.value
        if nodes.is_name(target, var):
            return nodes.is_name(value) and value.id in names
        if not isinstance(target, nodes.Tuple):
            return False
        position = _position(target, var)
        if position is None:
            return False
        if isinstance(value, nodes.Tuple):
            return _holds(value, position, names)
        if not nodes.is_name(value):
            return False
        tuples = self.assigned(value.id)
        return bool(tuples) and all(isinstance(t, nodes.Tuple) and _holds(t, position, names)
                                    for t in tuples)

    def assigned(self, name):
        """The values the body assigns to `name` (`name = value`)."""
        return [stmt.value for stmt, _ in self.flat if nodes.single_target(stmt) == name]

    def passes(self, stmt, var, names):
        """Whether statement `stmt`, which reads one of the lists `names` into a name or a
        tuple, passes it on to the next step and nowhere else: `var = name`, a parallel
        assignment holding it where it assigns `var`, or a tuple holding it where the
        one statement reading that tuple unpacks it into `var`."""
        target, value = stmt.targets[0], stmt.value
        if nodes.is_name(value):
            return nodes.is_name(target, var)
        found = {i for i, e in enumerate(value.elts) if set(names) & nodes.reads(e)}
        if isinstance(target, nodes.Tuple):
            return found == {_position(target, var)}
        readers = [s for s, _ in self.flat if target.id in nodes.reads(s)]
        if len(readers) != 1 or not isinstance(readers[0], nodes.Assign) or not (
                nodes.is_name(readers[0].value, target.id)) or not isinstance(
                readers[0].targets[0], nodes.Tuple):
            return False
        return found == {_position(readers[0].targets[0], var)}


_LEAVING = (nodes.Break, nodes.Continue, nodes.Return, nodes.Raise)


def _uses(stmt, names, reads, is_update):
    """`(kind, name, detail)` for each read of one of `names` in statement `stmt`: "update"
    (the list the update `stmt` updates), "item" (an item of it), "structural" (its
    type and length), "cached" (detail: the cache list and the position in its entry),
    "passed" (assigned to a name or into a tuple, detail: the statement) or "other"."""
    if is_update:
        chain, uses = stmt.value, []
        while isinstance(chain, nodes.Call) and chain.args:
            uses += _call_uses(chain, names, reads, skip_first=True)
            chain = chain.args[0]
        if nodes.is_name(chain) and chain.id in names:
            uses.append(("update", chain.id, None))
        return _with_others(stmt.value, names, uses)
    if isinstance(stmt, (nodes.FunctionDef, nodes.For, nodes.While, nodes.Try, nodes.With,
                         nodes.Return)):
        return [("other", n, None) for n in names if n in nodes.reads(stmt)]
    cache = _appended_tuple(stmt)
    if cache is not None:
        name, entry = cache
        return _with_others(entry, names, [("cached", e.id, (name, i))
                                           for i, e in enumerate(entry.elts)
                                           if nodes.is_name(e) and e.id in names])
    if isinstance(stmt, nodes.Assign) and len(stmt.targets) == 1 and (
            nodes.is_name(stmt.value) or isinstance(stmt.value, nodes.Tuple)) and (
            isinstance(stmt.targets[0], (nodes.Name, nodes.Tuple))):
        elts = [stmt.value] if nodes.is_name(stmt.value) else stmt.value.elts
        return _with_others(stmt.value, names, [("passed", e.id, stmt) for e in elts
                                                if nodes.is_name(e) and e.id in names])
    return _expression_uses(stmt, names, reads)


def _holds_items(kind):
    """Whether a value of kind `kind` is a tuple, list or dict (not an array)."""
    return kind is not None and (kinds.is_sequence(kind) or isinstance(
        kind, kinds.Container) and kind.type is dict)


def _moved(statements, moves, moved):
    """`statements` without the statements `moved`, and with those `moves` gives for a
    statement put just before it, in its `if` branches too (all by id)."""
    out = []
    for stmt in statements:
        if id(stmt) in moved:
            continue
        out += moves.get(id(stmt), [])
        if isinstance(stmt, nodes.If):
            stmt = nodes.with_blocks(stmt, lambda block: _moved(block, moves, moved))
        out.append(stmt)
    return out


def _index_expression(index):
    """The subscript `index` as an argument (a name, a number, a tuple of them), or None."""
    if isinstance(index, nodes.Tuple):
        return index if all(_index_expression(e) is not None for e in index.elts) else None
    return index if isinstance(index, (nodes.Name, nodes.Constant)) else None


def _with_entry_names(stmt, names):
    """The statement `cache.append((...))` with the entry's items at the positions
    `names` maps replaced by those names."""
    call = stmt.value
    entry = call.args[0]
    elts = [nodes.name(names[i]) if i in names else e for i, e in enumerate(entry.elts)]
    return nodes.replaced(stmt, value=nodes.replaced(
        call, args=[nodes.replaced(entry, elts=elts)]))


def _with_others(node, names, uses):
    """`uses`, and an "other" use for each read of `names` in `node` they do not account for."""
    loads = sum(1 for n in nodes.walk(node) if isinstance(n, nodes.Name)
                and isinstance(n.ctx, nodes.Load) and n.id in names)
    return uses + [("other", None, None)] * max(loads - len(uses), 0)


def _expression_uses(node, names, reads):
    uses = []
    for parent in nodes.walk(node):
        if isinstance(parent, nodes.Subscript) and nodes.is_name(parent.value) and (
                parent.value.id in names) and isinstance(parent.ctx, nodes.Load):
            uses.append(("item", parent.value.id, None))
        elif isinstance(parent, nodes.Call):
            uses += _call_uses(parent, names, reads)
    return _with_others(node, names, uses)


def _call_uses(call, names, reads, skip_first=False):
    """The reads of `names` as arguments of `call` that its spec says read only their
    structure or an item; a read in any other argument is "other"."""
    if call.keywords or not nodes.is_name(call.func):
        return [("other", n.id, None) for arg in call.args + [k.value for k in call.keywords]
                for n in nodes.walk(arg) if isinstance(n, nodes.Name) and n.id in names]
    structural, indexed = reads.get(call.func.id, ((), ()))
    uses = []
    for position, arg in enumerate(call.args):
        if skip_first and position == 0:
            continue
        if nodes.is_name(arg) and arg.id in names:
            kind = ("structural" if position in structural else "item" if position in indexed
                    else "other")
            uses.append((kind, arg.id, None))
    return uses


def _helper_reads(bindings):
    """`{name: (structural, indexed)}` for the functions the generated code reads by
    name whose specs say which arguments they read only for their structure or an item."""
    found = {}
    for spec in registry.specs():
        if spec.structural or spec.indexed:
            name = bindings.name_of(spec.primitive)
            if name is None and getattr(builtins, getattr(spec.primitive, "__name__", ""),
                                        None) is spec.primitive:
                name = spec.primitive.__name__  # a builtin read by its own name: `len`
            if name is not None:
                found[name] = (spec.structural, spec.indexed)
    return found


def _own_statements(statements):
    """The statements of a function's body at any depth, not in functions nested in it."""
    todo = list(statements)
    for stmt in todo:
        yield stmt
        if not isinstance(stmt, nodes.FunctionDef):
            for field in ("body", "orelse", "finalbody", "handlers"):
                todo.extend(getattr(stmt, field, None) or [])


def _appended_tuple(stmt):
    """`(cache, entry)` for `cache.append(entry)` with `entry` a tuple display, else None."""
    if isinstance(stmt, nodes.Expr) and _appends_to(stmt.value, None) and isinstance(
            stmt.value.args[0], nodes.Tuple):
        return stmt.value.func.value.id, stmt.value.args[0]
    return None


def _appends_to(node, cache):
    return (isinstance(node, nodes.Call) and isinstance(node.func, nodes.Attribute)
            and node.func.attr == "append" and nodes.is_name(node.func.value)
            and (cache is None or node.func.value.id == cache) and len(node.args) == 1)


def _iterates(node, cache):
    """Whether `node`, a for loop's iterable, is `cache` or `reversed(cache)`."""
    if nodes.is_name(node, cache):
        return True
    return (isinstance(node, nodes.Call) and nodes.is_name(node.func, "reversed")
            and len(node.args) == 1 and nodes.is_name(node.args[0], cache))


def _position(target, name):
    found = [i for i, e in enumerate(target.elts) if nodes.is_name(e, name)]
    return found[0] if len(found) == 1 else None


def _holds(display, position, names):
    return position < len(display.elts) and nodes.is_name(display.elts[position]) and (
        display.elts[position].id in names)


def _on_one_path(path, other):
    sides = dict(path)
    return all(sides.get(branch, side) == side for branch, side in other)
