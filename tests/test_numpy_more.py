"""NumPy functions added after the core table (tests/test_primitives.py): `np.gradient`,
`np.select`, `np.nan_to_num`, `np.real_if_close`, `.item()`, `float()`, `.tolist()`,
`np.linalg.lstsq`, `np.linalg.pinv` and `np.linalg.eig`.

Each row is checked against finite differences at orders 1 to 3, and the Python
versions (`np.gradient`, `np.select`) against NumPy's own values.
"""

import numpy as np
import pytest

import pullback
from pullback.rules import numpy_python
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


def sin_sum(x):
    """A nonlinear function of an array, weighted so every entry counts differently."""
    return np.sum(np.sin(x) * weights(*np.shape(x)))


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
]


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name, fn, args", TABLE, ids=[row[0] for row in TABLE])
def test_derivatives(name, fn, args, order):
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
