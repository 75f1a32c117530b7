"""Stage 4 (optimize): the cotangent of a list of numbers that a loop's pullback updates
in place, updated in Python.

`in_place_lists` has a loop's pullback update the cotangent of a list the loop carries
in place, by helpers that take the common case first (`without_item_into`,
`structures.add_at_into`). For a list of numbers that is still a call or two for each
item written, against a primal step of a few operations on numbers. Where a loop's
pullback keeps such a cotangent `d` in one name, which the step assigns only by those
updates, the step makes `d` a list as it starts (it may come in as `ZERO`, or as a
tuple from a caller: `listed`, which returns a list as it is), and then writes its
items as Python does (the rewrite rule `items.item_read` has made the reads
subscripts already)::

    for ..., t, t_plus_1, xs_2 in ...:              for ..., t, t_plus_1, xs_2 in ...:
                                                        dxs_2 = listed(dxs_2, xs_2)
        dv = dxs_2[t_plus_1]                            dv = dxs_2[t_plus_1]
        ...                                             ...
        dxs_2 = add_at_into(                            dxs_2[t_plus_1] = ZERO
            without_item_into(dxs_2, t_plus_1),         dxs_2[t] = dxs_2[t] + dx
            (dx,), xs_2, (t,))

An item's cotangent is a number or `ZERO`, which `+` adds as `add` would, so an item
is added to by `+` only when the kinds say the list holds numbers; the index must be a
number (a slice would resize the list). The length for `listed` comes from the list
whose cotangent `d` is (the third argument of `add_at_into`), bound as the step starts,
and the items the step removed before that update (`unappended_into`, written
`d.pop()`). A version the step makes of `d` (`dxs_3 = add_at_into(dxs_2, ...)`) is the
same list, and is read as `d`.

The code's own derivative transforms these updates as a user's, so its alias analysis
must see that the list is the loop's own and that its items are not views of it: a
copy before the loop (`copied`, unless one is there), `listed`'s result kind a list
(an item read from it keeps its value when another item is written), no `d, dt =
(d, ZERO)` passing `d` to itself beside another value, and nothing but subscripts and
its updates reading `d` in the step (a helper may return a view).

A vector of floats (`kinds.VECTOR`) is updated the same way, made an array by
`arrayed`, its items zeroed by `d[i] = 0.0` and read as Python numbers
(`d.item(i)`). The check leaves a list as it is, and the updates keep it one, so only
the first step's check can change anything, and what comes into the pullback's loop
is the cotangent of the loop's state at the end of the forward's loop (`loop_caches`
marks the pullback's definition with the state each cotangent it carries is of). So
where the two loops are in no loop, the check is made once, before the pullback's
loop, from the length of that state, taken right after the forward's loop
(`xs_1_end = list_version(xs_1)`), whether or not the steps resize the list, and
also for a list the step only reads and removes items of (the list a generator's
values are appended to, `sum(f(x) for x in xs)`). The cache then no longer holds the
list or its versions (`_unread_dropped`), and the forward's own updates of a vector
(and appends to a list) are written as Python too, where its loop reads it by its
items alone.
"""

import collections

import gast

from ...runtime import mutation, structures
from ...runtime.cotangents import ZERO
from ..analysis import kinds
from ..syntax import nodes
from .items import is_item_index, subscript


def write_inline(statements, bindings, namer, kinds_of):
    """`statements` (a generated forward function's body, after `in_place_lists`) with the
    item reads and updates of each list cotangent that a loop's pullback updates in place
    written as Python (see the module docstring); `kinds_of` gives the kinds of the
    variables, `namer` new names. A second pass writes the forward's updates of the
    lists that the loops' caches no longer hold (`_unread_dropped`) as Python too."""
    for _ in range(2):
        inliner = _Inliner(bindings, namer, kinds_of, nodes.module(list(statements)))
        statements = _with_ends(inliner.block(statements), inliner.ends)
        statements = _unread_dropped(statements, bindings)
    return statements


