"""Updates in place another name would see: the alias analysis the interpreter runs.

`Updates` follows one function (or loop body) statement by statement, as the
abstract interpreter reads it (`interpret.Interpreter` calls `read` and `track`): which
variables may share memory (`aliases.Aliases`), what each statement updates in
place, what a loop's result and a call's may reach, and where each variable is
read. `check` then refuses an update that a variable read afterwards would see,
since ANF made the update a new value and the gradient would be that of another
program (docs/design.md, section 4.6).

It asks the interpreter, `facts`, what it knows of the function: the kind of
an atom (`kind_of`), a call's callee (`callees`), the line being read
(`lineno`), the tree, its origin and parameters, and how to raise (`error`).
"""

import re

from ...errors import TransformError
from ...rules import registry
from ...runtime import mutation
from ..frontend import flow
from ..syntax import nodes
from . import aliases, kinds


class Updates:
    """The alias analysis of one function, fed by the interpreter `facts`.

    Attributes:
      aliases: the `aliases.Aliases` of the function's variables.
      exits: the state each exit of a loop body returns.
      continuing: the state each exit going on to the next iteration returns (not
        `break`'s or `return`'s, after which no iteration sees an update).
      loop_results: a loop's result -> what each item of its state may reach.
      call_results: the result of a call of a Python function -> the call's arguments
        by parameter, and what the function's result may share of its parameters
        (`result_shares`).
    """

    def __init__(self, facts, names, arrays, outside=()):
        self.facts = facts
        self.aliases = aliases.Aliases(names, arrays, outside)
        self.exits = []
        self.continuing = []  # the states of the exits that go on to the next iteration
        self.loop_results = {}
        self.call_results = {}
        self.pops = set()  # the pairs `popped(xs)` makes: the list updated, and its item
        self.statement_updates = []  # updates in place the statement being read makes
        self.loop_reads = {}  # loop body -> the variables it reads
        self.guarded = True  # whether the code generated checks `guards` (see is_number_item)
        self.loop_refusals = []  # raised by `check` when no other update is refused first
        self.guards = []  # (statement, check, names, error), see `interpret.Summary`:

    def read(self, node, lineno, stmt):
        """The next statement, `stmt` at user line `lineno`, reads the names in `node`."""
        self.aliases.read(_loaded(node), lineno, stmt)

    def updated(self, names):
        """The variables among `names` whose memory an update changed."""
        return self.aliases.updated(names)

    def reached_by_exits(self):
        """For each item of the state a loop body returns, the memory it may reach."""
        return [self.aliases.reached([a.id for a in items if isinstance(a, nodes.Name)])
                for items in zip(*self.exits)]

    def loop(self, target, body, items, inits, result):
        """A loop `target` of `body` over `items` from state `inits`, whose body's
        transformation gave `result`: its updates, and what its result may reach."""
        self.track_loop(target, body, items, inits, result.updated)
        self.loop_results[target] = self.loop_result(target, body, items, inits,
                                                     result.exits)

    def track(self, stmt):
        """Follow which variables may share memory, and where they are read (see
        `aliases`): an update Python makes in place must not be visible elsewhere.
        A loop reads what its body reads when it runs."""
        memory = self.aliases
        if getattr(stmt, "loop", False):
            memory.unknown(stmt.name, stmt.captured)
            self.loop_reads[stmt.name] = stmt.captured
            return
        loaded = _loaded(stmt)
        memory.read(loaded + [v for n in loaded for v in self.loop_reads.get(n, [])],
                    self.facts.lineno, stmt)
        for update in self.statement_updates:
            update.stmt = stmt
            memory.update(update, None)
        self.statement_updates.clear()
        if isinstance(stmt, nodes.FunctionDef):
            memory.unknown(stmt.name, _held_by_function(stmt))
            memory.defined(stmt.name)
        if not isinstance(stmt, nodes.Assign):
            return
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, nodes.Tuple) and value.id in self.loop_results:
            flag, *state = target.elts  # `loop_flag, *state = loop`
            memory.fresh(flag.id)
            for name, (own, held) in zip(state, self.loop_results[value.id]):
                memory.reaching(name.id, own, held)
            return
        if isinstance(target, nodes.Tuple) and value.id in self.pops:
            updated, *items = target.elts  # `xs_1, value = popped`
            memory.same(updated.id, value.id)
            for name in items:
                memory.item(name.id, value.id)
            return
        if isinstance(target, nodes.Tuple):
            share = memory.item if self.is_container(value) else memory.part
            for name in target.elts:
                share(name.id, value.id)
            return
        if self.returns(target.id) and isinstance(value, nodes.Tuple) and getattr(
                self.facts.tree, "loop", False):  # a loop body's exit: (flag, *state)
            self.exits.append(value.elts[1:])
            if _is_flag(value.elts[0], flow.NEXT):
                self.continuing.append(value.elts[1:])
        var, before = getattr(stmt, "updates", (None, None))
        if var is not None and self.is_number_item(stmt, before):
            memory.fresh(target.id)
        elif var is not None and self.facts.kind_of(nodes.name(before)).shape != "scalar":
            stored = _stored(value, []) if isinstance(value, nodes.Call) else []
            memory.update(_update(stmt, before), target.id, stored,
                          getattr(stmt, "written_back", ()))
            if getattr(value, "helper", None) is mutation.popped:
                self.pops.add(target.id)  # the list itself, and an item it held
            self.guard_written_back(stmt)
        elif self.facts.kind_of(target).shape != "scalar":
            self.track_value(target.id, value)

    def guard_written_back(self, stmt):
        """For an update of an item in place (`x[i] += v` on an array item, `x[i][j] = v`),
        the forward checks, before it, that each container on the way holds the item it
        updates only once (`mutation.refuse_if_held_twice`): the analysis follows what a
        container holds, not where, so it takes the update to reach only the item
        written back, which `[a] * 2` or `[a, a]` makes wrong."""
        if not self.guarded:
            return
        chain = getattr(stmt, "written_back", ())
        for container, item in zip(chain, chain[1:]):
            if self.facts.kind_of(nodes.name(item)).shape == "scalar":
                continue
            var = user_name(container)
            self.guard(stmt, mutation.refuse_if_held_twice, [container, item],
                       f"{_update(stmt, chain[-1]).what} updates an item of {var} in place, "
                       f"and {var} holds it, or memory it shares, at another place too ([a] * "
                       f"n holds one object n times): Python would see the change there. "
                       f"Build the items separately, [np.zeros(3) for _ in range(n)], or "
                       f"copy the item first.")

    def guard(self, stmt, check, names, message):
        """Have the forward call `check(*names, error)` before `stmt`, `error` refusing the
        update in place at its user line with `message` (`guards`)."""
        error = TransformError(message, self.facts.origin.filename, stmt.lineno,
                               "update in place")
        self.guards.append((stmt, check, names, error))

    def is_number_item(self, stmt, before):
        """Whether augmented assignment `stmt` of `before` in a loop's body updates the
        item the loop iterates over, or a part of it (`k, t = item` of `enumerate`),
        which the kinds, carrying no rank, cannot tell from a number: then the forward
        checks, before it, that it is a number (`guards`), for which it changes nothing
        but the name; a row of a matrix or an array of a list is refused there, where
        Python would change what the loop iterates over. Not for a loop run as it is
        (`guarded` False), whose code checks nothing."""
        if not (self.guarded and getattr(self.facts.tree, "loop", False)
                and _is_augmented(stmt)):
            return False
        item = self.facts.params[0]
        own = self.aliases.own.get(before, set())
        if not own or not own <= {item, aliases.items(item)}:
            return False
        var, symbol = user_name(before), _symbol(stmt.value.op)
        self.guard(stmt, mutation.refuse_if_shared, [before, before],
                   f"{var} {symbol}= ... updates {var}, an item of what the loop iterates "
                   f"over, in place, and it is not a number here: Python would change what "
                   f"the loop iterates over (a row of a matrix, an array of a list). Write "
                   f"{var} = {var} {symbol} ... to make a new value.")
        return True

    def track_value(self, target, value):
        """The memory `target = value` may share."""
        memory, kind_of = self.aliases, self.facts.kind_of
        if isinstance(value, nodes.Name):
            memory.same(target, value.id)
        elif isinstance(value, nodes.Attribute) and kinds.is_array(kind_of(value.value)):
            if value.attr in aliases.VIEW_ATTRIBUTES:
                memory.view(target, value.value.id)
            else:
                memory.fresh(target)
        elif isinstance(value, nodes.Subscript) and kinds.rank_of(kind_of(
                value.value)) and kind_of(nodes.name(target)).shape == "scalar":
            memory.fresh(target)  # a number
        elif isinstance(value, nodes.Subscript) and kind_of(value.value).shape == "array":
            memory.view(target, value.value.id, not self.by_numbers(value.slice))
        elif isinstance(value, (nodes.Attribute, nodes.Subscript)) and isinstance(
                value.value, nodes.Name):
            certain = not (isinstance(value, nodes.Subscript) and self.by_numbers(value.slice))
            if isinstance(value, nodes.Subscript) and self.is_container(value.value):
                memory.item(target, value.value.id, certain)
            else:
                memory.part(target, value.value.id, certain)
        elif isinstance(value, (nodes.Tuple, nodes.List, nodes.Set, nodes.Dict)):
            memory.container(target, _names(value.values if isinstance(value, nodes.Dict)
                                            else value.elts))
        elif isinstance(value, nodes.Lambda):
            memory.unknown(target, _held_by_function(value))
        elif isinstance(value, nodes.Call) and target in self.loop_results:
            reached = set().union(*(own | held for own, held in self.loop_results[target]))
            memory.reaching(target, set(), reached)
        elif isinstance(value, nodes.Call):
            if not self.track_result(target):
                self.track_call(target, value)
        else:
            memory.fresh(target)

    def keys_of_a_dict(self, fn, value):
        """Whether call `value` of `fn` gives a new list of the keys of the dict it is
        given (`list(d)`, `tuple(d)`, `sorted(d)`), as it takes a dict's items."""
        return len(value.args) == 1 and isinstance(value.args[0], nodes.Name) and _is_dict(
            self.facts.kind_of(value.args[0])) and bool(registry.holds(fn, "items") or (
                registry.holds(fn, "iterates") and not registry.holds(fn, "copy")))

    def track_call(self, target, value):
        memory, callees = self.aliases, self.facts.callees
        receiver = [value.func.value] if callees.is_method(value.func) else []
        args = _names(receiver + value.args + [k.value for k in value.keywords])
        fn = getattr(value, "helper", None) or callees.callee(value.func)
        result = aliases.call_result(fn)
        if result is not None and not args:
            result = "new"  # of constants alone
        # A user's function may return what it captured (a closure made by a factory).
        called = _names([value.func])
        if result == "same":
            memory.same(target, args[0])
        elif result == "view":
            memory.part(target, args[0])
        elif result == "copy" and self.facts.kind_of(nodes.name(target)).shape == "array":
            memory.fresh(target)  # a copy of an array holds numbers, not its values
        elif result == "copy":
            memory.copy(target, args[0], _stored(value, receiver))
        elif self.keys_of_a_dict(fn, value):
            memory.fresh(target)  # `list(d)`, `sorted(d)`: keys, which no update changes
        elif result == "items":
            memory.container(target, args[:1])
        elif result == "new":
            memory.fresh(target)
        else:
            memory.unknown(target, called + args)

    def track_result(self, target):
        """`target` is the result of a call of a Python function whose summary says what
        its result may share of its parameters (`call_results`): the same memory of
        the arguments. False when that is not known (an argument packed into `*args`
        or `**kwargs`, a default used)."""
        if target not in self.call_results:
            return False
        arguments, shares = self.call_results[target]
        mapped = []
        for roots in shares:
            found = set()
            for root in roots:
                if root == RESULT_ITEMS:
                    found.add(aliases.items(target))
                    continue
                var = aliases.items_of(root) if aliases.is_items(root) else root
                arg = arguments.get(var)
                if isinstance(arg, nodes.Constant):
                    continue
                if not isinstance(arg, nodes.Name):
                    return False
                found |= (self.aliases.held if aliases.is_items(root) else self.aliases.own).get(
                    arg.id, set())
            mapped.append(found)
        self.aliases.reaching(target, *mapped)
        return True

    def result_shares(self, value, params):
        """What the function's return value `value` (an atom) may share of its
        parameters `params`: `(own, held)`, the parameters (and `aliases.items` roots
        of them) its own memory and what it holds may be, `RESULT_ITEMS` standing for
        values an unknown call inside made; None when it may share other memory (a
        free variable's, a global's)."""
        if isinstance(value, nodes.Constant):
            return set(), set()
        memory = self.aliases
        if not isinstance(value, nodes.Name) or value.id not in memory.own:
            return None
        local = set(memory.own) - set(params) - set(self.facts.freevars) - memory.outside
        shares = []
        for roots in (memory.own[value.id], memory.held.get(value.id, set())):
            found = set()
            for root in roots:
                var = aliases.items_of(root) if aliases.is_items(root) else root
                if var in params:
                    found.add(root)
                elif var in local and aliases.is_items(root):
                    found.add(RESULT_ITEMS)
                elif var not in local:
                    return None
            shares.append(found)
        return tuple(shares)

    def is_container(self, atom):
        """Whether `atom` is known to be a tuple, list or dict (never an array)."""
        return isinstance(self.facts.kind_of(atom), (kinds.Container, kinds.Items))

    def returns(self, name):
        """Whether `name` holds what the function returns."""
        return nodes.is_name(self.facts.tree.body[-1].value, name)

    def loop_result(self, target, body, items, inits, exits):
        """For each item of the state loop `target` returns, the memory of this
        function's variables it may share and hold: what the body's exits may reach
        (`exits`), its item being part of `items`, its state the initial values `inits`
        (which a loop that runs no iteration returns), and its own values the loop's
        result itself."""
        item, *params = nodes.parameter_names(body.args)
        outer = dict(zip(params, inits))
        outer[item] = items
        exits = [(own | {param}, held | {aliases.items(param)})
                 for (own, held), param in zip(exits, params)]

        def mapped(names, part):
            found = set()
            for name in names:
                var = aliases.items_of(name) if aliases.is_items(name) else name
                atom = outer.get(var, nodes.name(var) if var in body.captured else None)
                if atom is None:
                    found.add(target)
                elif isinstance(atom, nodes.Name):
                    found |= (self.aliases.held.get(atom.id, set()) if var != name
                              else part(atom.id))
            return found

        return [(mapped(own, lambda n: self.aliases.own.get(n, set())),
                 mapped(held, self.aliases.memory)) for own, held in exits]

    def track_loop(self, target, body, items, inits, updated):
        """A loop that updates its state in place updates the initial values: as an
        update of each, at the loop (see `track`). One that updates what it iterates
        over is refused: Python's later items would see the change."""
        item, *params = nodes.parameter_names(body.args)
        if item in updated:
            raise self.facts.error("the loop updates in place the items it iterates over, which "
                             "changes them: update a copy of each instead", "update in place")
        iterated = self.aliases.memory(items.id) if isinstance(items, nodes.Name) else set()
        changed = [(param, init.id) for param, init in zip(params, inits)
                   if param in updated and isinstance(init, nodes.Name)]
        changed += [(var, var) for var in set(updated) & set(body.captured)]
        for param, name in changed:
            reached = self.aliases.own.get(name, set()) | (
                self.aliases.held.get(name, set()) if aliases.items(param) in updated else set())
            if reached & iterated:
                raise self.facts.error(
                    f"the loop updates {user_name(param)} in place while it iterates over "
                    f"it (or what shares its memory): Python's later items would see the "
                    f"change. Iterate over a copy instead", "update in place")
        for param, init in zip(params, inits):
            if param in updated and isinstance(init, nodes.Name):
                var = user_name(param)
                self.aliases.update(aliases.Update(
                    init.id, var, self.facts.lineno, "the loop",
                    f"Update a copy instead: {var} = {var}.copy() before the loop.",
                    items=aliases.items(param) in updated), target)
        for var in sorted(set(updated) & set(body.captured)):  # kept their names
            name = user_name(var)
            # after the loop's reads, as an update a later read would see
            self.statement_updates.append(aliases.Update(
                var, name, self.facts.lineno, "the loop",
                f"Update a copy instead: {name} = {name}.copy() before the loop.",
                items=aliases.items(var) in updated))
            # and through another name (`a = x; a[0] = v`): the body reads `x`, or `a`,
            # as it was before the loop, where Python's next iteration sees the change
            self.loop_refusals.append(self.facts.error(
                f"the loop updates {name} in place through another name, which Python's "
                f"next iteration would see: update {name} by its own name ({name}[...] = "
                f"...), or a copy made in the loop (= {name}.copy())", "update in place"))

    def track_call_updates(self, fn, arguments, updated):
        """A call of `fn` that updates its parameters `updated` in place updates the
        arguments passed for them, which keep their names: `track` applies these
        updates after the call's reads. (A function called by name has no free
        variables of the caller's.)"""
        for param in updated:
            arg = arguments.get(param)
            if isinstance(arg, nodes.Name):
                var = user_name(arg.id)
                self.statement_updates.append(aliases.Update(
                    arg.id, var, self.facts.lineno, f"calling {fn.__qualname__}",
                    f"Pass a copy instead: {fn.__qualname__}({var}.copy()), or make "
                    f"{fn.__qualname__} update a copy of {param}.",
                    items=aliases.items(param) in updated))

    def by_numbers(self, index):
        """Whether subscript `index` is made of integers alone (`a[0]`, `a[i, j]`): the
        item is then a number (which no update changes) when the array has that many
        axes, or the list holds numbers; else a view, or an object the list holds."""
        parts = index.elts if isinstance(index, nodes.Tuple) else [index]
        return all(isinstance(p, nodes.Constant) and type(p.value) is int
                   or isinstance(p, nodes.Name) and self.facts.kind_of(p) is kinds.CONST_SCALAR
                   for p in parts)

    def check(self):
        """Refuse an update in place that a variable read afterwards would see, and,
        in a loop body, one of a value the loop also keeps elsewhere in the state it
        passes to the next iteration. Where the variable shares memory with the one
        updated only if an item of an array is a view, not a number (which the rank of
        the array decides), the forward checks the arrays before the update (`guards`)."""
        self.check_outside()
        for update, name, lineno, stmt in self.aliases.conflicts():
            if name in self.loop_reads:  # a loop's body: the variables it reads are named
                continue
            if self.facts.kind_of(nodes.name(name)).shape == "scalar":
                continue  # a number, which no update in place changes (a list held it)
            reader = user_name(name)
            shared = "" if reader == update.var else ", which shares its memory,"
            error = TransformError(
                f"{update.what} updates {update.var} in place, and {reader}{shared} is "
                f"read at line {lineno}: Python would see the change there. "
                f"{update.remedy}", self.facts.origin.filename, update.lineno, "update in place")
            if not (self.aliases.only_maybe(update, name) or self.through_outside(update)):
                raise error
            # before the update, where both are bound whichever path reaches the read
            self.guards.append((update.stmt or stmt, mutation.refuse_if_shared,
                                [update.name, name], error))
        if self.loop_refusals:
            raise self.loop_refusals[0]
        if not getattr(self.facts.tree, "loop", False):
            return
        for param in self.aliases.updated(self.facts.params[1:]):
            if aliases.is_items(param):
                continue
            position = self.facts.params.index(param) - 1
            for state in self.continuing:
                self.check_carried(param, state[position])
                others = [a.id for i, a in enumerate(state) if i != position
                          and isinstance(a, nodes.Name)]
                other = self.aliases.shared(param, others)
                if other is not None:
                    update = next(u for u in self.aliases.updates
                                  if param in self.aliases.own.get(u.name, ()))
                    raise TransformError(
                        f"the loop updates {update.var} in place and keeps "
                        f"{user_name(other)}, which shares its memory, from one iteration "
                        f"to the next: Python would see the change there. Keep a copy "
                        f"instead (np.copy, list(...))",
                        self.facts.origin.filename, update.lineno, "update in place")

    def check_carried(self, param, value):
        """Refuse a loop body that updates its state `param` (or what it holds) in place
        and passes on, as its next value, `value`, which may share (or hold) the memory
        of what the loop reads from around it or iterates over (`h = p["b"]` after `h +=
        x`, `s = {"h": p["b"]}` after `s["h"] += x`): Python's next iteration would
        change that value, where the derivative changes nothing."""
        if not isinstance(value, nodes.Name) or self.facts.kind_of(value).shape == "scalar":
            return
        roots = {param, aliases.items(param)} & self.aliases.changed
        update = next(u for u in self.aliases.updates if u.changed & roots)
        memory = (self.aliases.own.get(value.id, set()) if param in roots else set()) | (
            self.aliases.held.get(value.id, set()) if aliases.items(param) in roots else set())
        reached = {aliases.items_of(r) if aliases.is_items(r) else r for r in memory}
        other = next((name for name in [self.facts.params[0], *self.facts.freevars]
                      if name in reached), None)
        if other is None:
            return
        var, shared = user_name(param), user_name(other)
        raise TransformError(
            f"{update.what} updates {var} in place, and an iteration ends with {var} sharing "
            f"the memory of {shared}: Python's next iteration would change {shared} there. "
            f"{update.remedy}", self.facts.origin.filename, update.lineno, "update in place")

    def through_outside(self, update):
        """Whether `update` is an augmented assignment of a value that may share a
        module global's memory, which the kinds cannot tell from a number (a value
        read from a global dict or object): the forward checks it when it runs."""
        return _is_augmented(update.stmt) and bool(update.changed & self.aliases.outside)

    def check_outside(self):
        """Refuse an update in place of memory a module global may share: Python changes
        the global for good, and every later reader sees it, where the derivative,
        which never updates what the function did not make, does not. Where the value
        updated may be a number (an item of an array, a value read from a dict or an
        object: `r = config.scale; r *= x`), the forward checks it when it runs
        (`guards`): an augmented assignment of a number changes nothing but the name."""
        for update in self.aliases.updates:
            name = self.aliases.outside_changed(update)
            if name is None:
                continue
            shared = (f"{name}, a global," if name == update.var else
                      f"{update.var}, which may share the memory of the global {name},")
            error = TransformError(
                f"{update.what} updates {shared} in place: Python would change {name} for "
                f"everything that reads it later, the derivative would not. {update.remedy}",
                self.facts.origin.filename, update.lineno, "update in place")
            if not (self.aliases.only_maybe(update, name) or self.through_outside(update)):
                raise error
            self.guards.append((update.stmt, mutation.refuse_if_shared, [update.name, name],
                                error))


