"""Iterators Python runs lazily, which pullback runs where they are made: refused where
the two would differ.

ANF makes a generator expression `(e for x in xs)` the list of its items where it is
written, as it does a list comprehension; a generator function, run to its end when
called (`generators.py`), and `map`, `filter`, `itertools.starmap` and `accumulate`
(`rules/python_functional.py`) give lists too. Python computes each item when it is
taken, once: a name rebound in between (`k = 2.0`), a value updated in place (`h +=
1.0`, `l.append(v)`) changes the items still to come, and a second pass sees none.

A generator expression, whose items read names as they are computed, must be taken
whole, once, where it is written: passed to a consumer, unpacked (`a, b = ...`) or
yielded from, perhaps through `zip`, `enumerate`, `map` or `filter` or as the
iterable of a comprehension taken so, or assigned to a name the next statement alone
reads so::

    sum(x * k for x in xs)
    terms = (f(x) for x in xs)
    total = sum(terms)

A consumer is a builtin taking every item (`sum`, `min`, `max`, `list`, `tuple`,
`sorted`, `set`, `frozenset`, `dict`, `any`, `all`), `math.fsum`, `math.prod`,
`functools.reduce` or `str.join`. The other iterators, whose functions receive what
they read as arguments (a closure's rebound names and the updates of what they read
are refused elsewhere, `anf._ClosureUses` and `analysis/updates.py`), must be taken
once: used where they are made (by a consumer, a `for` loop or a comprehension), or
assigned to a name read once, so, outside any loop or function the assignment is not
in. Anywhere else (kept and taken twice, passed to a Python function, which may take
it twice) they are refused at their line, naming what to write instead.
"""

import builtins
import collections
import inspect

from ...errors import unsupported
from ...rules import registry
from ..syntax import nodes
from . import late_binding

CONSUMERS = frozenset({"sum", "min", "max", "list", "tuple", "sorted", "set", "frozenset",
                       "dict", "any", "all", "fsum", "prod", "reduce", "join"})
"""The last part of the name of a call that takes every item of its iterable argument."""

PASSING = frozenset({"zip", "enumerate", "map", "filter"})
"""Builtins giving an iterator over their iterable arguments' items, taken as it is."""


def check_lazy_iterators(tree, origin):
    """Refuse each generator expression of FunctionDef `tree` (from `origin`) not taken
    whole, once, where it is written, and each other iterator pullback makes a list
    that may be taken twice (see the module docstring). Not in generated code, which
    reads an iterator it passed on only for its structure (`unzip(g, (it, xs))`)."""
    if origin.helpers:
        return
    parents = {child: node for node in nodes.walk(tree)
               for child in nodes.iter_child_nodes(node)}
    reads = collections.defaultdict(list)  # name -> where it is read
    for node in nodes.walk(tree):
        if isinstance(node, nodes.Name) and isinstance(node.ctx, nodes.Load):
            reads[node.id].append(node)
    generators = _generator_functions(tree)
    local = set(nodes.store_counts(tree)) | {p.id for p in nodes.parameters(tree.args)}
    for node in nodes.walk(tree):
        if isinstance(node, nodes.GeneratorExp) and not _consumed_at_once(node, parents,
                                                                          reads):
            raise unsupported(
                "a generator expression not consumed where it is written", node, origin,
                "Python computes its items when they are taken, later; write a list "
                "comprehension [...] instead, or pass the generator to sum(), list(), "
                "min() or max() where it is made")
        if isinstance(node, nodes.Call) and _is_lazy(node, origin, generators, local) and not (
                _taken_once(node, parents, reads)):
            raise unsupported(
                f"an iterator of {nodes.unparse(node.func).strip()}(...) that may be taken "
                "twice", node, origin,
                "Python's iterator gives its items once, pullback's list every time; "
                "make it a list where it is made (list(...)) to take it again")


def _consumed_at_once(generator, parents, reads):
    """Whether `generator` is taken whole where it is made: by a consumer, or assigned to
    a name that the next statement alone reads, so, outside any loop it is not in."""
    node, parent = _outermost(generator, parents)
    if _is_consumer_argument(node, parent) or isinstance(
            parent, nodes.comprehension) and parent.iter is node:
        return True  # a consumer's argument, or the iterable of a list (set, dict) comprehension
    name = _assigned_name(node, parent)
    if name is None or len(reads[name]) != 1:
        return False
    block = _block_of(parent, parents)
    position = block.index(parent)
    read = reads[name][0]
    return (position + 1 < len(block) and any(n is read for n in nodes.walk(block[position + 1]))
            and _is_consumer_argument(*_outermost(read, parents))
            and _repeating(read, parents) is _repeating(parent, parents))


