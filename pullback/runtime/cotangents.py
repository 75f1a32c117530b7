"""The sensitivity algebra: the symbolic zero, `add`, and the linear maps rules use.

A cotangent mirrors its primal value: a float for a float, an array of the same
shape for an array, a tuple/list/dict of cotangents for a tuple/list/dict. Any
of them may be the symbolic zero `ZERO` (the paper's 0), which costs nothing.
`add` is the paper's ⊕.

Derivative rules are linear in the incoming cotangent, so `ZERO` flows through
them: multiplying, indexing, reshaping or summing `ZERO` gives `ZERO`, and adding
it to a value gives the value. Anything nonlinear raises, as that would mean a
rule is wrong.
"""

import math
import types

import numpy as np

from ..rules import registry
from . import introspection, records
from .deferred import Deferred, OuterSum, RowSum, outer_sum


class Zero:
    """The symbolic zero cotangent. There is one instance, `ZERO`."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "ZERO"

    def __reduce__(self):
        return (Zero, ())

    def __bool__(self):
        return False

    def __add__(self, other):
        return other

    __radd__ = __add__

    def __sub__(self, other):
        return -other

    def __rsub__(self, other):
        return other

    def _absorb(self, *args, **kwargs):
        return self

    __mul__ = __rmul__ = __matmul__ = __rmatmul__ = __truediv__ = _absorb
    __neg__ = __pos__ = __getitem__ = get = _absorb
    __iter__ = None  # not a container: `tuple(ZERO)` raises rather than never ending
    conj = conjugate = sum = mean = reshape = transpose = ravel = squeeze = _absorb
    swapaxes = cumsum = dot = diagonal = trace = flatten = _absorb

    @property
    def T(self):
        return self

    real = imag = T

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        others = [x for x in inputs if x is not self]
        if method == "__call__":
            if ufunc is np.add:
                return others[0] if others else self
            if ufunc is np.subtract:
                return inputs[0] if inputs[1] is self else -inputs[1]
            spec = registry.spec_of(ufunc)
            position = next(i for i, x in enumerate(inputs) if x is self)
            if spec is not None and spec.absorbs_zero_at(position):
                return self
        raise TypeError(f"the symbolic zero cotangent reached numpy.{ufunc.__name__}, "
                        "which is not linear in it: a derivative rule is wrong")

    def __array_function__(self, func, types, args, kwargs):
        if registry.holds(func, "absorbing") is True:
            return self
        raise TypeError(f"the symbolic zero cotangent reached numpy.{func.__name__}, "
                        "which does not map it to zero: a derivative rule is wrong")


ZERO = Zero()



def add(x, y):
    """The sum of two cotangents of the same value (the paper's ⊕).

    Either may be `ZERO`; tuples, lists and dicts are added elementwise.
    """
    if x is ZERO:
        return y
    if y is ZERO:
        return x
    kind = type(x)
    if kind is float or kind is np.ndarray:
        return x + y
    if isinstance(x, (tuple, list)):
        # inline the common items (a ZERO, two arrays): a list's cotangent is mostly ZERO
        # where a loop reads and writes some of its items
        items = [b if a is ZERO else a if b is ZERO else a + b
                 if type(a) is type(b) is np.ndarray else add(a, b) for a, b in zip(x, y)]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, dict):
        return {k: add(x.get(k, ZERO), y.get(k, ZERO)) for k in {**x, **y}}
    return x + y


def add_all(terms):
    """The sum of the cotangents in tuple `terms`, made at once: each array of the
    result is a new one that the other terms are added into in place (or the only
    term that is not `ZERO`). Generated code sums the cotangent of a value that is not
    a number or an array with it when it has three terms or more (`ir.lower`)."""
    if terms is ZERO:
        return ZERO
    present = [t for t in terms if t is not ZERO]
    if len(present) < 2:
        return present[0] if present else ZERO
    first = present[0]
    if isinstance(first, (tuple, list)):
        items = [_sum_of(column) for column in zip(*present, strict=True)]
        return items if isinstance(first, list) else tuple(items)
    if isinstance(first, dict):
        keys = {k: None for t in present for k in t}
        return {k: add_all([t.get(k, ZERO) for t in present]) for k in keys}
    return _sum_of(present)


def _sum_of(terms):
    """`add_all(terms)` for one column of a sum of containers, or for terms that are
    not containers: arrays are summed into the first new array."""
    if len(terms) > _LONG:
        joined = _long_column(terms)
        if joined is not None:
            return joined
    total, fresh = ZERO, False
    for term in terms:
        if term is ZERO:
            continue
        if total is ZERO:
            total = term
        elif fresh and _adds_into(total, term):
            total += term
        elif isinstance(total, (tuple, list, dict)):
            return add_all(tuple(terms))
        else:
            total = total + term
            fresh = type(total) is np.ndarray
    return total


# A column of more terms than this (a recursion's contributions summed once,
# `runtime.terms`) is summed by `_long_column` when its terms allow.
_LONG = 8


def _long_column(terms):
    """The sum of a long column of cotangents that are all deferred sums of one kind
    and shape (one sum holding them all) or all arrays of one shape and dtype (one
    sum over the axis they are stacked along); None for any other column."""
    present = [t for t in terms if t is not ZERO]
    if len(present) <= _LONG:
        return None
    first = present[0]
    kind = type(first)
    if not (kind is np.ndarray or isinstance(first, Deferred)):
        return None
    shape, dtype = first.shape, first.dtype
    same_dtype = True
    for term in present:
        if type(term) is not kind or term.shape != shape:
            return None
        if term.dtype is not dtype:
            same_dtype = same_dtype and term.dtype == dtype
    if kind is not np.ndarray:
        return first.join_all(present)
    if same_dtype:  # joined flat (faster than np.stack), then summed
        return np.concatenate(present, axis=None).reshape((len(present), *shape)).sum(axis=0)
    return None


def fan_out(g, terms):
    """The cotangents of `terms` from the cotangent `g` of `add_all(terms)`: `g` for each."""
    if g is ZERO:
        return ZERO
    return tuple(g for _ in terms)


def add_into(total, x):
    """`add(total, x)` for a running sum of array cotangents that only its caller
    holds: the first array is copied, later ones are added into it in place."""
    if total is ZERO:
        return x.copy() if type(x) is np.ndarray else x
    if _adds_into(total, x):
        total += x
        return total
    return add(total, x)


def _adds_into(total, x):
    """Whether `total += x` keeps the array `total`, its shape and its dtype."""
    kind = type(x)
    return (type(total) is np.ndarray and (kind is np.ndarray or kind is OuterSum or kind is RowSum)
            and total.shape == x.shape and (total.dtype is x.dtype or total.dtype
                                            == np.promote_types(total.dtype, x.dtype)))


def unbroadcast(g, x):
    """Sum cotangent `g` over the axes along which `x` was broadcast.

    `np.add(x, y)` broadcasts `x` to the result's shape; the cotangent of `x`
    is the cotangent of the result summed back to `x`'s shape.
    """
    kind, g_kind = type(x), type(g)
    if g_kind is np.ndarray:
        if kind is np.ndarray:
            return g if g.shape == x.shape else summed_to(g, x.shape)
        if kind is float or kind is np.float64:
            return g.sum() if g.ndim else g
    elif (g_kind is float or g_kind is np.float64) and (kind is float or kind is np.float64):
        return g
    return unbroadcast_to(g, shape_of(x))


def unbroadcast_to(g, shape):
    """Cotangent `g` summed to `shape`: `unbroadcast(g, x)` for an array `x` whose
    `shape_of` is `shape`, which a pullback then need not hold
    (`compiler.optimize.shape_reads`)."""
    kind = type(g)
    if kind is np.ndarray and type(shape) is tuple:
        return g if g.shape == shape else summed_to(g, shape)
    if (kind is float or kind is np.float64) and shape == ():
        return g
    if g is ZERO or shape is ZERO:
        return ZERO
    if np.shape(g) == shape:
        return g
    return summed_to(np.asarray(g), shape)


def shape_of(x):
    """The shape of `x` that `unbroadcast_to` sums to: `ZERO` for a symbolic zero (a
    cotangent, in derivatives of derivatives), whose `unbroadcast` is `ZERO`."""
    kind = type(x)
    if kind is np.ndarray or kind is np.float64:
        return x.shape
    if kind is float:
        return ()
    return ZERO if x is ZERO else np.shape(x)


def unbroadcast_all(gs, x):
    """The sum of `unbroadcast(g, x)` over the cotangents in list `gs`, one per step
    of a loop (`loop_sums`): when they have one shape, they are summed first and the
    sum is summed to `x`'s shape once."""
    terms = tuple(g for g in gs if g is not ZERO)
    if one_shape(terms):
        return unbroadcast(add_all(terms), x)
    return add_all(tuple(unbroadcast(g, x) for g in terms))


def one_shape(terms):
    """Whether `terms` are all floats or all arrays of one shape (their sum has it)."""
    if not terms:
        return False
    first = type(terms[0])
    if first is float:
        return all(type(t) is float for t in terms)
    shape = terms[0].shape if first is np.ndarray else None
    return shape is not None and all(type(t) is np.ndarray and t.shape == shape for t in terms)


def summed_to(g, shape):
    """Array `g` summed over the axes along which an array of `shape` was broadcast to it.

    Adjacent axes of a contiguous float64 array are summed by a product with a
    vector of ones: NumPy sums along short rows slowly (`(8000, 3)` to `(8000, 1)`
    takes it 160 µs, the product 9 µs; `(5, 1000, 2)` to `(5, 1, 2)` 94 µs and 4 µs).
    """
    axes = broadcast_axes(g.shape, shape)
    size = math.prod(shape)
    if size == g.size:
        return g.reshape(shape)
    first, last = axes[0], axes[-1]
    if last - first + 1 != len(axes) or g.dtype != np.float64 or not g.flags.c_contiguous:
        return g.sum(axis=axes).reshape(shape)
    n = g.size // size
    before = math.prod(g.shape[:first])
    after = size // before
    if after == 1:
        return (g.reshape(before, n) @ _ones(n)).reshape(shape)
    if before == 1:
        return (_ones(n) @ g.reshape(n, after)).reshape(shape)
    return (_ones(n) @ g.reshape(before, n, after)).reshape(shape)


_ONES = np.ones(0)


def _ones(n):
    """A read-only vector of `n` ones, shared between calls."""
    global _ONES
    if _ONES.size < n:
        _ONES = np.ones(max(n, 2 * _ONES.size))
        _ONES.flags.writeable = False
    return _ONES[:n]


_NUMBERS = (float, int, complex, np.number)


def rebroadcast(h, g):
    """The transpose of `unbroadcast`: `h` broadcast back to the shape of `g`."""
    if h is ZERO or g is ZERO:
        return ZERO
    if isinstance(g, _NUMBERS):
        return h  # a number's tangent terms are numbers
    if np.shape(h) == np.shape(g):
        return h
    return broadcast_view(h, np.shape(g))


def reshape_like(g, x, order="C"):
    """Cotangent `g` reshaped to the shape of `x` (the rule of reshape, squeeze, ravel...)."""
    if type(g) is np.ndarray and type(x) is np.ndarray:
        return g.reshape(x.shape, order=order)
    if any_zero(g, x):
        return ZERO
    return np.reshape(g, np.shape(x), order=order)


def broadcast_axes(result_shape, shape):
    """The axes of `result_shape` that broadcasting `shape` to it created or stretched."""
    lead = len(result_shape) - len(shape)
    stretched = [lead + i for i, n in enumerate(shape) if n == 1 and result_shape[lead + i] != 1]
    return tuple(range(lead)) + tuple(stretched)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast cotangent `g` of a reduction of `x` back to `x`'s shape."""
    return unreduce_to(g, shape_of(x), axis, keepdims)


def unreduce_to(g, shape, axis=None, keepdims=False):
    """`unreduce(g, x, axis, keepdims)` for an `x` whose `shape_of` is `shape`, which a
    pullback then need not hold (`compiler.optimize.shape_reads`)."""
    if g is ZERO or shape is ZERO:
        return ZERO
    if axis is not None and not keepdims and np.ndim(g):
        g = _with_axes(g, axis, len(shape))
    return broadcast_view(g, shape)


def _with_axes(g, axis, ndim):
    """`np.expand_dims(g, axis)` for the cotangent `g` of a reduction along `axis` of an
    array of `ndim` axes (a reshape, for one axis of an array with the others)."""
    if type(axis) is int and type(g) is np.ndarray and g.ndim + 1 == ndim:
        axis %= ndim
        return g.reshape(g.shape[:axis] + (1,) + g.shape[axis:])
    return np.expand_dims(g, normalize_axis(axis, ndim))


def broadcast_view(g, shape):
    """`np.broadcast_to(g, shape)`, a read-only view, made directly when `g` is a
    scalar or a contiguous array (NumPy's general version costs microseconds)."""
    g = g if type(g) is np.ndarray else np.asarray(g)
    if g.ndim == 0:
        strides = (0,) * len(shape)
    elif g.shape == shape or not g.flags.c_contiguous or g.ndim > len(shape):
        return np.broadcast_to(g, shape)
    else:
        strides = [0] * (len(shape) - g.ndim)
        for n, m, stride in zip(g.shape, shape[len(strides):], g.strides):
            if n != m and n != 1:
                return np.broadcast_to(g, shape)
            strides.append(stride if n == m else 0)
    view = np.ndarray(shape, g.dtype, g, 0, tuple(strides))
    view.flags.writeable = False
    return view


def normalize_axis(axis, ndim):
    """`axis` (an int or tuple, possibly negative) as a tuple of non-negative ints."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim if ndim else a for a in axes)


def reduced_size(x, z, axis=None, where=True):
    """How many elements of `x` were reduced into each element of `z`: all of them,
    or those where the `where=` mask of the reduction holds (then shaped with the
    reduced axes kept)."""
    return reduced_size_of(shape_of(x), z, axis, where)


def reduced_size_of(shape, z, axis=None, where=True):
    """`reduced_size(x, z, axis, where)` for an `x` whose `shape_of` is `shape` (a
    symbolic zero's counts as a number's)."""
    if shape is ZERO:
        shape = ()
    if where is True:
        return math.prod(shape) // max(_size(z), 1)
    return np.sum(np.broadcast_to(where, shape), axis=axis, keepdims=True)


def _size(x):
    return x.size if type(x) is np.ndarray or type(x) is np.float64 else np.size(x)


def degrees_of_freedom(x, z, axis=None, ddof=0, correction=None, where=True):
    """The divisor of `np.var(x, axis, ddof=ddof, correction=correction, where=where)`."""
    return reduced_size(x, z, axis, where) - (ddof if correction is None else correction)


def extremum_share(x, z, axis=None, keepdims=False):
    """Where `x` attains the max/min `z` along `axis`: 1/count at ties, else 0."""
    x = x if type(x) is np.ndarray else np.asarray(x)
    if axis is None:
        hits = x == z
        return hits / np.count_nonzero(hits)
    if not keepdims and np.ndim(z):
        z = _with_axes(z, axis, x.ndim)
    hits = (x == z).astype(np.float64)
    hits /= hits.sum(axis=axis, keepdims=True)
    return hits


def product_of_others(x, axis=None):
    """For each element of `x`, the product of the other elements along `axis`.

    Computed with exclusive cumulative products, so zeros in `x` are exact.
    """
    order, inverse = reduction_order(np.ndim(x), axis)
    moved = np.transpose(np.asarray(x), order)
    flat = np.reshape(moved, moved.shape[: len(order) - _count(axis, np.ndim(x))] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.transpose(np.reshape(before * after, moved.shape), inverse)


def product_of_others_adjoint(g, x, axis=None):
    """The transpose of the derivative of `product_of_others(x, axis)`, applied to `g`.

    Element j gets the sum over i != j of g[i] times the product of the
    elements other than i and j; exact with zeros, quadratic in the length of
    the reduced axes.
    """
    if any_zero(g, x):
        return ZERO
    order, inverse = reduction_order(np.ndim(x), axis)
    moved = np.transpose(np.asarray(x), order)
    shape = pair_shape(moved.shape, _count(axis, np.ndim(x)))
    flat = np.reshape(moved, shape[:-1])
    eye = np.eye(shape[-1], dtype=bool)
    without = np.where(eye, 1.0, np.expand_dims(flat, -2))
    pairs = product_of_others(without, -1)
    weights = np.reshape(np.transpose(np.asarray(g), order), shape[:-1])
    summed = np.sum(np.expand_dims(weights, -2) * pairs, axis=-1)
    own = weights * np.sum(np.where(eye, pairs, 0.0), axis=-1)
    return np.transpose(np.reshape(summed - own, moved.shape), inverse)


def uncumsum(g, x, axis=None):
    """The cotangent of `x` from the cotangent `g` of `np.cumsum(x, axis)`.

    Each element gets the sum of `g` from its position to the end along `axis`
    (of the flattened `x` when `axis` is None). The transpose is `np.cumsum`.
    """
    if any_zero(g, x):
        return ZERO
    return np.reshape(np.flip(np.cumsum(np.flip(g, axis), axis), axis), np.shape(x))


def _products_without(x, axis):
    """For the cumulative product of `x` along `axis`: `x` with that axis last, the
    products `partial[..., i, j]` of its items up to `j` but item `i` (zero for j < i),
    and the position of the axis."""
    position = -1 if axis is None else axis
    along = np.moveaxis(np.ravel(x) if axis is None else x, position, -1)
    length = np.shape(along)[-1]
    without = np.where(np.eye(length, dtype=bool), 1.0, np.expand_dims(along, -2))
    return along, np.cumprod(without, axis=-1) * np.triu(np.ones((length, length))), position


def uncumprod(g, x, axis=None):
    """The cotangent of `x` from the cotangent `g` of `z = np.cumprod(x, axis)`.

    Element j gets the sum over i >= j of g[i] times the product of x[:i + 1]
    without x[j]: `uncumsum(g * z) / x` when `x` has no zeros, else that sum
    computed directly (exact with zeros, quadratic in the length of `axis`).
    Written in the Python pullback transforms, so it needs no rule of its own.
    """
    if any_zero(g, x):
        return ZERO
    if np.all(x != 0):
        return uncumsum(g * np.cumprod(x, axis), x, axis) / x
    along, partial, position = _products_without(x, axis)
    weights = np.expand_dims(np.moveaxis(np.reshape(g, np.shape(along)) if axis is None else g,
                                         position, -1), -2)
    summed = np.sum(partial * weights, axis=-1)
    return np.reshape(np.moveaxis(summed, -1, position), np.shape(x))


def without_initial(g, axis=None, include_initial=False):
    """The cotangent of `np.cumulative_sum(x, axis=axis)` (or `cumulative_prod`) from the
    cotangent `g` of the same with `include_initial`: `g` without its first element
    along `axis`, the constant it starts with. Written in the Python pullback
    transforms."""
    if not include_initial:
        return g
    position = 0 if axis is None else axis
    return np.moveaxis(np.moveaxis(g, position, 0)[1:], 0, position)


def counted(a, where=True):
    """Where `np.nansum(a, where=where)` and `np.nanmean` read `a`: not NaN, and `where` holds."""
    return np.logical_and(where, np.logical_not(np.isnan(a)))


def average_weights(a, weights=None, axis=None, returned=False):
    """The weights of `np.average(a, axis, weights)` as NumPy lays them out to broadcast
    against `a` (1.0 when None). Written in the Python pullback transforms; the
    transpose in `weights` is `unaverage_weights`."""
    if returned:
        raise TypeError("the derivative rule of numpy.average covers returned=False")
    if weights is None:
        return 1.0
    if np.shape(weights) == np.shape(a):
        return weights
    order, layout, _ = weights_layout(np.shape(a), axis)
    return np.reshape(np.transpose(weights, order), layout)


def unaverage_weights(h, a, weights, axis=None):
    """The cotangent of `weights` from the cotangent `h` (shaped like `a`) of
    `average_weights(a, weights, axis)`. Written in the Python pullback transforms."""
    if h is ZERO or weights is None:
        return ZERO
    if np.shape(weights) == np.shape(a):
        return h
    order, _, others = weights_layout(np.shape(a), axis)
    return untranspose(np.sum(h, axis=others), order)


def weights_layout(shape, axis):
    """How `np.average` lays out weights along the axes `axis` of an array of `shape`: the
    permutation sorting their axes, the shape broadcasting them against the array, and
    the array's other axes."""
    axes = normalize_axis(axis, len(shape))
    layout = tuple(n if i in axes else 1 for i, n in enumerate(shape))
    others = tuple(i for i in range(len(shape)) if i not in axes)
    return tuple(np.argsort(axes)), layout, others


def reduction_order(ndim, axis):
    """The axes permutation moving the reduced axes last, and its inverse."""
    axes = normalize_axis(tuple(range(ndim)) if axis is None else axis, ndim)
    order = tuple(a for a in range(ndim) if a not in axes) + axes
    return order, tuple(np.argsort(order))


def pair_shape(shape, count):
    """`shape` with its last `count` axes flattened into one of length n, then (n, n)."""
    n = int(np.prod(shape[len(shape) - count:], dtype=int))
    return tuple(shape[: len(shape) - count]) + (n, n)


def _count(axis, ndim):
    return ndim if axis is None else len(normalize_axis(axis, ndim))


def any_zero(*values):
    """Whether a value is `ZERO`: a rule's result is then `ZERO`, whatever else it reads.

    At second order a first-order cotangent is a primal value and may be the
    symbolic zero; the cotangent of a symbolic zero is never needed.
    """
    for value in values:  # noqa: SIM110 (a loop is faster than any() on this hot path)
        if value is ZERO:
            return True
    return False


def select(keep, g):
    """`g` where `keep` holds, zero elsewhere."""
    if g is ZERO or keep is True:
        return g
    return np.where(keep, g, 0.0)


def tie_share(x, z, y):
    """For `z = np.maximum(x, y)` (or minimum), the share of `x`: 1, 1/2 at a tie, or 0
    (a boolean array where there is no tie, as for ReLU away from zero)."""
    chosen, ties = x == z, x == y
    if type(chosen) is np.ndarray and type(ties) is np.ndarray and not ties.any():
        return chosen
    return chosen / (1.0 + ties)


def within(a, a_min=None, a_max=None, min=None, max=None):
    """Where `np.clip(a, a_min, a_max, min=min, max=max)` passes `a` through; any
    bound may be None (NumPy >= 2.1 takes the bounds by either pair of names)."""
    keep = np.ones(np.shape(a), dtype=bool)
    for lower in (a_min, min):
        if lower is not None:
            keep = keep & (a >= lower)
    for upper in (a_max, max):
        if upper is not None:
            keep = keep & (a <= upper)
    return keep


def untranspose(g, axes=None):
    """The cotangent of `x` from that of `np.transpose(x, axes)` or `x.transpose(*axes)`."""
    if g is ZERO:
        return ZERO
    return np.transpose(g, inverse_permutation(axes, np.ndim(g)))


def inverse_permutation(axes, ndim):
    """The axes undoing `np.transpose(x, axes)` (None for a plain reversal)."""
    if isinstance(axes, tuple) and len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return None
    return tuple(np.argsort([a % ndim for a in axes]))


def matmul_left(g, a, b):
    """The cotangent of `a` in `a @ b` (NumPy's matmul rules, batch broadcasting); a
    deferred sum of outer products (`deferred.OuterSum`) when `b` has few columns."""
    if g is ZERO or a is ZERO or b is ZERO:
        return ZERO
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim <= 2 and (
            type(g) is np.ndarray):
        return outer_sum(g.T, b.T) if b.ndim == 2 else outer_sum(g[None], b[None])
    if type(a) is np.ndarray and type(b) is np.ndarray and b.ndim == 2 and a.ndim <= 2:
        return np.dot(g, b.T) if a.ndim == 2 else np.dot(b, g)
    if _inner(a, b):
        return b * g
    g2, a2, b2 = _as_matrices(g, a, b)
    return np.reshape(unbroadcast(g2 @ np.swapaxes(b2, -1, -2), a2), np.shape(a))


def matmul_right(g, a, b):
    """The cotangent of `b` in `a @ b` (NumPy's matmul rules, batch broadcasting); a
    deferred sum of outer products (`deferred.OuterSum`) when `a` has few rows."""
    if g is ZERO or a is ZERO or b is ZERO:
        return ZERO
    if type(a) is np.ndarray and type(b) is np.ndarray and b.ndim == 2 and a.ndim <= 2:
        if type(g) is np.ndarray:
            return outer_sum(a, g) if a.ndim == 2 else outer_sum(a[None], g[None])
        return np.dot(a.T, g) if a.ndim == 2 else np.outer(a, g)
    if type(a) is np.ndarray and type(b) is np.ndarray and type(g) is np.ndarray and (
            a.ndim == 2 and b.ndim == 1):
        return np.dot(g, a)  # a matrix times a vector: the vector's is g @ a
    if _inner(a, b):
        return a * g
    g2, a2, b2 = _as_matrices(g, a, b)
    return np.reshape(unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2), np.shape(b))


