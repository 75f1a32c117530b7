"""Products, contractions and numpy.linalg (`@` and np.matmul are in python_operators).

Matrix functions work on stacks of matrices (the last two axes), as NumPy's do.
"""

import numpy as np

from pullback.compiler.analysis.kinds import (
    ARRAY,
    CONST,
    CONST_SCALAR,
    MATRIX,
    product,
    sequence,
)
from pullback.rules.registry import adjoint, d, implemented_by, nondifferentiable, t
from pullback.runtime import linalg
from pullback.runtime.cotangents import (
    ZERO,
    dot_left,
    dot_right,
    reshape_like,
    tensordot_left,
    tensordot_right,
    unbroadcast,
    unreduce,
)
from pullback.runtime.linalg import (
    as_columns,
    cholesky_tangent,
    cofactors,
    cross_left,
    cross_right,
    diagonal_mask,
    einsum_tangent,
    fold_triangle,
    from_columns,
    hermitian_cotangent,
    hermitian_matrix,
    inner_axes,
    inverse_gaps,
    kron_blocks,
    kron_spec,
    linear_solve,
    lower_half,
    matrix_power_cotangent,
    matrix_transpose,
    multi_dot_cotangents,
    multi_dot_tangent,
    norm_gradient,
    pinv_cotangent,
    pinv_tangent,
    qr_factors,
    real_eigenpairs,
    real_part,
    residual_share,
    residual_tangent,
    singular_values_cotangent,
    singular_values_tangent,
    solve_transposed,
    svd_cotangents,
    svd_factors,
    svd_tangents,
    symmetric_of,
    transposed_if,
    uneinsum,
    vector_norm_gradient,
)

from .numpy_versions import numpy_functions


def _two_arrays(*kinds):
    """The kind of the named pairs `eigh` and `slogdet` return."""
    return sequence(tuple, [ARRAY, ARRAY])


def _lstsq_result(*kinds):
    """The kind of `lstsq`'s `(x, residuals, rank, s)`."""
    return sequence(tuple, [ARRAY, ARRAY, CONST_SCALAR, ARRAY])


@adjoint(np.dot, np.ndarray.dot, result=product, multilinear=True)
def dot(z, a, b, out=None):
    d[a] = dot_left(d[z], a, b)
    d[b] = dot_right(d[z], a, b)


@adjoint(np.vdot, result="scalar", multilinear=True)
def vdot(z, a, b, /):
    d[a] = d[z] * reshape_like(b, a)
    d[b] = d[z] * reshape_like(a, b)


@adjoint(np.inner, result="array", multilinear=True)
def inner(z, a, b, /):
    axes = inner_axes(a, b)
    d[a] = tensordot_left(d[z], a, b, axes)
    d[b] = tensordot_right(d[z], a, b, axes)


def _outer_kind(a, b, *_):
    return MATRIX if a.active or b.active else CONST


@adjoint(np.outer, *numpy_functions("linalg.outer"), result=_outer_kind, multilinear=True)
def outer(z, a, b, out=None):
    d[a] = reshape_like(np.dot(d[z], np.ravel(b)), a)
    d[b] = reshape_like(np.dot(np.ravel(a), d[z]), b)


@adjoint(np.multiply.outer, result="array", multilinear=True)
def multiply_outer(z, A, B, /):
    d[A] = tensordot_left(d[z], A, B, 0)
    d[B] = tensordot_right(d[z], A, B, 0)


@adjoint(np.add.outer, result="array")
def add_outer(z, A, B, /):
    d[A] = tensordot_left(d[z], A, np.ones_like(B), 0)
    d[B] = tensordot_right(d[z], np.ones_like(A), B, 0)
    t[z] = np.multiply.outer(t[A], np.ones_like(B)) + np.multiply.outer(np.ones_like(A), t[B])


@adjoint(*numpy_functions("vecdot", "linalg.vecdot"), result="array", multilinear=True)
def vecdot(z, x1, x2, /, out=None, *, axis=-1):
    parts = uneinsum(d[z], "...i,...i->...", (np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)))
    d[x1] = np.moveaxis(parts[0], -1, axis)
    d[x2] = np.moveaxis(parts[1], -1, axis)


@adjoint(*numpy_functions("matvec"), result="array", multilinear=True)
def matvec(z, x1, x2, /, out=None):
    parts = uneinsum(d[z], "...ij,...j->...i", (x1, x2))
    d[x1] = parts[0]
    d[x2] = parts[1]


