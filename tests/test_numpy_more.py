"""NumPy functions added after the core table (tests/test_primitives.py): `np.gradient`,
`np.select`, `np.nan_to_num`, `np.real_if_close`, `.item()`, `float()`, `.tolist()`,
`np.linalg.lstsq`, `np.linalg.pinv`, `np.linalg.eig`, `.astype`, `np.interp`,
`np.correlate`, `np.convolve`, `np.trapezoid`, `np.polyval`, `np.vander`, `np.polyfit`,
`np.cov`, `np.corrcoef`, `np.median`, `np.quantile`, `np.percentile` and their
NaN-skipping versions, `np.nanmax`, `np.nanmin`, `np.nanvar`, `np.nanstd`,
`np.nancumsum`, `np.ediff1d`, `np.meshgrid`, `np.bincount` (in its weights), and the
constants of `np.searchsorted`, `np.digitize` and `np.linalg.matrix_rank`.

Each row is checked against finite differences at orders 1 to 3, and the Python
versions (`pullback/rules/numpy_python.py`) against NumPy's own values, dtypes and types
over their options.
"""

import itertools

import numpy as np
import pytest

import pullback
from pullback.rules import numpy_python
from pullback.rules.numpy_versions import numpy_functions
from pullback.testing import check_grads

rng = np.random.default_rng(7)


def normal(*shape):
    return rng.standard_normal(shape)


def weights(*shape):
    """Distinct constant weights, so a wrong permutation changes the result."""
    return np.arange(np.prod(shape, dtype=int), dtype=float).reshape(shape) + 1.0


def spread(n):
    """A matrix with real eigenvalues well apart (1, 2, ..., n) and a well-conditioned
    basis of eigenvectors."""
    basis = np.eye(n) + 0.3 * normal(n, n)
    return basis @ np.diag(np.arange(1.0, n + 1.0)) @ np.linalg.inv(basis)


CONDITIONS = [normal(3, 4) > 0.5, normal(3, 4) > -0.3]
WITH_NONFINITE = np.array([1.5, np.nan, -0.7, np.inf, 2.0, -np.inf])
trapezoid = numpy_functions("trapezoid", "trapz")[0]  # np.trapz before NumPy 2.0

# interpolation points, and where to interpolate: between them (away from them) and on
# both sides
XP = np.array([-1.0, -0.2, 0.5, 1.1, 2.0])
FP = normal(5)
X_INTERP = np.array([-1.6, -0.6, 0.1, 0.7, 1.5, 2.4])
# a fit's abscissae and weights
X_FIT = np.linspace(-1.0, 1.0, 7) + 0.05 * normal(7)
W_FIT = np.abs(normal(7)) + 0.5
FREQUENCIES = np.array([1, 2, 1, 3, 1, 2])
BINS = np.array([0, 2, 2, 5, 1, 0])
# NaNs added to a (4, 3) array: none of its rows or columns has fewer than two numbers
NANS = np.array([[0.0, np.nan, 0.0], [np.nan, 0.0, 0.0], [0.0, 0.0, np.nan], [0.0, 0.0, 0.0]])
EDGES = np.array([-1.0, 0.0, 0.5, 2.0])


def sin_sum(x):
    """A nonlinear function of an array, weighted so every entry counts differently."""
    return np.sum(np.sin(x) * weights(*np.shape(x)))


def searched(x, w):
    """Indices from `np.searchsorted`, `np.digitize` and a rank: constants."""
    rank = np.linalg.matrix_rank(np.outer(x, x))
    return (np.sum(w[np.searchsorted(EDGES, x)] * x) + np.sum(w[np.digitize(x, EDGES)] ** 2)
            + x[x.searchsorted(0.1)] * rank)


def lstsq_all(a, b):
    """Every result of `np.linalg.lstsq`: the rank is a constant."""
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return sin_sum(x) + sin_sum(residuals) * rank + sin_sum(s)