RESULT_ITEMS = aliases.items("")
"""In `Updates.result_shares`, the values an unknown call inside the function made,
which its result holds: the caller's `aliases.items` root of the call's result."""


def _is_augmented(stmt):
    """Whether ANF statement `stmt` is an augmented assignment of a name (`x *= e`, not
    `x[i] += e`), which rebinds the name when its value is a number."""
    return (isinstance(stmt, nodes.Assign) and isinstance(stmt.value, nodes.BinOp)
            and not hasattr(stmt, "written_back"))


def _is_flag(atom, flag):
    return isinstance(atom, nodes.Constant) and atom.value == flag


def _loaded(node):
    return [n.id for n in nodes.walk(node) if isinstance(n, nodes.Name)
            and isinstance(n.ctx, nodes.Load)]


def _names(atoms):
    return [a.id for a in atoms if isinstance(a, nodes.Name)]


def user_name(name):
    """The user variable an SSA name is a version of (`h_2` -> `h`)."""
    return re.sub(r"_\d+$", "", name)


def _held_by_function(node):
    """The variables a `def` or `lambda` holds: those it captures, and its defaults."""
    return list(node.captured) + _names(node.args.defaults + [
        d for d in node.args.kw_defaults if d is not None])


def _update(stmt, before):
    """The `aliases.Update` of ANF statement `stmt`, which carries `updates`."""
    var = stmt.updates[0]
    value = stmt.value
    if isinstance(value, nodes.BinOp):
        symbol = _symbol(value.op)
        item = f"{var}[...]" if hasattr(stmt, "written_back") else var
        return aliases.Update(before, var, stmt.lineno, f"{item} {symbol}= ...",
                              f"Write {item} = {item} {symbol} ... to make a new value.",
                              stmt=stmt)
    method = _UPDATE_METHODS[value.helper]
    if hasattr(stmt, "written_back"):  # an item of an item: `x[i][j] = v`, `x[i].append(v)`
        what = f"{var}[...][...] = ..." if method is None else f"{var}[...].{method}(...)"
        return aliases.Update(before, var, stmt.lineno, what,
                              f"Copy the item before updating it: {var}[i] = {var}[i].copy().",
                              stmt=stmt)
    what = f"{var}[...] = ..." if method is None else f"{var}.{method}(...)"
    return aliases.Update(before, var, stmt.lineno, what,
                          f"Update a copy instead: {var} = {var}.copy().", stmt=stmt)


def _symbol(op):
    return nodes.unparse(nodes.binop(nodes.name("a"), op, nodes.name("b"))).split()[1]


def _stored(value, receiver):
    """The names of the arguments that call `value` of a copying update stores into its
    result: those after the container (all of a method's, whose container is its
    `receiver`), but an index or a key (`with_item`, `popped`): a dict's keys are
    hashable, never updated in place, and an index array is copied."""
    if receiver:
        return _names(value.args)
    return _names(value.args[_STORED.get(getattr(value, "helper", None), slice(1, None))])


def _is_dict(kind):
    return isinstance(kind, (kinds.Container, kinds.Items)) and kind.type is dict


_STORED = {mutation.with_item: slice(2, None), mutation.popped: slice(0, 0)}

_UPDATE_METHODS = {mutation.with_item: None, mutation.appended: "append",
                   mutation.extended: "extend", mutation.popped: "pop"}
