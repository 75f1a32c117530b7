"""The sensitivity algebra's fast paths give what the plain NumPy expressions give."""

import copy

import numpy as np
import pytest

from pullback.runtime import structures
from pullback.runtime.cotangents import (
    ZERO,
    add,
    add_all,
    broadcast_view,
    dot_left,
    dot_left_all,
    dot_right,
    dot_right_all,
    matmul_left,
    matmul_left_all,
    matmul_right,
    matmul_right_all,
    shape_of,
    unbroadcast,
    unbroadcast_all,
    unbroadcast_to,
    unreduce,
)
from pullback.runtime.deferred import Deferred, outer_sum
from pullback.runtime.structures import (
    add_at,
    indexed_all,
    rearray,
    unarray,
    unconcatenate,
    unindex,
    unindex_all,
    unindex_tiles,
)
from pullback.runtime.terms import Terms, collected, summed_once

rng = np.random.default_rng(0)


def scatter(g, shape, index):
    out = np.zeros(shape)
    np.add.at(out, index, g)
    return out


BROADCASTS = [((1000, 5, 2), (1, 5, 2)), ((1000, 5, 2), (5, 2)), ((100, 3), (3,)),
              ((10, 3), (1, 3)), ((1000, 100), (100,)), ((7, 100, 5), (100, 5)),
              ((100, 5), (100, 1)), ((4, 3), (4, 3)), ((3,), ()), ((5, 1000, 2), (5, 1, 2)),
              ((8000, 3), (8000, 1)), ((2, 3, 4, 5), (2, 1, 1, 5)), ((2, 3, 4), (1, 3, 1)),
              ((1, 64), (64,)), ((3, 0), (3, 1)), ((0, 4), (4,)), ((2, 3, 4), ())]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "float32"])
@pytest.mark.parametrize("g_shape, x_shape", BROADCASTS)
def test_unbroadcast_sums_the_broadcast_axes(g_shape, x_shape, layout):
    g, x = rng.standard_normal(g_shape), np.ones(x_shape)
    if layout == "transposed":
        g = np.ascontiguousarray(g.T).T
    elif layout == "float32":
        g = g.astype(np.float32)
    want = (g + np.zeros(x_shape)).sum(
        axis=tuple(range(len(g_shape) - len(x_shape)))
        + tuple(len(g_shape) - len(x_shape) + i for i, n in enumerate(x_shape)
                if n == 1 and g_shape[len(g_shape) - len(x_shape) + i] != 1), keepdims=False)
    assert np.allclose(unbroadcast(g, x), np.reshape(want, x_shape), rtol=1e-5, atol=1e-4)
    assert np.shape(unbroadcast(g, x)) == x_shape


@pytest.mark.parametrize("g_shape, x_shape", BROADCASTS)
def test_unbroadcast_to_a_shape_is_unbroadcast_to_an_array_of_it(g_shape, x_shape):
    """What a pullback holding `shape_of(x)` computes is what it computed holding `x`."""
    g, x = rng.standard_normal(g_shape), np.ones(x_shape)
    np.testing.assert_array_equal(unbroadcast_to(g, shape_of(x)), unbroadcast(g, x))
    assert unbroadcast_to(2.0, shape_of(np.float64(1.0))) == unbroadcast(2.0, np.float64(1.0))
    assert unbroadcast_to(g, shape_of(ZERO)) is ZERO and unbroadcast_to(ZERO, x_shape) is ZERO


def test_unbroadcast_of_numbers_is_the_number():
    for g, x in [(2.0, 3.0), (np.float64(2.0), 3.0), (2.0, np.float64(3.0))]:
        assert unbroadcast(g, x) is g
    assert unbroadcast(np.full(3, 2.0), np.float64(1.0)) == 6.0


@pytest.mark.parametrize("g, shape", [(np.float64(2.0), (2, 3)), (np.ones((4, 1)), (3, 4, 5)),
                                      (np.ones(3), (2, 3)), (np.ones((3, 4)).T, (2, 4, 3))])
def test_broadcast_view_is_a_read_only_broadcast(g, shape):
    view = broadcast_view(g, shape)
    assert np.array_equal(view, np.broadcast_to(g, shape)) and not view.flags.writeable


def test_unreduce_of_an_axis():
    assert np.array_equal(unreduce(np.arange(3.0), np.ones((3, 4)), 1),
                          np.repeat(np.arange(3.0)[:, None], 4, axis=1))


