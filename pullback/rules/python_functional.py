"""Python versions of the functional builtins (`registry.implemented_by`): `map`,
`filter`, `divmod`, `functools.reduce` and `partial`, and `itertools`' `accumulate`,
`starmap`, `chain`, `islice`, `pairwise` and `product`.

Each is written with a loop or a comprehension, which pullback differentiates like
the user's code, so the functions passed to them (closures included) get their
derivatives of every order. Those that give an iterator in Python (`lazy`) give a
list here: consumed by `list`, `sum`, `tuple` or a `for`, the same values; a call
whose iterator may be taken twice is refused.
"""

import functools
import itertools
import operator

from pullback.rules.registry import implemented_by


@implemented_by(map, lazy=True)
def map_(fn, *iterables):
    """`map(fn, *iterables)`, as a list."""
    return [fn(*items) for items in zip(*iterables)]


@implemented_by(filter, lazy=True)
def filter_(fn, iterable):
    """`filter(fn, iterable)`, as a list (`fn` None keeps the true items)."""
    if fn is None:
        return [item for item in iterable if item]
    return [item for item in iterable if fn(item)]


_NO_INITIAL = object()


@implemented_by(functools.reduce)
def reduce_(fn, iterable, initial=_NO_INITIAL):
    """`functools.reduce(fn, iterable[, initial])`."""
    items = list(iterable)
    if initial is _NO_INITIAL:
        if not items:
            raise TypeError("reduce() of empty iterable with no initial value")
        total, rest = items[0], items[1:]
    else:
        total, rest = initial, items
    for item in rest:
        total = fn(total, item)
    return total


@implemented_by(itertools.accumulate, lazy=True)
def accumulate_(iterable, func=None, *, initial=None):
    """`itertools.accumulate(iterable, func, initial=initial)`, as a list."""
    step = operator.add if func is None else func
    totals = [] if initial is None else [initial]
    for item in iterable:
        totals.append(item if not totals else step(totals[-1], item))
    return totals


@implemented_by(itertools.starmap, lazy=True)
def starmap_(fn, iterable):
    """`itertools.starmap(fn, iterable)`, as a list."""
    return [fn(*items) for items in iterable]


@implemented_by(itertools.chain, lazy=True)
def chain_(*iterables):
    """`itertools.chain(*iterables)`, as a list."""
    return [item for iterable in iterables for item in iterable]


@implemented_by(itertools.chain.from_iterable, lazy=True)
def chain_from_iterable_(iterables):
    """`itertools.chain.from_iterable(iterables)`, as a list."""
    return [item for iterable in iterables for item in iterable]


@implemented_by(itertools.islice, lazy=True)
def islice_(iterable, *bounds):
    """`itertools.islice(iterable, stop)` or `(iterable, start, stop[, step])`, as a list."""
    return list(iterable)[slice(*bounds)]


@implemented_by(itertools.pairwise, lazy=True)
def pairwise_(iterable):
    """`itertools.pairwise(iterable)`, as a list."""
    items = list(iterable)
    return list(zip(items, items[1:]))


@implemented_by(itertools.product, lazy=True)
def product_(*iterables, repeat=1):
    """`itertools.product(*iterables, repeat=repeat)`, as a list."""
    result = [()]
    for pool in [list(iterable) for iterable in iterables] * repeat:
        result = [items + (item,) for items in result for item in pool]
    return result


@implemented_by(divmod)
def divmod_(a, b):
    """`divmod(a, b)`: Python's `(a // b, a % b)`, for floats too."""
    return a // b, a % b


@implemented_by(functools.partial)
def partial_(fn, *bound, **bound_keywords):
    """`functools.partial(fn, *bound, **bound_keywords)`, as a closure."""

    def applied(*args, **keywords):
        return fn(*bound, *args, **{**bound_keywords, **keywords})

    return applied
