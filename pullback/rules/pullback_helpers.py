"""pullback's own helpers, so that derivatives can be differentiated again.

Generated code calls these linear maps on cotangents; each rule is the map's
transpose (the `re...` map of an `un...` map and back), or the identity for the
helpers that only convert a value.
"""

import numpy as np

from pullback import api
from pullback.compiler import transform
from pullback.rules.registry import adjoint, d, declare, t
from pullback.runtime import (
    calls,
    cotangents,
    deferred,
    dispatch,
    iteration,
    loops,
    mutation,
    records,
    structures,
    tangents,
    terms,
)
from pullback.runtime.calls import by_argument as by_argument_
from pullback.runtime.calls import by_parameter as by_parameter_
from pullback.runtime.calls import (
    extend_environment,
    join_cotangents,
    place,
    restrict_environment,
    with_defaults,
    without_defaults,
)
from pullback.runtime.calls import pick as pick_
from pullback.runtime.calls import split_cotangents as split_cotangents_
from pullback.runtime.cotangents import (
    ZERO,
    add_all,
    fan_out,
    product_of_others_adjoint,
    rebroadcast,
    reshape_like,
    tensordot_left,
    tensordot_right,
    unbroadcast,
)
from pullback.runtime.iteration import (
    item_cotangents,
    like_items,
    reextremum,
    reitems,
    rereverse,
    resort,
    rezip,
    spread,
    unextremum,
    unextremum_default,
    unitems,
    unreverse,
    unsort,
    unspread,
    unzip,
)
from pullback.runtime.loops import reiterate, unreiterate
from pullback.runtime.mutation import (
    last_item,
    last_item_adjoint,
    reappended,
    repop,
    repop_default,
    unappended,
    unpop,
    unpop_default,
    without_item,
    written_item,
    written_item_adjoint,
)
from pullback.runtime.records import refield, rerecord, unfield, unrecord
from pullback.runtime.structures import (
    indexed_all,
    merged,
    rearray,
    reconcat,
    reconcatenate,
    redict,
    reget,
    remapping,
    repack,
    rerepeated,
    reroll,
    restack,
    restar,
    unarray,
    uncast,
    unconcat,
    unconcatenate,
    undict,
    unget,
    unget_default,
    unindex_all,
    unmapping,
    unmerged_left,
    unmerged_right,
    unrepack,
    unrepeated,
    unroll,
    unstack,
    unstar,
)

# -- forward mode's helpers (`runtime.tangents`) ---------------------------------


@adjoint(tangents.dense)
def dense_(z, tangent, x):
    d[tangent] = d[z]
    t[z] = tangents.dense(t[tangent], x)


@adjoint(tangents.shaped)
def shaped_(z, tangent, x):
    d[tangent] = d[z]
    t[z] = tangents.shaped(t[tangent], x)


@adjoint(tangents.unrounded, linear=True)
def unrounded_(z, tangent, x):
    d[tangent] = tangents.unrounded(d[z], x)
    t[z] = tangents.unrounded(t[tangent], x)


@adjoint(tangents.unpacked, linear=True)
def unpacked_(z, tangent, count, x):
    d[tangent] = structures.repack(x, d[z])


@adjoint(tangents.environment_of, linear=True)
def environment_of_(z, fn, tangent):
    d[tangent] = tangents.environment_cotangent(d[z], tangent)


@adjoint(tangents.item_tangents, linear=True)
def item_tangents_(z, tangent, items):
    d[tangent] = like_items(d[z], items)


@adjoint(iteration.zipped, linear=True)
def zipped_(z, ts, iterables):
    d[ts] = unzip(d[z], iterables)


@adjoint(structures.reitem, linear=True)
def reitem_(z, h, x, index=()):
    d[h] = structures.unitem(d[z], x, index)


# -- the reverse mode's ------------------------------------------------------------


@adjoint(cotangents.add, cotangents.add_into)
def add(z, x, y):
    d[x] = d[z]
    d[y] = d[z]
    t[z] = cotangents.add(t[x], t[y])


@adjoint(cotangents.add_all, linear=True)
def add_all_(z, terms):
    d[terms] = fan_out(d[z], terms)


@adjoint(cotangents.fan_out, linear=True)
def fan_out_(z, g, terms):
    d[g] = add_all(d[z])


# A tree of terms stands for their sum: one cotangent for all of them, as `add_all`'s.
@adjoint(terms.collected, linear=True)
def collected_(z, parts):
    d[parts] = fan_out(d[z], parts)


@adjoint(terms.summed_once, linear=True)
def summed_once_(z, x, nested):
    d[x] = d[z]


@adjoint(cotangents.unbroadcast, summed=(cotangents.unbroadcast_all, (0,)),
         identity=(0, "shaped like the result", 1), shaped=(1, cotangents.unbroadcast_to),
         linear=True)