INDICES = [((20, 11), (800,)), ((5,), (7,)), ((4, 3, 2), (2, 3)), ((6, 2), (0,))]


@pytest.mark.parametrize("x_shape, index_shape", INDICES)
def test_scatters_of_rows_add_repeated_rows(x_shape, index_shape):
    index = rng.integers(-x_shape[0], x_shape[0], index_shape)
    g = rng.standard_normal(index_shape + x_shape[1:])
    want = scatter(g, x_shape, index)
    assert np.allclose(unindex(g, np.ones(x_shape), index), want)
    assert np.allclose(unindex_all((g, g), np.ones(x_shape), (index, index)), 2 * want)


S = slice(None)
SLICES = [
    ((10,), [slice(0, 4), slice(4, 10)]),
    ((10,), [slice(4, None), slice(None, 4)]),
    ((3, 12), [(S, slice(0, 3)), (S, slice(6, 9)), (S, slice(3, 6)), (S, slice(9, 12))]),
    ((12, 3), [slice(0, 6), slice(6, -1), slice(-1, None)]),
    ((10,), [slice(0, 4), slice(5, 10)]),
    ((10,), [slice(0, 6), slice(4, 10)]),
    ((10,), [slice(0, 10, 2), slice(1, 10, 2)]),
    ((3, 4), [(S, slice(0, 2)), (slice(0, 1), slice(2, 4))]),
    ((3, 4), [(Ellipsis, slice(0, 2)), (Ellipsis, slice(2, 4))]),
    ((3, 4), [(S, 0), (S, slice(1, 4))]),
    ((3, 4), [1, (S, 2)]),
    ((2, 6, 2), [(S, slice(2, None)), (S, slice(0, 0)), (S, slice(0, 2))]),
    ((2, 6, 2), [(S, slice(0, 3), S), (S, slice(3, 6), S)]),
    ((4, 3), [(S, 2), (S, -2), (S, slice(0, 1))]),
    ((4, 3), [(S, 2), (S, 1), (S, 1)]),
    ((4, 3), [(S, 2), (S, 0)]),
    ((4, 3), [(None, 2), (S, 1), (S, 0)]),
    ((3,), [1, 0, 1, -1]),  # numbers of a vector, at repeated and negative ints
]


@pytest.mark.parametrize("x_shape, indices", SLICES)
@pytest.mark.parametrize("tiled_from", [0, 10**9])
def test_unindex_all_is_the_sum_of_the_scatters(x_shape, indices, tiled_from, monkeypatch):
    monkeypatch.setattr(structures, "_TILED", tiled_from)
    x = np.ones(x_shape)
    gs = tuple(rng.standard_normal(x[index].shape) for index in indices)
    want = sum(unindex(g, x, index) for g, index in zip(gs, indices))
    assert np.array_equal(unindex_all(gs, x, tuple(indices)), want)
    with_zero = (ZERO,) + gs[1:]
    assert np.allclose(unindex_all(with_zero, x, tuple(indices)), want - unindex(
        gs[0], x, indices[0]))
    assert all(np.array_equal(h, x[index]) for h, index in zip(
        indexed_all(x, tuple(indices)), indices))


@pytest.mark.parametrize("x, indices", [
    ([1.0, 2.0, 3.0, 4.0], (0, 2, 0, -1)),  # a list read at repeated and negative indices
    ((1.0, np.ones(2), 3.0), (1, 1, 2)),
    ([1.0, 2.0, 3.0, 4.0], (slice(1, 3), 0, slice(None, None, 2))),
    ({"a": 1.0, "b": np.ones(2)}, ("b", "a", "b")),
])
def test_unindex_all_of_a_container_is_the_sum_of_the_reads(x, indices):
    gs = tuple(_cotangent_like(x[index]) for index in indices)
    want = ZERO
    for g, index in zip(gs, indices):
        want = add(want, unindex(g, x, index))
    got = unindex_all(gs, x, indices)
    assert type(got) is type(want)
    items = got.values() if isinstance(got, dict) else got
    wanted = want.values() if isinstance(want, dict) else want
    assert all(a is b if a is ZERO or b is ZERO else np.allclose(a, b)
               for a, b in zip(items, wanted))
    assert unindex_all((ZERO,) * len(indices), x, indices) is ZERO


