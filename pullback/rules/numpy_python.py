"""Python versions of NumPy functions (`registry.implemented_by`), which pullback
differentiates in their place, at every order: `np.gradient`, `np.select`, `np.interp`,
`np.correlate`, `np.convolve`, `np.trapezoid` (`np.trapz`), `np.polyval`, `np.vander`,
`np.polyfit`, `np.cov`, `np.corrcoef`, `np.median`, `np.quantile` and `np.percentile` and
their NaN-skipping versions, `np.nanmax`, `np.nanmin`, `np.nanvar`, `np.nanstd`,
`np.nancumsum`, `np.ediff1d` and `np.meshgrid`.

Each takes NumPy's arguments and returns NumPy's values, dtypes and types (`np.correlate`
and `np.convolve` to rounding: they sum in another order), computed with primitives that
have rules: slicing, `np.concatenate`, `np.where`, `np.sort` and `np.take_along_axis`,
`np.cumprod`, `np.linalg.lstsq`. Positions found in the values (`np.searchsorted`, the
order of a sort) are constants, so the derivative flows to the values the result is made
of: the points around an interpolated value, the order statistics of a median or a
quantile; the NaNs a NaN-skipping function skips get none. Options a version does not have
(`out=`, a quantile's `method` other than "linear", `np.nanmax`'s `initial=` and `where=`)
raise a `ValueError` where the call is differentiated.
"""
import warnings

import numpy as np

from pullback.rules.registry import implemented_by
from pullback.runtime.cotangents import normalize_axis

from .numpy_versions import numpy_functions


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


