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

import types

import numpy as np

from . import scopes


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
                return -inputs[0] if inputs[1] is self else inputs[0]
            if ufunc in _ABSORBING_UFUNCS and (ufunc not in _DIVISIONS or inputs[0] is self):
                return self
        raise TypeError(f"the symbolic zero cotangent reached numpy.{ufunc.__name__}, "
                        "which is not linear in it: a derivative rule is wrong")

    def __array_function__(self, func, types, args, kwargs):
        if func in _LINEAR_FUNCTIONS:
            return self
        raise TypeError(f"the symbolic zero cotangent reached numpy.{func.__name__}, "
                        "which does not map it to zero: a derivative rule is wrong")


ZERO = Zero()

_DIVISIONS = {np.divide, np.true_divide}
_ABSORBING_UFUNCS = _DIVISIONS | {
    np.multiply, np.negative, np.positive, np.conjugate, np.matmul,
}
_LINEAR_FUNCTIONS = {
    np.sum, np.mean, np.reshape, np.transpose, np.swapaxes, np.moveaxis, np.expand_dims,
    np.squeeze, np.broadcast_to, np.dot, np.vdot, np.inner, np.outer, np.matmul,
    np.tensordot, np.einsum, np.kron, np.cumsum, np.flip, np.ravel, np.diagonal, np.trace,
    np.tril, np.triu, np.conj, np.conjugate, np.real, np.imag, np.rot90, np.roll, np.repeat,
    np.tile,
}


def add(x, y):
    """The sum of two cotangents of the same value (the paper's ⊕).

    Either may be `ZERO`; tuples, lists and dicts are added elementwise.
    """
    if x is ZERO:
        return y
    if y is ZERO:
        return x
    if isinstance(x, tuple):
        return tuple(map(add, x, y))
    if isinstance(x, list):
        return list(map(add, x, y))
    if isinstance(x, dict):
        return {k: add(x.get(k, ZERO), y.get(k, ZERO)) for k in {**x, **y}}
    return x + y


def unbroadcast(g, x):
    """Sum cotangent `g` over the axes along which `x` was broadcast.

    `np.add(x, y)` broadcasts `x` to the result's shape; the cotangent of `x`
    is the cotangent of the result summed back to `x`'s shape.
    """
    if g is ZERO:
        return ZERO
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    return np.reshape(np.sum(g, axis=broadcast_axes(np.shape(g), shape)), shape)


def broadcast_axes(result_shape, shape):
    """The axes of `result_shape` that broadcasting `shape` to it created or stretched."""
    lead = len(result_shape) - len(shape)
    stretched = [lead + i for i, n in enumerate(shape) if n == 1 and result_shape[lead + i] != 1]
    return tuple(range(lead)) + tuple(stretched)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast cotangent `g` of a reduction of `x` back to `x`'s shape."""
    if g is ZERO:
        return ZERO
    shape = np.shape(x)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, normalize_axis(axis, len(shape)))
    return np.broadcast_to(g, shape)


