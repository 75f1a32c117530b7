"""Reductions along axes: sum, mean, prod, var, std, max, min, ptp, the NaN-skipping sum and
mean, the weighted average, the cumulative sums and products (functions and array
methods), and the sums by bins of `np.bincount` (in its weights; the bins are integers).

The other NaN-skipping reductions, the median and the quantiles are Python versions
(`numpy_python`)."""

import numpy as np

from pullback.compiler.analysis import kinds
from pullback.rules.registry import adjoint, d, t
from pullback.runtime.cotangents import (
    average_weights,
    counted,
    degrees_of_freedom,
    extremum_share,
    product_of_others,
    reaverage_weights,
    recumprod,
    reduced_size,
    select,
    unaverage_weights,
    uncumprod,
    uncumsum,
    unreduce,
    with_initial,
    without_initial,
)
from pullback.runtime.structures import unarray

from .numpy_versions import numpy_functions


def reduced(a, *options):
    """The kind of a reduction: a NumPy scalar when all of `a` is reduced (no axis, no
    other option), else an array."""
    if options:
        return kinds.ARRAY if a.active else kinds.CONST
    return kinds.SCALAR if a.active else kinds.CONST_SCALAR


@adjoint(np.sum, np.ndarray.sum, result=reduced, linear=True, shift="sum")
def sum_(z, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = select(where, unreduce(d[z], a, axis, keepdims))
    d[initial] = np.sum(d[z])


@adjoint(np.nansum, result=reduced)
def nansum(z, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    d[a] = select(counted(a, where), unreduce(d[z], a, axis, keepdims))
    d[initial] = np.sum(d[z])
    t[z] = np.sum(select(counted(a, where), t[a]), axis, keepdims=keepdims) + t[initial]


@adjoint(np.mean, np.ndarray.mean, result=reduced, linear=True, shift="sum")
def mean(z, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    d[a] = select(where, unreduce(d[z], a, axis, keepdims)) / reduced_size(a, z, axis, where)


@adjoint(np.nanmean, result=reduced)
def nanmean(z, a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    kept = counted(a, where)
    d[a] = select(kept, unreduce(d[z], a, axis, keepdims)) / reduced_size(a, z, axis, kept)
    t[z] = np.sum(select(kept, t[a]) / reduced_size(a, z, axis, kept), axis, keepdims=keepdims)


@adjoint(np.average, result="array")
def average(z, a, axis=None, weights=None, returned=False, *, keepdims=False):
    w = average_weights(a, weights, axis, returned)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    g = unreduce(d[z], a, axis, keepdims) / total
    d[a] = g * w
    d[weights] = unaverage_weights(g * (a - unreduce(z, a, axis, keepdims)), a, weights, axis)
    t[z] = np.sum((w * t[a] + reaverage_weights(t[weights], a, weights, axis)
                   * (a - unreduce(z, a, axis, keepdims))) / total, axis, keepdims=keepdims)


@adjoint(np.prod, np.ndarray.prod, result=reduced)
def prod(z, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * product_of_others(a, axis)
    t[z] = np.sum(t[a] * product_of_others(a, axis), axis, keepdims=keepdims)


@adjoint(np.var, np.ndarray.var, result=reduced)
def var(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        correction=None):
    centered = a - np.mean(a, axis=axis, keepdims=True, where=where)
    share = unreduce(2.0 * d[z], a, axis, keepdims) * centered
    d[a] = select(where, share / degrees_of_freedom(a, z, axis, ddof, correction, where))
    t[z] = np.sum(select(where, 2.0 * centered * t[a]
                         / degrees_of_freedom(a, z, axis, ddof, correction, where)),
                  axis, keepdims=keepdims)


# Where the deviation is 0 (one number, or equal ones) so is `centered`, and its share
# of the cotangent is taken as 0, not 0 / 0: the derivative of one number's, which is
# constant, and, at equal numbers, the one of the kink's slopes that `abs` takes at 0.
@adjoint(np.std, np.ndarray.std, result=reduced)
def std(z, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        correction=None):
    centered = a - np.mean(a, axis=axis, keepdims=True, where=where)
    nonzero = np.where(z == 0, 1.0, z)
    share = unreduce(d[z] / nonzero, a, axis, keepdims) * centered
    d[a] = select(where, share / degrees_of_freedom(a, z, axis, ddof, correction, where))
    t[z] = np.sum(select(where, centered * t[a]
                         / degrees_of_freedom(a, z, axis, ddof, correction, where)),
                  axis, keepdims=keepdims) / nonzero


@adjoint(np.max, np.amax, np.ndarray.max, np.min, np.amin, np.ndarray.min, result=reduced,
         shift="reduction")
def max_(z, a, axis=None, out=None, keepdims=False):
    d[a] = unreduce(d[z], a, axis, keepdims) * extremum_share(a, z, axis, keepdims)
    t[z] = np.sum(t[a] * extremum_share(a, z, axis, keepdims), axis, keepdims=keepdims)


@adjoint(np.ptp, result=reduced)
def ptp(z, a, axis=None, out=None, keepdims=False):
    top = extremum_share(a, np.max(a, axis, keepdims=keepdims), axis, keepdims)
    bottom = extremum_share(a, np.min(a, axis, keepdims=keepdims), axis, keepdims)
    d[a] = unreduce(d[z], a, axis, keepdims) * (top - bottom)
    t[z] = np.sum(t[a] * (top - bottom), axis, keepdims=keepdims)


@adjoint(np.cumsum, np.ndarray.cumsum, result="array", linear=True)
def cumsum(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumsum(d[z], a, axis)


@adjoint(*numpy_functions("cumulative_sum"), result="array", linear=True)
def cumulative_sum(z, x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    d[x] = uncumsum(without_initial(d[z], axis, include_initial), x, axis)


@adjoint(np.cumprod, np.ndarray.cumprod, result="array")
def cumprod(z, a, axis=None, dtype=None, out=None):
    d[a] = uncumprod(d[z], a, axis)
    t[z] = recumprod(t[a], a, axis)


@adjoint(*numpy_functions("cumulative_prod"), result="array")
def cumulative_prod(z, x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    d[x] = uncumprod(without_initial(d[z], axis, include_initial), x, axis)
    t[z] = with_initial(recumprod(t[x], x, axis), axis, include_initial)


@adjoint(np.bincount, result="array", linear=True)
def bincount(z, x, /, weights=None, minlength=0):
    d[weights] = unarray(d[z][x], weights)


@adjoint(uncumsum, linear=True)
def uncumsum_(z, g, x, axis=None):
    d[g] = np.cumsum(d[z], axis)


@adjoint(reaverage_weights, linear=True)
def reaverage_weights_(z, h, a, weights, axis=None):
    d[h] = unaverage_weights(d[z], a, weights, axis)