def unbroadcast_(z, g, x):
    d[g] = rebroadcast(d[z], g)


@adjoint(cotangents.rebroadcast, linear=True)
def rebroadcast_(z, h, g):
    d[h] = unbroadcast(d[z], h)


# These helpers have no templates (derivatives of derivatives transform their
# Python): select(True, g) is g, and a loop sums the products' steps once
# (`compiler.optimize.loop_sums`).
declare(cotangents.select, identity=(1, "true", 0))
declare(cotangents.matmul_left, summed=(cotangents.matmul_left_all, (0, 2)))
declare(cotangents.matmul_right, summed=(cotangents.matmul_right_all, (0, 1)))
declare(cotangents.dot_left, summed=(cotangents.dot_left_all, (0, 2)))
declare(cotangents.dot_right, summed=(cotangents.dot_right_all, (0, 1)))


@adjoint(cotangents.reshape_like, linear=True)
def reshape_like_(z, g, x, order="C"):
    d[g] = reshape_like(d[z], g, order)


@adjoint(cotangents.unreduce, identity=(0, "scalar", 1), shaped=(1, cotangents.unreduce_to),
         linear=True)
def unreduce_(z, g, x, axis=None, keepdims=False):
    d[g] = np.sum(d[z], axis=axis, keepdims=keepdims)


# Their versions given the shape (`Spec.shaped`) have their rules: the shape is a constant.
adjoint(cotangents.unbroadcast_to, linear=True)(unbroadcast_)
adjoint(cotangents.unreduce_to, linear=True)(unreduce_)


@adjoint(cotangents.product_of_others)
def product_of_others(z, x, axis=None):
    d[x] = product_of_others_adjoint(d[z], x, axis)
    t[z] = product_of_others_adjoint(t[x], x, axis)  # its Jacobian is symmetric


@adjoint(deferred.outer_sum, result="array", multilinear=True)
def outer_sum(z, u, v):
    d[u] = np.dot(v, d[z].T)
    d[v] = np.dot(u, d[z])


@adjoint(cotangents.tensordot_left, multilinear=True)
def tensordot_left_(z, g, a, b, axes=2):
    d[g] = np.tensordot(d[z], b, axes)
    d[b] = tensordot_right(g, d[z], b, axes)


@adjoint(cotangents.tensordot_right, multilinear=True)
def tensordot_right_(z, g, a, b, axes=2):
    d[g] = np.tensordot(a, d[z], axes)
    d[a] = tensordot_left(g, a, d[z], axes)


@adjoint(cotangents.materialize, cotangents.materialize_all, api.function_of,
         dispatch.method_object, records.internal, deferred.concrete, tangents.internal,
         tangents.external)
def identity(z, value, *shape, held=None):
    d[value] = d[z]
    t[z] = t[value]


@adjoint(structures.unindex_all, linear=True, structural=(1,))
def unindex_all_(z, gs, x, indices):
    d[gs] = indexed_all(d[z], indices)


@adjoint(structures.add_at, structures.add_at_into, structural=(2,))
def add_at_(z, total, gs, x, indices):
    d[total] = d[z]
    d[gs] = indexed_all(d[z], indices)
    t[z] = structures.add_at(t[total], t[gs], x, indices)


@adjoint(structures.unindex_tiles, linear=True)
def unindex_tiles_(z, gs, x, indices, axis):
    d[gs] = indexed_all(d[z], indices)


@adjoint(structures.indexed_all, linear=True)
def indexed_all_(z, h, indices):
    d[h] = unindex_all(d[z], h, indices)


@adjoint(structures.unindex, summed=(structures.unindex_all, (0, 2)), linear=True,
         structural=(1,))
def unindex(z, g, x, index):
    d[g] = d[z][index]


@adjoint(structures.repack, linear=True)
def repack_(z, x, items):
    d[items] = unrepack(d[z], items)


@adjoint(structures.unrepack, linear=True)
def unrepack_(z, h, items):
    d[h] = repack(h, d[z])


@adjoint(structures.unconcat, linear=True)
def unconcat_(z, g, a, b):
    d[g] = reconcat(d[z], a, b)


@adjoint(structures.reconcat, linear=True)
def reconcat_(z, h, a, b):
    d[h] = unconcat(d[z], a, b)


@adjoint(structures.unstar, linear=True)
def unstar_(z, g, parts, starred):
    d[g] = restar(d[z], parts, starred)


@adjoint(structures.restar, linear=True)
def restar_(z, h, parts, starred):
    d[h] = unstar(d[z], parts, starred)


@adjoint(structures.undict, linear=True)
def undict_(z, g, parts, keys):
    d[g] = redict(d[z], parts, keys)


@adjoint(structures.redict, linear=True)
def redict_(z, h, parts, keys):
    d[h] = undict(d[z], parts, keys)


