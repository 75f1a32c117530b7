"""scipy.linalg's rules, when SciPy is installed: orders 1 and 2 against finite
differences, on well-conditioned matrices."""

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

scipy = pytest.importorskip("scipy")
linalg = pytest.importorskip("scipy.linalg")
rng = np.random.default_rng(7)


def normal(*shape):
    return rng.standard_normal(shape)


def weights(*shape):
    """Distinct constant weights, so a wrong permutation changes the result."""
    return np.arange(np.prod(shape, dtype=int), dtype=float).reshape(shape) / np.prod(shape)


def spd(n, batch=()):
    """A symmetric positive definite matrix (a stack of them)."""
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def near_identity(n, batch=()):
    """A matrix close to the identity: eigenvalues near 1, far from the negative axis."""
    return np.eye(n) + 0.2 * rng.standard_normal((*batch, n, n))


def triangular(n):
    """A matrix whose triangles are well-conditioned triangular matrices (the other
    triangle is what a triangular solve does not read)."""
    a = normal(n, n)
    return a + np.diag(3.0 + np.abs(np.diag(a)))


def total(x, *shape):
    """A scalar reading every entry of `x` differently."""
    return np.sum(np.sin(x) * weights(*shape))


LINALG = [
    ("cholesky_upper", lambda a: total(linalg.cholesky(a), 3, 3), (spd(3),)),
    ("cholesky_lower", lambda a: total(linalg.cholesky(a, lower=True), 3, 3), (spd(3),)),
    ("cholesky_batch", lambda a: total(linalg.cholesky(a, True), 2, 3, 3), (spd(3, (2,)),)),
    ("cho_factor_lower", lambda a: total(linalg.cho_factor(a, lower=True)[0], 3, 3), (spd(3),)),
    ("cho_factor_upper", lambda a: total(linalg.cho_factor(a)[0], 3, 3), (spd(3),)),
    ("cho_solve_factor", lambda a, b: total(linalg.cho_solve(linalg.cho_factor(a), b), 3, 2),
     (spd(3), normal(3, 2))),
    ("cho_solve_factor_lower",
     lambda a, b: total(linalg.cho_solve(linalg.cho_factor(a, lower=True), b), 3),
     (spd(3), normal(3))),
    ("cho_solve_cholesky",
     lambda a, b: total(linalg.cho_solve((linalg.cholesky(a, lower=True), True), b), 3, 2),
     (spd(3), normal(3, 2))),
    ("cho_solve_factor_given",
     lambda c, b: total(linalg.cho_solve((c, False), b), 3), (np.triu(spd(3)), normal(3))),
    ("solve_triangular_upper",
     lambda a, b: total(linalg.solve_triangular(a, b), 3, 2),
     (triangular(3), normal(3, 2))),
    ("solve_triangular_lower_vector",
     lambda a, b: total(linalg.solve_triangular(a, b, lower=True), 3),
     (triangular(3), normal(3))),
    ("solve_triangular_trans",
     lambda a, b: total(linalg.solve_triangular(a, b, trans=1, lower=True), 3, 2),
     (triangular(3), normal(3, 2))),
    ("solve_triangular_trans_T_unit",
     lambda a, b: total(linalg.solve_triangular(a, b, "T", unit_diagonal=True), 3),
     (0.3 * normal(3, 3), normal(3))),
    ("solve_matrix", lambda a, b: total(linalg.solve(a, b), 3, 2),
     (3.0 * np.eye(3) + normal(3, 3), normal(3, 2))),
    ("solve_vector", lambda a, b: total(linalg.solve(a, b), 3),
     (3.0 * np.eye(3) + normal(3, 3), normal(3))),
    ("solve_transposed", lambda a, b: total(linalg.solve(a, b, transposed=True), 3),
     (3.0 * np.eye(3) + normal(3, 3), normal(3))),
    ("solve_pos", lambda a, b: total(linalg.solve(a, b, assume_a="pos"), 3, 2),
     (spd(3), normal(3, 2))),
    ("solve_sym_lower", lambda a, b: total(linalg.solve(a, b, assume_a="sym", lower=True), 3),
     (spd(3) - 2.0 * np.eye(3), normal(3))),
    ("solve_upper_triangular",
     lambda a, b: total(linalg.solve(a, b, assume_a="upper triangular"), 3),
     (triangular(3), normal(3))),
    ("inv", lambda a: total(linalg.inv(a), 3, 3), (3.0 * np.eye(3) + normal(3, 3),)),
    ("inv_pos", lambda a: total(linalg.inv(a, assume_a="pos"), 3, 3), (spd(3),)),
    ("det", lambda a: linalg.det(a), (3.0 * np.eye(3) + normal(3, 3),)),
    ("det_sin", lambda a: np.sin(linalg.det(a)), (np.eye(3) + 0.3 * normal(3, 3),)),
    ("expm", lambda a: total(linalg.expm(a), 3, 3), (0.5 * normal(3, 3),)),
    ("expm_batch", lambda a: total(linalg.expm(a), 2, 3, 3), (0.5 * normal(2, 3, 3),)),
    ("logm", lambda a: total(linalg.logm(a), 3, 3), (near_identity(3),)),
    ("sqrtm", lambda a: total(linalg.sqrtm(a), 3, 3), (near_identity(3),)),
    ("sqrtm_spd", lambda a: total(linalg.sqrtm(a), 3, 3), (spd(3),)),
    ("expm_of_logm", lambda a: total(linalg.expm(0.5 * linalg.logm(a)), 3, 3),
     (near_identity(3),)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", LINALG, ids=[c[0] for c in LINALG])
def test_scipy_linalg(name, fn, args, order):
    try:
        fn(*args)
    except (TypeError, ValueError) as error:  # older SciPy: no batches, no assume_a in inv
        pytest.skip(f"this SciPy ({scipy.__version__}) cannot run {name}: {error}")
    check_grads(fn, args, order=order)


def test_cholesky_is_upper_and_reads_the_upper_triangle():
    a = spd(3)
    g = pullback.grad(lambda a: np.sum(linalg.cholesky(a) * weights(3, 3)))(a)
    assert np.allclose(np.tril(g, -1), 0.0)
    assert np.allclose(linalg.cholesky(a), np.triu(linalg.cholesky(a)))


def test_sqrtm_gradient_matches_the_sylvester_equation():
    """The cotangent X of sqrtm at S, for G, solves S^T X + X S^T = G."""
    a, g = spd(3), normal(3, 3)
    x = pullback.grad(lambda a: np.sum(linalg.sqrtm(a) * g))(a)
    s = linalg.sqrtm(a)
    assert np.allclose(s.T @ x + x @ s.T, g)


def test_an_uncovered_structure_is_refused():
    a, b = 3.0 * np.eye(3) + normal(3, 3), normal(3)
    with pytest.raises(TypeError, match="assume_a='tridiagonal'"):
        pullback.grad(lambda a: np.sum(linalg.solve(a, b, assume_a="tridiagonal")))(a)
