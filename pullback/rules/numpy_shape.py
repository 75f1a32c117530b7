"""Reshaping, transposing, joining, splitting, selecting and building arrays."""

import numpy as np

from pullback.compiler.analysis.kinds import (
    ARRAY,
    CONST,
    Items,
    rank_of,
    same_rank,
    vector_or_array,
)
from pullback.rules.registry import adjoint, d, declare, nondifferentiable, t
from pullback.runtime import structures
from pullback.runtime.cotangents import reshape_like, unbroadcast, untranspose
from pullback.runtime.structures import (
    along_axis,
    horizontal_axis,
    joined_parts,
    linspace_fractions,
    rearray,
    reconcatenate,
    reitem,
    repeat_index,
    reshape_items,
    rolled_axis,
    take_index,
    unarray,
    uncast,
    unconcatenate,
    undiag,
    undiagonal,
    undiff,
    unindex,
    unitem,
    unpad,
    unstack,
    untake,
    untile,
)
from pullback.runtime.tangents import dense

from .numpy_versions import numpy_functions

nondifferentiable(
    np.argpartition, structures.take_index, structures.repeat_index, structures.along_axis,
    structures.tiled_shape, structures.axis_padding, structures.pad_index,
    structures.joined_parts, structures.horizontal_axis, structures.rolled_axis,
    structures.linspace_fractions,
)


@adjoint(np.reshape, result="array", linear=True, view=True)
def reshape(z, a, shape=None, order="C"):
    d[a] = reshape_like(d[z], a, order)


@adjoint(np.ndarray.reshape, result="array", linear=True, view=True)
def reshape_method(z, a, *shape, order="C"):
    d[a] = reshape_like(d[z], a, order)


@adjoint(np.ravel, np.ndarray.ravel, np.ndarray.flatten, result="array", linear=True)
def ravel(z, a, order="C"):
    d[a] = reshape_like(d[z], a, order)


declare(np.ravel, np.ndarray.ravel, view=True)  # flatten copies


@adjoint(np.transpose, result=same_rank, linear=True, view=True)
def transpose(z, a, axes=None):
    d[a] = untranspose(d[z], axes)


@adjoint(np.ndarray.transpose, result=same_rank, linear=True, view=True)
def transpose_method(z, a, *axes):
    d[a] = untranspose(d[z], axes)


@adjoint(np.ndarray.T, result=same_rank, linear=True, view=True)
def T(z, a):
    d[a] = np.transpose(d[z])


@adjoint(np.broadcast_to, result="array", linear=True, view=True)
def broadcast_to(z, array, shape):
    d[array] = unbroadcast(d[z], array)


@adjoint(np.swapaxes, np.ndarray.swapaxes, result="array", linear=True, view=True)
def swapaxes(z, a, axis1, axis2):
    d[a] = np.swapaxes(d[z], axis1, axis2)


@adjoint(np.moveaxis, result="array", linear=True, view=True)
def moveaxis(z, a, source, destination):
    d[a] = np.moveaxis(d[z], destination, source)


@adjoint(np.rollaxis, result="array", linear=True, view=True)
def rollaxis(z, a, axis, start=0):
    d[a] = np.moveaxis(d[z], rolled_axis(np.ndim(a), axis, start), axis)


@adjoint(np.expand_dims, result="array", linear=True, view=True)
def expand_dims(z, a, axis):
    d[a] = reshape_like(d[z], a)


@adjoint(np.squeeze, np.ndarray.squeeze, result="array", linear=True, view=True,
         shift="squeeze")
def squeeze(z, a, axis=None):
    d[a] = reshape_like(d[z], a)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d, result="array", linear=True,
         view=True)
def atleast(z, ary):
    d[ary] = reshape_like(d[z], ary)


@adjoint(np.flip, result="array", linear=True, view=True)
def flip(z, m, axis=None):
    d[m] = np.flip(d[z], axis)


@adjoint(np.flipud, result="array", linear=True, view=True)
def flipud(z, m):
    d[m] = np.flip(d[z], 0)


