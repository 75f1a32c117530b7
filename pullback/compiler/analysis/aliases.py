"""Which variables may share memory, so that an update Python makes in place is
seen wherever Python would see it.

ANF turns updates into new values: `x_1 = with_item(x, i, v)` for
`x[i] = v`, `x_1 = x + e` for `x += e` on an array. Python changes the object
instead, and every other name for it (`y = x`, a view `x[0]`, a list holding
it) sees the change. The two agree unless such a name is read after the
update: then the gradient pullback computes is not that of what Python runs,
and the reverse pass refuses the function.

`Aliases` follows one function (or loop body) in the order it runs: each
variable's storage (the variables whose values it may share memory with), the
updates, and where each variable is read.
"""

import collections
import dataclasses

from ...rules import registry

VIEW_ATTRIBUTES = ("T", "mT", "real", "imag", "flat", "base")
"""Attributes of an array that are views of it (the others, like `shape`, are new values)."""


@dataclasses.dataclass
class Update:
    """An update in place of `name` (its version before), of the user's variable
    `var`, at user line `lineno`.

    `what` describes it (`x[...] = ...`), `remedy` says how to avoid it. `stmt` is the
    ANF statement making it, where a run-time check of it goes, when it is one.
    `items`: it may also change, in place, the values `name` holds (a function or loop
    that updates an item of its parameter).
    """

    name: str
    var: str
    lineno: int
    what: str
    remedy: str
    position: int = 0
    affected: list = dataclasses.field(default_factory=list)
    path: tuple = ()
    changed: set = dataclasses.field(default_factory=set)
    stmt: object = None
    items: bool = False


def call_result(fn):
    """What a call of `fn` returns, as far as its spec says: "same" (its first argument
    itself), "view" (a view of its first argument), "copy" (a new container holding what
    its first argument holds), "items" (a new container of its first argument's items:
    for an array, views of its rows), "new" (a new value holding nothing of its
    arguments: a non-differentiable function's, or a result of a kind its rule names),
    or None when it may be, or hold, any of its arguments."""
    if fn is None:
        return None
    rule = registry.rule_for(fn)
    if rule is not None:
        for fact in ("same", "view", "copy", "items"):
            if registry.holds(fn, fact):
                return fact
    if registry.is_nondifferentiable(fn) or rule is not None and isinstance(rule.result, str):
        return "new"
    return None