def _taken_once(value, parents, reads):
    """Whether the iterator `value` is taken once: where it is made (by a consumer, a
    `for` loop or a comprehension, perhaps through `zip`...), or by the one read of the
    name it is assigned to, in the same loop and function, taken so in turn."""
    node, parent = _outermost(value, parents)
    if _is_consumer_argument(node, parent) or isinstance(
            parent, (nodes.comprehension, nodes.For)) and parent.iter is node:
        return True
    name = _assigned_name(node, parent)
    if name is None or len(reads[name]) != 1:
        return False
    read = reads[name][0]
    return _repeating(read, parents) is _repeating(parent, parents) and _taken_once(
        read, parents, reads)


def _outermost(node, parents):
    """`(node, parent)` after climbing from `node` through calls passing its items on
    (`zip`, `enumerate`...) and through generator expressions iterating over it: the
    value its items reach, and where that value is used."""
    while True:
        parent = parents.get(node)
        if isinstance(parent, nodes.Call) and node in parent.args and _callee(parent) in PASSING:
            node = parent
        elif isinstance(parent, nodes.comprehension) and parent.iter is node and isinstance(
                parents.get(parent), nodes.GeneratorExp):
            node = parents[parent]
        else:
            return node, parent


def _repeating(node, parents):
    """The innermost loop, comprehension or function whose body holds `node` (run again
    and again), or None: not the iterable of a `for`, nor the first iterable of a
    comprehension, which run once."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, (nodes.While, nodes.FunctionDef, nodes.Lambda)) or (
                isinstance(parent, nodes.For) and child is not parent.iter):
            return parent
        if isinstance(parent, nodes.comprehension) and not (
                child is parent.iter and parents[parent].generators[0] is parent):
            return parents[parent]
        if isinstance(parent, (nodes.ListComp, nodes.SetComp, nodes.DictComp,
                               nodes.GeneratorExp)) and not isinstance(child, nodes.comprehension):
            return parent
        child, parent = parent, parents.get(parent)
    return None


def _assigned_name(node, parent):
    """The name `parent` assigns `node` to (`name = node`), else None."""
    if isinstance(parent, nodes.Assign) and len(parent.targets) == 1 and nodes.is_name(
            parent.targets[0]) and parent.value is node:
        return parent.targets[0].id
    return None


def _is_consumer_argument(node, parent):
    """Whether `node` is taken whole by `parent`: an argument of a consumer, the value
    unpacked into names (`a, b = node`) or yielded from (`yield from node`)."""
    if isinstance(parent, nodes.YieldFrom):
        return True
    if isinstance(parent, nodes.Assign) and parent.value is node:
        return isinstance(parent.targets[0], (nodes.Tuple, nodes.List))
    return isinstance(parent, nodes.Call) and node in parent.args and (
        _callee(parent) in CONSUMERS)


def _callee(call):
    """The last part of the called name (`sum`, `fsum` of `math.fsum`), or None."""
    if nodes.is_name(call.func):
        return call.func.id
    return call.func.attr if isinstance(call.func, nodes.Attribute) else None


def _is_lazy(call, origin, generators, local):
    """Whether `call` makes an iterator Python runs lazily and pullback as a list: a call
    of a generator function (one of `generators` it defines, or a global one), of
    `map`, `filter`, `itertools.starmap` or `accumulate` (not of a `local` name)."""
    if nodes.is_name(call.func) and call.func.id in generators:
        return True
    path = nodes.dotted_path(call.func)
    if path is None:
        return False
    head, *rest = path.split(".")
    if head in local:
        return False
    found = origin.globals.get(head, getattr(builtins, head, None))
    for part in rest:
        found = getattr(found, part, None)
    return bool(registry.holds(found, "lazy")) or inspect.isgeneratorfunction(found)


def _generator_functions(tree):
    """The names of the generator functions `tree` defines."""
    return {node.name for node in nodes.walk(tree)
            if node is not tree and late_binding.yields(node)}


def _block_of(stmt, parents):
    """The list of statements holding `stmt`."""
    parent = parents[stmt]
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and stmt in block:
            return block
    raise AssertionError(stmt)
