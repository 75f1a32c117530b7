"""Python's builtins over iterables: making, reordering and reducing the items.

A loop over `zip(...)`, `enumerate(...)`, `reversed(...)` or `d.items()` hands
their rule the list of the cotangents of the items it took (see
`pullback.iteration`); the rule sends each part back to the argument it came
from. Their tangents are the lists of the items' tangents, made by the
transposes of those maps (`zipped` for `zip`, `rereverse` for `reversed`, ...),
given the primal where they need the number of items.
"""

import math

from pullback.compiler.analysis.kinds import (
    ANY,
    CONST,
    CONST_SCALAR,
    Container,
    Items,
    element,
    iterated,
    join,
    promote,
    sequence,
)
from pullback.rules.registry import adjoint, d, t
from pullback.runtime.cotangents import ZERO, unbroadcast
from pullback.runtime.iteration import (
    item_cotangents,
    like_items,
    reextremum,
    reitems,
    rereverse,
    resort,
    spread,
    unextremum,
    unextremum_default,
    unitems,
    unreverse,
    unsort,
    unspread,
    unzip,
    zipped,
)
from pullback.runtime.structures import reget, remapping, unget, unget_default, unmapping


def _extremum_kind(*values, key=None, default=None):
    if len(values) == 1:
        return iterated(values[0]) if default is None else join(iterated(values[0]), default)
    result = None
    for kind in values:
        result = join(result, kind)
    return result


@adjoint(zip, result=lambda *iterables: Items(sequence(tuple, map(iterated, iterables))))
def zip_(z, *iterables, strict=False):
    d[iterables] = unzip(d[z], iterables)
    t[z] = zipped(t[iterables], iterables)


@adjoint(enumerate, result=lambda iterable, start=None: Items(
    sequence(tuple, [CONST_SCALAR, iterated(iterable)])))
def enumerate_(z, iterable, start=0):
    d[iterable] = unzip(d[z], (None, iterable))[1]
    t[z] = zipped((ZERO, t[iterable]), (None, iterable))


@adjoint(reversed, result=lambda sequence_: Items(iterated(sequence_)))
def reversed_(z, sequence_):
    d[sequence_] = unreverse(d[z], sequence_)
    t[z] = rereverse(t[sequence_], sequence_, sequence_)


@adjoint(list, result=lambda iterable=CONST: Items(iterated(iterable), list), items=True)
@adjoint(tuple, result=lambda iterable=CONST: Items(iterated(iterable), tuple), items=True)
def to_sequence(z, iterable=(), /):
    d[iterable] = like_items(d[z], iterable)
    t[z] = item_cotangents(t[iterable], z, iterable)


@adjoint(dict.items, result=lambda mapping: Items(sequence(tuple, [CONST, element(mapping)])))
def dict_items(z, mapping):
    d[mapping] = unitems(d[z], mapping, 1)
    t[z] = reitems(t[mapping], mapping, mapping, 1)


@adjoint(dict.values, result=lambda mapping: Items(element(mapping)))
def dict_values(z, mapping):
    d[mapping] = unitems(d[z], mapping, None)
    t[z] = reitems(t[mapping], mapping, mapping, None)


@adjoint(dict.get, result=lambda mapping, key, default=CONST: join(element(mapping), default))
def dict_get(z, mapping, key, default=None, /):
    d[mapping] = unget(d[z], mapping, key)
    d[default] = unget_default(d[z], mapping, key)
    t[z] = reget(t[mapping], mapping, key) + unget_default(t[default], mapping, key)


@adjoint(sum, result=lambda iterable, start=CONST_SCALAR: promote([iterated(iterable), start]),
         iterates=True)
def sum_(z, iterable, start=0):
    d[iterable] = spread(d[z], iterable)
    d[start] = unbroadcast(d[z], start)
    t[z] = unspread(t[iterable], z, iterable) + t[start]


@adjoint(math.fsum, result="scalar", iterates=True)
def fsum(z, seq, /):
    d[seq] = spread(d[z], seq)
    t[z] = unspread(t[seq], z, seq)


@adjoint(max, min, result=_extremum_kind, iterates=True)
def extremum(z, *values, key=None, default=None):
    d[values] = unextremum(d[z], values, z)
    d[default] = unextremum_default(d[z], values)
    t[z] = reextremum(t[values], values, z) + unextremum_default(t[default], values)


@adjoint(sorted, result=lambda iterable, key=None, reverse=None: Items(iterated(iterable), list),
         iterates=True)
def sorted_(z, iterable, key=None, reverse=False):
    d[iterable] = unsort(d[z], iterable, z)
    t[z] = resort(t[iterable], iterable, z)


@adjoint(dict, result=lambda source=CONST: source if isinstance(source, Container) and (
    source.type is dict) else ANY, copy=True, iterates=True)
def to_dict(z, source=()):
    d[source] = unmapping(d[z], source)
    t[z] = remapping(t[source], source)