TABLE = [
    ("gradient_1d", lambda x: sin_sum(np.gradient(x)), (normal(6),)),
    ("gradient_1d_spacing", lambda x, h: sin_sum(np.gradient(x, h)), (normal(5), 0.7)),
    ("gradient_2d", lambda x: sin_sum(np.gradient(x)[0]) + sin_sum(np.gradient(x)[1]),
     (normal(4, 5),)),
    ("gradient_axis", lambda x: sin_sum(np.gradient(x, 0.5, axis=1)), (normal(3, 4, 2),)),
    ("gradient_axes_spacings",
     lambda x: sum(sin_sum(g) for g in np.gradient(x, 0.5, 2.0, axis=(0, -1))),
     (normal(3, 4, 2),)),
    ("gradient_edge_order_2", lambda x: sin_sum(np.gradient(x, 0.3, edge_order=2)),
     (normal(5),)),
    ("gradient_shortest", lambda x: sin_sum(np.gradient(x)), (normal(2),)),
    ("gradient_at_points", lambda f, x: sin_sum(np.gradient(f, x)),
     (normal(6), np.cumsum(np.abs(normal(6))) + 0.5)),
    ("gradient_at_points_second_order",
     lambda f, x: sin_sum(np.gradient(f, x, axis=1, edge_order=2)),
     (normal(3, 5), np.cumsum(np.abs(normal(5))) + 0.5)),
    ("select", lambda x, y: sin_sum(np.select(CONDITIONS, [x, y])), (normal(3, 4), normal(3, 4))),
    ("select_default", lambda x, y, c: sin_sum(np.select(CONDITIONS, [x ** 2, y], c)),
     (normal(3, 4), normal(4), 0.7)),
    ("nan_to_num", lambda x: sin_sum(np.nan_to_num(x + WITH_NONFINITE)), (normal(6),)),
    ("nan_to_num_replacements",
     lambda x, n, p, m: sin_sum(np.nan_to_num(x + WITH_NONFINITE, nan=n, posinf=p, neginf=m)),
     (normal(6), 0.3, 5.0, -4.0)),
    ("nan_to_num_scalar", lambda x: np.nan_to_num(x) ** 3, (0.7,)),
    ("real_if_close", lambda x: sin_sum(np.real_if_close(x)), (normal(3, 2),)),
    ("real_if_close_list", lambda x, y: sin_sum(np.real_if_close([x, y])), (0.3, -1.2)),
    ("real_imag", lambda x: sin_sum(np.real(x)) + sin_sum(np.imag(x) + x), (normal(3),)),
    ("item", lambda x: np.sin(x[1:2].item()) * x[0:1, 0:1].item() ** 2, (normal(3, 1),)),
    ("item_index", lambda x: np.sin(x.item(4)) * x.item(1, 0) ** 2, (normal(3, 2),)),
    ("item_of_scalar", lambda x: np.sin(np.sum(x ** 2).item()), (normal(3),)),
    ("float_of_scalar", lambda x: np.sin(float(np.sum(x ** 2))) * float(x[1]), (normal(3),)),
    ("float_of_0d", lambda x: np.sin(float(np.asarray(np.dot(x, x)))), (normal(3),)),
    ("tolist", lambda x: sum(np.sin(v) * (i + 1) for i, v in enumerate(x.tolist())),
     (normal(4),)),
    ("tolist_2d", lambda x: sum(np.sin(r[0]) * r[1] for r in x.tolist()), (normal(3, 2),)),
    ("lstsq_tall", lambda a, b: sin_sum(np.linalg.lstsq(a, b, rcond=None)[0]),
     (normal(5, 3), normal(5))),
    ("lstsq_wide", lambda a, b: sin_sum(np.linalg.lstsq(a, b, rcond=None)[0]),
     (normal(2, 4), normal(2, 3))),
    ("lstsq_square", lambda a, b: sin_sum(np.linalg.lstsq(a, b, rcond=None)[0]),
     (3.0 * np.eye(3) + normal(3, 3), normal(3, 2))),
    ("lstsq_residuals", lambda a, b: sin_sum(np.linalg.lstsq(a, b, rcond=None)[1]),
     (normal(6, 2), normal(6, 3))),
    ("lstsq_residuals_vector", lambda a, b: np.sin(np.linalg.lstsq(a, b, rcond=None)[1][0]),
     (normal(5, 3), normal(5))),
    ("lstsq_all", lstsq_all, (normal(5, 3), normal(5, 2))),
    ("pinv_square", lambda a: sin_sum(np.linalg.pinv(a)), (3.0 * np.eye(3) + normal(3, 3),)),
    # rank-deficient: the derivative along matrices of that rank (products of factors)
    ("pinv_rank_deficient", lambda u, v: sin_sum(np.linalg.pinv(u @ v)),
     (normal(4, 2), normal(2, 3))),
    ("pinv_hermitian_rank_deficient",
     lambda u: sin_sum(np.linalg.pinv(u @ u.T, hermitian=True)), (normal(4, 2),)),
    ("lstsq_rank_deficient", lambda u, v, b: sin_sum(np.linalg.lstsq(u @ v, b, rcond=None)[0]),
     (normal(4, 2), normal(2, 3), normal(4))),
    # np.real: NumPy 2.5 and later give complex arrays for real eigenvalues too
    ("eig_values", lambda a: sin_sum(np.real(np.linalg.eig(a)[0])), (spread(3),)),
    ("eig_vectors", lambda a: sin_sum(np.real(np.linalg.eig(a)[1]) ** 2), (spread(3),)),
    ("eig_both", lambda a: sin_sum(np.real(np.linalg.eig(a).eigenvalues))
     + sin_sum(np.abs(np.real(np.linalg.eig(a).eigenvectors))), (spread(4),)),
    ("astype", lambda x: sin_sum(x.astype(float) * x.astype("float64")), (normal(2, 3),)),
    # a cast to integers is piecewise constant: no derivative through it
    ("astype_int", lambda x: sin_sum(x * x.astype(int) + x.astype(bool)), (normal(5) * 3.0,)),
    ("interp", lambda x, xp, fp: sin_sum(np.interp(x, xp, fp)), (X_INTERP, XP, FP)),
    ("interp_left_right", lambda x, fp, left, right: sin_sum(np.interp(x, XP, fp, left, right)),
     (X_INTERP, FP, -0.5, 0.7)),
    ("interp_scalar", lambda x, fp: np.interp(x, XP, fp) ** 2, (0.3, FP)),
    ("interp_period", lambda x, xp, fp, p: sin_sum(np.interp(x, xp, fp, period=p)),
     (X_INTERP, XP, FP, 3.3)),
    ("correlate", lambda a, v: sin_sum(np.correlate(a, v)), (normal(6), normal(3))),
    ("correlate_same", lambda a, v: sin_sum(np.correlate(a, v, "same")), (normal(3), normal(6))),
    ("correlate_full", lambda a, v: sin_sum(np.correlate(a, v, mode="full")),
     (normal(4), normal(4))),
    ("convolve", lambda a, v: sin_sum(np.convolve(a, v)), (normal(5), normal(3))),
    ("convolve_same", lambda a, v: sin_sum(np.convolve(a, v, "same")), (normal(3), normal(6))),
    ("convolve_valid", lambda a, v: sin_sum(np.convolve(a, v, "valid")), (normal(6), normal(2))),
    ("trapezoid", lambda y: np.sin(trapezoid(y)), (normal(5),)),
    ("trapezoid_x", lambda y, x: sin_sum(trapezoid(y, x, axis=0)),
     (normal(4, 3), np.cumsum(np.abs(normal(4))))),
    ("trapezoid_x_as_y", lambda y, x: sin_sum(trapezoid(y, x)), (normal(3, 4), normal(3, 4))),
    ("trapezoid_dx", lambda y, dx: sin_sum(trapezoid(y, dx=dx, axis=1)), (normal(2, 4, 3), 0.3)),
    ("polyval", lambda p, x: sin_sum(np.polyval(p, x)), (normal(4), normal(3))),
    ("polyval_scalar", lambda p, x: np.sin(np.polyval(p, x)), (normal(3), 0.7)),
    ("vander", lambda x: sin_sum(np.vander(x)), (normal(3),)),
    ("vander_increasing_at_zero", lambda x: sin_sum(np.vander(x, 4, increasing=True)),
     (np.array([0.0, 0.5, -1.2]),)),
    ("polyfit", lambda x, y: sin_sum(np.polyfit(x, y, 2)), (X_FIT, normal(7))),
    ("polyfit_weighted_columns", lambda x, y, w: sin_sum(np.polyfit(x, y, 2, w=w)),
     (X_FIT, normal(7, 2), W_FIT)),
    ("polyfit_full", lambda x, y: sum(sin_sum(r) for r in np.polyfit(x, y, 1, full=True)[:4]),
     (X_FIT, normal(7))),
    ("polyfit_cov", lambda x, y: sum(sin_sum(r) for r in np.polyfit(x, y, 2, cov=True)),
     (X_FIT, normal(7))),
    ("cov", lambda m: sin_sum(np.cov(m)), (normal(3, 6),)),
    ("cov_columns_and_y", lambda m, y: sin_sum(np.cov(m, y, rowvar=False, ddof=0)),
     (normal(6, 2), normal(6, 2))),
    ("cov_of_a_vector", lambda x: np.sin(np.cov(x, bias=True)), (normal(5),)),
    ("cov_weighted", lambda m, a: sin_sum(np.cov(m, fweights=FREQUENCIES, aweights=a)),
     (normal(3, 6), np.abs(normal(6)) + 0.5)),
    ("corrcoef", lambda m: sin_sum(np.corrcoef(m)), (normal(3, 6),)),
    ("corrcoef_columns_and_y", lambda x, y: sin_sum(np.corrcoef(x, y, rowvar=False)),
     (normal(6, 2), normal(6))),
    # random values: distinct, so the order statistics are away from ties
    ("median", lambda a: np.sin(np.median(a)), (normal(3, 4),)),
    ("median_axis_keepdims", lambda a: sin_sum(np.median(a, axis=1, keepdims=True)),
     (normal(3, 5, 2),)),
    ("median_axes", lambda a: sin_sum(np.median(a, axis=(0, 2))), (normal(3, 4, 2),)),
    ("quantile", lambda a: np.sin(np.quantile(a, 0.3)), (normal(7),)),
    ("quantile_in_q", lambda a, q: sin_sum(np.quantile(a, q, axis=0)),
     (normal(5, 3), np.array([0.1, 0.55, 0.9]))),
    ("percentile_keepdims",
     lambda a: sin_sum(np.percentile(a, [10.0, 75.0], axis=-1, keepdims=True)), (normal(2, 5),)),
    ("percentile_axes", lambda a, q: sin_sum(np.percentile(a, q, axis=(1, 2))),
     (normal(2, 3, 3), 37.0)),
    ("nanmedian", lambda a: sin_sum(np.nanmedian(a + NANS, axis=0)), (normal(4, 3),)),
    ("nanquantile", lambda a: sin_sum(np.nanquantile(a + NANS, [0.2, 0.7], axis=1)),
     (normal(4, 3),)),
    ("nanpercentile", lambda a: np.sin(np.nanpercentile(a + NANS, 60.0)), (normal(4, 3),)),
    ("nanmax", lambda a: sin_sum(np.nanmax(a + NANS, axis=1)), (normal(4, 3),)),
    ("nanmin_keepdims", lambda a: sin_sum(np.nanmin(a + NANS, axis=0, keepdims=True)),
     (normal(4, 3),)),
    ("nanmax_all", lambda a: np.sin(np.nanmax(a + NANS)), (normal(4, 3),)),
    ("nanvar", lambda a: sin_sum(np.nanvar(a + NANS, axis=0)), (normal(4, 3),)),
    ("nanstd_ddof", lambda a: sin_sum(np.nanstd(a + NANS, axis=1, ddof=1)), (normal(4, 3),)),
    ("nanstd_all", lambda a: np.sin(np.nanstd(a + NANS, keepdims=True)), (normal(4, 3),)),
    ("nancumsum", lambda a: sin_sum(np.nancumsum(a + NANS, axis=1)), (normal(4, 3),)),
    ("nancumsum_flat", lambda a: sin_sum(np.nancumsum(a + NANS)), (normal(4, 3),)),
    ("ediff1d", lambda a: sin_sum(np.ediff1d(a)), (normal(2, 3),)),
    ("ediff1d_ends", lambda a, b, e: sin_sum(np.ediff1d(a, to_end=e, to_begin=b)),
     (normal(5), 0.3, normal(2))),
    ("meshgrid", lambda a, b: sum(sin_sum(g) for g in np.meshgrid(a, b)), (normal(3), normal(4))),
    ("meshgrid_ij_sparse",
     lambda a, b, c: sum(sin_sum(g) for g in np.meshgrid(a, b, c, indexing="ij", sparse=True)),
     (normal(3), normal(4), normal(2))),
    ("bincount", lambda w: sin_sum(np.bincount(BINS, w)), (normal(6),)),
    ("bincount_minlength", lambda w: sin_sum(np.bincount(BINS, weights=w, minlength=9)),
     (normal(6),)),
    # indices and a rank: piecewise constant, no derivative through them
    ("searchsorted_digitize_matrix_rank", searched, (np.array([-0.7, 0.2, 1.1, 3.0]), normal(5))),
]