def _inner(a, b):
    """Whether `a @ b` is the inner product of two vectors (its cotangent a number)."""
    return type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 1 == b.ndim


def matmul_left_all(gs, a, bs):
    """The sum of `matmul_left(g, a, b)` over the cotangents `gs` and right operands
    `bs` of a loop's products `a @ b`, one of each per step (`loop_sums`): when the
    operands are all matrices or all vectors, one product of them set side by side,
    as a person forms a weight's gradient over the steps."""
    gs, bs = without_zeros(gs, bs)
    rank = stacked_rank(gs, bs, a)
    if rank == 2 and a.ndim == 1 and bs[0].size >= STACKED:
        return add_all(tuple(np.dot(b, g) for g, b in zip(gs, bs)))
    if rank == 2:
        return matmul_left(np.concatenate(gs, axis=-1), a, np.concatenate(bs, axis=1))
    if rank == 1:
        return matmul_left(np.stack(gs, axis=-1), a, np.stack(bs, axis=1))
    return add_all(tuple(matmul_left(g, a, b) for g, b in zip(gs, bs)))


def matmul_right_all(gs, as_, b):
    """The sum of `matmul_right(g, a, b)` over the cotangents `gs` and left operands
    `as_` of a loop's products `a @ b`, one of each per step (`loop_sums`): when the
    operands are all matrices or all vectors, one product of them stacked, as a
    person forms a weight's gradient over the steps."""
    gs, as_ = without_zeros(gs, as_)
    rank = stacked_rank(gs, as_, b)
    if rank == 2 and b.ndim == 1 and as_[0].size >= STACKED:
        return add_all(tuple(np.dot(g, a) for g, a in zip(gs, as_)))
    if rank == 2:
        return matmul_right(np.concatenate(gs), np.concatenate(as_), b)
    if rank == 1:
        return matmul_right(np.stack(gs), np.stack(as_), b)
    return add_all(tuple(matmul_right(g, a, b) for g, a in zip(gs, as_)))