class _Inliner:
    """The rewrite of one generated function, `root`: `update_names` are the generated
    names of the updates in place it writes as Python."""

    def __init__(self, bindings, namer, kinds_of, root):
        self.bindings = bindings
        self.namer = namer
        self.kinds = kinds_of
        self.loads = nodes.read_counts(root)
        self.update_names = {bindings.name_of(f) for f in _UPDATES} - {None}
        self.vectors = {}  # a vector's or matrix's cotangent (floats, not `ZERO`) -> its rank
        self.checked = set()  # the cotangents made lists or arrays (`check`) before an update
        self.in_loop = 0  # how many loops the statements being rewritten are in
        self.states = {}  # in a loop's pullback: a cotangent -> the state it is of, forward
        self.ends = {}  # a loop's cache -> {a list: `xs_1_end = list_version(xs_1)`}

    def block(self, statements):
        """`statements` rewritten, the loops nested in a loop before it."""
        out = []
        for stmt in statements:
            if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef)):
                looped = not isinstance(stmt, nodes.FunctionDef)
                self.in_loop += looped
                states = self.states
                self.states = getattr(stmt, "states", {}) if not looped else states
                stmt = nodes.replaced(stmt, body=self.block(stmt.body))
                self.in_loop -= looped
                self.states = states
                if isinstance(stmt, nodes.For):
                    stmt, updated, before = self.loop(stmt)
                    out += [self.copy(var, nodes.lineno_of(stmt)) for var in updated
                            if not self.copied_last(var, out)] + before
            elif isinstance(stmt, (nodes.If, nodes.Try)):
                stmt = nodes.with_blocks(stmt, self.block)
            else:
                stmt = self.read(stmt)
            out.append(stmt)
        return out

    def read(self, stmt):
        """`v = item_of(x, i)` as `v = x[i]` where the item is never a view: `x` is a list or
        tuple, or a vector or matrix and `i` the index of a number of it."""
        value = stmt.value if isinstance(stmt, nodes.Assign) else None
        if not (isinstance(value, nodes.Call) and self.bindings.calls(value, mutation.item_of)
                and len(value.args) == 2 and nodes.is_name(value.args[0])):
            return stmt
        x, index = value.args
        kind = self.kinds.get(x.id)
        if kinds.sequence_type(kind) or kinds.rank_of(kind) and is_item_index(
                index, self.kinds, kinds.rank_of(kind)):
            return nodes.replaced(stmt, value=subscript(x, index))
        return stmt

    def loop(self, loop):
        """The loop `loop` with the item reads and updates of each list cotangent it
        updates in place written as Python, and the names of those cotangents."""
        renames = self.versions(loop.body, nodes.stores(loop.target))
        if renames:
            loop = nodes.replaced(loop, body=_renamed(loop.body, renames))
        bound = nodes.stores(loop.target)
        stored = set().union(*(nodes.stores(s) for s in _own(loop.body)))
        checks, updated, before = [], [], []
        for var in sorted(self.updated(loop.body) - bound):
            length = self.length_source(loop.body, var, bound, stored - bound)
            state = self.state_of(loop, var)
            if length is None and state is None:
                if self.all_inline(loop.body, var, _FORWARD_UPDATES) and self.only_indexed(
                        loop.body, var):  # the forward's own list or vector
                    loop = nodes.replaced(loop, body=self.rewritten(loop.body, var))
                continue
            if not self.only_indexed(loop.body, var):  # a helper reads it, maybe a view
                continue
            lineno = nodes.lineno_of(loop)
            kind = self.kinds.get(length[0] if state is None else state)
            if kinds.rank_of(kind):
                self.vectors[var] = kinds.rank_of(kind)  # read by `all_inline`
                if not self.all_inline(loop.body, var, _UPDATES):  # a slice: a view
                    del self.vectors[var]
                    continue
            elif not _numbers(kind):
                continue
            self.checked.add(var)
            loop = nodes.replaced(loop, body=self.rewritten(loop.body, var))
            if state is not None:
                before.append(self.check(var, (self.end_of(loop, state), 0), lineno))
            else:
                checks.append(self.check(var, length, lineno))
            updated.append(var)
        if not checks:
            return loop, updated, before
        return nodes.replaced(loop, body=checks + _renamed(loop.body, {})), updated, before

    def state_of(self, loop, var):
        """The forward's name for the state of the loop whose pullback's loop `loop` carries
        its cotangent `var` (`loop_caches` marks the pullback's definition with them),
        when the two loops are in no loop (a pullback defined in a loop would read the
        names it reads as the loop binds them again); else None. `var` comes into the
        loop as the cotangent of that state at the end of the forward's loop."""
        if self.in_loop or _cache_iterated(loop) is None:
            return None
        return self.states.get(var)

    def end_of(self, loop, state):
        """The name of the length of the forward's list `state` at the end of its loop,
        which the check of its cotangent reads before the pullback's loop `loop`: only
        the first step's check can change anything, since the check leaves a list as
        it is and the updates in place keep it one. It is taken right after the
        forward's loop (`xs_1_end = list_version(xs_1)`, placed by `_with_ends`)."""
        ends = self.ends.setdefault(_cache_iterated(loop), {})
        if state not in ends:
            helper = nodes.name(self.bindings.object("list_version", structures.list_version))
            ends[state] = nodes.assign(self.namer.fresh(state + "_end"), nodes.call(
                helper, [nodes.name(state)]), nodes.lineno_of(loop))
        return nodes.single_target(ends[state])

    def copied_last(self, var, statements):
        """Whether the last of `statements` to assign `var` assigns it a copy (`copied`)."""
        for stmt in reversed(statements):
            if var in nodes.stores(stmt):
                return nodes.single_target(stmt) == var and self.bindings.calls(
                    stmt.value, mutation.copied)
        return False

    def copy(self, var, lineno):
        """`var = copied(var)`: the list the loop updates in place is its own (`ZERO`
        stays `ZERO`, for the step's `listed`), also to the alias analysis of the
        code's own derivative."""
        helper = nodes.name(self.bindings.object("copied", mutation.copied))
        return nodes.assign(var, nodes.call(helper, [nodes.name(var)]), lineno)

    def versions(self, body, bound):
        """`{version: list}`: each name the body binds only to updates in place of one list
        (`dxs_2 = add_at_into(dxs_1, ...)`) or to that list as it is (`dxs_3 = dxs_1`, in
        the branch of an `if` that does not update it), which is then the same list, and
        reads only after that in the body, outside its nested loops and functions: read as
        that list, which the body assigns only so."""
        statements = list(_own(body))
        nested = set().union(*(nodes.names_in(s) for s in statements if isinstance(
            s, (nodes.For, nodes.While, nodes.FunctionDef, nodes.Try))))
        inside = nodes.read_counts(body)
        stores = collections.Counter(n for s in statements for n in nodes.stores(s))
        made = {}  # a name -> the positions of the statements binding it, and their lists
        for position, stmt in enumerate(statements):
            source = self.source(stmt)
            if source is not None:
                made.setdefault(nodes.single_target(stmt), []).append((position, source))
        renames = {}
        for target, bindings in made.items():
            sources = {renames.get(source, source) for _, source in bindings}
            first = bindings[0][0]
            if len(sources) == 1 and target not in sources and len(bindings) == stores[
                    target] and target not in nested and self.loads[target] == inside[
                    target] and not any(target in nodes.reads(s) for s in statements[:first]):
                renames[target] = sources.pop()
        return {version: name for version, name in renames.items()
                if self.only_updated(name, statements, renames, bound)}

    def only_updated(self, name, statements, renames, bound):
        """Whether the body binds list `name` (not bound by the loop, `bound`) only to
        updates in place of it or of its versions (`renames`), one at least a call."""
        group = {name} | {version for version, list_ in renames.items() if list_ == name}
        found = False
        for stmt in statements:
            if name in nodes.stores(stmt):
                source = self.source(stmt, name)
                if source is None or renames.get(source, source) != name:
                    return False
            for member in group & nodes.stores(stmt):
                found = found or self.chain(_assigned(stmt, member), None) is not None
        return found and name not in bound

    def source(self, stmt, target=None):
        """The list a statement `v = update(w, ...)` or `v = w` (or one such item of a
        parallel assignment, for `v` = `target`) binds `v` to, or None."""
        value = _assigned(stmt, target or nodes.single_target(stmt))
        if nodes.is_name(value):
            return value.id
        calls = self.chain(value, None)
        return calls[0].args[0].id if calls else None

    def updated(self, body):
        """The names the loop body updates in place, each assigned in it only by chains
        of updates of itself (`d = add_at_into(without_item_into(d, i), ...)`)."""
        found, refused = set(), set()
        for stmt in _own(body):
            var = nodes.single_target(stmt)
            if var is not None and self.chain(stmt.value, var) is not None:
                found.add(var)
            else:
                refused |= {n for n in nodes.stores(stmt)
                            if not nodes.is_name(_assigned(stmt, n), n)}  # `d, e = (d, x)`
        for stmt in body:
            if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef, nodes.Try)):
                refused |= {n.id for n in nodes.walk(stmt) if isinstance(n, nodes.Name)}
        return found - refused

    def chain(self, value, var):
        """The calls of a chain of in-place updates of `var`, innermost first, or None."""
        calls = []
        while isinstance(value, nodes.Call) and value.args and not value.keywords and (
                nodes.is_name(value.func) and value.func.id in self.update_names):
            calls.append(value)
            value = value.args[0]
        if not calls or not nodes.is_name(value) or var is not None and value.id != var:
            return None
        return calls[::-1]

    def length_source(self, body, var, bound, assigned):
        """`(x, removed)` for `listed`: a list `x` bound as each step starts (`bound`, not
        `assigned` in the body) whose items an `add_at_into` of `var` adds to, when the
        step has removed `removed` items from `var` before it (`unappended_into`), so that
        `var` is the cotangent of a list of `len(x) + removed` items as the step starts.
        None if there is none before an update in an `if` that may resize `var`."""
        removed = 0
        for stmt in body:
            if isinstance(stmt, nodes.If):
                if any(self.resizes(s, var) for s in _own([stmt])):
                    return None
                inner = self.length_source(_own([stmt]), var, bound, assigned)
                if inner is not None:
                    return inner[0], removed
                continue
            for call in self.chain(stmt.value, var) or () if (
                    nodes.single_target(stmt) == var) else ():
                x = self.added_list(call)
                if x is not None and (x in bound or x not in assigned):
                    return x, removed
                removed += self.bindings.calls(call, mutation.unappended_into)
        return None

    def resizes(self, stmt, var):
        """Whether statement `stmt` removes an item of `var` (`unappended_into`)."""
        calls = self.chain(stmt.value, var) if nodes.single_target(stmt) == var else None
        return any(self.bindings.calls(call, mutation.unappended_into) for call in calls or ())

    def added_list(self, call):
        """The name of the list of numbers whose items `add_at_into` call `call` adds to
        at number indices, given as displays; else None."""
        if not self.bindings.calls(call, structures.add_at_into) or len(call.args) != 4:
            return None
        _, gs, x, indices = call.args
        if not (nodes.is_name(x) and isinstance(gs, nodes.Tuple)
                and isinstance(indices, nodes.Tuple) and len(gs.elts) == len(indices.elts)):
            return None
        kind = self.kinds.get(x.id)
        if not all(is_item_index(i, self.kinds, kinds.rank_of(kind)) for i in indices.elts):
            return None
        return x.id if kinds.rank_of(kind) or _numbers(kind) else None

    def rewritten(self, statements, var):
        """`statements` with the reads and updates of the items of list `var` inline."""
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.If):
                out.append(nodes.with_blocks(stmt, lambda block: self.rewritten(block, var)))
            elif nodes.single_target(stmt) == var and self.chain(stmt.value, var):
                out += self.updates(stmt, var)
            else:
                out.append(self.number_read(stmt, var))
        return out

    def number_read(self, stmt, var):
        """`v = var[i]` (or `item_of(var, i)`) as `v = var.item(i)` for the cotangent `var`
        of a vector: a Python number, on which the rest of the step computes faster than
        on a NumPy scalar, and which the alias analysis of the code's derivative knows
        is no view; `item_of(var, i)` as `var[i]` for that of a list of numbers."""
        value = stmt.value if isinstance(stmt, nodes.Assign) else None
        if isinstance(value, nodes.Subscript):
            source, index = value.value, value.slice
        elif isinstance(value, nodes.Call) and self.bindings.calls(value, mutation.item_of):
            source, index = value.args  # a read moved above an update (`in_place_lists`)
        else:
            return stmt
        if var not in self.checked or not (nodes.is_name(source, var) and is_item_index(
                index, self.kinds, self.rank(var))):
            return stmt
        if var not in self.vectors:
            return nodes.replaced(stmt, value=subscript(source, index))
        item = nodes.Attribute(value=nodes.name(var), attr="item", ctx=nodes.LOAD)
        return nodes.replaced(stmt, value=nodes.call(item, [nodes.clone(index)]))

    def updates(self, stmt, var):
        """The statements of the chain of updates `stmt` of `var`: the calls up to the last
        that cannot be written inline, then each update of an item."""
        calls = self.chain(stmt.value, var)
        inline = len(calls)
        while inline and self.inline(calls[inline - 1], var) is not None:
            inline -= 1
        lineno = nodes.lineno_of(stmt)
        out = [nodes.assign(var, calls[inline - 1], lineno)] if inline else []
        for call in calls[inline:]:
            out += [nodes.located(s, lineno) for s in self.inline(call, var)]
        return out

    def all_inline(self, statements, var, updates):
        """Whether `statements` update `var` only by calls of `updates` that can all be
        written as Python."""
        return all(any(self.bindings.calls(call, f) for f in updates)
                   and self.inline(call, var) is not None for call in self._calls(statements, var))

    def rank(self, var):
        """The rank of the vector or matrix `var` is, or whose cotangent it is; else None."""
        return self.vectors.get(var) or kinds.rank_of(self.kinds.get(var))

    def only_indexed(self, statements, var):
        """Whether `statements` read `var` only by its items and to update it: the alias
        analysis of the code's derivative would refuse an update in place of a list or
        vector that the loop's cache holds, or that a helper reads (`written_item` may
        return a view of an array)."""
        indexed = sum((isinstance(n, nodes.Subscript) and nodes.is_name(n.value, var)) or (
            self.bindings.calls(n, mutation.item_of) and nodes.is_name(n.args[0], var)
            and is_item_index(n.args[1], self.kinds, self.rank(var)))
            for s in statements for n in nodes.walk(s))
        chains = sum(nodes.single_target(stmt) == var and self.chain(stmt.value, var) is not None
                     for stmt in _own(statements))
        return nodes.read_counts(statements)[var] == chains + indexed

    def _calls(self, statements, var):
        """The calls of the chains of updates of `var` in `statements`."""
        return [call for stmt in _own(statements) if nodes.single_target(stmt) == var
                for call in self.chain(stmt.value, var) or ()]

    def inline(self, call, var):
        """The Python statements of one update `call` of the list `var`, or None."""
        kind = self.kinds.get(var)
        if self.bindings.calls(call, mutation.with_item_into) and len(call.args) == 3 and (
                kinds.rank_of(kind)):
            return [_set_item(var, call.args[1], nodes.clone(call.args[2]))]
        if self.bindings.calls(call, mutation.appended_into) and len(call.args) == 2 and (
                kinds.sequence_type(kind) is list):
            append = nodes.Attribute(value=nodes.name(var), attr="append", ctx=nodes.LOAD)
            return [nodes.expr(nodes.call(append, [nodes.clone(call.args[1])]))]
        if self.bindings.calls(call, mutation.unappended_into) and len(call.args) == 1 and (
                var in self.checked and var not in self.vectors):
            pop = nodes.Attribute(value=nodes.name(var), attr="pop", ctx=nodes.LOAD)
            return [nodes.expr(nodes.call(pop, []))]
        if self.bindings.calls(call, mutation.without_item_into) and len(call.args) == 2 and (
                is_item_index(call.args[1], self.kinds, self.rank(var))):
            zero = nodes.constant(0.0) if var in self.vectors else nodes.name(
                self.bindings.object("ZERO", ZERO))
            return [_set_item(var, call.args[1], zero)]
        if self.added_list(call) is not None:
            _, gs, _, indices = call.args
            added = {}  # the index, as text -> its index and the cotangents added there
            for g, index in zip(gs.elts, indices.elts):
                added.setdefault(nodes.dump(index), (index, []))[1].append(g)
            out = []
            for index, terms in added.values():
                total = subscript(nodes.name(var), index)
                for g in terms:
                    total = nodes.binop(total, gast.Add(), nodes.clone(g))
                out.append(_set_item(var, index, total))
            return out
        return None

    def check(self, var, length, lineno):
        """`var = listed(var, x)` for the `length_source` `(x, removed)`; `listed(var, x,
        removed)` where items were removed. Its result's kind says it is a list, so the
        alias analysis of the code's own derivative reads an item of it as an item,
        which the step's later updates of the list leave as it was, not as a view."""
        x, removed = length
        if var in self.vectors:
            helper = nodes.name(self.bindings.object("arrayed", mutation.arrayed))
            return nodes.assign(var, nodes.call(helper, [nodes.name(var), nodes.name(x)]),
                                lineno)
        helper = nodes.name(self.bindings.object("listed", mutation.listed))
        args = [nodes.name(var), nodes.name(x)] + ([nodes.constant(removed)] if removed else [])
        return nodes.assign(var, nodes.call(helper, args), lineno)