# `np.gradient`'s Python version (rules/numpy_python.py) is checked at order 3 once, on a
# vector (`gradient_1d`) and at points (`gradient_at_points`); its other forms at orders 1
# and 2, each third derivative of them costing about ten seconds.
SECOND_ORDER_ONLY = {"gradient_1d_spacing", "gradient_2d", "gradient_axis",
                     "gradient_axes_spacings", "gradient_edge_order_2",
                     "gradient_at_points_second_order"}
ORDERS = [(row, order) for row in TABLE for order in (1, 2, 3)
          if order < 3 or row[0] not in SECOND_ORDER_ONLY]


@pytest.mark.parametrize("row, order", ORDERS, ids=[f"{row[0]}-{order}" for row, order in ORDERS])
def test_derivatives(row, order):
    _, fn, args = row
    check_grads(fn, args, order=order)


GRADIENT_CALLS = [
    ((normal(7),), {}),
    ((normal(7), 0.25), {}),
    ((normal(4, 5),), {}),
    ((normal(4, 5), 0.5, 2.0), {}),
    ((normal(3, 4, 5), 0.5), {"axis": (2, 0)}),
    ((normal(3, 4), 1.5), {"axis": -1, "edge_order": 2}),
    ((normal(3, 4).astype(np.float32), 0.1), {"edge_order": 2}),
    ((np.arange(6),), {}),
    (([1.0, 4.0, 9.0],), {}),
    ((normal(6), np.cumsum(np.abs(normal(6))) + 0.1), {}),
    ((normal(6), np.cumsum(np.abs(normal(6))) + 0.1), {"edge_order": 2}),
    ((normal(4, 5), np.arange(4) * 0.5, np.cumsum(np.abs(normal(5)))), {"edge_order": 2}),
    ((normal(3, 5), np.array([0, 1, 3, 4, 7])), {"axis": 1}),
    ((normal(5), np.linspace(0.0, 1.0, 5)), {}),
]