# Matrices of this many numbers or more are multiplied one by one rather than stacked
# when the products are matrix-vector products: the sum of the products is a vector,
# and a matrix-vector product is bound by reading the matrix, so one product of them
# all reads as much as theirs, after copying them. Stacking pays only for matrices so
# small that a call costs more than a copy (a TreeLSTM's gate weights read by one state
# per node, an RNN's by one input per step).
STACKED = 4096


def without_zeros(gs, operands):
    """The cotangents `gs` of a loop's products and their changing `operands`, without
    the pairs whose cotangent is `ZERO` (`gs` and `operands` themselves when none is)."""
    if not any_zero(*gs):
        return gs, operands
    pairs = [(g, operand) for g, operand in zip(gs, operands) if g is not ZERO]
    return [g for g, _ in pairs], [operand for _, operand in pairs]


def stacked_rank(gs, operands, fixed):
    """For a loop's products of one operand `fixed` and one that changes per step,
    `operands`, with `gs` the cotangents of the products (none `ZERO`): 2 when those
    operands are all matrices, 1 when they are all vectors, with `fixed` a vector or a
    matrix, so that the products join into one; else 0."""
    if not operands or type(fixed) is not np.ndarray or not 1 <= fixed.ndim <= 2:
        return 0
    first = operands[0]
    rank = first.ndim if type(first) is np.ndarray else 0
    if rank not in (1, 2):
        return 0
    for operand in operands:
        if type(operand) is not np.ndarray or operand.ndim != rank:
            return 0
    for g in gs:
        if not (type(g) is np.ndarray or rank == 1 and type(g) is float):
            return 0
    return rank