@adjoint(np.fliplr, result="array", linear=True, view=True)
def fliplr(z, m):
    d[m] = np.flip(d[z], 1)


@adjoint(np.rot90, result="array", linear=True, view=True)
def rot90(z, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[z], -k, axes)


@adjoint(np.roll, result="array", linear=True)
def roll(z, a, shift, axis=None):
    d[a] = np.roll(d[z], np.negative(shift), axis)


@adjoint(np.tile, result="array", linear=True)
def tile(z, A, reps):
    d[A] = untile(d[z], A, reps)


@adjoint(np.repeat, np.ndarray.repeat, result="array", linear=True)
def repeat(z, a, repeats, axis=None):
    d[a] = untake(d[z], a, repeat_index(np.shape(a), repeats, axis), axis)


@adjoint(np.take, np.ndarray.take, result="array", linear=True)
def take(z, a, indices, axis=None, out=None, mode="raise"):
    d[a] = untake(d[z], a, take_index(np.shape(a), indices, axis, mode), axis)


@adjoint(np.take_along_axis, result="array", linear=True)
def take_along_axis(z, arr, indices, axis=-1):
    d[arr] = unindex(d[z], arr, along_axis(indices, np.shape(arr), axis))


@adjoint(np.sort, result="array")
def sort(z, a, axis=-1, kind=None, order=None, *, stable=None):
    permutation = np.argsort(a, axis)
    d[a] = unindex(d[z], a, along_axis(permutation, np.shape(a), axis))
    t[z] = np.take_along_axis(t[a], permutation, axis)


@adjoint(np.partition, result="array")
def partition(z, a, kth, axis=-1, kind="introselect", order=None):
    permutation = np.argpartition(a, kth, axis)
    d[a] = unindex(d[z], a, along_axis(permutation, np.shape(a), axis))
    t[z] = np.take_along_axis(t[a], permutation, axis)


@adjoint(np.triu, result="array", linear=True)
def triu(z, m, k=0):
    d[m] = unbroadcast(np.triu(d[z], k), m)


@adjoint(np.tril, result="array", linear=True)
def tril(z, m, k=0):
    d[m] = unbroadcast(np.tril(d[z], k), m)


def _diagonal_kind(v, k=None):
    """`np.diag` of a vector of floats is a matrix of floats, of a matrix a vector."""
    rank = {1: 2, 2: 1}.get(rank_of(v))
    return vector_or_array(v.active, rank) if v.active or rank else CONST


@adjoint(np.diag, result=_diagonal_kind, linear=True, view=True)  # of a matrix: a read-only view
def diag(z, v, k=0):
    d[v] = undiag(d[z], v, k)


@adjoint(np.diagonal, np.ndarray.diagonal, result="array", linear=True, view=True)
def diagonal(z, a, offset=0, axis1=0, axis2=1):
    d[a] = undiagonal(d[z], a, offset, axis1, axis2)


@adjoint(*numpy_functions("linalg.diagonal"), result="array", linear=True, view=True)
def linalg_diagonal(z, x, /, *, offset=0):
    d[x] = undiagonal(d[z], x, offset, -2, -1)


@adjoint(undiagonal, linear=True)
def undiagonal_(z, g, x, offset=0, axis1=0, axis2=1):
    d[g] = np.diagonal(d[z], offset, axis1, axis2)


@adjoint(np.pad, result="array", linear=True)
def pad(z, array, pad_width, mode="constant", constant_values=0):
    inner = unpad(d[z], array, pad_width, mode)
    d[array] = inner
    d[constant_values] = np.sum(d[z]) - np.sum(inner)


@adjoint(np.diff, result="array", linear=True)
def diff(z, a, n=1, axis=-1):
    d[a] = undiff(d[z], n, axis)


@adjoint(np.concatenate, result="array")
def concatenate(z, arrays, axis=0, out=None):
    d[arrays] = unconcatenate(d[z], arrays, axis)
    t[z] = np.concatenate(dense(t[arrays], arrays), axis)