@pytest.mark.parametrize("args, keywords", GRADIENT_CALLS)
def test_gradient_is_numpys(args, keywords):
    ours, theirs = numpy_python.gradient(*args, **keywords), np.gradient(*args, **keywords)
    for mine, numpys in zip(*[r if isinstance(r, tuple) else (r,) for r in (ours, theirs)],
                            strict=True):
        assert mine.dtype == numpys.dtype and np.array_equal(mine, numpys)


def test_select_is_numpys():
    x, y = normal(3, 4), normal(4)
    for default in (0, 1.5, normal(3, 1)):
        ours = numpy_python.select(CONDITIONS, [x, y], default)
        assert np.array_equal(ours, np.select(CONDITIONS, [x, y], default))
    assert np.array_equal(numpy_python.select([True, False], [1.0, 2.0]),
                          np.select([True, False], [1.0, 2.0]))


def assert_numpys(ours, theirs):
    """`ours` is NumPy's result `theirs`: of its type, and for arrays of its dtype, shape and
    values (NaN where NumPy's are; float32 ones to rounding, which NumPy's own versions
    do in different orders); for tuples and lists, item by item."""
    assert type(ours) is type(theirs)
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for mine, numpys in zip(ours, theirs):
            assert_numpys(mine, numpys)
        return
    assert np.shape(ours) == np.shape(theirs) and np.result_type(ours) == np.result_type(theirs)
    if np.result_type(theirs) == np.float32:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    else:
        assert np.array_equal(ours, theirs, equal_nan=True)