def _as_matrices(g, a, b):
    """`a @ b` with vectors promoted to matrices as matmul does, and `g` to match."""
    g1 = np.expand_dims(g, -1) if np.ndim(b) == 1 else g
    g2 = np.expand_dims(g1, -2) if np.ndim(a) == 1 else g1
    a2 = a if np.ndim(a) > 1 else np.reshape(a, (1, -1))
    b2 = b if np.ndim(b) > 1 else np.reshape(b, (-1, 1))
    return g2, a2, b2


def dot_left(g, a, b):
    """The cotangent of `a` in `np.dot(a, b)` (any ranks)."""
    if _matrix_vector(g, a, b):  # matmul_left's commonest case, without two calls
        return outer_sum(g[None], b[None])
    if is_matmul(a, b):  # first: matmul_left takes a symbolic zero `g`
        return matmul_left(g, a, b)
    if any_zero(g, a, b):
        return ZERO
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    return np.tensordot(g, b, axes=dot_axes_left(np.ndim(a), np.ndim(b)))


def dot_right(g, a, b):
    """The cotangent of `b` in `np.dot(a, b)` (any ranks)."""
    if _matrix_vector(g, a, b):  # matmul_right's commonest case, without two calls
        return np.dot(g, a)
    if is_matmul(a, b):
        return matmul_right(g, a, b)
    if any_zero(g, a, b):
        return ZERO
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    contracted = np.tensordot(a, g, axes=dot_axes_right(np.ndim(a)))
    return contracted if np.ndim(b) == 1 else np.moveaxis(contracted, 0, -2)


