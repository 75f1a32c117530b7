"""Reshaping, transposing, joining and building arrays."""

import numpy as np

from pullback.cotangents import reshape_like, unbroadcast, untranspose
from pullback.rules import adjoint, d
from pullback.structures import unarray, unconcatenate, unstack


@adjoint(np.reshape, result="array")
def reshape(z, a, shape=None, order="C"):
    d[a] = reshape_like(d[z], a, order)


@adjoint(np.ndarray.reshape, result="array")
def reshape_method(z, a, *shape, order="C"):
    d[a] = reshape_like(d[z], a, order)


@adjoint(np.ravel, np.ndarray.ravel, np.ndarray.flatten, result="array")
def ravel(z, a, order="C"):
    d[a] = reshape_like(d[z], a, order)


@adjoint(np.transpose, result="array")
def transpose(z, a, axes=None):
    d[a] = untranspose(d[z], axes)


@adjoint(np.ndarray.transpose, result="array")
def transpose_method(z, a, *axes):
    d[a] = untranspose(d[z], axes)


@adjoint(np.ndarray.T, result="array")
def T(z, a):
    d[a] = np.transpose(d[z])


@adjoint(np.broadcast_to, result="array")
def broadcast_to(z, array, shape):
    d[array] = unbroadcast(d[z], array)


@adjoint(np.swapaxes, np.ndarray.swapaxes, result="array")
def swapaxes(z, a, axis1, axis2):
    d[a] = np.swapaxes(d[z], axis1, axis2)


@adjoint(np.moveaxis, result="array")
def moveaxis(z, a, source, destination):
    d[a] = np.moveaxis(d[z], destination, source)


@adjoint(np.expand_dims, result="array")
def expand_dims(z, a, axis):
    d[a] = reshape_like(d[z], a)


@adjoint(np.squeeze, np.ndarray.squeeze, result="array")
def squeeze(z, a, axis=None):
    d[a] = reshape_like(d[z], a)


@adjoint(np.concatenate, result="array")
def concatenate(z, arrays, axis=0, out=None):
    d[arrays] = unconcatenate(d[z], arrays, axis)


@adjoint(np.stack, result="array")
def stack(z, arrays, axis=0, out=None):
    d[arrays] = unstack(d[z], arrays, axis)


@adjoint(np.array, np.asarray, result="array")
def array(z, object, dtype=None):
    d[object] = unarray(d[z], object)