X_EVERYWHERE = np.concatenate([X_INTERP, XP, [np.nan, -50.0, 50.0]])
NAN_DATA = normal(4, 5, 3)
NAN_DATA[1, 2, 0] = NAN_DATA[0, 1, 2] = np.nan
NAN_DATA[:, 3, 1] = np.nan  # a slice of NaNs along the first axis
# and along the last one, not the first slice, whose result gives NumPy's nanquantile its
# dtype (float32 when all NaN, float64 else)
NAN_DATA[2, 4, :] = np.nan

VERSION_CALLS = [
    ("interp", (X_EVERYWHERE, XP, FP), {}),
    ("interp", (X_EVERYWHERE, XP, FP), {"left": -3.0, "right": 7.0}),
    ("interp", (1.7, XP, FP), {}),
    ("interp", (X_EVERYWHERE.reshape(2, 7), XP, FP), {"right": 0.5}),
    ("interp", (X_EVERYWHERE, XP, FP), {"period": 3.3}),
    ("interp", (X_EVERYWHERE, XP, FP), {"period": -2.5, "left": 9.0}),
    ("interp", (X_EVERYWHERE, [1.0], [2.0]), {}),
    ("interp", (X_EVERYWHERE, [-1, 0, 0, 2], [1, 2, 5, 3]), {}),
    ("interp", (X_EVERYWHERE, XP, [np.inf, 1.0, 2.0, -np.inf, 0.0]), {}),
    ("interp", (X_EVERYWHERE, XP, [np.inf, np.inf, 2.0, 2.0, 0.0]), {}),
    ("trapezoid", (normal(5),), {}),
    ("trapezoid", (normal(5), np.cumsum(np.abs(normal(5)))), {}),
    ("trapezoid", (normal(3, 4),), {"dx": 0.3}),
    ("trapezoid", (normal(3, 4), np.cumsum(np.abs(normal(3)))), {"axis": 0}),
    ("trapezoid", (normal(3, 4, 2), normal(3, 4, 2)), {"axis": -2}),
    ("trapezoid", (normal(3, 4).astype(np.float32),), {}),
    ("trapezoid", ([1, 2, 4], [0, 1, 3]), {}),
    ("polyval", (normal(4), normal(5)), {}),
    ("polyval", (normal(3), 0.7), {}),
    ("polyval", ([1, 2, 3], [1, 2]), {}),
    ("polyval", (normal(3, 2), normal(2)), {}),
    ("polyval", (np.poly1d([1.0, 2.0]), normal(2, 2)), {}),
    ("polyval", ([], 1.0), {}),
    *[("vander", (x,), {"N": n, "increasing": increasing})
      for x in (normal(4), [1, 2, 3], np.float32([1.5, 2.5]), np.array([0.0, 2.0, -1.0]))
      for n in (None, 0, 1, 5) for increasing in (False, True)],
    *[("polyfit", (X_FIT, y, deg), options)
      for y in (normal(7), normal(7, 2)) for deg in (0, 2, 3)
      for options in ({}, {"w": W_FIT}, {"full": True}, {"full": True, "w": W_FIT},
                      {"cov": True}, {"cov": "unscaled"}, {"cov": True, "w": W_FIT},
                      {"rcond": 1e-3})],
    *[(name, args, options) for name in ("cov", "corrcoef")
      for args, options in [
          ((normal(3, 6),), {}), ((normal(6, 3),), {"rowvar": False}),
          ((normal(3, 6), normal(6)), {}), ((normal(3, 6), normal(2, 6)), {}),
          ((normal(6, 3), normal(6, 2)), {"rowvar": False}),
          ((normal(6, 3), normal(6)), {"rowvar": False}), ((normal(6),), {}),
          ((normal(3, 6),), {"dtype": np.float32}), ((normal(3, 6).astype(np.float32),), {}),
          (([[1, 2, 4], [3, 1, 0]],), {})]],
    *[("cov", (normal(3, 6),), options)
      for options in ({"bias": True}, {"ddof": 2}, {"ddof": 6}, {"fweights": FREQUENCIES},
                      {"aweights": W_FIT[:6]}, {"fweights": FREQUENCIES, "aweights": W_FIT[:6]},
                      {"fweights": FREQUENCIES, "aweights": W_FIT[:6], "ddof": 0},
                      {"aweights": W_FIT[:6], "bias": True})],
    *[(name, (data,), {"axis": axis, "keepdims": keepdims})
      for name in ("median", "nanmedian", "nanmax", "nanmin", "nanvar", "nanstd")
      for data in (NAN_DATA, NAN_DATA.astype(np.float32), np.nan_to_num(NAN_DATA))
      for axis in (None, 0, -1, (0, 2)) for keepdims in (False, True)],
    *[(name, (NAN_DATA,), {"axis": 1, **options}) for name in ("nanvar", "nanstd")
      for options in ({"ddof": 1}, {"ddof": 4}, {"correction": 1}, {"dtype": np.float32})],
    *[("nancumsum", (data,), options) for data in (NAN_DATA, NAN_DATA.astype(np.float32))
      for options in ({}, {"axis": 1}, {"axis": -1, "dtype": np.float32})],
    ("median", ([3.0, np.nan, 1.0],), {}),
    ("nanmedian", ([np.nan, np.nan],), {}),
    ("nanmax", ([1.0, 2.0, np.nan],), {}),
    *[("ediff1d", (ary,), options)
      for ary in (normal(2, 3), normal(5).astype(np.float32), [2.0])
      for options in ({}, {"to_begin": 1.5}, {"to_end": [1.0, 2.0]},
                      {"to_begin": np.array([[1.0], [2.0]]), "to_end": -3.0}, {"to_end": []})],
    ("ediff1d", ([1, 4, 9],), {"to_begin": 2}),
    *[("meshgrid", xi, options)
      for xi in ((normal(3), normal(4)), (normal(2), normal(3), normal(4)), (normal(3),), (),
                 (normal(2, 2), [1.0, 2.0]))
      for options in ({}, {"indexing": "ij"}, {"sparse": True}, {"sparse": True, "indexing": "ij"},
                      {"copy": False}, {"copy": False, "sparse": True})],
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN slices, as NumPy warns
@pytest.mark.parametrize("name, args, keywords", VERSION_CALLS,
                         ids=[call[0] for call in VERSION_CALLS])
def test_python_version_is_numpys(name, args, keywords):
    ours = getattr(numpy_python, name)(*args, **keywords)
    assert_numpys(ours, getattr(np, name)(*args, **keywords))


QUANTILE_DATA = [NAN_DATA, NAN_DATA.astype(np.float32), np.nan_to_num(NAN_DATA), normal(7),
                 np.arange(12).reshape(3, 4), np.array([1.0, np.inf, 2.0, -np.inf])]
QUANTILES = [0.3, 0, 1, np.array([0.1, 0.5, 0.75, 1.0]), np.array(0.25),
             np.float32([0.2, 0.9]), np.array([[0.1, 0.6], [0.0, 1.0]]), np.array([0, 1]),
             [0.4, 0.6]]


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.4.0",
                    reason="NumPy's own quantiles of float32 values and of infinities differ "
                           "before 2.4; the Python version gives 2.4's")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantiles_are_numpys(name):
    scale = 100 if name.endswith("percentile") else 1
    for data, axis, keepdims, q in itertools.product(
            QUANTILE_DATA, (None, 0, -1, (1, 0)), (False, True), QUANTILES):
        if axis is not None and np.ndim(data) < 2 or name.startswith("nan") and isinstance(
                axis, tuple) and np.ndim(q) == 2:
            continue  # NumPy's own result has its axes out of order there
        q = [v * scale for v in q] if isinstance(q, list) else q * scale
        ours = getattr(numpy_python, name)(data, q, axis, keepdims=keepdims)
        assert_numpys(ours, getattr(np, name)(data, q, axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("mode", ["valid", "same", "full", 0, 2])
def test_correlations_are_numpys(name, mode):
    # summed in another order than NumPy's: equal to rounding
    for n, m in itertools.product(range(1, 7), repeat=2):
        a, v = normal(n), normal(m)
        ours, theirs = getattr(numpy_python, name)(a, v, mode), getattr(np, name)(a, v, mode)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15)
    ints = getattr(numpy_python, name)([1, 2, 3], [4, 5], mode)
    assert_numpys(ints, getattr(np, name)([1, 2, 3], [4, 5], mode))


def test_polyfit_warns_of_a_fit_of_deficient_rank_as_numpy():
    with pytest.warns(numpy_python._RANK_WARNING, match="poorly conditioned"):
        numpy_python.polyfit(X_FIT, normal(7), 9)


@pytest.mark.parametrize("fn, match", [
    (lambda x: np.quantile(x, 0.5, method="nearest"), "method='linear'"),
    (lambda x: np.percentile(x, 50.0, method="inverted_cdf", weights=np.ones(4)),
     "method='linear'"),
    (lambda x: np.median(x, out=np.zeros(())), "without out="),
    (lambda x: np.nanmax(x, initial=0.0), "initial="),
    (lambda x: np.nanvar(x, where=x > 1.0), "where="),
    (lambda x: np.polyval(x, np.poly1d([1.0, 2.0])), "poly1d"),
])
def test_options_the_python_versions_lack_are_refused(fn, match):
    with pytest.raises((ValueError, TypeError), match=match):
        pullback.grad(lambda x: np.sum(fn(x)))(weights(4))


def test_indices_and_ranks_are_constants():
    x, w = np.array([-0.7, 0.2, 1.1, 3.0]), weights(5)
    i, j, k = np.searchsorted(EDGES, x), np.digitize(x, EDGES), x.searchsorted(0.1)
    expected = w[i] + 0.0
    expected[k] += np.linalg.matrix_rank(np.outer(x, x))
    assert np.allclose(pullback.grad(searched)(x, w), expected)
    grad_w = np.bincount(i, x, minlength=5) + np.bincount(j, 2.0 * w[j], minlength=5)
    assert np.allclose(pullback.grad(searched, argnums=1)(x, w), grad_w)


def test_nan_entries_get_no_cotangent():
    a = normal(4, 3) + NANS
    for fn in (np.nanmax, np.nanmin, np.nanvar, np.nanstd, np.nancumsum, np.nanmedian):
        g = pullback.grad(lambda x, fn=fn: np.sum(np.sin(fn(x, axis=0))))(a)
        assert np.all(g[np.isnan(a)] == 0.0) and np.all(np.isfinite(g))


def test_gradient_with_coordinates_of_a_constant_is_numpys():
    x = normal(4)
    grad = pullback.grad(lambda s: s * np.sum(np.gradient(x, np.cumsum(weights(4)))))(1.0)
    assert grad == pytest.approx(np.sum(np.gradient(x, np.cumsum(weights(4)))))


def test_complex_eigenvalues_are_refused():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(TypeError, match="complex eigenvalues"):
        pullback.grad(lambda a: np.sum(np.real(np.linalg.eig(a)[0])))(rotation)


def test_select_conditions_must_be_boolean():
    with pytest.raises(TypeError, match="boolean"):
        pullback.grad(lambda x: np.sum(np.select([np.ones(3)], [x])))(normal(3))


def cofactors_by_minors(a):
    """The cofactor matrix of square `a`, from the determinants of its minors."""
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("a", [
    np.outer([1.0, 2.0, 3.0], [0.5, -1.0, 2.0]),  # rank 1
    np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),  # rank 2
    np.zeros((2, 2)),
])
def test_the_derivative_of_det_at_a_singular_matrix_is_its_cofactor_matrix(a):
    # np.linalg.inv fails there: the cofactors come from the SVD (found by the fuzzer,
    # as a LinAlgError in the pullback of a determinant NumPy computed)
    assert np.allclose(pullback.grad(np.linalg.det)(a), cofactors_by_minors(a), atol=1e-12)
    stacked = np.stack([a, spread(a.shape[0])])
    expected = np.stack([cofactors_by_minors(m) for m in stacked])
    assert np.allclose(pullback.grad(lambda m: np.sum(np.linalg.det(m)))(stacked), expected)
