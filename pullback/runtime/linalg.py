"""Helpers of the linear-algebra rules (`pullback/rules/numpy_linalg.py`).

Matrices come in stacks: the last two axes of an array are a matrix's rows and
columns, the axes before them a batch. The helpers that receive cotangents (or
tangents) are linear in them and map `ZERO` to `ZERO`. So that derivatives of derivatives
stay inside what pullback differentiates, each is either plain Python that
pullback transforms, or has a rule: `matrix_transpose` is its own transpose,
`as_columns` and `from_columns` are each other's, and `einsum_of` has the rule
of `np.einsum`. The others compute masks, shapes and einsum subscripts, which
have no derivative.
"""

import string

import numpy as np

from .cotangents import ZERO, any_zero, reshape_like, unbroadcast, unreduce


def matrix_transpose(x):
    """The transpose of each matrix of the stack `x` (its last two axes swapped)."""
    return np.swapaxes(x, -1, -2)


def as_columns(x, b):
    """`x` with a trailing axis of length 1 when `b` is a vector, so that the result of
    `np.linalg.solve(a, b)` and its cotangent are stacks of matrices."""
    if any_zero(x, b):
        return ZERO
    return np.expand_dims(x, -1) if np.ndim(b) == 1 else x


def from_columns(h, b):
    """The transpose of `as_columns`: `h` without its trailing axis when `b` is a vector."""
    if any_zero(h, b):
        return ZERO
    return np.reshape(h, np.shape(h)[:-1]) if np.ndim(b) == 1 else h


def solve_transposed(a, b):
    """`np.linalg.solve` of the transposes of the matrices `a` for `b` (linear in `b`)."""
    if b is ZERO:
        return ZERO
    return np.linalg.solve(matrix_transpose(a), b)


def linear_solve(a, b):
    """`np.linalg.solve(a, b)` for matrices `b` (linear in `b`)."""
    if b is ZERO:
        return ZERO
    return np.linalg.solve(a, b)


def inverse_gaps(w):
    """`1 / (w[..., j] - w[..., i])` at `[..., i, j]` off the diagonal, 0 on it."""
    eye = np.eye(np.shape(w)[-1])
    return (1.0 - eye) / (np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye)


def pinv_cotangent(g, a, p):
    """The cotangent of a matrix `a` of full rank from the cotangent `g` of its
    pseudo-inverse `p` (Golub and Pereyra, 1973)."""
    if g is ZERO:
        return ZERO
    pt = matrix_transpose(p)
    gt = matrix_transpose(g)
    return -(pt @ g @ pt) + (gt - a @ (p @ gt)) @ (p @ pt) + (pt @ p) @ (gt - gt @ p @ a)


def pinv_tangent(t, a, p):
    """The tangent of the pseudo-inverse `p` of a matrix `a` of full rank from the tangent
    `t` of `a` (Golub and Pereyra, 1973)."""
    if t is ZERO:
        return ZERO
    tt = matrix_transpose(t)
    return (-(p @ t @ p) + (p @ matrix_transpose(p)) @ (tt - tt @ a @ p)
            + (tt - p @ a @ tt) @ (matrix_transpose(p) @ p))


def singular_values_tangent(t, a):
    """The tangent of the singular values (distinct and nonzero) of `a` from the tangent
    `t` of `a`: the diagonal of `u^T t v`."""
    if t is ZERO:
        return ZERO
    usv = np.linalg.svd(a, full_matrices=False)
    return np.sum(usv[0] * (t @ matrix_transpose(usv[2])), axis=-2)


def singular_values_cotangent(g, a):
    """The cotangent of `a` from the cotangent `g` of its singular values (distinct and
    nonzero): `u diag(g) vh`."""
    if g is ZERO:
        return ZERO
    usv = np.linalg.svd(a, full_matrices=False)
    return (usv[0] * np.expand_dims(g, -2)) @ usv[2]