def _matrix_vector(g, a, b):
    """Whether `np.dot(a, b)`, of cotangent `g`, is an array matrix times an array vector."""
    return (type(a) is np.ndarray and type(b) is np.ndarray and type(g) is np.ndarray
            and a.ndim == 2 and b.ndim == 1)


def is_matmul(a, b):
    """Whether `np.dot(a, b)` is `a @ b`: vectors and matrices, whose cotangents are
    then matmul's (outer products deferred, a loop's steps summed as one product)."""
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2
    if a is ZERO or b is ZERO:
        return False
    return 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2


def all_matmul(operands, fixed):
    """Whether `np.dot` of `fixed` with each of `operands` (on either side) is a matmul
    (`is_matmul`)."""
    for operand in operands:  # noqa: SIM110 (a loop is faster than all() on this hot path)
        if not is_matmul(operand, fixed):
            return False
    return True


def dot_left_all(gs, a, bs):
    """The sum of `dot_left(g, a, b)` over a loop's steps (`matmul_left_all`)."""
    if all_matmul(bs, a):
        return matmul_left_all(gs, a, bs)
    return add_all(tuple(dot_left(g, a, b) for g, b in zip(gs, bs)))


def dot_right_all(gs, as_, b):
    """The sum of `dot_right(g, a, b)` over a loop's steps (`matmul_right_all`)."""
    if all_matmul(as_, b):
        return matmul_right_all(gs, as_, b)
    return add_all(tuple(dot_right(g, a, b) for g, a in zip(gs, as_)))


