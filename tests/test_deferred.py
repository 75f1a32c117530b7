"""Deferred sums of outer products and rows (`pullback.deferred`): their values, and
derivatives through them at orders 1 to 3.

At the default thresholds only large arrays are deferred, so the derivative tests
run twice: as they are, and with every matrix product and row read deferred.
"""

import operator

import numpy as np
import pytest

import pullback
import test_primitives
from pullback.compiler.analysis import kinds
from pullback.runtime import deferred
from pullback.runtime.cotangents import ZERO, add, add_all, add_into, materialize, unbroadcast
from pullback.runtime.deferred import OuterSum, RowSum, concrete, outer_sum, row_sum
from pullback.testing import check_grads

rng = np.random.default_rng(3)


def normal(*shape):
    return rng.standard_normal(shape)


@pytest.fixture(params=["default", "always"])
def deferral(request, monkeypatch):
    """Run a test at the default thresholds and with everything deferred."""
    if request.param == "always":
        monkeypatch.setattr(deferred, "LARGE", 0)
        monkeypatch.setattr(deferred, "SPARSE", 0)
    return request.param


@pytest.fixture
def always(monkeypatch):
    monkeypatch.setattr(deferred, "LARGE", 0)
    monkeypatch.setattr(deferred, "SPARSE", 0)


def outer(u_rows, m, n):
    return outer_sum(normal(u_rows, m), normal(u_rows, n))


# -- values ------------------------------------------------------------------------------


def test_outer_products_of_few_rows_of_large_matrices_are_deferred():
    u, v = normal(2, 100), normal(2, 80)
    product = outer_sum(u, v)
    assert isinstance(product, OuterSum)
    np.testing.assert_allclose(product.dense(), u.T @ v)
    assert isinstance(outer_sum(normal(60, 100), normal(60, 80)), np.ndarray)
    assert isinstance(outer_sum(normal(1, 10), normal(1, 10)), np.ndarray)


@pytest.mark.parametrize("kept", [0, 2000, deferred.KEPT])
def test_sums_join_and_become_dense_past_half_the_size_and_kept(kept, monkeypatch):
    monkeypatch.setattr(deferred, "KEPT", kept)
    total, dense = ZERO, np.zeros((100, 80))
    for step in range(40):
        term = outer(1, 100, 80)
        total, dense = add(total, term), dense + term.dense()
        parts = (step + 1) * 180
        kind = OuterSum if parts * 4 <= 2 * 8000 or parts <= kept else np.ndarray
        assert isinstance(total, kind)
        np.testing.assert_allclose(np.asarray(total), dense)


def test_a_sum_of_a_sum_with_itself_counts_it_twice():
    term = outer(2, 100, 80)
    np.testing.assert_allclose((term + term).dense(), 2 * term.dense())


def test_deep_sums_are_made_without_recursion(always):
    total, dense = ZERO, np.zeros((3, 2))
    for _ in range(5000):
        u, v = normal(1, 3), normal(1, 2)
        total, dense = add(total, outer_sum(u, v)), dense + u.T @ v
    np.testing.assert_allclose(total.dense(), dense)


def test_rows_read_from_a_table_are_deferred():
    table = normal(100, 64)
    rows = row_sum(normal(64), table, 7)
    more = row_sum(normal(3, 64), table, np.array([7, 2, 7]))
    assert isinstance(rows, RowSum) and isinstance(more, RowSum)
    expected = np.zeros((100, 64))
    expected[7] += rows.parts[1]
    np.add.at(expected, np.array([7, 2, 7]), more.parts[1])
    np.testing.assert_allclose((rows + more).dense(), expected)
    assert row_sum(normal(64), table, slice(0, 1)) is None
    assert row_sum(normal(90, 64), table, np.arange(90)) is None


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.eq,
          operator.lt, np.add, np.multiply, np.maximum]