def residual_share(g, r):
    """The residuals `r` (the columns of `b - a x`) weighted by the cotangent `g` of their
    squared norms, which `np.linalg.lstsq` gives only for a tall matrix of full rank (it
    gives none otherwise, and no cotangent reaches them)."""
    if g is ZERO or np.size(g) == 0:
        return ZERO
    return r * g


def residual_tangent(residuals, r, e):
    """The tangent of the `residuals` of `np.linalg.lstsq`, the squared norms of the
    columns of `r = b - a x`, from the tangent `e` of `b - a x` at a fixed `x` (`x`
    is stationary: `a^T r = 0`); none where NumPy gives no residuals."""
    if e is ZERO or np.size(residuals) == 0:
        return ZERO
    return 2.0 * np.sum(r * e, axis=-2)


def real_eigenpairs(z):
    """The eigenvalues and eigenvectors `z` of `np.linalg.eig`, which must be real: NumPy
    2.5 and later give complex arrays for real eigenvalues too, whose real parts these
    are when every imaginary part is zero.

    Raises:
      TypeError: when they are complex, which pullback's rules do not differentiate.
    """
    if not (np.iscomplexobj(z[0]) or np.iscomplexobj(z[1])):
        return z
    if np.any(np.imag(z[0]) != 0.0) or np.any(np.imag(z[1]) != 0.0):
        raise TypeError("np.linalg.eig gave complex eigenvalues: pullback differentiates it "
                        "only where the eigenvalues are real and distinct (for a symmetric "
                        "matrix, use np.linalg.eigh)")
    return np.real(z[0]), np.real(z[1])


def real_part(g):
    """The real part of cotangent `g` of real eigenpairs held in complex arrays (their
    imaginary parts stay zero under a real perturbation, so theirs is not read)."""
    return g if g is ZERO else np.real(g)


def fold_triangle(g, upper=False):
    """The cotangent of the triangle of a symmetric matrix that a function reads, from
    the cotangent `g` of the whole matrix: each entry off the diagonal stands for two.

    `upper` is True or "U" for the upper triangle (`cholesky`'s `upper`, `eigh`'s
    `UPLO`), else the lower one is read.
    """
    if g is ZERO:
        return ZERO
    n = np.shape(g)[-1]
    upper = upper in (True, "U", "u")
    return g * np.eye(n) + (g + matrix_transpose(g)) * strict_triangle(n, upper)


def strict_triangle(n, upper=False):
    """Ones below the diagonal of an n×n matrix (above it if `upper`), zeros elsewhere."""
    return np.triu(np.ones((n, n)), 1) if upper else np.tril(np.ones((n, n)), -1)


def symmetric_of(x, upper=False):
    """The symmetric matrices of the lower triangles of `x` (the upper ones if `upper`
    is True or "U"): the matrices a function reading one triangle works with, and the
    transpose of `fold_triangle`."""
    if x is ZERO:
        return ZERO
    n = np.shape(x)[-1]
    strict = strict_triangle(n, upper in (True, "U", "u"))
    return x * (strict + np.eye(n)) + matrix_transpose(x * strict)


def cholesky_tangent(t, factor, upper=False):
    """The tangent of the Cholesky `factor` (lower, or upper if `upper`) of the symmetric
    matrix of one triangle of `a` (that of the factor), from the tangent `t` of `a`:
    `L lower_half(L^-1 t L^-T)` (Murray, 2016)."""
    if t is ZERO:
        return ZERO
    low = transposed_if(factor, upper)
    m = np.linalg.solve(low, matrix_transpose(np.linalg.solve(low, symmetric_of(t, upper))))
    return transposed_if(low @ lower_half(m), upper)


def hermitian_matrix(a, hermitian):
    """The matrix NumPy's `hermitian=True` works with: the symmetric matrix of the lower
    triangle of `a`; `a` itself when not `hermitian`."""
    if not hermitian:
        return a
    n = np.shape(a)[-1]
    return a * (strict_triangle(n) + np.eye(n)) + matrix_transpose(a * strict_triangle(n))