@pytest.mark.parametrize("x, indices", [
    ([1.0, 2.0, 3.0, 4.0], (0, 2, 0, -1)),
    ((1.0, np.ones(2), 3.0), (1, 1, 2)),
    ([1.0, 2.0, 3.0, 4.0], (slice(1, 3), 0, slice(None, None, 2))),
    ({"a": 1.0, "b": np.ones(2)}, ("b", "a", "b")),
    (np.arange(4.0), (1, 1)),  # not a container: the general sum
])
def test_add_at_adds_the_reads_to_a_cotangent_of_the_whole(x, indices):
    gs = tuple(_cotangent_like(x[index]) for index in indices)
    total = (np.full(4, 0.5) if isinstance(x, np.ndarray) else
             {k: _cotangent_like(v) for k, v in x.items()} if isinstance(x, dict) else
             type(x)([ZERO if i == 0 else _cotangent_like(v) for i, v in enumerate(x)]))
    before = copy.deepcopy(total)
    want = add(total, unindex_all(gs, x, indices))
    got = add_at(total, gs, x, indices)
    assert type(got) is type(want)
    items = list(got.values()) if isinstance(got, dict) else list(got)
    wanted = list(want.values()) if isinstance(want, dict) else list(want)
    assert all(a is b if a is ZERO or b is ZERO else np.allclose(a, b)
               for a, b in zip(items, wanted))
    assert _same_cotangent(total, before)  # the sum is a new value
    assert add_at(ZERO, gs, x, indices) is not ZERO
    assert _same_cotangent(add_at(total, (ZERO,) * len(indices), x, indices), total)


@pytest.mark.parametrize("indices", [(0, 2, 0, -1), (slice(1, 3), -2), (slice(None, None, 2),)])
def test_a_list_version_reads_as_its_list(indices):
    """A list's version as a pullback keeps it (`list_version`: its length) gives the
    helpers that read the list only for its type and length what the list gives."""
    x = [1.0, 2.0, 3.0, 4.0]
    version = structures.list_version(x)
    assert len(version) == 4 and structures.list_version((1.0,)) == (1.0,)
    gs = tuple(_cotangent_like(x[index]) for index in indices)
    assert unindex_all(gs, version, indices) == unindex_all(gs, x, indices)
    assert unindex(gs[0], version, indices[0]) == unindex(gs[0], x, indices[0])
    for total in (ZERO, [0.5, ZERO, 1.0, 2.0]):
        want = add_at(total, gs, x, indices)
        assert add_at(total, gs, version, indices) == want
        into = copy.copy(total)
        assert structures.add_at_into(into, gs, version, indices) == want
        assert into is ZERO or into == want  # added into the list itself


@pytest.mark.parametrize("x", [[1.0, 2.0, np.float64(3.0)], (1.0, 2.0), [1.0, 2],
                               [[1.0, 2.0], [3.0, 4.0]]])
def test_unarray_gives_each_item_its_cotangent(x):
    """The cotangent of `np.array(x)` taken back to `x`: a list (or tuple) of Python
    floats when `x` holds floats, the items' own shapes otherwise; `rearray` its
    transpose."""
    g = rng.standard_normal(np.shape(x))
    got = unarray(g, x)
    assert type(got) is type(x) and len(got) == len(x)
    for gi, xi, want in zip(got, x, g):
        assert np.shape(gi) == np.shape(xi) and np.allclose(gi, want)
    if all(isinstance(xi, float) for xi in x):
        assert all(type(gi) is float for gi in got)
    assert np.allclose(rearray(got, x), g)


def _same_cotangent(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_cotangent(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same_cotangent, a, b))
    return a is b if a is ZERO or b is ZERO else np.array_equal(a, b)


def _cotangent_like(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_cotangent_like(v) for v in value)
    return rng.standard_normal(np.shape(value)) if np.ndim(value) else float(rng.standard_normal())


@pytest.mark.parametrize("g_shape, dtype", [((1, 3), np.float64), ((3, 3), np.float32),
                                            ((3, 3), np.complex128), ((), float)])
def test_unindex_all_of_tiles_broadcast_or_of_another_dtype(g_shape, dtype, monkeypatch):
    monkeypatch.setattr(structures, "_TILED", 0)
    x = np.ones((3, 6))
    indices = ((S, slice(3, None)), (S, slice(None, 3)))
    g = 2.5 if dtype is float else rng.standard_normal(g_shape).astype(dtype)
    if dtype is np.complex128:
        g = g + 0.5j
    gs = (g, rng.standard_normal((3, 3)))
    total = unindex_all(gs, x, indices)
    want = unindex(gs[0], x, indices[0]) + unindex(gs[1], x, indices[1])
    assert total.dtype == want.dtype and np.array_equal(total, want)