@adjoint(np.append, result="array")
def append(z, arr, values, axis=None):
    parts = unconcatenate(d[z], (arr, values), axis)
    d[arr] = parts[0]
    d[values] = parts[1]
    t[z] = np.append(dense(t[arr], arr), dense(t[values], values), axis)


@adjoint(np.stack, result="array")
def stack(z, arrays, axis=0, out=None):
    d[arrays] = unstack(d[z], arrays, axis)
    t[z] = np.stack(dense(t[arrays], arrays), axis)


@adjoint(np.vstack, result="array")
def vstack(z, tup, *, dtype=None, casting="same_kind"):
    d[tup] = reshape_items(unconcatenate(d[z], joined_parts(z, tup, 0), 0), tup)
    t[z] = np.vstack(dense(t[tup], tup))


@adjoint(np.hstack, result="array")
def hstack(z, tup, *, dtype=None, casting="same_kind"):
    axis = horizontal_axis(z)
    d[tup] = reshape_items(unconcatenate(d[z], joined_parts(z, tup, axis), axis), tup)
    t[z] = np.hstack(dense(t[tup], tup))


@adjoint(np.dstack, result="array")
def dstack(z, tup):
    d[tup] = reshape_items(unconcatenate(d[z], joined_parts(z, tup, 2), 2), tup)
    t[z] = np.dstack(dense(t[tup], tup))


@adjoint(np.column_stack, result="array")
def column_stack(z, tup):
    d[tup] = reshape_items(unconcatenate(d[z], joined_parts(z, tup, 1), 1), tup)
    t[z] = np.column_stack(dense(t[tup], tup))


@adjoint(reshape_items, linear=True)
def reshape_items_(z, g, xs):
    d[g] = reshape_items(d[z], g)


def _list_of_arrays(ary, *options):
    return Items(ARRAY)


@adjoint(np.split, np.array_split, result=_list_of_arrays, linear=True)
def split(z, ary, indices_or_sections, axis=0):
    d[ary] = reconcatenate(d[z], z, axis)


@adjoint(np.vsplit, result=_list_of_arrays, linear=True)
def vsplit(z, ary, indices_or_sections):
    d[ary] = reconcatenate(d[z], z, 0)


@adjoint(np.hsplit, result=_list_of_arrays, linear=True)
def hsplit(z, ary, indices_or_sections):
    d[ary] = reconcatenate(d[z], z, horizontal_axis(ary))


@adjoint(np.dsplit, result=_list_of_arrays, linear=True)
def dsplit(z, ary, indices_or_sections):
    d[ary] = reconcatenate(d[z], z, 2)


@adjoint(np.array, np.asarray, np.asanyarray, result="array")
def array(z, object, dtype=None):
    d[object] = unarray(d[z], object)
    t[z] = rearray(t[object], object)


@adjoint(np.ndarray.astype, result="array")
def astype(z, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    d[a] = uncast(d[z], a, z)
    t[z] = uncast(t[a], a, z)


adjoint(np.generic.astype, result="scalar")(astype)  # a NumPy number's: a number


@adjoint(np.ndarray.item, np.generic.item, result="scalar")
def item(z, a, *args):
    d[a] = unitem(d[z], a, args)
    t[z] = reitem(t[a], a, args)


@adjoint(np.ndarray.tolist)
def tolist(z, a, /):
    d[a] = rearray(d[z], z)
    t[z] = unarray(t[a], z)


declare(np.array, np.ndarray.astype, copy=True)
declare(np.asarray, np.asanyarray, view=True)


@adjoint(np.linspace, result="array", linear=True)
def linspace(z, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    toward_stop = np.sum(d[z] * linspace_fractions(num, endpoint, axis, np.ndim(z)), axis=axis)
    d[start] = unbroadcast(np.sum(d[z], axis=axis) - toward_stop, start)
    d[stop] = unbroadcast(toward_stop, stop)


@adjoint(np.full, result="array")
def full(z, shape, fill_value, dtype=None, order="C"):
    d[fill_value] = unbroadcast(d[z], fill_value)


@adjoint(np.full_like, result="array")
def full_like(z, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    d[fill_value] = unbroadcast(d[z], fill_value)