def hermitian_cotangent(g, hermitian):
    """The transpose of `hermitian_matrix`: the cotangent of `a` from that of the matrix."""
    return fold_triangle(g) if hermitian else g


def lower_half(x):
    """The lower triangle of the matrices `x`, with their diagonals halved."""
    if x is ZERO:
        return ZERO
    n = np.shape(x)[-1]
    return x * (strict_triangle(n) + 0.5 * np.eye(n))


def transposed_if(x, flag):
    """`matrix_transpose(x)` when `flag` holds, else `x`."""
    return matrix_transpose(x) if flag else x


def svd_factors(z, a, full_matrices=True, compute_uv=True, hermitian=False):
    """The factors `(u, s, vh)` of the thin SVD of `a`, from `z = np.linalg.svd(a,
    full_matrices, compute_uv, hermitian)` (computed again when `z` holds only `s`)."""
    if not compute_uv:
        return np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    if full_matrices and np.shape(a)[-1] != np.shape(a)[-2]:
        raise TypeError("the derivative rule of numpy.linalg.svd covers full_matrices=False "
                        "(or square matrices): the extra columns of full factors are not "
                        "functions of the matrix")
    return z


def qr_factors(z, a, mode="reduced"):
    """The factors `(q, r)` of `z = np.linalg.qr(a, mode)`, for the factorizations the
    rule covers: the reduced one (the complete one of a square matrix is the same) of
    a matrix with at least as many rows as columns."""
    rows, columns = np.shape(a)[-2:]
    if rows < columns or not (mode == "reduced" or (mode == "complete" and rows == columns)):
        raise TypeError("the derivative rule of numpy.linalg.qr covers mode='reduced' of "
                        "matrices with at least as many rows as columns")
    return z


def cofactors(a, det):
    """The cofactor matrices of the square matrices `a`, whose determinants are `det`:
    the derivative of the determinant. `det * inv(a)^T` where every matrix is
    invertible; otherwise from the SVD `a = u s vt`, as `det(u) det(vt) u p vt`
    where `p_i` is the product of the singular values but the i-th, which is the
    limit of that formula at a singular matrix (also where a determinant rounds to zero,
    as SciPy's may, while the inverse does not fail)."""
    if np.all(det != 0.0):
        try:
            return np.expand_dims(det, (-2, -1)) * matrix_transpose(np.linalg.inv(a))
        except np.linalg.LinAlgError:
            pass
    u, s, vt = np.linalg.svd(a)
    others = np.where(np.eye(np.shape(s)[-1], dtype=bool), 1.0, np.expand_dims(s, -2))
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return np.expand_dims(sign, (-2, -1)) * (u * np.expand_dims(
        np.prod(others, axis=-1), -2)) @ vt


def matrix_power_cotangent(g, a, n):
    """The cotangent of `a` from the cotangent `g` of `np.linalg.matrix_power(a, n)`.

    For `n > 0` it is the sum over `k < n` of `(a^T)^k g (a^T)^(n - 1 - k)`; a
    negative power is that of `np.linalg.inv(a)`, whose rule then applies, and
    `a^0` is the identity, a constant.
    """
    if g is ZERO or n == 0:
        return ZERO
    base = matrix_transpose(np.linalg.inv(a) if n < 0 else a)
    count = abs(n)
    total = np.zeros(np.shape(a))
    for k in range(count):
        left = np.linalg.matrix_power(base, k)
        total = total + left @ g @ np.linalg.matrix_power(base, count - 1 - k)
    if n < 0:
        return -(base @ total @ base)
    return total