@pytest.mark.parametrize("count, rows, row_shape", [
    (8000, 20, (3,)),        # narrow rows: a count per column
    (8000, 2000, (16,)),
    (800, 100, (64,)),       # wide rows in a small array: one count over it flattened
    (300, 2000, (4,)),       # many more rows than values: np.add.at
    (40, 5, (3,)),           # few values
    (5000, 30, ()),          # a vector
    (2000, 50, (4, 5)),      # rows of two axes
])
def test_scatter_add_is_add_at(count, rows, row_shape):
    """`deferred.scatter_add` adds what `np.add.at` adds, whichever way it counts, for
    repeated and negative row numbers and an index of two axes."""
    rng = np.random.default_rng(count + rows)
    index = rng.integers(-rows, rows, count)
    for index_shape in ((count,), (2, count // 2)):
        idx = index.reshape(index_shape)
        g = rng.standard_normal(index_shape + row_shape)
        want, got = np.ones((rows,) + row_shape), np.ones((rows,) + row_shape)
        np.add.at(want, idx, g)
        deferred.scatter_add(got, idx, g)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
def test_operators_and_ufuncs_see_the_dense_array(op):
    d = outer(2, 100, 80)
    other = np.abs(normal(100, 80)) + 1.0
    np.testing.assert_allclose(op(d, other), op(d.dense(), other))
    np.testing.assert_allclose(op(other, d), op(other, d.dense()))
    np.testing.assert_allclose(op(d, 2.0), op(d.dense(), 2.0))


def test_everything_else_sees_the_dense_array():
    d = outer(2, 100, 80)
    dense = d.dense()
    np.testing.assert_allclose(-d, -dense)
    np.testing.assert_allclose(d ** 2, dense ** 2)
    np.testing.assert_allclose(d @ dense.T, dense @ dense.T)
    np.testing.assert_allclose(d.T, dense.T)
    np.testing.assert_allclose(d.sum(axis=0), dense.sum(axis=0))
    np.testing.assert_allclose(d[3, 1:5], dense[3, 1:5])
    np.testing.assert_allclose(np.tanh(d), np.tanh(dense))
    np.testing.assert_allclose(np.stack([d, d]), np.stack([dense, dense]))
    np.testing.assert_allclose(np.concatenate([d, dense]), np.concatenate([dense, dense]))
    np.testing.assert_allclose(list(d)[4], dense[4])
    assert (np.shape(d), np.ndim(d), np.size(d), len(d)) == ((100, 80), 2, 8000, 100)
    assert np.asarray(d).dtype == np.float64 and d.copy().flags.writeable


def test_adding_into_an_array_in_place():
    d = outer(2, 100, 80)
    total = normal(100, 80)
    expected = total + d.dense()
    same = total
    total += d
    assert total is same
    np.testing.assert_allclose(total, expected)
    running = add_into(ZERO, d)
    assert running is d
    running = add_into(add_into(running, normal(100, 80)), d)
    assert type(running) is np.ndarray


def test_the_symbolic_zero_is_absorbed_either_way():
    d = outer(2, 100, 80)
    assert d + ZERO is d and ZERO + d is d
    assert d * ZERO is ZERO and ZERO * d is ZERO


def test_add_all_joins_deferred_leaves_of_containers():
    a, b, c = outer(1, 100, 80), outer(1, 100, 80), normal(5)
    total = add_all(((a, c), (b, ZERO), (ZERO, c)))
    assert isinstance(total[0], OuterSum)
    np.testing.assert_allclose(total[0].dense(), a.dense() + b.dense())
    np.testing.assert_allclose(total[1], 2 * c)


def test_what_reaches_the_user_is_an_array_nothing_else_holds():
    d = outer(2, 100, 80)
    out = materialize(d, normal(100, 80))
    assert type(out) is np.ndarray and out.flags.writeable
    assert concrete((d, [d], {"w": d}))[1][0].shape == (100, 80)


def test_unbroadcast_keeps_a_sum_of_the_right_shape():
    d = outer(2, 100, 80)
    assert unbroadcast(d, normal(100, 80)) is d
    np.testing.assert_allclose(unbroadcast(d, normal(80)), d.dense().sum(axis=0))


def test_kind_is_array():
    assert kinds.of_value(outer(2, 100, 80)) is kinds.ARRAY


# -- derivatives -------------------------------------------------------------------------


def matrix_vector(w, x):
    return np.sum(np.tanh(w @ x))


def vector_matrix(w, x):
    return np.sum(np.sin(x @ w)) * x[0]


def few_rows(w, x):
    return np.sum(np.tanh(x[:2] @ w) ** 2)


def chain(w, xs):
    h = xs[0]
    for x in xs:
        h = np.tanh(h @ w + x)
    return np.sum(h)


def tree(w, depth, x):
    if depth == 0:
        return np.tanh(x @ w)
    return np.tanh((tree(w, depth - 1, x) + tree(w, depth - 1, x[::-1])) @ w)


def tree_loss(w, x):
    return np.sum(tree(w, 3, x) ** 2)


def embedding(table, words, w):
    total = 0.0
    for word in words:
        total = total + np.sum(np.tanh(table[word] @ w))
    return total


def embedding_rows(table, w):
    return np.sum(np.tanh(table[np.array([3, 1, 3])] @ w))


def weights_read_twice(w, x):
    y = x @ w
    return np.sum(np.sin(y) * (x @ w)) + np.sum(w * w)


def returns_cotangent_of_square(w, x):
    return np.sum((x @ w) ** 2)


CASES = [
    ("matrix_vector", matrix_vector, (normal(70, 64), normal(64))),
    ("vector_matrix", vector_matrix, (normal(64, 70), normal(64))),
    ("few_rows", few_rows, (normal(64, 70), normal(5, 64))),
    ("loop", chain, (normal(64, 64) * 0.1, normal(6, 64))),
    ("recursion", tree_loss, (normal(64, 64) * 0.1, normal(64))),
    ("embedding", lambda table, w: embedding(table, [3, 1, 3, 9], w),
     (normal(100, 64), normal(64, 3))),
    ("embedding_rows", embedding_rows, (normal(100, 64), normal(64, 3))),
    ("read_twice", weights_read_twice, (normal(64, 70) * 0.1, normal(64))),
    ("square", returns_cotangent_of_square, (normal(64, 70), normal(64))),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_derivatives(name, fn, args, order, deferral):
    check_grads(fn, args, order=order)


@pytest.mark.parametrize("name, fn, args", CASES[:5], ids=[c[0] for c in CASES[:5]])
def test_third_derivatives(name, fn, args, always):
    check_grads(fn, args, order=3)


def test_gradients_are_arrays(deferral):
    grads = pullback.grad(tree_loss, argnums=(0, 1))(normal(64, 64) * 0.1, normal(64))
    assert all(type(g) is np.ndarray for g in grads)
    table_grad = pullback.grad(embedding_rows)(normal(100, 64), normal(64, 3))
    assert type(table_grad) is np.ndarray


def test_hessian_vector_product_through_outer_products(always):
    w, x, v = normal(8, 8) * 0.3, normal(8), normal(8, 8)
    eps = 1e-6
    numeric = (pullback.grad(matrix_vector)(w + eps * v, x)
               - pullback.grad(matrix_vector)(w - eps * v, x)) / (2 * eps)
    np.testing.assert_allclose(pullback.hvp(lambda w: matrix_vector(w, x), w, v), numeric,
                               rtol=1e-6, atol=1e-8)


def test_custom_backward_functions_get_arrays(always):
    seen = []

    @pullback.custom_vjp
    def weights(w):
        return w * 1.0

    weights.defvjp(lambda w: (w * 1.0, None), lambda _, g: (seen.append(type(g)) or g,))
    pullback.grad(lambda w, x: np.sum(x @ weights(w)))(normal(4, 3), normal(4))
    assert seen == [np.ndarray]


PRODUCT_ROWS = [row for row in test_primitives.TABLE
                if any(word in row[0] for word in ("matmul", "index", "take", "rows"))]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", PRODUCT_ROWS, ids=[r[0] for r in PRODUCT_ROWS])
def test_primitives_with_everything_deferred(name, fn, args, order, always):
    check_grads(fn, args, order=order)



def test_a_deferred_cotangent_taken_apart_by_items_is_made_dense_once(monkeypatch):
    """`unstack` (the cotangent of `np.stack(xs)`) reads every row of the stack's
    cotangent; each read of a deferred sum makes it dense, so it is made dense once
    first (per row, a TreeLSTM's readout of 2,000 states took 70% of its gradient)."""
    from pullback.runtime import structures

    u, v = normal(2, 100), normal(2, 80)
    g = outer_sum(u, v)
    assert isinstance(g, OuterSum)
    made = []
    dense = OuterSum.dense
    monkeypatch.setattr(OuterSum, "dense", lambda self: made.append(1) or dense(self))
    rows = structures.unstack(g, [np.zeros(80)] * 100)
    assert len(made) == 1
    np.testing.assert_allclose(np.stack(rows), u.T @ v)