@implemented_by(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """`np.interp(x, xp, fp, left, right, period)`: the piecewise-linear interpolant of the
    points `(xp, fp)` at `x`, `left` before `xp[0]` and `right` after `xp[-1]`; with a
    `period`, of the points repeated every `period`."""
    if np.iscomplexobj(fp):
        raise TypeError("pullback differentiates np.interp of real values only")
    x = np.asarray(x, dtype=np.float64)
    xp = np.asarray(xp, dtype=np.float64)
    fp = np.asarray(fp, dtype=np.float64)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("Data points must be 1-D sequences")
    if len(xp) != len(fp):
        raise ValueError("fp and xp are not of the same length.")
    if period is not None:
        x, xp, fp = _periodic_points(x, xp, fp, period)
        left = right = None
    if len(xp) == 0:
        raise ValueError("array of sample points is empty")
    inside = _segments(x, xp, fp) if len(xp) > 1 else fp[0]
    value = np.where(x > xp[-1], fp[-1] if right is None else right, inside)
    value = np.where(x < xp[0], fp[0] if left is None else left, value)
    return _scalar_if_0d(value)


def _periodic_points(x, xp, fp, period):
    """`x`, `xp` and `fp` of `np.interp` with a `period`: the points brought into one
    period and sorted, with one more at each end from the periods next to it."""
    if period == 0:
        raise ValueError("period must be a non-zero value")
    period = np.abs(period)
    xp = xp % period
    order = np.argsort(xp)
    xp = xp[order]
    fp = fp[order]
    return (x % period, np.concatenate((xp[-1:] - period, xp, xp[0:1] + period)),
            np.concatenate((fp[-1:], fp, fp[0:1])))


def _segments(x, xp, fp):
    """The line through the two points of `(xp, fp)` around each `x` (the first or last
    two outside `xp`), at `x`; at a point of `xp`, its value (the last of equal points);
    NaN at NaN."""
    at = np.maximum(np.searchsorted(xp, x, side="right") - 1, 0)
    j = np.minimum(at, len(xp) - 2)
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    value = slope * (x - xp[j]) + fp[j]
    # NumPy's: where an infinite fp makes that NaN, from the other end of the segment
    other = slope * (x - xp[j + 1]) + fp[j + 1]
    other = np.where(np.isnan(other) & (fp[j] == fp[j + 1]), fp[j], other)
    value = np.where(np.isnan(value), other, value)
    return np.where(np.isnan(x), x, np.where(x == xp[at], fp[at], value))


_CORRELATION_MODES = ("valid", "same", "full")  # NumPy also takes their positions


@implemented_by(np.correlate)
def correlate(a, v, mode="valid"):
    """`np.correlate(a, v, mode)`: `c[k] = sum(a[n + k] * v[n])` over the `n` where both
    are defined, for the shifts `k` of `mode`."""
    a, v = np.asarray(a), np.asarray(v)
    if np.ndim(a) == 0 or np.ndim(v) == 0:
        raise ValueError("object of too small depth for desired array")
    if len(a) == 0:
        raise ValueError("first array argument cannot be empty")
    if len(v) == 0:
        raise ValueError("second array argument cannot be empty")
    return _correlation(a, v, mode)


@implemented_by(np.convolve)
def convolve(a, v, mode="full"):
    """`np.convolve(a, v, mode)`: the correlation of the longer of `a` and `v` with the
    other reversed."""
    a, v = np.asarray(a), np.asarray(v)
    a, v = (np.reshape(a, (1,)) if np.ndim(a) == 0 else a,
            np.reshape(v, (1,)) if np.ndim(v) == 0 else v)
    if len(a) == 0:
        raise ValueError("a cannot be empty")
    if len(v) == 0:
        raise ValueError("v cannot be empty")
    if len(v) > len(a):
        a, v = v, a
    return _correlation(a, v[::-1], mode)


def _correlation(a, v, mode):
    """`np.correlate(a, v, mode)` of non-empty vectors: the part `mode` names of the full
    correlation, summed over shifts of the shorter one."""
    if np.ndim(a) > 1 or np.ndim(v) > 1:
        raise ValueError("object too deep for desired array")
    if mode in (0, 1, 2):
        mode = _CORRELATION_MODES[mode]
    if mode not in _CORRELATION_MODES:
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = len(a), len(v)
    full = _full_correlation(a, v) if n >= m else _full_correlation(v, a)[::-1]
    if mode == "full":
        return full
    start = min(n, m) - 1 if mode == "valid" else (m - 1) // 2 if n >= m else n // 2
    return full[start:start + (abs(n - m) + 1 if mode == "valid" else max(n, m))]


def _full_correlation(a, v):
    """The full correlation of `a` with `v`, no longer than `a`: `c[k] = sum(v[j] *
    a[k + j - len(v) + 1])` over `j`, `a` being zero outside its entries."""
    m = len(v)
    zeros = np.zeros(m - 1, dtype=np.result_type(a, v))
    padded = np.concatenate((zeros, a, zeros))
    length = len(a) + m - 1
    return sum(v[j] * padded[j:j + length] for j in range(m))


@implemented_by(*numpy_functions("trapezoid", "trapz"))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """`np.trapezoid(y, x, dx, axis)`: the integral of `y` along `axis` by the trapezoidal
    rule, at the points `x` (along `axis`, or a vector of them) or `dx` apart."""
    y = np.asarray(y)
    axis = normalize_axis(axis, np.ndim(y))[0]
    if x is None:
        widths = dx
    elif np.ndim(x) == 1:
        shape = [1] * np.ndim(y)
        shape[axis] = len(x) - 1
        widths = np.reshape(np.diff(np.asarray(x)), shape)
    else:
        widths = np.diff(np.asarray(x), axis=axis)
    heights = _part(y, axis, 1, None) + _part(y, axis, None, -1)
    return np.sum(widths * heights / 2.0, axis=axis)


@implemented_by(np.polyval)
def polyval(p, x):
    """`np.polyval(p, x)`: the polynomial of coefficients `p` (highest power first) at `x`,
    by Horner's scheme."""
    if isinstance(x, np.poly1d):
        raise TypeError("pullback differentiates np.polyval at numbers, not at a poly1d")
    p = np.asarray(p)
    x = np.asarray(x)
    y = np.zeros_like(x)
    for coefficient in p:
        y = y * x + coefficient
    return y


@implemented_by(np.vander)
def vander(x, N=None, increasing=False):
    """`np.vander(x, N, increasing)`: the powers `x ** k` for `k` below `N` (by default
    `len(x)`), by repeated products as NumPy's; decreasing unless `increasing`."""
    x = np.asarray(x)
    if np.ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    if N is None:
        N = len(x)
    dtype = np.promote_types(x.dtype, int)
    ones = np.ones((len(x), min(N, 1)), dtype=dtype)
    repeated = np.broadcast_to(np.asarray(x, dtype=dtype)[:, None], (len(x), max(N - 1, 0)))
    powers = np.concatenate((ones, np.cumprod(repeated, axis=1)), axis=1)
    return powers if increasing else powers[:, ::-1]


# NumPy's warning of a fit of deficient rank (`np.RankWarning` before NumPy 1.25)
_RANK_WARNING = np.exceptions.RankWarning if hasattr(np, "exceptions") else np.RankWarning


@implemented_by(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """`np.polyfit(x, y, deg, rcond, full, w, cov)`: the coefficients of the polynomial of
    degree `deg` closest to the points `(x, y)` (to each column of `y`) in least squares,
    weighted by `w`, from `np.linalg.lstsq` of their scaled Vandermonde matrix; with
    `full`, also the residuals, the rank, the singular values and `rcond`; with `cov`,
    also the covariance of the coefficients."""
    order = int(deg) + 1
    x = np.asarray(x) + 0.0
    y = np.asarray(y) + 0.0
    _check_polyfit(x, y, deg)
    if rcond is None:
        rcond = len(x) * np.finfo(x.dtype).eps
    lhs = np.vander(x, order)
    rhs = y
    if w is not None:
        w = np.asarray(w) + 0.0
        if np.ndim(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if np.shape(w)[0] != np.shape(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if np.ndim(rhs) == 2 else w)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, residuals, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", _RANK_WARNING, stacklevel=2)
    if full:
        return c, residuals, rank, s, rcond
    if cov:
        return c, _coefficients_covariance(lhs, scale, residuals, len(x) - order, y, cov)
    return c


def _check_polyfit(x, y, deg):
    """Raise NumPy's errors for arguments of `np.polyfit` it refuses."""
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if np.ndim(x) != 1:
        raise TypeError("expected 1D vector for x")
    if np.size(x) == 0:
        raise TypeError("expected non-empty vector for x")
    if np.ndim(y) < 1 or np.ndim(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if np.shape(x)[0] != np.shape(y)[0]:
        raise TypeError("expected x and y to have same length")


def _coefficients_covariance(lhs, scale, residuals, freedom, y, cov):
    """The covariance of `np.polyfit`'s coefficients, from its scaled Vandermonde matrix
    `lhs`, the `scale` of its columns and the `residuals`, with `freedom` more points than
    coefficients; unscaled by the residuals when `cov` is "unscaled"."""
    base = np.linalg.inv(np.dot(lhs.T, lhs)) / np.outer(scale, scale)
    if cov == "unscaled":
        factor = 1
    elif freedom <= 0:
        raise ValueError("the number of data points must exceed order to scale the "
                         "covariance matrix")
    else:
        factor = residuals / freedom
    return base * factor if np.ndim(y) == 1 else base[:, :, None] * factor


@implemented_by(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """`np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)`: the covariance
    of the variables in the rows of `m` and `y` (the columns, unless `rowvar`), over their
    observations weighted by `fweights` and `aweights`."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = np.asarray(m)
    if np.ndim(m) > 2 or y is not None and np.ndim(y) > 2:
        raise ValueError(f"{'m' if np.ndim(m) > 2 else 'y'} has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m, np.float64) if y is None else np.result_type(
            m, y, np.float64)
    X = np.atleast_2d(np.asarray(m, dtype=dtype))
    if not rowvar and np.ndim(m) != 1:
        X = X.T
    if np.shape(X)[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = np.atleast_2d(np.asarray(y, dtype=dtype))
        X = np.concatenate((X, y.T if not rowvar and np.shape(y)[0] != 1 else y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = _observation_weights(fweights, aweights, np.shape(X)[1])
    if w is None:
        X = X - np.mean(X, axis=1)[:, None]
        factor = np.shape(X)[1] - ddof
    else:
        X = X - np.average(X, axis=1, weights=w)[:, None]
        factor = _weighted_freedom(w, aweights, ddof)
    if factor <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        factor = 0.0
    c = np.dot(X, X.T if w is None else (X * w).T)
    return np.squeeze(np.asarray(c * np.true_divide(1, factor), dtype=c.dtype))


def _observation_weights(fweights, aweights, count):
    """The weight of each of `count` observations in `np.cov`: the product of the
    frequencies `fweights` and the weights `aweights` given, or None."""
    w = None
    for weights, kind in ((fweights, "fweights"), (aweights, "aweights")):
        if weights is None:
            continue
        weights = np.asarray(weights, dtype=float)
        if kind == "fweights" and not np.all(weights == np.round(weights)):
            raise TypeError("fweights must be integer")
        if np.ndim(weights) > 1:
            raise RuntimeError(f"cannot handle multidimensional {kind}")
        if np.shape(weights)[0] != count:
            raise RuntimeError(f"incompatible numbers of samples and {kind}")
        if np.any(weights < 0):
            raise ValueError(f"{kind} cannot be negative")
        w = weights if w is None else w * weights
    return w


def _weighted_freedom(w, aweights, ddof):
    """The normalisation of `np.cov` with observations weighted by `w`: their total, less
    `ddof` (times the effective count the `aweights` make)."""
    total = np.sum(w)
    if ddof == 0:
        return total
    if aweights is None:
        return total - ddof
    return total - ddof * sum(w * np.asarray(aweights, dtype=float)) / total


@implemented_by(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """`np.corrcoef(x, y, rowvar, dtype=dtype)`: the covariance of `np.cov` divided by
    the standard deviations of both variables, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if np.ndim(c) == 0:
        return c / c
    deviations = np.sqrt(np.diag(c))
    return np.clip(c / deviations[:, None] / deviations[None, :], -1, 1)


@implemented_by(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """`np.median(a, axis, keepdims=keepdims)`: the mean of the middle one or two of the
    sorted values along `axis` (NaN where one is NaN)."""
    _check_no_out(out, "median")
    ordered, kept = _sorted_along(a, axis)
    n = np.shape(ordered)[0]
    result = _nan_where_last_is(ordered, np.mean(ordered[(n - 1) // 2:n // 2 + 1], axis=0))
    return np.reshape(result, kept) if keepdims else result


@implemented_by(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """`np.nanmedian(a, axis, keepdims=keepdims)`: the median of the values that are not
    NaN along `axis` (NaN where all are)."""
    _check_no_out(out, "nanmedian")
    ordered, kept = _sorted_along(a, axis)
    count = _counted(ordered)
    lower = np.take_along_axis(ordered, ((count - 1) // 2)[None], axis=0)[0]
    upper = np.take_along_axis(ordered, (count // 2)[None], axis=0)[0]
    if np.any(count == 0):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
    result = _scalar_if_0d((lower + upper) / 2)
    return np.reshape(result, kept) if keepdims else result


@implemented_by(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """`np.quantile(a, q, axis, keepdims=keepdims)` by the linear method: between the
    order statistics around `q * (n - 1)`, linearly."""
    return _quantile_version("quantile", a, q, axis, out, method, keepdims, weights)


@implemented_by(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """`np.percentile(a, q, axis, keepdims=keepdims)`: `np.quantile` at `q / 100`."""
    return _quantile_version("percentile", a, q, axis, out, method, keepdims, weights)


@implemented_by(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """`np.nanquantile(a, q, axis, keepdims=keepdims)`: `np.quantile` of the values that
    are not NaN (NaN where all are)."""
    return _quantile_version("nanquantile", a, q, axis, out, method, keepdims, weights)


@implemented_by(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """`np.nanpercentile(a, q, axis, keepdims=keepdims)`: `np.nanquantile` at
    `q / 100`."""
    return _quantile_version("nanpercentile", a, q, axis, out, method, keepdims, weights)


_QUANTILE_VERSIONS = {"quantile": (False, False), "percentile": (True, False),
                      "nanquantile": (False, True), "nanpercentile": (True, True)}
"""Each quantile function's name -> whether `q` is in percent, and whether NaNs are skipped."""


def _quantile_version(name, a, q, axis, out, method, keepdims, weights):
    """NumPy's function `name` (a key of `_QUANTILE_VERSIONS`) by the linear method."""
    percent, skip_nan = _QUANTILE_VERSIONS[name]
    _check_quantile_options(out, method, weights, name)
    fractions = np.true_divide(q, 100) if percent else np.asarray(q)
    bounds = "Percentiles must be in the range [0, 100]" if percent else (
        "Quantiles must be in the range [0, 1]")
    return _quantiles(a, q, fractions, axis, keepdims, skip_nan, bounds)


def _check_no_out(out, name):
    """Refuse `out=`, which pullback's version of `np.<name>` does not write."""
    if out is not None:
        raise ValueError(f"pullback differentiates np.{name} without out=: use its result")


def _check_quantile_options(out, method, weights, name):
    """Refuse the options of `np.<name>` its Python version does not have: `out=`, a
    method other than the linear one, and weights (which only "inverted_cdf" takes)."""
    _check_no_out(out, name)
    if method != "linear":
        raise ValueError(f"pullback differentiates np.{name} by method='linear' (the "
                         f"default) only, not {method!r}")
    if weights is not None:
        raise ValueError(f"pullback differentiates np.{name} without weights=")


def _quantiles(a, q, fractions, axis, keepdims, skip_nan, out_of_range):
    """The quantiles `fractions` (`q` as fractions) of `a` along `axis`, their axes first,
    of the values that are not NaN when `skip_nan`, else NaN where one is, as NumPy
    computes them (`out_of_range` is its message for fractions outside [0, 1])."""
    if np.iscomplexobj(a):
        raise TypeError("a must be an array of real numbers")
    if not np.all((fractions >= 0) & (fractions <= 1)):
        raise ValueError(out_of_range)
    if np.ndim(fractions) > 2:
        raise ValueError("q must be a scalar or 1d")
    ordered, kept = _sorted_along(a, axis)
    count = _counted(ordered) if skip_nan else np.shape(ordered)[0]
    if skip_nan and np.any(count == 0):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    q_shape = np.shape(fractions)
    positions = (count - 1) * np.reshape(fractions, q_shape + (1,) * (np.ndim(ordered) - 1))
    positions = np.asarray(positions, dtype=np.result_type(fractions))
    if np.issubdtype(positions.dtype, np.integer):
        result = _order_statistics(ordered, positions)
    else:
        result = _interpolated_statistics(ordered, positions, count, type(q) in (int, float))
    result = _scalar_if_0d(result if skip_nan else _nan_where_last_is(ordered, result))
    return np.reshape(result, q_shape + kept) if keepdims else result


def _interpolated_statistics(ordered, positions, count, weak):
    """Between the order statistics of `ordered` (sorted along its first axis, its first
    `count` values not NaN) around the fractional `positions`, linearly as NumPy's `_lerp`
    (with the weight in the dtype of `ordered` when the quantile was a Python number,
    `weak`, as NumPy's promotion makes it)."""
    below = np.floor(positions)
    last = positions >= count - 1
    first = positions < 0
    lower = np.where(first, 0, np.where(last, count - 1, below)).astype(np.intp)
    upper = np.where(first, 0, np.where(last, count - 1, below + 1)).astype(np.intp)
    t = np.asarray(positions - lower, dtype=positions.dtype)
    nearer_upper = t >= 0.5
    rest = 1 - t
    if weak:
        dtype = np.result_type(ordered.dtype, 0.0)
        t, rest = np.asarray(t, dtype=dtype), np.asarray(rest, dtype=dtype)
    start = _order_statistics(ordered, lower)
    end = _order_statistics(ordered, upper)
    difference = end - start
    return np.where(nearer_upper, end - difference * rest, start + difference * t)


def _order_statistics(ordered, indices):
    """The values of `ordered` at `indices` along its first axis, `indices` having the
    quantiles' axes, then the other axes of `ordered` (or axes broadcasting to them)."""
    rest = np.shape(ordered)[1:]
    q_shape = np.shape(indices)[:np.ndim(indices) - len(rest)]
    flat = np.reshape(np.broadcast_to(indices, q_shape + rest), (-1,) + rest)
    return np.reshape(np.take_along_axis(ordered, flat, axis=0), q_shape + rest)


def _sorted_along(a, axis):
    """The values of `a` along the axes `axis` (all of them when None) in one axis, first,
    sorted (NaN last), the other axes after it; and the shape of the result of a
    reduction along `axis` with `keepdims=True`."""
    a = np.asarray(a)
    if axis is None:
        return np.sort(np.ravel(a)), (1,) * np.ndim(a)
    axes = normalize_axis(axis, np.ndim(a))
    others = tuple(i for i in range(np.ndim(a)) if i not in axes)
    moved = np.transpose(a, axes + others)
    merged = np.reshape(moved, (-1,) + np.shape(moved)[len(axes):])
    kept = tuple(1 if i in axes else n for i, n in enumerate(np.shape(a)))
    return np.sort(merged, axis=0), kept


def _nan_where_last_is(ordered, result):
    """`result`, NaN where the last of the values sorted along the first axis of `ordered`
    is NaN, as NumPy's median and quantiles check: that value itself for a `result`
    without axes."""
    if np.size(ordered) == 0 or not np.issubdtype(ordered.dtype, np.inexact):
        return result
    last = ordered[-1]
    if not np.any(np.isnan(last)):
        return result
    return last if np.ndim(result) == 0 else np.where(np.isnan(last), last, result)


def _counted(ordered):
    """How many values are not NaN along the first axis of `ordered`."""
    return np.sum(np.logical_not(np.isnan(ordered)), axis=0)


def _scalar_if_0d(value):
    """`value`, as a NumPy scalar when it has no axes, as NumPy's functions return it."""
    return value[()] if np.ndim(value) == 0 else value


@implemented_by(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`np.nanmax(a, axis, keepdims=keepdims)`: the maximum of the values that are not
    NaN (NaN where all are)."""
    return _nan_extremum(np.max, -np.inf, a, axis, keepdims, (out, initial, where), "nanmax")


@implemented_by(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`np.nanmin(a, axis, keepdims=keepdims)`: the minimum of the values that are not
    NaN (NaN where all are)."""
    return _nan_extremum(np.min, np.inf, a, axis, keepdims, (out, initial, where), "nanmin")


def _nan_extremum(extremum, fill, a, axis, keepdims, options, name):
    """`extremum` of `a` along `axis` with its NaNs replaced by `fill`, NaN where all
    were (`options`, NumPy's `out`, `initial` and `where`, are refused)."""
    if any(option is not None for option in options):
        raise ValueError(f"pullback differentiates np.{name} without out=, initial= and "
                         "where=")
    a = np.asarray(a)
    missing = np.isnan(a)
    result = extremum(np.where(missing, fill, a), axis=axis, keepdims=keepdims)
    empty = np.all(missing, axis=axis, keepdims=keepdims)
    if not np.any(empty):
        return result
    warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=3)
    return _scalar_if_0d(np.where(empty, np.nan, result))


@implemented_by(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    """`np.nanvar(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction)`:
    the variance of the values that are not NaN, with `ddof` degrees of freedom less
    (NaN where none are left)."""
    if out is not None or where is not None or mean is not None:
        raise ValueError("pullback differentiates np.nanvar and np.nanstd without out=, "
                         "where= and mean=")
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = np.asarray(a)
    kept = np.logical_not(np.isnan(a))
    values = np.where(kept, a, 0)
    count = np.sum(kept, axis=axis, dtype=np.intp, keepdims=True)
    total = np.sum(values, axis=axis, dtype=dtype, keepdims=True)
    centered = np.where(kept, np.asarray(values - _divided(total, np.maximum(count, 1)),
                                         dtype=values.dtype), 0)
    squares = np.sum(centered * centered, axis=axis, dtype=dtype, keepdims=keepdims)
    freedom = (count if keepdims else np.reshape(count, np.shape(squares))) - ddof
    variance = _divided(squares, np.maximum(freedom, 1))
    if not np.any(freedom <= 0):
        return variance
    warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=2)
    return _scalar_if_0d(np.where(freedom <= 0, np.nan, variance))


@implemented_by(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    """`np.nanstd(...)`: the square root of `np.nanvar(...)`."""
    return np.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                          correction=correction))


def _divided(total, count):
    """`total / count` in the dtype of `total`, as NumPy's NaN-skipping reductions divide."""
    return _scalar_if_0d(np.asarray(total / count, dtype=np.result_type(total)))


@implemented_by(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    """`np.nancumsum(a, axis, dtype)`: `np.cumsum` with NaNs counted as zeros."""
    _check_no_out(out, "nancumsum")
    a = np.asarray(a)
    return np.cumsum(np.where(np.isnan(a), 0, a), axis=axis, dtype=dtype)


@implemented_by(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """`np.ediff1d(ary, to_end, to_begin)`: the differences of consecutive values of `ary`
    flattened, after the values `to_begin` and before `to_end`."""
    ary = np.ravel(np.asarray(ary))
    differences = ary[1:] - ary[:-1]
    if to_begin is None and to_end is None:
        return differences
    parts = [differences]
    if to_begin is not None:
        parts = [_ediff1d_end(to_begin, ary.dtype, "to_begin")] + parts
    if to_end is not None:
        parts = parts + [_ediff1d_end(to_end, ary.dtype, "to_end")]
    return np.concatenate(parts)


def _ediff1d_end(values, dtype, name):
    """`values` to join to the differences of `np.ediff1d`, flattened and cast to their
    `dtype`."""
    values = np.asarray(values)
    if not np.can_cast(values.dtype, dtype, casting="same_kind"):
        raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return np.asarray(np.ravel(values), dtype=dtype)


@implemented_by(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """`np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)`: each of the vectors
    `xi` along its own axis (the first two swapped for "xy"), broadcast to the grid
    unless `sparse`."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    axes = list(range(len(xi)))
    if indexing == "xy" and len(xi) > 1:
        axes[0], axes[1] = 1, 0
    output = [np.reshape(np.asarray(x), tuple(-1 if i == axis else 1 for i in range(len(xi))))
              for x, axis in zip(xi, axes)]
    if not sparse:
        shape = np.broadcast_shapes(*[np.shape(x) for x in output])
        output = tuple(np.broadcast_to(x, shape) for x in output)
    if copy:
        return tuple(np.copy(x) for x in output)
    return output if not sparse else _SPARSE_VIEWS(output)


_SPARSE_VIEWS = type(np.meshgrid(np.zeros(1), sparse=True, copy=False))
"""What `np.meshgrid(..., sparse=True, copy=False)` returns: a list before NumPy 2.5."""


# `np.r_[a, b]` and `np.c_[a, b]` index an object with the items they join: read with a
# differentiable item, the items are these versions' arguments
# (`Interpreter.indexed_by_version`); a call with the index, as `__getitem__` takes it,
# has one argument. Slices and strings among the items (ranges, directives) are refused.
@implemented_by(np.r_.__getitem__)
def joined_rows(key, *more):
    """`np.r_[key]` of arrays and numbers: their concatenation, each at least a vector."""
    return np.concatenate([np.atleast_1d(item) for item in _joined_items(key, more)])


@implemented_by(np.c_.__getitem__)
def joined_columns(key, *more):
    """`np.c_[key]` of arrays and numbers: their concatenation along the last axis, a
    number or a vector taken as a column."""
    return np.concatenate([np.reshape(item, (-1, 1)) if np.ndim(item) < 2 else item
                           for item in _joined_items(key, more)], axis=-1)


def _joined_items(key, more):
    """The items `np.r_` or `np.c_` joins: the arguments of a version, or the index it was
    called with."""
    return (key, *more) if more else key if isinstance(key, tuple) else (key,)