def multi_dot_cotangents(g, arrays):
    """The cotangents of `arrays` from the cotangent `g` of `np.linalg.multi_dot(arrays)`.

    As matrices (a vector first is a row, a vector last a column), the cotangent
    of array k is `(a_0 ... a_k-1)^T g (a_k+1 ... a_n)^T`: the products before
    it are kept from the start, those after it multiply `g` going back.
    """
    if g is ZERO:
        return ZERO
    first = np.reshape(arrays[0], (-1, np.shape(arrays[0])[-1]))
    before = [first]
    for x in arrays[1:-1]:
        before.append(before[-1] @ x)
    h = np.reshape(g, (np.shape(first)[0], -1))
    cotangents = []
    for k in range(len(arrays) - 1, 0, -1):
        x = np.reshape(arrays[k], (np.shape(arrays[k])[0], -1))
        cotangents.append(reshape_like(matrix_transpose(before[k - 1]) @ h, arrays[k]))
        h = h @ matrix_transpose(x)
    cotangents.append(reshape_like(h, arrays[0]))
    return cotangents[::-1]


def svd_tangents(t, compute_uv=True):
    """The tangent of `np.linalg.svd(..., compute_uv=compute_uv)` from the tangents `t` of
    the factors `(u, s, vh)`."""
    return t if compute_uv else t[1]


def svd_cotangents(g, compute_uv=True):
    """The cotangents of the factors `(u, s, vh)` from the cotangent `g` of
    `np.linalg.svd(..., compute_uv=compute_uv)`."""
    if compute_uv or g is ZERO:
        return g
    return ZERO, g, ZERO


def multi_dot_tangent(t, arrays):
    """The tangent of `np.linalg.multi_dot(arrays)` from the tangents `t` of `arrays`: the
    sum of the products with one array replaced by its tangent."""
    if t is ZERO:
        return ZERO
    total = ZERO
    for k, tk in enumerate(t):
        if tk is not ZERO:
            total = total + np.linalg.multi_dot([tk if j == k else x for j, x in enumerate(arrays)])
    return total