def _cache_appended(body):
    """`(cache, names)` for a loop body whose own statements append a tuple of names to
    `cache` (`cache.append((a, b, ...))`), else None."""
    for stmt in _own(body):
        value = stmt.value if isinstance(stmt, nodes.Expr) else None
        if isinstance(value, nodes.Call) and isinstance(value.func, nodes.Attribute) and (
                value.func.attr == "append" and nodes.is_name(value.func.value)
                and len(value.args) == 1 and isinstance(value.args[0], nodes.Tuple)
                and all(nodes.is_name(e) for e in value.args[0].elts)):
            return value.func.value.id, [e.id for e in value.args[0].elts]
    return None


def _cache_iterated(stmt):
    """The name of the cache a pullback's loop `stmt` iterates over (`for ... in
    reversed(cache)`), else None."""
    iterated = stmt.iter if isinstance(stmt, nodes.For) else None
    if isinstance(iterated, nodes.Call) and nodes.is_name(iterated.func, "reversed") and len(
            iterated.args) == 1 and nodes.is_name(iterated.args[0]):
        return iterated.args[0].id
    return None


def _with_ends(statements, ends):
    """`statements` with the lengths `ends` maps a loop's cache to (`end_of`) taken right
    after the loop that appends to the cache."""
    out = []
    for stmt in statements:
        if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef)):
            stmt = nodes.replaced(stmt, body=_with_ends(stmt.body, ends))
        elif isinstance(stmt, (nodes.If, nodes.Try)):
            stmt = nodes.with_blocks(stmt, lambda block: _with_ends(block, ends))
        out.append(stmt)
        cache = _cache_appended(stmt.body) if isinstance(stmt, (nodes.For, nodes.While)) else None
        if cache is not None:
            out += ends.get(cache[0], {}).values()
    return out


