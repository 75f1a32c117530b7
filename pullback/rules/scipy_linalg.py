"""scipy.linalg, registered when the program imports it (`pullback/rules/__init__.py`,
`SCIPY_FAMILIES`). Real matrices only.

- `cholesky`, `cho_factor`, `cho_solve`, `solve_triangular`, `solve`, `inv`, `det`:
  the formulas of `numpy_linalg.py`, each cotangent folded onto the entries SciPy
  reads (a triangle for `lower=`, `assume_a="pos"` and the like; the strict
  triangle with `unit_diagonal=True`). `cho_factor`'s other triangle holds the
  matrix's own entries before SciPy 1.18, so their cotangents pass through, and
  zeros after (`KEEPS_OTHER_TRIANGLE`).
- `expm`, `logm`, `sqrtm`: the adjoint of the Fréchet derivative of a matrix
  function `f` at `A`, applied to `G`, is the top-right block of
  `f([[A^T, G], [0, A^T]])`, and the Fréchet derivative at `A` applied to a tangent `E`
  that of `f([[A, E], [0, A]])` (the adjoint at `A^T`); principal logarithms and square
  roots (no eigenvalue on the closed negative real axis).

Every template is written with functions that have rules (NumPy's, these, and the
helpers below, which pullback transforms as Python), so derivatives of derivatives
work for all of them: orders 1 and 2 are tested. A matrix function's derivative
computes `f` of a matrix twice as large as `A`, its second derivative four times.
`scipy.linalg` has no `slogdet`; `solve` and `inv` refuse `assume_a="banded"` and
`"tridiagonal"`, `logm` and `sqrtm` refuse `disp=False` (a TypeError when the
pullback runs, as `numpy_linalg`'s refusals).
"""

import numpy as np
import scipy.linalg

from pullback.compiler.analysis.kinds import ARRAY, CONST_SCALAR, sequence
from pullback.rules.registry import adjoint, d, t
from pullback.runtime.cotangents import ZERO, unbroadcast
from pullback.runtime.linalg import (
    as_columns,
    cholesky_tangent,
    cofactors,
    fold_triangle,
    from_columns,
    lower_half,
    matrix_transpose,
    solve_transposed,
    symmetric_of,
    transposed_if,
)


def _factor_and_flag(*kinds):
    """The kind of `cho_factor`'s result: the factor and the flag `lower`."""
    return sequence(tuple, [ARRAY, CONST_SCALAR])


@adjoint(scipy.linalg.cholesky, result="array")
def cholesky(z, a, lower=False, overwrite_a=False, check_finite=True):
    """Upper by default: SciPy reads the triangle it returns."""
    d[a] = cholesky_cotangent(d[z], z, lower)
    t[z] = cholesky_tangent(t[a], z, not lower)


@adjoint(scipy.linalg.cho_factor, result=_factor_and_flag)
def cho_factor(z, a, lower=False, overwrite_a=False, check_finite=True):
    factor = triangle(z[0], lower)
    g = d[z][0]
    d[a] = cholesky_cotangent(triangle(g, lower), factor, lower) + kept_triangle(g, lower)
    t[z] = (cholesky_tangent(t[a], factor, not lower) + kept_triangle(t[a], lower), ZERO)


@adjoint(scipy.linalg.cho_solve, result="array")
def cho_solve(z, c_and_lower, b, overwrite_b=False, check_finite=True):
    gb = factored_solve(c_and_lower, as_columns(d[z], b))
    gm = -(gb @ matrix_transpose(as_columns(z, b)))
    d[c_and_lower] = (factor_cotangent(gm, c_and_lower[0], c_and_lower[1]), ZERO)
    d[b] = from_columns(gb, b)
    tm = factor_tangent(t[c_and_lower][0], c_and_lower[0], c_and_lower[1])
    tb = as_columns(t[b], b) - tm @ as_columns(z, b)
    t[z] = from_columns(factored_solve(c_and_lower, tb), b)