@adjoint(records.unrecord, linear=True)
def unrecord_(z, g, values, names):
    d[g] = rerecord(d[z], values, names)


@adjoint(records.rerecord, linear=True)
def rerecord_(z, h, values, names):
    d[h] = unrecord(d[z], values, names)


@adjoint(structures.unroll, linear=True)
def unroll_(z, cotangents, captured):
    d[cotangents] = reroll(d[z], cotangents, captured)


@adjoint(structures.reroll, linear=True)
def reroll_(z, h, cotangents, captured):
    d[h] = unroll(d[z], captured)


@adjoint(structures.unstack, linear=True)
def unstack_(z, g, xs, axis=0):
    d[g] = restack(d[z], xs, axis)


@adjoint(structures.restack, linear=True)
def restack_(z, h, xs, axis=0):
    d[h] = unstack(d[z], xs, axis)


@adjoint(structures.unrepeated, linear=True)
def unrepeated_(z, g, items, count):
    d[g] = rerepeated(d[z], count)


@adjoint(structures.rerepeated, linear=True)
def rerepeated_(z, h, count):
    d[h] = unrepeated(d[z], h, count)


@adjoint(structures.unconcatenate, linear=True)
def unconcatenate_(z, g, xs, axis=0):
    d[g] = reconcatenate(d[z], xs, axis)


@adjoint(structures.reconcatenate, linear=True)
def reconcatenate_(z, h, xs, axis=0):
    d[h] = unconcatenate(d[z], xs, axis)


@adjoint(structures.unarray, linear=True)
def unarray_(z, g, x):
    d[g] = rearray(d[z], x)


@adjoint(structures.uncast, linear=True)
def uncast_(w, g, x, z):
    d[g] = uncast(d[w], z, z)


@adjoint(structures.rearray, linear=True)
def rearray_(z, h, x):
    d[h] = unarray(d[z], x)


@adjoint(calls.by_argument, linear=True)
def by_argument(z, signature, args, kwargs, cotangents):
    d[cotangents] = by_parameter_(signature, args, kwargs, d[z])


@adjoint(calls.by_parameter, linear=True)
def by_parameter(z, signature, args, kwargs, h):
    d[h] = by_argument_(signature, args, kwargs, d[z])


@adjoint(calls.split_cotangents, linear=True)
def split_cotangents(z, cotangents, args, kwargs):
    d[cotangents] = join_cotangents(d[z], args, kwargs)


@adjoint(calls.with_defaults, linear=True)
def with_defaults_(z, cotangents, layout):
    d[cotangents] = without_defaults(d[z], layout)


@adjoint(calls.without_defaults, linear=True)
def without_defaults_(z, h, layout):
    d[h] = with_defaults(d[z], layout)


@adjoint(calls.join_cotangents, linear=True)
def join_cotangents_(z, h, args, kwargs):
    d[h] = split_cotangents_(d[z], args, kwargs)


@adjoint(calls.pick, linear=True)
def pick(z, values, positions):
    d[values] = place(d[z], values, positions)


@adjoint(calls.place, linear=True)
def place_(z, h, values, positions):
    d[h] = pick_(d[z], positions)


@adjoint(transform.forward_function, transform.jvp_function)
def forward_function(z, fn, param_kinds, through_value=False):
    d[fn] = restrict_environment(d[z], z, fn)
    t[z] = extend_environment(tangents.environment_of(fn, t[fn]), z, fn)


@adjoint(calls.restrict_environment, linear=True)
def restrict_environment_(z, h, forward, fn):
    d[h] = extend_environment(d[z], forward, fn)


@adjoint(calls.extend_environment, linear=True)
def extend_environment_(z, h, forward, fn):
    d[h] = restrict_environment(d[z], forward, fn)


@adjoint(loops.reiterate, linear=True)
def reiterate_(z, trail, items):
    d[trail] = unreiterate(d[z], trail, items)


@adjoint(loops.unreiterate, linear=True)
def unreiterate_(z, h, trail, items):
    d[h] = reiterate(d[z], items)


@adjoint(iteration.like_items, linear=True)
def like_items_(z, cts, items):
    d[cts] = item_cotangents(d[z], cts, items)


@adjoint(iteration.item_cotangents, linear=True)
def item_cotangents_(z, h, cts, items):
    d[h] = like_items(d[z], items)


@adjoint(iteration.unzip, linear=True)
def unzip_(z, g, iterables):
    d[g] = rezip(d[z], g, iterables)


@adjoint(iteration.rezip, linear=True)
def rezip_(z, h, g, iterables):
    d[h] = unzip(d[z], iterables)


@adjoint(iteration.unreverse, linear=True)
def unreverse_(z, g, items):
    d[g] = rereverse(d[z], g, items)


@adjoint(iteration.rereverse, linear=True)
def rereverse_(z, h, g, items):
    d[h] = unreverse(d[z], items)