def _unread_dropped(statements, bindings):
    """`statements` without the values a loop caches (`cache.append((..., v, ...))`) that
    its pullback's loop over the cache (`for ..., v, ... in reversed(cache)`) no longer
    reads: the cache is read by those two alone, at the top of one function. A version
    of a list (`v = list_version(xs)`) that nothing reads then is not taken."""
    loads = nodes.read_counts(nodes.module(list(statements)))
    unread = {}
    for node in nodes.walk(nodes.module(list(statements))):
        cache = _cache_iterated(node)
        if cache is None or not (isinstance(node.target, nodes.Tuple) and all(
                nodes.is_name(e) for e in node.target.elts)):
            continue
        read = nodes.read_counts(nodes.module(list(node.body)))
        names = [e.id for e in node.target.elts]
        dropped = {i for i, n in enumerate(names) if not read[n]}
        if dropped and len(dropped) < len(names) and loads[cache] == 2:
            unread[cache] = (len(names), dropped)
    if not unread:
        return statements
    statements = _dropping(statements, unread)
    return _unread_versions(statements, nodes.read_counts(statements), bindings)


def _unread_versions(statements, loads, bindings):
    """`statements` without the assignments `v = list_version(xs)` of names `v` that
    `loads` says nothing reads."""
    out = []
    for stmt in statements:
        if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef)):
            stmt = nodes.replaced(stmt, body=_unread_versions(stmt.body, loads, bindings))
        elif isinstance(stmt, (nodes.If, nodes.Try)):
            stmt = nodes.with_blocks(stmt, lambda block: _unread_versions(block, loads, bindings))
        elif bindings.calls(getattr(stmt, "value", None), structures.list_version) and (
                nodes.single_target(stmt) is not None and not loads[nodes.single_target(stmt)]):
            continue
        out.append(stmt)
    return out