def cross_left(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cotangent of `a` in `np.cross(a, b, axisa, axisb, axisc, axis)`."""
    if any_zero(g, a, b):
        return ZERO
    return unbroadcast(np.cross(b, g, axisb, axisc, axisa, axis), a)


def cross_right(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cotangent of `b` in `np.cross(a, b, axisa, axisb, axisc, axis)`."""
    if any_zero(g, a, b):
        return ZERO
    return unbroadcast(np.cross(g, a, axisc, axisa, axisb, axis), b)


def inner_axes(a, b):
    """The `tensordot` axes of `np.inner(a, b)`: the last of each, none for a scalar."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return [], []
    return [-1], [-1]


def diagonal_mask(a, offset=0, axis1=0, axis2=1):
    """Ones where `np.trace(a, offset, axis1, axis2)` reads `a`, zeros elsewhere, with
    length-1 axes where `a` has the others."""
    shape = np.shape(a)
    axis1, axis2 = axis1 % len(shape), axis2 % len(shape)
    eye = np.eye(shape[axis1], shape[axis2], offset)
    mask_shape = [1] * len(shape)
    mask_shape[axis1], mask_shape[axis2] = shape[axis1], shape[axis2]
    return np.reshape(eye if axis1 < axis2 else eye.T, mask_shape)


def kron_blocks(a, b):
    """The shape of `np.kron(a, b)` with each axis split into that of `a` and of `b`."""
    ndim = max(np.ndim(a), np.ndim(b))
    blocks = []
    for m, n in zip(_padded_shape(a, ndim), _padded_shape(b, ndim)):
        blocks += [m, n]
    return tuple(blocks)


def kron_spec(a, b, left):
    """The einsum subscripts contracting `np.kron(a, b)`'s cotangent, split into blocks
    (`kron_blocks`), with `b` into that of `a` (left), or with `a` into that of `b`."""
    ndim = max(np.ndim(a), np.ndim(b))
    blocks = "".join(x + y for x, y in zip(string.ascii_lowercase, string.ascii_uppercase[:ndim]))
    labels_a = string.ascii_lowercase[ndim - np.ndim(a):ndim]
    labels_b = string.ascii_uppercase[ndim - np.ndim(b):ndim]
    if left:
        return f"{blocks},{labels_b}->{labels_a}"
    return f"{blocks},{labels_a}->{labels_b}"


def _padded_shape(x, ndim):
    return (1,) * (ndim - np.ndim(x)) + np.shape(x)


def uneinsum(g, subscripts, operands):
    """The cotangents of `operands` from the cotangent `g` of `np.einsum(subscripts,
    *operands)`: each one an einsum of `g` with the other operands."""
    if not isinstance(subscripts, str):  # the sublist form, its first operand a constant
        return _uneinsum_sublists(g, (subscripts, *operands))
    if any_zero(g, *operands):
        return ZERO
    shapes = [np.shape(x) for x in operands]
    cotangents = []
    for k, x in enumerate(operands):
        spec, constants = einsum_transpose(subscripts, shapes, k)
        replaced = tuple(g if j == k else y for j, y in enumerate(operands))
        cotangents.append(unbroadcast(einsum_of(spec, replaced + constants), x))
    return tuple(cotangents)


def _uneinsum_sublists(g, args):
    """The cotangents of `args[1:]` in `np.einsum(*args)` of the sublist form (see
    `sublist_subscripts`): `ZERO` for the sublists, those of the string form for the
    operands. The first operand's, in place of the subscripts, is not asked for."""
    parts = uneinsum(g, sublist_subscripts(args), args[:len(args) - len(args) % 2:2])
    if parts is ZERO:
        return ZERO
    cotangents = [ZERO] * (len(args) - 1)
    for k in range(1, len(parts)):  # operand k is args[2 * k]
        cotangents[2 * k - 1] = parts[k]
    return tuple(cotangents)


def einsum_of(subscripts, operands):
    """`np.einsum(subscripts, *operands)`, taking the operands as one tuple."""
    return np.einsum(subscripts, *operands)


def einsum_tangent(t, subscripts, operands):
    """The tangent of `einsum_of(subscripts, operands)` from the tangents `t` of
    `operands`: the sum of the einsums with one operand replaced by its tangent."""
    if t is ZERO:
        return ZERO
    total = ZERO
    for k, tk in enumerate(t):
        if tk is not ZERO:
            total = total + einsum_of(subscripts, tuple(tk if j == k else x
                                                        for j, x in enumerate(operands)))
    return total


def einsum_transpose(subscripts, shapes, k):
    """The einsum subscripts giving the cotangent of operand `k` of `np.einsum(subscripts,
    ...)` on operands of `shapes`, and the constant operands they add.

    The result's cotangent takes the place of operand `k`. A label repeated in
    operand `k` (a diagonal, as in `"ii->"`) gets a new label tied to the first by an
    identity matrix; labels of operand `k` alone are summed out, so they come back
    through an array of ones.
    """
    inputs, output = einsum_labels(subscripts, [len(shape) for shape in shapes])
    sizes = dict(zip(inputs[k], shapes[k]))
    unused = iter(c for c in string.ascii_letters if c not in "".join(inputs))
    labels = inputs[:k] + [output] + inputs[k + 1:]
    constants, target = (), ""
    for label in inputs[k]:
        if label in target:
            tied = next(unused)
            labels.append(label + tied)
            constants += (np.eye(sizes[label]),)
            label = tied
        target += label
    alone = "".join(c for c in target if c not in "".join(labels))
    if alone:
        labels.append(alone)
        constants += (np.ones([sizes[c] for c in alone]),)
    return ",".join(labels) + "->" + target, constants


SUBLISTS = ("in the sublist form, np.einsum(a, [0, 1], b, [1, 2], [0, 2]), an operand takes "
            "the place of the subscripts: its Python version (`einsum_of_sublists`) "
            "differentiates it")


def sublist_subscripts(args):
    """The subscripts, as a string, of `np.einsum(*args)` in its sublist form: `(a, [0,
    1], b, [1, 2][, [0, 2]])`, an operand then its axes' labels (ints below 52, or
    `...`), and maybe the result's. The ints become letters in their order, so that
    the result's labels, when not given, come in the same order."""
    pairs = args[:len(args) - len(args) % 2]
    spec = ",".join(_sublist_letters(sublist) for sublist in pairs[1::2])
    return spec + "->" + _sublist_letters(args[-1]) if len(args) % 2 else spec


def _sublist_letters(sublist):
    return "".join("..." if label is Ellipsis else _LABELS[label] for label in sublist)


_LABELS = string.ascii_uppercase + string.ascii_lowercase  # NumPy's sublist labels, in order


def einsum_labels(subscripts, ndims):
    """The labels of each operand and of the result of `np.einsum(subscripts, ...)` on
    operands with `ndims` axes, with `...` spelled out in letters of its own."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    inputs = inputs.split(",")
    widths = [ndim - len(s) + 3 if "..." in s else 0 for s, ndim in zip(inputs, ndims)]
    unused = [c for c in string.ascii_letters if c not in subscripts]
    spelled = "".join(unused[: max(widths)])
    inputs = [s.replace("...", spelled[len(spelled) - n:]) for s, n in zip(inputs, widths)]
    if arrow:
        return inputs, output.replace("...", spelled)
    labels = "".join(inputs)
    return inputs, spelled + "".join(sorted(c for c in set(labels) - set(spelled)
                                            if labels.count(c) == 1))


def norm_gradient(x, z, ord=None, axis=None, keepdims=False):
    """The gradient of `z = np.linalg.norm(x, ord, axis, keepdims)` with respect to `x`
    (each norm's derivative, spread over the elements it reads)."""
    if ord is None or ord == "fro":
        return x / unreduce(z, x, axis, keepdims)
    axes = norm_axes(x, axis)
    if len(axes) == 1:
        return _vector_norm_gradient(x, z, ord, axis, keepdims)
    if ord in ("nuc", 2, -2):
        return _spectral_norm_gradient(x, ord, axes)
    summed, over = axes if ord in (1, -1) else axes[::-1]
    return np.sign(x) * extreme_sums(x, summed, over, ord > 0)


def vector_norm_gradient(x, z, ord=2, axis=None, keepdims=False):
    """The gradient of `z = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)`
    with respect to `x`: a vector norm over the axes `axis` (all of them when None)."""
    if ord == 2:
        return x / unreduce(z, x, axis, keepdims)
    return _vector_norm_gradient(x, z, ord, axis, keepdims)


def _vector_norm_gradient(x, z, ord, axis, keepdims):
    if ord == 0:
        return np.zeros(np.shape(x))
    if ord in (np.inf, -np.inf):
        return np.sign(x) * extreme_sums(x, (), axis, ord > 0)
    return np.sign(x) * (np.abs(x) / unreduce(z, x, axis, keepdims)) ** (ord - 1)


def _spectral_norm_gradient(x, ord, axes):
    usv = np.linalg.svd(np.moveaxis(x, axes, (-2, -1)), full_matrices=False)
    if ord == "nuc":
        gradient = usv[0] @ usv[2]
    else:
        i = 0 if ord == 2 else -1
        gradient = np.expand_dims(usv[0][..., i], -1) * np.expand_dims(usv[2][..., i, :], -2)
    return np.moveaxis(gradient, (-2, -1), axes)


def norm_axes(x, axis=None):
    """The axes `np.linalg.norm(x, axis=axis)` reduces: one for a vector norm, two for a
    matrix norm."""
    if axis is None:
        return tuple(range(np.ndim(x)))
    return tuple(a % np.ndim(x) for a in (axis if isinstance(axis, tuple) else (axis,)))


def extreme_sums(x, summed, over, largest):
    """Where the sums of `|x|` over the axes `summed` reach their max (their min unless
    `largest`) along axis `over`: 1/count at ties, else 0."""
    sums = np.sum(np.abs(x), axis=summed, keepdims=True)
    extreme = np.max(sums, axis=over, keepdims=True) if largest else np.min(
        sums, axis=over, keepdims=True)
    hits = sums == extreme
    return hits / np.sum(hits, axis=over, keepdims=True)