@adjoint(*numpy_functions("vecmat"), result="array", multilinear=True)
def vecmat(z, x1, x2, /, out=None):
    parts = uneinsum(d[z], "...j,...ji->...i", (x1, x2))
    d[x1] = parts[0]
    d[x2] = parts[1]


@adjoint(np.linalg.multi_dot, result="array")
def multi_dot(z, arrays, *, out=None):
    d[arrays] = multi_dot_cotangents(d[z], arrays)
    t[z] = multi_dot_tangent(t[arrays], arrays)


@adjoint(np.tensordot, *numpy_functions("linalg.tensordot"), result="array", multilinear=True)
def tensordot(z, a, b, axes=2):
    d[a] = tensordot_left(d[z], a, b, axes)
    d[b] = tensordot_right(d[z], a, b, axes)


@adjoint(np.einsum, result="array", multilinear=True, view=True,  # einsum("ij->ji", a) is a view
         refused={"subscripts": linalg.SUBLISTS})
def einsum(z, subscripts, *operands, out=None, optimize=False, dtype=None, order="K",
           casting="safe"):
    d[operands] = uneinsum(d[z], subscripts, operands)


@implemented_by(np.einsum, where_refused=True)
def einsum_of_sublists(*args, optimize=False):
    """`np.einsum` in its sublist form, `np.einsum(a, [0, 1], b, [1, 2], [0, 2])`, with
    `a` differentiable: the einsum of its operands with the subscripts their sublists
    spell, as a string."""
    return linalg.einsum_of(linalg.sublist_subscripts(args), args[:len(args) - len(args) % 2:2])


@adjoint(linalg.einsum_of, result="array")
def einsum_of(z, subscripts, operands):
    d[operands] = uneinsum(d[z], subscripts, operands)
    t[z] = einsum_tangent(t[operands], subscripts, operands)


@adjoint(np.kron, result="array", multilinear=True)
def kron(z, a, b):
    blocks = np.reshape(d[z], kron_blocks(a, b))
    d[a] = np.einsum(kron_spec(a, b, True), blocks, b)
    d[b] = np.einsum(kron_spec(a, b, False), blocks, a)