def dot_axes_left(ndim_a, ndim_b):
    """The `tensordot` axes contracting `g` with `b` in the cotangent of `a` in `dot(a, b)`."""
    free_b = [i for i in range(ndim_b) if i != max(ndim_b - 2, 0)]
    ndim_g = ndim_a - 1 + ndim_b - 1
    return list(range(ndim_a - 1, ndim_g)), free_b


def dot_axes_right(ndim_a):
    """The `tensordot` axes contracting `a` with `g` in the cotangent of `b` in `dot(a, b)`."""
    lead = list(range(ndim_a - 1))
    return lead, lead


def tensordot_left(g, a, b, axes=2):
    """The cotangent of `a` in `np.tensordot(a, b, axes)`."""
    if any_zero(g, a, b):
        return ZERO
    contract, order = tensordot_layout(np.ndim(a), np.ndim(b), axes, left=True)
    return np.transpose(np.tensordot(g, b, axes=contract), order)


def tensordot_right(g, a, b, axes=2):
    """The cotangent of `b` in `np.tensordot(a, b, axes)`."""
    if any_zero(g, a, b):
        return ZERO
    contract, order = tensordot_layout(np.ndim(a), np.ndim(b), axes, left=False)
    return np.transpose(np.tensordot(a, g, axes=contract), order)