@adjoint(scipy.linalg.solve_triangular, result="array")
def solve_triangular(z, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    gb = triangular_solve(a, as_columns(d[z], b), not is_transposed(trans), lower, unit_diagonal)
    gm = transposed_if(gb @ matrix_transpose(as_columns(z, b)), is_transposed(trans))
    d[a] = -unbroadcast(triangle(gm, lower, unit_diagonal), a)
    d[b] = from_columns(gb, b)
    tm = transposed_if(triangle(t[a], lower, unit_diagonal), is_transposed(trans))
    tb = as_columns(t[b], b) - tm @ as_columns(z, b)
    t[z] = from_columns(triangular_solve(a, tb, is_transposed(trans), lower, unit_diagonal), b)


@adjoint(scipy.linalg.solve, result="array")
def solve(z, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    gb = structured_solve(a, as_columns(d[z], b), lower, assume_a, not transposed)
    gm = transposed_if(gb @ matrix_transpose(as_columns(z, b)), transposed)
    d[a] = -unbroadcast(read_entries(gm, assume_a, lower), a)
    d[b] = from_columns(gb, b)
    tm = transposed_if(read_matrix(t[a], assume_a, lower), transposed)
    tb = as_columns(t[b], b) - tm @ as_columns(z, b)
    t[z] = from_columns(structured_solve(a, tb, lower, assume_a, transposed), b)


@adjoint(scipy.linalg.inv, result="array")
def inv(z, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    zt = matrix_transpose(z)
    d[a] = -read_entries(zt @ d[z] @ zt, assume_a, lower)
    t[z] = -(z @ read_matrix(t[a], assume_a, lower) @ z)


@adjoint(scipy.linalg.det, result="array")
def det(z, a, overwrite_a=False, check_finite=True):
    d[a] = np.expand_dims(d[z], (-2, -1)) * cofactors(a, z)
    t[z] = np.sum(cofactors(a, z) * t[a], axis=(-2, -1))


@adjoint(scipy.linalg.expm, result="array")
def expm(z, A):
    d[A] = expm_adjoint(A, d[z])
    t[z] = expm_adjoint(matrix_transpose(A), t[A])


@adjoint(scipy.linalg.logm, result="array")
def logm(z, A, disp=True):
    d[A] = logm_adjoint(A, matrix_only(d[z], disp))
    t[z] = logm_adjoint(matrix_transpose(A), matrix_only(t[A], disp))


@adjoint(scipy.linalg.sqrtm, result="array")
def sqrtm(z, A, disp=True, blocksize=64):
    d[A] = sqrtm_adjoint(A, matrix_only(d[z], disp))
    t[z] = sqrtm_adjoint(matrix_transpose(A), matrix_only(t[A], disp))


def triangle(x, lower, strict=False):
    """The lower (or upper) triangle of the matrices `x`, without the diagonal if
    `strict`: the entries SciPy reads of a triangular matrix."""
    if x is ZERO:
        return ZERO
    if lower:
        return np.tril(x, -1 if strict else 0)
    return np.triu(x, 1 if strict else 0)


def _keeps_other_triangle():
    """Whether this SciPy's `cho_factor` leaves the matrix's own entries in the triangle
    it does not factor (SciPy before 1.18 does; later ones write zeros there)."""
    factor, _ = scipy.linalg.cho_factor(np.array([[4.0, 1.0], [1.0, 4.0]]), lower=True)
    return bool(factor[0, 1] == 1.0)


KEEPS_OTHER_TRIANGLE = _keeps_other_triangle()


def kept_triangle(g, lower):
    """The cotangent that `cho_factor`'s unfactored triangle gives the matrix: its own
    where this SciPy keeps the matrix's entries there, none where it writes zeros."""
    return triangle(g, not lower, True) if KEEPS_OTHER_TRIANGLE else ZERO


def cholesky_cotangent(g, factor, lower):
    """The cotangent of the matrix read by `scipy.linalg.cholesky(a, lower)` from the
    cotangent `g` of its triangular `factor` (Murray, 2016)."""
    if g is ZERO:
        return ZERO
    low = transposed_if(factor, not lower)
    phi = lower_half(matrix_transpose(low) @ transposed_if(g, not lower))
    s = matrix_transpose(solve_transposed(low, matrix_transpose(solve_transposed(low, phi))))
    return fold_triangle(s, not lower)


def factor_cotangent(gm, c, lower):
    """The cotangent of the factor `c` (its lower triangle `L` if `lower`, else its upper
    one `U`) from the cotangent `gm` of the matrix `L L^T` (or `U^T U`)."""
    if gm is ZERO:
        return ZERO
    both = gm + matrix_transpose(gm)
    if lower:
        return unbroadcast(triangle(both @ triangle(c, True), True), c)
    return unbroadcast(triangle(triangle(c, False) @ both, False), c)


def factor_tangent(t, c, lower):
    """The tangent of the matrix `L L^T` (or `U^T U`) from the tangent `t` of the factor
    `c` (its lower triangle `L` if `lower`, else its upper one `U`)."""
    if t is ZERO:
        return ZERO
    low = transposed_if(triangle(c, lower), not lower)
    product = transposed_if(triangle(t, lower), not lower) @ matrix_transpose(low)
    return product + matrix_transpose(product)


def factored_solve(c_and_lower, g):
    """`scipy.linalg.cho_solve(c_and_lower, g)`, linear in `g`."""
    if g is ZERO:
        return ZERO
    return scipy.linalg.cho_solve(c_and_lower, g)


def is_transposed(trans):
    """Whether `solve_triangular`'s `trans` solves with the transpose (real matrices)."""
    return trans in (1, 2, "T", "C")


def triangular_solve(a, g, transposed, lower, unit_diagonal):
    """`scipy.linalg.solve_triangular` for `g`, with `a` transposed if `transposed`."""
    if g is ZERO:
        return ZERO
    return scipy.linalg.solve_triangular(a, g, trans=1 if transposed else 0, lower=lower,
                                         unit_diagonal=unit_diagonal)


SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
"""The `assume_a` of `solve` and `inv` that read one triangle of a symmetric matrix."""


def structured_solve(a, g, lower, assume_a, transposed):
    """`scipy.linalg.solve(a, g, ...)` with the same structure, transposed if
    `transposed` (the same matrix when it is symmetric); linear in `g`."""
    if g is ZERO:
        return ZERO
    transposed = transposed and assume_a not in SYMMETRIC
    return scipy.linalg.solve(a, g, lower=lower, assume_a=assume_a, transposed=transposed)


def read_entries(g, assume_a, lower):
    """The cotangent of the entries of `a` that `solve` or `inv` read with `assume_a`,
    from the cotangent `g` of the matrix they work with."""
    if g is ZERO or assume_a in (None, "gen", "general"):
        return g
    if assume_a in SYMMETRIC:
        return fold_triangle(g, not lower)
    if assume_a in ("upper triangular", "lower triangular"):
        return triangle(g, assume_a == "lower triangular")
    if assume_a == "diagonal":
        return g * np.eye(np.shape(g)[-1])
    raise TypeError(f"the derivative rules of scipy.linalg.solve and inv do not cover "
                    f"assume_a={assume_a!r}")


def read_matrix(t, assume_a, lower):
    """The tangent of the matrix `solve` or `inv` work with, from the tangent `t` of `a`:
    the transpose of `read_entries` (the symmetric matrix of the triangle read)."""
    if t is not ZERO and assume_a in SYMMETRIC:
        return symmetric_of(t, not lower)
    return read_entries(t, assume_a, lower)


def matrix_only(g, disp):
    """The cotangent `g` of `logm` or `sqrtm`'s matrix, refusing `disp=False`."""
    if disp is False:
        raise TypeError("the derivative rules of scipy.linalg.logm and sqrtm cover disp's "
                        "default")
    return g


def frechet_block(a, g):
    """`[[a^T, g], [0, a^T]]`: a matrix function `f` of it holds, in its top-right block,
    the adjoint of the Fréchet derivative of `f` at `a` applied to `g` (real, though
    SciPy before 1.16 may give `logm` and `sqrtm` of this block as complex arrays, whose
    real parts the adjoints take)."""
    at = matrix_transpose(a)
    zero = np.zeros(np.shape(at))
    return np.concatenate([np.concatenate([at, g], -1), np.concatenate([zero, at], -1)], -2)


def top_right(m, a):
    """The block of `m` (twice as large as `a`) right of and above `a`'s place."""
    n = np.shape(a)[-1]
    return m[..., :n, n:]


def expm_adjoint(a, g):
    """The cotangent of `a` from the cotangent `g` of `scipy.linalg.expm(a)`.

    The matrix function is called by name, not passed as a value, so that its rule
    applies in derivatives of derivatives."""
    if g is ZERO:
        return ZERO
    return top_right(scipy.linalg.expm(frechet_block(a, g)), a)


def logm_adjoint(a, g):
    """The cotangent of `a` from the cotangent `g` of `scipy.linalg.logm(a)`."""
    if g is ZERO:
        return ZERO
    return top_right(np.real(scipy.linalg.logm(frechet_block(a, g))), a)


def sqrtm_adjoint(a, g):
    """The cotangent of `a` from the cotangent `g` of `scipy.linalg.sqrtm(a)`."""
    if g is ZERO:
        return ZERO
    return top_right(np.real(scipy.linalg.sqrtm(frechet_block(a, g))), a)