def _dropping(statements, unread):
    """`statements` with the positions `unread` maps each cache to (with the length of
    its tuples) dropped from the tuples appended to the cache and from the targets of
    the loops over it."""
    out = []
    for stmt in statements:
        if isinstance(stmt, (nodes.For, nodes.While, nodes.FunctionDef)):
            stmt = nodes.replaced(stmt, body=_dropping(stmt.body, unread))
            cache = _cache_iterated(stmt)
            if cache is not None:
                stmt = nodes.replaced(stmt, target=_without(stmt.target, unread.get(cache)))
        elif isinstance(stmt, (nodes.If, nodes.Try)):
            stmt = nodes.with_blocks(stmt, lambda block: _dropping(block, unread))
        elif (appended := _cache_appended([stmt])) is not None:
            stmt = nodes.replaced(stmt, value=nodes.replaced(stmt.value, args=[
                _without(stmt.value.args[0], unread.get(appended[0]))]))
        out.append(stmt)
    return out


def _without(display, dropped):
    """The tuple display or target `display` without the items at the positions of
    `dropped`, `(length, positions)`, when it has `length` items."""
    if dropped is None or len(getattr(display, "elts", ())) != dropped[0]:
        return display
    return nodes.replaced(display, elts=[e for i, e in enumerate(display.elts)
                                         if i not in dropped[1]])


