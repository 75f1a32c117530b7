"""Python versions of NumPy functions (`registry.implemented_by`): `np.gradient` and
`np.select`.

Each is written with slicing, `np.concatenate` and `np.where`, whose rules give its
derivatives at every order, and returns NumPy's values. Both are linear in their
differentiable arguments (`np.select`'s conditions are constants).
"""

import numpy as np

from pullback.rules.registry import implemented_by
from pullback.runtime.cotangents import normalize_axis


@implemented_by(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """`np.gradient(f, *varargs, axis=axis, edge_order=edge_order)`: central differences
    inside, one-sided differences of order `edge_order` at the ends, for spacings (none,
    one for every axis, or one per axis) that are scalars or the coordinates of the
    points along their axis, differentiable too."""
    f = np.asarray(f)
    if not np.issubdtype(f.dtype, np.inexact):
        f = np.asarray(f, dtype=np.float64)
    axes = tuple(range(np.ndim(f))) if axis is None else normalize_axis(axis, np.ndim(f))
    spacings = _spacings(varargs, len(axes))
    parts = [_differences(f, ax, h, edge_order) for ax, h in zip(axes, spacings)]
    return parts[0] if len(parts) == 1 else tuple(parts)


def _spacings(varargs, count):
    """The spacing along each of `count` axes, from `np.gradient`'s `varargs`: a scalar,
    or the coordinates of the points."""
    if any(np.ndim(h) > 1 for h in varargs):
        raise ValueError("distances must be either scalars or 1d")
    if not varargs:
        return [1.0 for _ in range(count)]
    if len(varargs) == 1:
        return [varargs[0] for _ in range(count)]
    if len(varargs) != count:
        raise TypeError("invalid number of arguments")
    return varargs


def _differences(f, axis, h, edge_order):
    """`np.gradient` of `f` along `axis` alone, its points `h` apart, or at the
    coordinates `h`."""
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if np.shape(f)[axis] < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least (edge_order + 1) elements are required.")
    if np.ndim(h) == 1:
        if len(h) != np.shape(f)[axis]:
            raise ValueError("when 1d, distances must match the length of the "
                             "corresponding dimension")
        steps = np.diff(np.asarray(h) * 1.0)
        if not np.all(steps == steps[0]):
            return _uneven_differences(f, axis, steps, edge_order)
        h = steps[0]
    inside = (_part(f, axis, 2, None) - _part(f, axis, None, -2)) / (2.0 * h)
    if edge_order == 1:
        first = (_part(f, axis, 1, 2) - _part(f, axis, 0, 1)) / h
        last = (_part(f, axis, -1, None) - _part(f, axis, -2, -1)) / h
    else:
        first = (-1.5 / h * _part(f, axis, 0, 1) + 2.0 / h * _part(f, axis, 1, 2)
                 + -0.5 / h * _part(f, axis, 2, 3))
        last = (0.5 / h * _part(f, axis, -3, -2) + -2.0 / h * _part(f, axis, -2, -1)
                + 1.5 / h * _part(f, axis, -1, None))
    return np.asarray(np.concatenate([first, inside, last], axis=axis), dtype=f.dtype)


def _uneven_differences(f, axis, steps, edge_order):
    """`np.gradient` of `f` along `axis` at points `steps` apart (not all equal): NumPy's
    second-order formulas for uneven spacing."""
    along = [1] * np.ndim(f)
    along[axis] = -1

    def weights(values):
        return np.reshape(values, along)

    before, after = steps[:-1], steps[1:]
    inside = (weights(-after / (before * (before + after))) * _part(f, axis, None, -2)
              + weights((after - before) / (before * after)) * _part(f, axis, 1, -1)
              + weights(before / (after * (before + after))) * _part(f, axis, 2, None))
    if edge_order == 1:
        first = (_part(f, axis, 1, 2) - _part(f, axis, 0, 1)) / steps[0]
        last = (_part(f, axis, -1, None) - _part(f, axis, -2, -1)) / steps[-1]
    else:
        h1, h2 = steps[0], steps[1]
        first = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)) * _part(f, axis, 0, 1)
                 + (h1 + h2) / (h1 * h2) * _part(f, axis, 1, 2)
                 - h1 / (h2 * (h1 + h2)) * _part(f, axis, 2, 3))
        h1, h2 = steps[-2], steps[-1]
        last = (h2 / (h1 * (h1 + h2)) * _part(f, axis, -3, -2)
                - (h2 + h1) / (h1 * h2) * _part(f, axis, -2, -1)
                + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * _part(f, axis, -1, None))
    return np.asarray(np.concatenate([first, inside, last], axis=axis), dtype=f.dtype)


def _part(f, axis, start, stop):
    """`f[start:stop]` along `axis`."""
    return f[(slice(None),) * axis + (slice(start, stop),)]


@implemented_by(np.select)
def select(condlist, choicelist, default=0):
    """`np.select(condlist, choicelist, default)`: at each element, the choice of the
    first condition that holds there, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    if any(np.asarray(condition).dtype != bool for condition in condlist):
        raise TypeError("invalid entry in condlist: should be boolean ndarray")
    result = default
    for i in range(len(condlist) - 1, -1, -1):
        result = np.where(condlist[i], choicelist[i], result)
    return result