class Aliases:
    """The memory, updates and reads of one function, in the order it runs.

    Each variable has memory of its own (`own`: the memory an update of it
    changes, which a view shares with the array it views) and memory it holds
    (`held`: what a list or tuple refers to). Both are sets of roots: variables,
    and `items(name)` for the values a parameter (or a call's result) holds, which
    an update of the container itself (`xs[i] = v`) does not change.

    Args:
      names: the variables the function starts with (its parameters and free
        variables), each with memory of its own.
      arrays: those of them known to be arrays, which hold no other values.
      outside: the module globals it reads that an update could change, each with
        memory of its own, which no update may change (`outside_changed`).
    """

    def __init__(self, names, arrays=(), outside=()):
        self.own = {name: {name} for name in [*names, *outside]}
        self.held = {name: set() if name in arrays else {items(name)}
                     for name in [*names, *outside]}
        self.outside = {root for name in outside for root in (name, items(name))}
        self.reads = collections.defaultdict(list)  # name -> [(position, line, path, stmt)]
        self.uncertain = {}  # name -> the memory it shares only if it is not a number:
        #                      an item of an array of unknown rank, or of a list
        self.updates = []
        self.changed = set()
        self.position = 0
        self.path = ()  # the branches the statement being read is in: (branch, side), ...
        self.branches = 0

    def read(self, names, lineno, stmt):
        """The next statement, `stmt` at user line `lineno`, reads `names`."""
        self.position += 1
        for name in names:
            self.reads[name].append((self.position, lineno, self.path, stmt))

    def branch(self):
        """The first branch of an `if` starts: the state before it, for `other_branch`."""
        self.branches += 1
        self.path += ((self.branches, 0),)
        return _copied(self.own), _copied(self.held)

    def other_branch(self, before):
        """The other branch starts, from the state `before` the `if`; returns the state
        after the first, for `merge`."""
        after = self.own, self.held
        self.own, self.held = _copied(before[0]), _copied(before[1])
        self.path = self.path[:-1] + ((self.path[-1][0], 1),)
        return after

    def merge(self, other):
        """After the `if`: a variable may share what it shares after either branch."""
        for mine, theirs in zip((self.own, self.held), other):
            for name, memory in theirs.items():
                mine.setdefault(name, set()).update(memory)
        self.path = self.path[:-1]

    def memory(self, name):
        """All the memory `name` may reach."""
        return self.own.get(name, set()) | self.held.get(name, set())

    def reached(self, names):
        """`(own, held)`: the memory any of `names` may share, and that it may hold."""
        return (set().union(*(self.own.get(n, set()) for n in names)),
                set().union(*(self.held.get(n, set()) for n in names)))

    def _set(self, target, own, held):
        self.own.setdefault(target, set()).update(own)
        self.held.setdefault(target, set()).update(held)

    def fresh(self, target):
        """`target` is a new value (an arithmetic result)."""
        self._set(target, {target}, set())

    def same(self, target, source):
        """`target` is `source` (a copy of the reference)."""
        self._set(target, self.own.get(source, set()), self.held.get(source, set()))
        if source in self.uncertain:
            self.uncertain.setdefault(target, set()).update(self.uncertain[source])

    def view(self, target, source, certain=True):
        """`target` is a view of array `source`; unless `certain`, it may be a number
        instead (an item, when `source` has one axis)."""
        self._set(target, self.own.get(source, set()), set())
        if not certain:
            self.uncertain.setdefault(target, set()).update(self.own.get(source, set()))

    def part(self, target, source, certain=True):
        """`target` is part of `source`: an item, an attribute or a view; unless
        `certain`, it may be a number instead (an item of a vector or of a list)."""
        self._set(target, self.memory(source), self.held.get(source, set()))
        if not certain:
            self.uncertain.setdefault(target, set()).update(self.memory(source))

    def item(self, target, source, certain=True):
        """`target` is an item of `source`, a container (never an array): it shares
        what `source` holds, not `source`'s own memory, which `source[i] = v` changes.
        Unless `certain`, it may be a number."""
        held = self.held.get(source, set())
        self._set(target, held, held)
        if not certain:
            self.uncertain.setdefault(target, set()).update(held)

    def container(self, target, items):
        """`target` is a new container holding `items`."""
        self._set(target, {target}, set().union(*map(self.memory, items)))

    def copy(self, target, source, added=()):
        """`target` is a new container holding what `source` holds, and the values
        `added` (`appended(xs, v)`)."""
        self._set(target, {target}, self.held.get(source, set()).union(
            *map(self.memory, added)))

    def reaching(self, target, own, held):
        """`target` is a new value that may share the memory `own` and hold `held` (sets
        of root variables: an item of a loop's result, see `updates.Updates.loop_result`)."""
        self._set(target, {target} | own, held)

    def unknown(self, target, sources):
        """`target` may be, or hold, any of `sources` (a call of a user's function, or
        a closure's free variables). A source not defined yet (a function `def`ined
        later, which a closure may call) is held by its name, which `defined` replaces
        with its memory once it is."""
        reached = set().union(*map(self.memory, sources))
        reached |= {source for source in sources if source not in self.own}
        self._set(target, {target} | reached, reached | {items(target)})

    def defined(self, name):
        """`name` has just been defined: the variables holding it by its name (closures
        made before it, `unknown`) hold its memory."""
        memory = self.memory(name)
        for var in self.own:
            if var != name and name in self.own[var]:
                self.own[var] |= memory
            if var != name and name in self.held.get(var, ()):
                self.held[var] |= memory

    def update(self, update, new, stored=(), exempt=()):
        """`new` is `update.name` updated in place, now also holding `stored`; the
        variables `exempt` are about to be replaced with their updated values. With
        `new` None the updated value keeps its name (a function called with it
        updates its parameter), and reading that name afterwards sees the update."""
        changed = self.own.get(update.name, set()) | (
            self.held.get(update.name, set()) if update.items else set())
        kept = () if new is None else (update.name, new)
        update.affected = sorted(name for name in self.own
                                 if self.memory(name) & changed
                                 and name not in (*kept, *exempt))
        update.position = self.position
        update.path = self.path
        update.changed = set(changed)
        self.updates.append(update)
        self.changed |= changed
        if new is not None:
            self._set(new, changed, self.held.get(update.name, set()) | set().union(
                *map(self.memory, stored)))

    def updated(self, names):
        """The variables among `names` whose own memory, or what they held to begin
        with, an update changed; each followed by its `items` root when what it held
        changed (then a caller's argument for it changes what it holds)."""
        found = []
        for name in names:
            if name in self.changed or items(name) in self.changed:
                found.append(name)
            if items(name) in self.changed:
                found.append(items(name))
        return found

    def conflicts(self):
        """`(update, variable, line, statement)` for each variable read (by that
        statement, at that user line) after an update of memory it reaches, on a path
        through both (not in the other branch of an `if` than the update's)."""
        for update in self.updates:
            for name in update.affected:
                for position, lineno, path, stmt in self.reads[name]:
                    if position > update.position and _on_one_path(path, update.path):
                        yield update, name, lineno, stmt
                        break

    def only_maybe(self, update, name):
        """Whether `name` may reach memory `update` changed through an item that may be a
        number (`view` or `part`, not `certain`), or the value updated may itself be
        such an item (`s = x[0]; s += 1.0` changes nothing when `x` is a vector): then
        only running tells."""
        maybe = self.uncertain.get(name, set()) | self.uncertain.get(update.name, set())
        return bool(maybe & update.changed)

    def outside_changed(self, update):
        """The first module global (`outside`) whose memory `update` may change, or None."""
        hit = update.changed & self.outside
        return min(items_of(r) if is_items(r) else r for r in hit) if hit else None

    def shared(self, name, others):
        """The first of `others` that may reach memory of `name`'s own, or that it
        holds and an update changed, or None."""
        mine = self.own.get(name, set()) | (self.held.get(name, set()) & self.changed)
        return next((other for other in others if other != name
                     and mine & self.memory(other)), None)


def items(name):
    """The root standing for the values variable `name` holds when it starts (a
    parameter) or is made (a call's result), as far as they are not known."""
    return f"{name}[]"


def is_items(root):
    """Whether `root` is an `items` root; `items_of(root)` is then its variable."""
    return root.endswith("[]")


def items_of(root):
    """The variable whose held values `items` root `root` stands for."""
    return root[:-2]


def _copied(memory):
    return {name: set(reached) for name, reached in memory.items()}


def _on_one_path(path, other):
    """Whether statements in the branches `path` and `other` may both run: no `if` has
    one in a branch and the other in its other branch."""
    sides = dict(path)
    return all(sides.get(branch, side) == side for branch, side in other)