def normalize_axis(axis, ndim):
    """`axis` (an int or tuple, possibly negative) as a tuple of non-negative ints."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim if ndim else a for a in axes)


def reduced_size(x, z):
    """How many elements of `x` were reduced into each element of `z`."""
    return np.size(x) // max(np.size(z), 1)


def extremum_share(x, z, axis=None, keepdims=False):
    """Where `x` attains the max/min `z` along `axis`: 1/count at ties, else 0."""
    hits = np.asarray(x) == unreduce(z, x, axis, keepdims)
    return hits / np.sum(hits, axis=axis, keepdims=True)


def product_of_others(x, axis=None):
    """For each element of `x`, the product of the other elements along `axis`.

    Computed with exclusive cumulative products, so zeros in `x` are exact.
    """
    x = np.asarray(x)
    axes = normalize_axis(tuple(range(x.ndim)) if axis is None else axis, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + list(axes))
    flat = np.reshape(moved, moved.shape[: len(kept)] + (-1,))
    ones = np.ones(flat.shape[:-1] + (1,), dtype=flat.dtype)
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = np.reshape(before * after, moved.shape)
    return np.transpose(others, np.argsort(kept + list(axes)))


def unindex(g, x, index):
    """The cotangent of `x` from the cotangent `g` of `x[index]`.

    For arrays this scatters `g` into zeros, adding repeated indices; for
    tuples, lists and dicts it puts `g` at `index` and `ZERO` at the other items.
    """
    if g is ZERO:
        return ZERO
    if isinstance(x, dict):
        return {k: g if k == index else ZERO for k in x}
    if isinstance(x, (tuple, list)):
        items = [ZERO] * len(x)
        if isinstance(index, slice):
            for i, gi in zip(range(*index.indices(len(x))), g):
                items[i] = gi
        else:
            items[index] = g
        return type(x)(items) if isinstance(x, list) else tuple(items)
    out = np.zeros(np.shape(x), dtype=np.result_type(x, g))
    if _is_basic_index(index):
        out[index] = g
    else:
        np.add.at(out, index, g)
    return out


def _is_basic_index(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               for p in parts)


def repack(x, items):
    """The cotangent of `x` from the cotangents of `items` unpacked from it (`a, b = x`)."""
    if isinstance(x, list):
        return list(items)
    if isinstance(x, np.ndarray):
        return np.stack([np.zeros_like(row) if g is ZERO else g for g, row in zip(items, x)])
    return tuple(items)


def unstar(g, parts, starred):
    """The cotangents of the parts of `(a, *xs, b)` from the cotangent `g` of the result.

    `starred[i]` says whether `parts[i]` was unpacked (`*xs`).
    """
    result, start = [], 0
    for part, is_starred in zip(parts, starred):
        end = start + (len(part) if is_starred else 1)
        if g is ZERO:
            result.append(ZERO)
        else:
            result.append(repack(part, g[start:end]) if is_starred else g[start])
        start = end
    return tuple(result)


def undict(g, parts, keys):
    """The cotangents of the parts of `{k: v, **d}` from the cotangent `g` of the result.

    `keys[i]` is the key of `parts[i]`, or None for a dict unpacked with `**`;
    an item that a later part overrides gets `ZERO`.
    """
    result = []
    for i, (key, part) in enumerate(zip(keys, parts)):
        later = set()
        for later_key, later_part in zip(keys[i + 1 :], parts[i + 1 :]):
            later.update(later_part if later_key is None else (later_key,))
        if key is None:
            result.append({k: ZERO if g is ZERO or k in later else g[k] for k in part})
        else:
            result.append(ZERO if g is ZERO or key in later else g[key])
    return tuple(result)


def unroll(cotangents, captured):
    """The cotangents of the variables read by a group of recursive closures.

    A closure that calls itself (or others of its group) has an environment
    cotangent that holds, for each call it made, the environment cotangent of
    the callee, nested as deep as the recursion went.

    Args:
      cotangents: the cotangent of each closure of the group, by name.
      captured: the names each closure reads, in `co_freevars` order.

    Returns:
      The summed cotangent of each variable read that is not in the group.
    """
    totals = {var: ZERO for names in captured.values() for var in names if var not in captured}
    pending = list(cotangents.items())
    while pending:
        name, ct = pending.pop()
        if ct is ZERO:
            continue
        for var, item in zip(captured[name], ct):
            if var in captured:
                pending.append((var, item))
            else:
                totals[var] = add(totals[var], item)
    return totals


def unstack(g, xs, axis=0):
    """The cotangents of the arrays `xs` from the cotangent `g` of `np.stack(xs, axis)`."""
    if g is ZERO:
        return ZERO
    return [np.take(g, i, axis=axis) for i in range(len(xs))]


def unconcatenate(g, xs, axis=0):
    """The cotangents of the arrays `xs` from the cotangent of `np.concatenate(xs, axis)`."""
    if g is ZERO:
        return ZERO
    if axis is None:
        ends = np.cumsum([np.size(x) for x in xs])[:-1]
        return [np.reshape(part, np.shape(x)) for part, x in zip(np.split(g, ends), xs)]
    ends = np.cumsum([np.shape(x)[axis] for x in xs])[:-1]
    return np.split(g, ends, axis=axis)


def unarray(g, x):
    """The cotangent of (nested) list or tuple `x` from the cotangent of `np.array(x)`."""
    if g is ZERO:
        return ZERO
    if isinstance(x, (list, tuple)):
        items = [unarray(gi, xi) for gi, xi in zip(g, x)]
        return items if isinstance(x, list) else tuple(items)
    return unbroadcast(g, x)


def select(keep, g):
    """`g` where `keep` holds, zero elsewhere."""
    if g is ZERO:
        return ZERO
    return np.where(keep, g, 0.0)


def tie_share(x, z, y):
    """For `z = np.maximum(x, y)` (or minimum), the share of `x`: 1, 1/2 at a tie, or 0."""
    return (x == z) / (1.0 + (x == y))


def within(a, lo, hi):
    """Where `np.clip(a, lo, hi)` passes `a` through; `lo` or `hi` may be None."""
    keep = np.ones(np.shape(a), dtype=bool)
    if lo is not None:
        keep = keep & (a >= lo)
    if hi is not None:
        keep = keep & (a <= hi)
    return keep


def untranspose(g, axes=None):
    """The cotangent of `x` from that of `np.transpose(x, axes)` or `x.transpose(*axes)`."""
    if g is ZERO:
        return ZERO
    if isinstance(axes, tuple) and len(axes) == 1:
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return np.transpose(g)
    return np.transpose(g, np.argsort([a % np.ndim(g) for a in axes]))


def matmul_left(g, a, b):
    """The cotangent of `a` in `a @ b` (NumPy's matmul rules, batch broadcasting)."""
    if g is ZERO:
        return ZERO
    g, a2, b2 = _as_matrices(g, a, b)
    return np.reshape(unbroadcast(g @ np.swapaxes(b2, -1, -2), a2), np.shape(a))


def matmul_right(g, a, b):
    """The cotangent of `b` in `a @ b` (NumPy's matmul rules, batch broadcasting)."""
    if g is ZERO:
        return ZERO
    g, a2, b2 = _as_matrices(g, a, b)
    return np.reshape(unbroadcast(np.swapaxes(a2, -1, -2) @ g, b2), np.shape(b))


def _as_matrices(g, a, b):
    """`a @ b` with vectors promoted to matrices as matmul does, and `g` to match."""
    if np.ndim(b) == 1:
        g = np.expand_dims(g, -1)
    if np.ndim(a) == 1:
        g = np.expand_dims(g, -2)
    a2 = a if np.ndim(a) > 1 else np.reshape(a, (1, -1))
    b2 = b if np.ndim(b) > 1 else np.reshape(b, (-1, 1))
    return g, a2, b2


def dot_left(g, a, b):
    """The cotangent of `a` in `np.dot(a, b)` (any ranks)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    free_b = [i for i in range(np.ndim(b)) if i != max(np.ndim(b) - 2, 0)]
    return np.tensordot(g, b, axes=(list(range(np.ndim(a) - 1, np.ndim(g))), free_b))


def dot_right(g, a, b):
    """The cotangent of `b` in `np.dot(a, b)` (any ranks)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    lead = list(range(np.ndim(a) - 1))
    contracted = np.tensordot(a, g, axes=(lead, lead))
    return contracted if np.ndim(b) == 1 else np.moveaxis(contracted, 0, -2)


def materialize(ct, x):
    """Cotangent `ct` as a concrete value shaped like `x`: `ZERO` becomes zeros.

    Used where cotangents leave pullback for the user: the cotangent of a float
    is a float, of an array a writable array of its shape and dtype, of a
    tuple/list/dict a tuple/list/dict, of a closure the tuple of the
    cotangents of its free variables; non-differentiable leaves stay `ZERO`.
    """
    if isinstance(x, types.FunctionType):
        return materialize(ct, tuple(scopes.cell_values(x))) if x.__closure__ else ZERO
    if isinstance(x, (tuple, list)):
        cts = [ZERO] * len(x) if ct is ZERO else ct
        items = [materialize(c, xi) for c, xi in zip(cts, x)]
        return items if isinstance(x, list) else tuple(items)
    if isinstance(x, dict):
        cts = {} if ct is ZERO else ct
        return {k: materialize(cts.get(k, ZERO), v) for k, v in x.items()}
    if not is_differentiable(x):
        return ZERO
    if ct is ZERO:
        ct = 0.0
    if isinstance(x, np.ndarray):
        ct = np.broadcast_to(np.asarray(ct, dtype=x.dtype), x.shape)
        return ct if ct.flags.writeable else ct.copy()
    return type(x)(ct)


def is_differentiable(x):
    """Whether `x` is a float, complex or inexact array (a value with a derivative)."""
    if isinstance(x, (bool, int, str, bytes)) or x is None:
        return False
    if isinstance(x, (float, complex)):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.issubdtype(dtype, np.inexact)
