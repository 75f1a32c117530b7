"""Updates of arrays, lists and dicts (see `pullback.mutation`).

The overwritten item's cotangent is zeroed (seed 000: "destructive assignment
necessitates zeroing of a sensitivity"); the value written gets it instead.
"""

import numpy as np

from pullback.compiler.analysis.kinds import (
    ANY,
    CONST,
    Container,
    Items,
    element,
    join,
    sequence,
    vector_or_array,
)
from pullback.rules.registry import adjoint, d, t
from pullback.runtime import mutation
from pullback.runtime.iteration import like_items
from pullback.runtime.mutation import (
    last_item,
    unappended,
    unpop,
    unpop_default,
    without_item,
    written_item,
)
from pullback.runtime.structures import unconcat, unindex
from pullback.runtime.tangents import dense, repopped, shaped, unrounded


def _updated_kind(x, index, value):
    if isinstance(x, Container) and x.type is not dict:
        return Container(x.type, x.keys, tuple(join(k, value) for k in x.items),
                         x.active or value.active)
    if isinstance(x, Items):
        return Items(join(x.element, value), x.type)
    if x.shape == "array":  # writing into an array keeps its shape and dtype
        return vector_or_array(x.active or value.active, x.rank) if x.active or (
            value.active) else x
    return join(x, value)


def _appended_kind(items, value):
    if isinstance(items, Container):
        return sequence(list, items.items + (value,))
    return Items(join(element(items), value), list)


@adjoint(mutation.with_item, mutation.with_item_into, result=_updated_kind, copy=True)
def with_item(z, x, index, value):
    d[x] = without_item(d[z], index)
    d[value] = written_item(d[z], index, value, z)
    t[z] = unrounded(mutation.with_item(shaped(t[x], x), index, dense(t[value], value)), z)


@adjoint(mutation.appended, mutation.appended_into, result=_appended_kind, copy=True)
def appended(z, items, value):
    d[value] = last_item(d[z])
    d[items] = unappended(d[z])
    t[z] = mutation.appended(shaped(t[items], items), t[value])


@adjoint(mutation.extended, result=lambda items, values: Items(join(element(items),
                                                                    element(values)), list),
         copy=True)
def extended(z, items, values):
    parts = unconcat(d[z], items, values)
    d[items] = parts[0]
    d[values] = like_items(parts[1], values)
    t[z] = mutation.extended(shaped(t[items], items), shaped(t[values], values))


def _popped_kind(items, index=None, default=None):
    """The kind of `popped(items, index[, default])`: the list's, or the dict's, rest and
    the value taken."""
    value = element(items) if default is None else join(element(items), default)
    if isinstance(items, Container) and items.type is dict or not isinstance(
            items, (Container, Items)):
        return sequence(tuple, [ANY if items.active else CONST, value])
    return sequence(tuple, [Items(element(items), list), value])


@adjoint(mutation.popped, result=_popped_kind)
def popped(z, items, index=-1, default=None):
    d[items] = unpop(d[z], items, index)
    d[default] = unpop_default(d[z], items, index)
    t[z] = repopped(t[items], t[default], items, index)


@adjoint(mutation.item_of, view=True, linear=True, indexed=(0,))
def item_of(z, x, index):
    d[x] = unindex(d[z], x, index)


@adjoint(mutation.copied, result=lambda x: x, linear=True, copy=True)
def copied(z, x):
    d[x] = d[z]


@adjoint(mutation.listed, result=lambda g, x, more=None: Items(element(g), list), linear=True,
         same=True, structural=(1,))
def listed(z, g, x, more=0):
    d[g] = d[z]


@adjoint(mutation.arrayed, result=lambda g, x: vector_or_array(g.active, x.rank), linear=True,
         same=True, structural=(1,))
def arrayed(z, g, x):
    d[g] = d[z]


@adjoint(np.copy, np.ndarray.copy, list.copy, dict.copy, result=lambda x, *options: x,
         copy=True)
def copy(z, x, order="K", subok=False):
    d[x] = d[z]