TILES = [
    ((10,), [slice(None, 4), slice(4, 7), slice(7, None)], 0),
    ((3, 12), [(S, slice(None, 5)), (S, slice(5, None))], 1),
    ((2, 6, 2), [(S, slice(None, 2)), (S, slice(2, None))], 1),
    ((10,), [slice(None, -3), slice(-3, 20), slice(20, None)], 0),
    ((10,), [slice(None, 6), slice(6, 3), slice(3, None)], 0),
    ((10,), [slice(None, 4), slice(5, None)], 0),
    ((10,), [slice(None, 4), slice(4, 6)], 0),
]


@pytest.mark.parametrize("x_shape, indices, axis", TILES)
@pytest.mark.parametrize("first", ["array", "zero", "broadcast"])
def test_unindex_tiles_is_the_sum_of_the_scatters(x_shape, indices, axis, first):
    x = np.ones(x_shape)
    gs = [rng.standard_normal(x[index].shape) for index in indices]
    if first == "zero":
        gs[0] = ZERO
    elif first == "broadcast":
        gs[0] = gs[0][..., :1] if gs[0].shape[-1] else gs[0]
    want = sum(unindex(g, x, index) for g, index in zip(gs, indices) if g is not ZERO)
    total = unindex_tiles(tuple(gs), x, tuple(indices), axis)
    assert total.shape == x.shape and np.array_equal(total, want)


def test_unindex_tiles_of_parts_broadcast_to_an_empty_slice_and_another():
    x = np.ones(10)
    indices = (slice(None, 4), slice(4, 6), slice(6, 10), slice(10, None))
    gs = (rng.standard_normal(4), rng.standard_normal(1), rng.standard_normal(4), np.ones(1))
    want = sum(unindex(g, x, index) for g, index in zip(gs, indices))
    assert np.array_equal(unindex_tiles(gs, x, indices, 0), want)


def test_unconcatenate_gives_each_part():
    g = rng.standard_normal((2, 7))
    parts = unconcatenate(g, [np.ones((2, 3)), np.ones((2, 4))], 1)
    assert [p.tolist() for p in parts] == [g[:, :3].tolist(), g[:, 3:].tolist()]


@pytest.mark.parametrize("g, dtype", [(2.0, np.float32), (np.float32(2.0), np.float32),
                                      (np.float64(2.0), np.float64), (np.ones(()), np.float64)])
def test_a_scalar_scattered_into_an_array_has_the_dtype_of_their_sum(g, dtype):
    out = unindex(g, np.ones(3, np.float32), 1)
    assert out.dtype == dtype and out.tolist() == [0.0, float(g), 0.0]


def test_add_all_sums_without_changing_its_terms():
    terms = ((np.ones(3), ZERO, {"a": 1.0}), ZERO, (np.full(3, 2.0), 4.0, {"b": 2.0}),
             (np.full(3, 3.0), ZERO, ZERO))
    copies = [None if t is ZERO else (t[0].copy(),) for t in terms]
    total = add_all(terms)
    assert np.array_equal(total[0], np.full(3, 6.0)) and total[1] == 4.0
    assert total[2] == {"a": 1.0, "b": 2.0}
    assert all(c is None or np.array_equal(c[0], t[0]) for c, t in zip(copies, terms))
    assert add_all((ZERO, ZERO)) is ZERO and add_all(ZERO) is ZERO


# (left operands' shapes, one per step or None for a step whose cotangent is ZERO, and b's)
RIGHT_PRODUCTS = [
    ([(1, 4), (1, 4), None, (1, 4)], (4, 3)),  # matrices: one product of the stacked rows
    ([(2, 4), (5, 4), (1, 4)], (4, 3)),  # batches of several sizes
    ([(4,), (4,), (4,)], (4, 3)),  # vectors: stacked
    ([(2, 4), (3, 4)], (4,)),  # matrix times vector
    ([(48, 64), None, (40, 64), (48, 64)], (64,)),  # large matrices times a vector: one by one
    ([(4,), (4,)], (4,)),  # inner products: scalar cotangents
    ([(2, 2, 4), (1, 2, 4)], (4, 3)),  # batched: one product per step
    ([(4,), (2, 4)], (4, 3)),  # mixed ranks: one product per step
    ([None, None], (4, 3)),
]