def tensordot_layout(ndim_a, ndim_b, axes, left):
    """For a cotangent of `tensordot(a, b, axes)`: the axes to contract it over, and
    the permutation putting the result in the order of `a` (left) or `b`."""
    if isinstance(axes, int):
        axes_a, axes_b = list(range(ndim_a - axes, ndim_a)), list(range(axes))
    else:
        axes_a, axes_b = [list(x) if isinstance(x, (list, tuple)) else [x] for x in axes]
    axes_a = [x % ndim_a for x in axes_a]
    axes_b = [x % ndim_b for x in axes_b]
    free_a = [i for i in range(ndim_a) if i not in axes_a]
    free_b = [i for i in range(ndim_b) if i not in axes_b]
    if left:
        contract = (list(range(len(free_a), len(free_a) + len(free_b))), free_b)
        placed = free_a + [axes_a[k] for k in np.argsort(axes_b)]
    else:
        contract = (free_a, list(range(len(free_a))))
        placed = [axes_b[k] for k in np.argsort(axes_a)] + free_b
    return contract, tuple(np.argsort(placed))


def materialize(ct, x, taken=None):
    """Cotangent `ct` as a concrete value shaped like `x`: `ZERO` becomes zeros.

    Used where cotangents leave pullback for the user: the cotangent of a float
    is a float, of an array a writable array of its shape and dtype that nothing
    else holds, of a tuple/list/dict a tuple/list/dict, of a closure the tuple
    of the cotangents of its free variables, of an object (see `records`) a
    copy whose differentiable fields hold their cotangents; non-differentiable
    leaves stay `ZERO`. Arrays are returned as computed unless they may share
    memory with one of the arrays `taken` (to which they are added).
    """
    taken = [] if taken is None else taken
    if type(x) is float and type(ct) is float:
        return ct
    if isinstance(x, types.FunctionType):
        if not x.__closure__:
            return ZERO
        return materialize(ct, tuple(introspection.cell_values(x)), taken)
    if records.is_record(x):
        return _materialize_record(ct, x, taken)
    if isinstance(x, (tuple, list)):
        cts = [ZERO] * len(x) if ct is ZERO else ct
        items = [materialize(c, xi, taken) for c, xi in zip(cts, x)]
        return items if isinstance(x, list) else tuple(items)
    if isinstance(x, dict):
        cts = {} if ct is ZERO else ct
        return {k: materialize(cts.get(k, ZERO), v, taken) for k, v in x.items()}
    if not is_differentiable(x):
        return ZERO
    if ct is ZERO:
        ct = 0.0
    elif isinstance(ct, Deferred):
        ct = ct.dense()
    elif np.iscomplexobj(ct):
        raise TypeError(
            "a complex cotangent reached a real argument: the function computes with complex "
            "values, and pullback's derivative rules are written for real values "
            "(see docs/rules.md)")
    if isinstance(x, np.ndarray):
        return _own_array(ct, x, taken)
    return type(x)(ct)