def _renamed(statements, renames):
    """`statements` with the names `renames` maps renamed, without the assignments of a
    name to itself (`d = d`, or the item `d` of `d, e = (d, x)`, which would tell the
    alias analysis of the code's derivative that `e` may hold `d`); a branch left
    empty holds `pass`."""
    out = []
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            stmt = nodes.replaced(stmt, test=nodes.renamed(stmt.test, renames),
                                  body=_renamed(stmt.body, renames) or [nodes.pass_()],
                                  orelse=_renamed(stmt.orelse, renames))
        else:
            stmt = _without_self_assignment(nodes.renamed(stmt, renames))
            if stmt is None:
                continue
        out.append(stmt)
    return out


def _without_self_assignment(stmt):
    """Statement `stmt` without its assignments of a name to itself; None if that is all."""
    if not isinstance(stmt, nodes.Assign) or len(stmt.targets) != 1:
        return stmt
    target, value = stmt.targets[0], stmt.value
    if nodes.is_name(target) and nodes.is_name(value, target.id):
        return None
    if not (isinstance(target, nodes.Tuple) and isinstance(value, nodes.Tuple)
            and len(target.elts) == len(value.elts)):
        return stmt
    pairs = [(t, v) for t, v in zip(target.elts, value.elts)
             if not (nodes.is_name(t) and nodes.is_name(v, t.id))]
    if len(pairs) == len(target.elts):
        return stmt
    if not pairs:
        return None
    if len(pairs) == 1:
        return nodes.replaced(stmt, targets=[pairs[0][0]], value=pairs[0][1])
    return nodes.replaced(stmt, targets=[nodes.replaced(target, elts=[t for t, _ in pairs])],
                          value=nodes.replaced(value, elts=[v for _, v in pairs]))