@adjoint(iteration.unitems, linear=True)
def unitems_(z, g, mapping, position):
    d[g] = reitems(d[z], g, mapping, position)


@adjoint(iteration.reitems, linear=True)
def reitems_(z, h, g, mapping, position):
    d[h] = unitems(d[z], mapping, position)


@adjoint(iteration.spread, linear=True)
def spread_(z, g, items):
    d[g] = unspread(d[z], g, items)


@adjoint(iteration.unspread, linear=True)
def unspread_(z, h, g, items):
    d[h] = spread(d[z], items)


@adjoint(iteration.unextremum, linear=True)
def unextremum_(z, g, values, extremum):
    d[g] = reextremum(d[z], values, extremum)


@adjoint(iteration.reextremum, linear=True)
def reextremum_(z, h, values, extremum):
    d[h] = unextremum(d[z], values, extremum)


@adjoint(mutation.without_item, mutation.without_item_into, linear=True)
def without_item_(z, g, index):
    d[g] = without_item(d[z], index)


@adjoint(mutation.written_item, linear=True, structural=(3,), indexed=(0,))
def written_item_(z, g, index, value, updated):
    d[g] = written_item_adjoint(d[z], g, index, value, updated)


@adjoint(mutation.written_item_adjoint, linear=True)
def written_item_adjoint_(z, h, g, index, value, updated):
    d[h] = written_item(d[z], index, value, updated)


@adjoint(mutation.unappended, mutation.unappended_into, linear=True, same=True)
def unappended_(z, g):
    d[g] = reappended(d[z])


@adjoint(mutation.reappended, linear=True)
def reappended_(z, h):
    d[h] = unappended(d[z])


@adjoint(mutation.last_item, linear=True, indexed=(0,))
def last_item_(z, g):
    d[g] = last_item_adjoint(d[z], g)


@adjoint(mutation.last_item_adjoint, linear=True)
def last_item_adjoint_(z, h, g):
    d[h] = last_item(d[z])


@adjoint(mutation.unpop, linear=True)
def unpop_(z, g, items, index=-1):
    d[g] = repop(d[z], items, index)


@adjoint(mutation.repop, linear=True)
def repop_(z, h, items, index=-1):
    d[h] = unpop(d[z], items, index)


@adjoint(mutation.unpop_default, linear=True)
def unpop_default_(z, g, items, index):
    d[g] = repop_default(d[z], items, index)


@adjoint(mutation.repop_default, linear=True)
def repop_default_(z, h, items, index):
    d[h] = unpop_default(d[z], items, index)


@adjoint(tangents.repopped)
def repopped_(z, tangent, default_tangent, items, index=-1):
    d[tangent] = unpop(d[z], items, index)
    d[default_tangent] = unpop_default(d[z], items, index)
    t[z] = tangents.repopped(t[tangent], t[default_tangent], items, index)


@adjoint(records.unfield, linear=True)
def unfield_(z, g, x, name):
    d[g] = refield(d[z], x, name)


@adjoint(records.refield, linear=True)
def refield_(z, h, x, name):
    d[h] = unfield(d[z], x, name)


@adjoint(iteration.unextremum_default, linear=True)
def unextremum_default_(z, g, values):
    d[g] = unextremum_default(d[z], values)


@adjoint(iteration.unsort, linear=True)
def unsort_(z, g, items, result):
    d[g] = resort(d[z], items, result)


@adjoint(iteration.resort, linear=True)
def resort_(z, h, items, result):
    d[h] = unsort(d[z], items, result)


@adjoint(structures.unmerged_left, linear=True)
def unmerged_left_(z, g, a, b):
    d[g] = merged(d[z], ZERO, a, b)


@adjoint(structures.unmerged_right, linear=True)
def unmerged_right_(z, g, a, b):
    d[g] = merged(ZERO, d[z], a, b)


@adjoint(structures.merged)
def merged_(z, ta, tb, a, b):
    d[ta] = unmerged_left(d[z], a, b)
    d[tb] = unmerged_right(d[z], a, b)
    t[z] = merged(t[ta], t[tb], a, b)


@adjoint(structures.unget, linear=True)
def unget_(z, g, mapping, key):
    d[g] = reget(d[z], mapping, key)


@adjoint(structures.reget, linear=True)
def reget_(z, h, mapping, key):
    d[h] = unget(d[z], mapping, key)


@adjoint(structures.unget_default, linear=True)
def unget_default_(z, g, mapping, key):
    d[g] = unget_default(d[z], mapping, key)


@adjoint(structures.unmapping, linear=True)
def unmapping_(z, g, source):
    d[g] = remapping(d[z], source)


@adjoint(structures.remapping, linear=True)
def remapping_(z, h, source):
    d[h] = unmapping(d[z], source)