@adjoint(np.cross, result="array", multilinear=True)
def cross(z, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[a] = cross_left(d[z], a, b, axisa, axisb, axisc, axis)
    d[b] = cross_right(d[z], a, b, axisa, axisb, axisc, axis)


@adjoint(np.trace, np.ndarray.trace, result="array", linear=True)
def trace(z, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] = np.expand_dims(d[z], (axis1, axis2)) * diagonal_mask(a, offset, axis1, axis2)


@adjoint(*numpy_functions("linalg.trace"), result="array", linear=True)
def linalg_trace(z, x, /, *, offset=0, dtype=None):
    d[x] = np.expand_dims(d[z], (-2, -1)) * diagonal_mask(x, offset, -2, -1)


@adjoint(np.linalg.inv, result="array")
def inv(z, a):
    zt = matrix_transpose(z)
    d[a] = -(zt @ d[z] @ zt)
    t[z] = -(z @ t[a] @ z)


@adjoint(np.linalg.matrix_power, result="array")
def matrix_power(z, a, n):
    d[a] = matrix_power_cotangent(d[z], a, n)
    t[z] = matrix_power_cotangent(t[a], matrix_transpose(a), n)  # the same sum, for a^T


@adjoint(np.linalg.pinv, result="array")
def pinv(z, a, rcond=None, hermitian=False, *, rtol=None):
    gm = pinv_cotangent(d[z], hermitian_matrix(a, hermitian), z)
    d[a] = hermitian_cotangent(gm, hermitian)
    t[z] = pinv_tangent(hermitian_matrix(t[a], hermitian), hermitian_matrix(a, hermitian), z)


@adjoint(np.linalg.lstsq, result=_lstsq_result)
def lstsq(z, a, b, rcond=None):
    """`a` of full rank: the solution is `pinv(a) @ b`; the residuals, `|b - a x|^2` for
    each column, are stationary in `x`; the rank is a constant."""
    x = as_columns(z[0], b)
    gx = as_columns(d[z][0], b)
    p = np.linalg.pinv(a)
    r = as_columns(b, b) - a @ x
    share = residual_share(d[z][1], r)
    d[a] = (pinv_cotangent(gx @ matrix_transpose(as_columns(b, b)), a, p)
            - 2.0 * share @ matrix_transpose(x) + singular_values_cotangent(d[z][3], a))
    d[b] = from_columns(matrix_transpose(p) @ gx + 2.0 * share, b)
    tx = pinv_tangent(t[a], a, p) @ as_columns(b, b) + p @ as_columns(t[b], b)
    tr = as_columns(t[b], b) - t[a] @ x
    t[z] = (from_columns(tx, b), residual_tangent(z[1], r, tr), ZERO,
            singular_values_tangent(t[a], a))


@adjoint(np.linalg.det, result="array")
def det(z, a):
    d[a] = np.expand_dims(d[z], (-2, -1)) * cofactors(a, z)
    t[z] = np.sum(cofactors(a, z) * t[a], axis=(-2, -1))


@adjoint(np.linalg.slogdet, result=_two_arrays)
def slogdet(z, a):
    inverse = matrix_transpose(np.linalg.inv(a))
    d[a] = np.expand_dims(d[z][1], (-2, -1)) * inverse
    t[z] = (ZERO, np.sum(inverse * t[a], axis=(-2, -1)))  # the sign is a constant


@adjoint(np.linalg.solve, result="array")
def solve(z, a, b):
    gb = solve_transposed(a, as_columns(d[z], b))
    d[a] = -unbroadcast(gb @ matrix_transpose(as_columns(z, b)), a)
    d[b] = unbroadcast(from_columns(gb, b), b)
    t[z] = from_columns(linear_solve(a, as_columns(t[b], b) - t[a] @ as_columns(z, b)), b)


@adjoint(np.linalg.cholesky, result="array")
def cholesky(z, a, /, *, upper=False):
    """Murray, Differentiation of the Cholesky decomposition (2016), folded onto the
    triangle NumPy reads."""
    low = transposed_if(z, upper)
    phi = lower_half(matrix_transpose(low) @ transposed_if(d[z], upper))
    s = matrix_transpose(solve_transposed(low, matrix_transpose(solve_transposed(low, phi))))
    d[a] = fold_triangle(s, upper)
    t[z] = cholesky_tangent(t[a], z, upper)


@adjoint(np.linalg.eigh, result=_two_arrays)
def eigh(z, a, UPLO="L"):
    """Distinct eigenvalues; folded onto the triangle NumPy reads."""
    v = z[1]
    vt = matrix_transpose(v)
    g = (v * np.expand_dims(d[z][0], -2) + v @ (inverse_gaps(z[0]) * (vt @ d[z][1]))) @ vt
    d[a] = fold_triangle(g, UPLO)
    m = vt @ symmetric_of(t[a], UPLO) @ v
    t[z] = (np.diagonal(m, 0, -2, -1), v @ (inverse_gaps(z[0]) * m))


@adjoint(np.linalg.eig, result=_two_arrays)
def eig(z, a):
    """Real, distinct eigenvalues (a TypeError when they are complex), eigenvectors of
    unit norm: with `a = v diag(w) v^-1`, `F[i, j] = 1 / (w[j] - w[i])`, and `gu` the
    cotangent of `v` less its part along each eigenvector, which the normalization
    removes, the cotangent of `a` is `v^-T (diag(gw) + F * (v^T gu)) v^T`."""
    pairs = real_eigenpairs(z)
    v = pairs[1]
    vt = matrix_transpose(v)
    gv = real_part(d[z][1])
    gu = gv - v * np.sum(v * gv, axis=-2, keepdims=True)
    core = inverse_gaps(pairs[0]) * (vt @ gu)
    d[a] = solve_transposed(v, core @ vt + np.expand_dims(real_part(d[z][0]), -1) * vt)
    m = linear_solve(v, t[a] @ v)
    tv = v @ (inverse_gaps(pairs[0]) * m)
    t[z] = (np.diagonal(m, 0, -2, -1), tv - v * np.sum(v * tv, axis=-2, keepdims=True))


@adjoint(np.linalg.eigvalsh, result="array")
def eigvalsh(z, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    d[a] = fold_triangle((v * np.expand_dims(d[z], -2)) @ matrix_transpose(v), UPLO)
    t[z] = np.sum(v * (symmetric_of(t[a], UPLO) @ v), axis=-2)


@adjoint(np.linalg.svd)
def svd(z, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Townsend, Differentiating the singular value decomposition (2016): distinct,
    nonzero singular values."""
    usv = svd_factors(z, a, full_matrices, compute_uv, hermitian)
    g = svd_cotangents(d[z], compute_uv)
    u = usv[0]
    ut = matrix_transpose(u)
    s = np.expand_dims(usv[1], -2)
    vh = usv[2]
    vt = matrix_transpose(vh)
    gu = g[0]
    gvh = g[2]
    f = inverse_gaps(usv[1] ** 2)
    core = f * (ut @ gu - matrix_transpose(gu) @ u) * s + matrix_transpose(s) * f * (
        vh @ matrix_transpose(gvh) - gvh @ vt)
    left = u @ core + u * np.expand_dims(g[1], -2) + (gu - u @ (ut @ gu)) / s
    d[a] = hermitian_cotangent(left @ vh + (u / s) @ (gvh - gvh @ vt @ vh), hermitian)
    ta = hermitian_matrix(t[a], hermitian)
    tav = ta @ vt
    tau = matrix_transpose(ta) @ u
    p = ut @ tav
    pt = matrix_transpose(p)
    tu = u @ (f * (p * s + matrix_transpose(s) * pt)) + (tav - u @ (ut @ tav)) / s
    tvt = vt @ (f * (matrix_transpose(s) * p + pt * s)) + (tau - vt @ (vh @ tau)) / s
    t[z] = svd_tangents((tu, np.diagonal(p, 0, -2, -1), matrix_transpose(tvt)), compute_uv)


@adjoint(*numpy_functions("linalg.svdvals"), result="array")
def svdvals(z, x, /):
    d[x] = singular_values_cotangent(d[z], x)
    t[z] = singular_values_tangent(t[x], x)


@adjoint(np.linalg.qr)
def qr(z, a, mode="reduced"):
    """Matrices of full column rank, at least as tall as wide: with `m = r gr^T - gq^T q`
    and `c` the symmetric matrix of its lower triangle, the cotangent of `a` is
    `(gq + q c) r^-T`."""
    factors = qr_factors(z, a, mode)
    q = factors[0]
    r = factors[1]
    gq = d[z][0]
    m = r @ matrix_transpose(d[z][1]) - matrix_transpose(gq) @ q
    c = np.tril(m) + matrix_transpose(np.tril(m, -1))
    d[a] = matrix_transpose(solve_transposed(matrix_transpose(r), matrix_transpose(gq + q @ c)))
    tar = matrix_transpose(solve_transposed(r, matrix_transpose(t[a])))  # t[a] r^-1
    w = matrix_transpose(q) @ tar
    tr = np.triu(w) + matrix_transpose(np.tril(w, -1))  # dr r^-1, as q^T dq is antisymmetric
    t[z] = (tar - q @ tr, tr @ r)


@adjoint(np.linalg.norm, result="array")
def norm(z, x, ord=None, axis=None, keepdims=False):
    d[x] = unreduce(d[z], x, axis, keepdims) * norm_gradient(x, z, ord, axis, keepdims)
    t[z] = np.sum(norm_gradient(x, z, ord, axis, keepdims) * t[x], axis=axis, keepdims=keepdims)


@adjoint(*numpy_functions("linalg.vector_norm"), result="array")
def vector_norm(z, x, /, *, axis=None, keepdims=False, ord=2):
    d[x] = unreduce(d[z], x, axis, keepdims) * vector_norm_gradient(x, z, ord, axis, keepdims)
    t[z] = np.sum(vector_norm_gradient(x, z, ord, axis, keepdims) * t[x], axis=axis,
                  keepdims=keepdims)


@adjoint(*numpy_functions("linalg.matrix_norm"), result="array")
def matrix_norm(z, x, /, *, keepdims=False, ord="fro"):
    d[x] = unreduce(d[z], x, (-2, -1), keepdims) * norm_gradient(x, z, ord, (-2, -1), keepdims)
    t[z] = np.sum(norm_gradient(x, z, ord, (-2, -1), keepdims) * t[x], axis=(-2, -1),
                  keepdims=keepdims)


@adjoint(linalg.matrix_transpose, *numpy_functions("matrix_transpose", "linalg.matrix_transpose"),
         result="array", linear=True, view=True)
def matrix_transpose_(z, x):
    d[x] = matrix_transpose(d[z])


@adjoint(linalg.as_columns, result="array", linear=True, view=True)
def as_columns_(z, x, b):
    d[x] = from_columns(d[z], b)


@adjoint(linalg.from_columns, result="array", linear=True, view=True)
def from_columns_(z, h, b):
    d[h] = as_columns(d[z], b)


nondifferentiable(linalg.inner_axes, linalg.diagonal_mask, linalg.kron_blocks, linalg.kron_spec,
                  linalg.einsum_transpose, linalg.norm_axes, linalg.extreme_sums,
                  linalg.strict_triangle, linalg.sublist_subscripts)