def _own_array(ct, x, taken):
    """`ct` as an array of `x`'s shape and dtype for the user: an array the
    pullback computed is returned as it is, unless it may share memory with one
    in `taken` (the user's arguments and cotangent, the arrays already returned)."""
    if not (type(ct) is np.ndarray and ct.shape == x.shape and ct.dtype == x.dtype
            and ct.flags.writeable and not any(np.may_share_memory(ct, t) for t in taken)):
        ct = np.array(np.broadcast_to(np.asarray(ct, dtype=x.dtype), x.shape))
    taken.append(ct)
    return ct


def _materialize_record(ct, x, taken):
    """A copy of record `x` whose differentiable fields hold their cotangents."""
    items = records.fields(x)
    if records.is_named_tuple(x):
        cts = dict(zip(items, [ZERO] * len(x) if ct is ZERO else ct))
    else:
        cts = {} if ct is ZERO else ct
    values = {}
    for name, value in items.items():
        ct_value = materialize(cts.get(name, ZERO), value, taken)
        if ct_value is not ZERO:
            values[name] = ct_value
    return records.rebuild(x, values)


def materialize_all(cts, xs, held=None):
    """`materialize` for each cotangent of `cts` and value of `xs`, as a tuple;
    no two share memory, nor any with the arrays of `xs` or of `held` (the
    cotangent the user passed in)."""
    taken = _arrays(held, _arrays(xs, []))
    return tuple(materialize(ct, x, taken) for ct, x in zip(cts, xs))


_INEXACT = ("f", "c")


def _arrays(value, found):
    """`found` with the arrays in `value` (in its tuples, lists and dicts) appended."""
    if type(value) is float:
        return found
    if isinstance(value, np.ndarray):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _arrays(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _arrays(item, found)
    return found


def is_differentiable(x):
    """Whether `x` is a float, complex or inexact array (a value with a derivative)."""
    kind = type(x)
    if kind is float:
        return True
    if kind is np.ndarray:
        return x.dtype.kind in _INEXACT
    if isinstance(x, (bool, int, str, bytes, types.ModuleType, type)) or x is None:
        return False  # a class too: NumPy's scalar types have a `dtype` descriptor
    if isinstance(x, (float, complex)):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.issubdtype(dtype, np.inexact)


def reaverage_weights(h, a, weights, axis=None):
    """The transpose of `unaverage_weights`: the tangent of `average_weights(a, weights,
    axis)` from the tangent `h` of `weights`, laid out as NumPy lays out the weights."""
    if h is ZERO or weights is None:
        return ZERO
    if np.shape(weights) == np.shape(a):
        return h
    order, layout, _ = weights_layout(np.shape(a), axis)
    return np.reshape(np.transpose(h, order), layout)


def recumprod(h, x, axis=None):
    """The tangent of `np.cumprod(x, axis)` from the tangent `h` of `x`, the transpose of
    `uncumprod`: element i gets the sum over j <= i of h[j] times the product of x[:i + 1]
    without x[j] (`cumprod(x) * cumsum(h / x)` when `x` has no zeros). Written in the
    Python pullback transforms."""
    if any_zero(h, x):
        return ZERO
    if np.all(x != 0):
        return np.cumprod(x, axis) * np.cumsum(h / x, axis)
    along, partial, position = _products_without(x, axis)
    steps = np.expand_dims(np.moveaxis(np.reshape(h, np.shape(along)) if axis is None else h,
                                       position, -1), -1)
    return np.moveaxis(np.sum(partial * steps, axis=-2), -1, position)


def with_initial(h, axis=None, include_initial=False):
    """The transpose of `without_initial`: the tangent of `np.cumulative_sum(x, axis=axis,
    include_initial=include_initial)` (or `cumulative_prod`) from that `h` of the same
    without `include_initial`, a zero (the constant it starts with) first along `axis`.
    Written in the Python pullback transforms."""
    if h is ZERO or not include_initial:
        return h
    moved = np.moveaxis(h, 0 if axis is None else axis, 0)
    padded = np.concatenate([np.zeros_like(moved[:1]), moved])
    return np.moveaxis(padded, 0, 0 if axis is None else axis)