# (right operands' shapes, None for a step whose cotangent is ZERO, and a's)
LEFT_PRODUCTS = [
    ([(4, 1), (4, 1), None, (4, 1)], (3, 4)),  # columns side by side
    ([(4, 2), (4, 5), (4, 1)], (3, 4)),
    ([(4,), (4,), (4,)], (3, 4)),
    ([(4, 2), (4, 3)], (4,)),  # vector times matrix
    ([(64, 48), (64, 40), None], (64,)),  # a vector times large matrices: one by one
    ([(4,), (4,)], (4,)),
    ([(2, 4, 2), (1, 4, 2)], (3, 4)),  # batched: one product per step
    ([(4,), (4, 2)], (3, 4)),
    ([None, None], (3, 4)),
]

# For each side of `a @ b` a weight may be on: the product, a step's term of the sum
# (`matmul_right(g, a, b)` or `matmul_left(g, a, b)`), and the sum over the steps.
SIDES = {
    "weight on the right": (lambda w, x: x @ w, lambda g, w, x: matmul_right(g, x, w),
                            lambda gs, w, xs: matmul_right_all(gs, xs, w)),
    "weight on the left": (lambda w, x: w @ x, lambda g, w, x: matmul_left(g, w, x),
                           lambda gs, w, xs: matmul_left_all(gs, w, xs)),
    "np.dot, weight on the right": (lambda w, x: np.dot(x, w), lambda g, w, x: dot_right(g, x, w),
                                    lambda gs, w, xs: dot_right_all(gs, xs, w)),
    "np.dot, weight on the left": (lambda w, x: np.dot(w, x), lambda g, w, x: dot_left(g, w, x),
                                   lambda gs, w, xs: dot_left_all(gs, w, xs)),
}


@pytest.mark.parametrize("side, shapes, w_shape",
                         [(side, *case) for side in ("weight on the right",
                                                     "np.dot, weight on the right")
                          for case in RIGHT_PRODUCTS]
                         + [(side, *case) for side in ("weight on the left",
                                                       "np.dot, weight on the left")
                            for case in LEFT_PRODUCTS])
def test_a_loops_products_summed_at_once_are_the_sum_of_the_steps(side, shapes, w_shape):
    product, term, summed = SIDES[side]
    w = rng.standard_normal(w_shape)
    xs = [rng.standard_normal(shape or (4,)) for shape in shapes]
    gs = [ZERO if shape is None else _cotangent_of(product(w, x)) for shape, x in zip(shapes, xs)]
    want = add_all(tuple(term(g, w, x) for g, x in zip(gs, xs)))
    _assert_close(summed(gs, w, xs), want)