_FORWARD_UPDATES = (mutation.with_item_into, mutation.appended_into)
_UPDATES = (mutation.without_item_into, structures.add_at_into, mutation.unappended_into,
            *_FORWARD_UPDATES)


def _assigned(stmt, name):
    """The value statement `stmt` assigns to `name`: `name = e`, or the item of a parallel
    assignment `a, name = (x, e)`; None for any other."""
    if not isinstance(stmt, nodes.Assign) or len(stmt.targets) != 1 or name is None:
        return None
    target, value = stmt.targets[0], stmt.value
    if nodes.is_name(target, name):
        return value
    if isinstance(target, nodes.Tuple) and isinstance(value, nodes.Tuple) and len(
            target.elts) == len(value.elts):
        found = [v for t, v in zip(target.elts, value.elts) if nodes.is_name(t, name)]
        return found[0] if len(found) == 1 else None
    return None


def _own(statements):
    """The statements of a loop body, with those of its `if` branches, not of the loops,
    functions and `try` statements in it."""
    for stmt in statements:
        if isinstance(stmt, nodes.If):
            yield from _own(stmt.body)
            yield from _own(stmt.orelse)
        else:
            yield stmt


def _numbers(kind):
    """Whether `kind` is that of a list of numbers."""
    return kinds.sequence_type(kind) is list and kinds.element(kind).shape == "scalar"


def _set_item(var, index, value):
    return gast.Assign(targets=[subscript(nodes.name(var), index, store=True)], value=value,
                       type_comment=None)