def _assert_close(got, want):
    assert got is ZERO if want is ZERO else np.allclose(np.asarray(got), np.asarray(want),
                                                          rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("g_shapes, x_shape", [
    ([(2, 3), (2, 3), None, (2, 3)], (3,)),  # one shape: summed, then unbroadcast once
    ([(2, 3), (5, 3)], (1, 3)),  # shapes of their own: each unbroadcast
    ([(), (), ()], ()),  # floats
    ([None], (3,)),
])
def test_unbroadcast_all_is_the_sum_of_the_steps_unbroadcasts(g_shapes, x_shape):
    x = rng.standard_normal(x_shape) if x_shape else 1.5
    gs = [ZERO if shape is None else _cotangent_of(rng.standard_normal(shape))
          for shape in g_shapes]
    copies = [g if g is ZERO else np.copy(g) for g in gs]
    want = add_all(tuple(unbroadcast(g, x) for g in gs))
    got = unbroadcast_all(gs, x)
    assert got is ZERO if want is ZERO else np.allclose(got, want, rtol=1e-13, atol=1e-13)
    assert all(c is g if c is ZERO else np.array_equal(c, g) for c, g in zip(copies, gs))


def _cotangent_of(value):
    """A random cotangent for `value`: a float for a scalar, else an array of its shape."""
    return float(rng.standard_normal()) if np.ndim(value) == 0 else rng.standard_normal(
        np.shape(value))


@pytest.mark.parametrize("a_shape, b_shape", [((4, 3), (3,)), ((3,), (3, 2)), ((4, 3), (3, 2)),
                                              ((3,), (3,)), ((2, 4, 3), (3,)), ((4, 3), (2, 3, 5))])
def test_matmuls_cotangents_are_its_transposes(a_shape, b_shape):
    """<g, da @ b + a @ db> is <matmul_left(g), da> + <matmul_right(g), db>, whichever
    fast path the ranks take."""
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    da, db = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    g = rng.standard_normal(np.shape(a @ b))
    left, right = np.asarray(matmul_left(g, a, b)), np.asarray(matmul_right(g, a, b))
    assert np.isclose(np.sum(g * (da @ b)), np.sum(left * da))
    assert np.isclose(np.sum(g * (a @ db)), np.sum(right * db))


@pytest.mark.parametrize("shape, rows", [((6, 3), [0, 2, 2, 5, 1]), ((8,), [3, 3, 0, 7]),
                                         ((200, 40), [5, 17, 5, 199])])
def test_rows_read_one_by_one_are_scattered_at_once(shape, rows):
    """`unindex_all` of a loop's cotangents of single rows (ints, repeated ones added)
    stacks them and scatters once (or defers the stacked rows of a large table); the
    numbers are those of the rows' scatters added one by one."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    gs = [rng.standard_normal(shape[1:]) if len(shape) > 1 else float(rng.standard_normal())
          for _ in rows]
    gs[1] = ZERO
    expected = np.zeros(shape)
    for g, row in zip(gs, rows):
        if g is not ZERO:
            expected[row] += g
    np.testing.assert_allclose(np.asarray(unindex_all(gs, x, rows)), expected)


# -- a recursion's terms, summed once ---------------------------------------------------


def test_collected_terms_are_summed_once_as_their_leaves():
    """`summed_once` of a tree of `collected` terms is `add_all` of its leaves; nested,
    the tree itself; ZERO parts are dropped."""
    leaves = [{"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)} for _ in range(5)]
    inner = collected((leaves[0], ZERO, collected((leaves[1], leaves[2]))))
    tree = collected((inner, leaves[3], ZERO, leaves[4]))
    assert isinstance(tree, Terms) and summed_once(tree, True) is tree
    total = summed_once(tree, False)
    for key in ("w", "b"):
        np.testing.assert_allclose(total[key], sum(leaf[key] for leaf in leaves))
    assert collected((ZERO, ZERO)) is ZERO and collected((ZERO, leaves[0])) is leaves[0]
    assert summed_once(leaves[0], False) is leaves[0]


def test_a_long_column_of_deferred_products_or_arrays_is_summed_at_once():
    """Many terms of one kind and shape are joined in one deferred sum (one product of
    the stacked factors when made dense) or summed as one stacked array; others as
    before."""
    us = [rng.standard_normal((1, 80)) for _ in range(20)]
    vs = [rng.standard_normal((1, 60)) for _ in range(20)]
    products = [outer_sum(u, v) for u, v in zip(us, vs)]
    assert all(isinstance(p, Deferred) for p in products)
    joined = add_all(tuple(products[:10]) + (ZERO,) + tuple(products[10:]))
    assert isinstance(joined, Deferred) and len(joined.parts) == 20
    np.testing.assert_allclose(np.asarray(joined), sum(u.T @ v for u, v in zip(us, vs)))
    arrays = [rng.standard_normal(4) for _ in range(12)]
    np.testing.assert_allclose(add_all(tuple(arrays)), np.sum(arrays, axis=0))
    mixed = [*arrays, rng.standard_normal((2, 4))]
    np.testing.assert_allclose(add_all(tuple(mixed)), sum(mixed))


def test_written_item_of_an_array_is_its_own_value():
    """The cotangent of a number written into a float vector is a Python float; of a row,
    a copy (the cotangent is zeroed there in place after: `without_item_into`); of
    anything written into an int array, zero (the value was rounded)."""
    from pullback.runtime import mutation

    g = np.array([1.0, 2.0, 3.0])
    got = mutation.written_item(g, 1, 0.5, np.zeros(3))
    assert got == 2.0 and type(got) is float
    assert mutation.written_item(g, 1, 0.5, np.zeros(3, dtype=int)) is ZERO
    rows = np.arange(6.0).reshape(3, 2)
    row = mutation.written_item(rows, 2, np.ones(2), np.zeros((3, 2)))
    assert np.array_equal(row, [4.0, 5.0]) and not np.may_share_memory(row, rows)
    assert mutation.without_item_into(rows, 2) is rows and np.array_equal(row, [4.0, 5.0])
