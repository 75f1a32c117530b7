"""The optimisations of generated pullbacks: the code they give, and that values stay
exact (orders 1 and 2 against finite differences, and bit for bit where the
rewrite must not change a number)."""

import numpy as np
import pytest

import pullback
from pullback import structures
from pullback.testing import check_grads

rng = np.random.default_rng(7)


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def sigmoid_sum(x):
    return np.sum(0.5 * (np.tanh(0.5 * x) + 1.0))


def thirds(x):
    return np.sum(3.0 * np.tanh(3.0 * x))


def square(x):
    return x * x


def branch_sigmoids(x, flag):
    if flag > 0:
        y = sigmoid(x) * x
    else:
        y = sigmoid(2.0 * x)
    return np.sum(y)


def scaled_twice(x, y):
    t = x * 4.0
    u = t * y
    return np.sum(u * 0.5 + t)


def read_twice(x):
    return np.sum(0.5 * (np.tanh(x) + np.sin(x)))


def columns(x):
    """Reads every column of a (400, 3) array: their cotangents tile it (`unindex_all`
    writes them into an empty array at 1,024 numbers or more)."""
    a, b, c = x[:, 0], x[:, 1], x[:, 2]
    return np.sum(a * b * np.sin(c) + c * c)


def gate_slices(x):
    """Slices of a vector of 1,200 that tile it, read in another order."""
    n = x.shape[0] // 3
    return np.sum(sigmoid(x[n:2 * n]) * np.tanh(x[2 * n:]) + x[:n] ** 2)


CASES = [
    ("sigmoid_sum", sigmoid_sum, (rng.standard_normal(5),)),
    ("thirds", thirds, (rng.standard_normal(5),)),
    ("square", square, (1.3,)),
    ("branch_sigmoids_then", branch_sigmoids, (rng.standard_normal(5), 1)),
    ("branch_sigmoids_else", branch_sigmoids, (rng.standard_normal(5), -1)),
    ("scaled_twice", scaled_twice, (rng.standard_normal(5), rng.standard_normal(5))),
    ("read_twice", read_twice, (rng.standard_normal(5),)),
    ("columns", columns, (rng.standard_normal((400, 3)),)),
    ("gate_slices", gate_slices, (rng.standard_normal(1200),)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_derivatives(name, fn, args, order):
    check_grads(fn, args, order=order)


def test_powers_of_two_of_a_chain_of_products_are_multiplied_once():
    x = rng.standard_normal(5)
    text = pullback.source(sigmoid_sum, x)
    assert "dx = dv_0_5_times_plus * (1.0 - tanh_v_0_5_times_x * tanh_v_0_5_times_x) * 0.25" in text
    t = np.tanh(0.5 * x)
    assert np.array_equal(pullback.grad(sigmoid_sum)(x), np.ones(5) * (1.0 - t * t) * 0.25)


def test_other_constants_stay_where_they_are():
    text = pullback.source(thirds, rng.standard_normal(5))
    assert "* 9.0" not in text and text.count("* 3.0") == 2


def test_chains_in_branches_gather_and_lose_no_unbroadcast():
    text = pullback.source(branch_sigmoids, rng.standard_normal(5), 1)
    assert text.count(" * 0.25\n") == 1 and text.count(" * 0.5\n") == 1  # 0.25 * 2.0
    assert "unbroadcast" not in text


def test_a_product_read_twice_keeps_its_statement():
    text = pullback.source(read_twice, rng.standard_normal(5))
    assert "dtanh_x_plus_sin_x = dtimes * 0.5\n" in text


def test_the_same_contribution_twice_is_doubled():
    assert "dx = dout * x * 2\n" in pullback.source(square, 1.3)
    assert pullback.grad(square)(1.3) == 1.3 * 2


@pytest.mark.parametrize("fn, shape", [(columns, (400, 3)), (gate_slices, (1200,))])
def test_tiles_of_an_array_are_written_as_the_sum_of_the_scatters_would_be(fn, shape,
                                                                          monkeypatch):
    x = rng.standard_normal(shape)
    assert pullback.source(fn, x).count("unindex_all(") == 1
    tiled = pullback.grad(fn)(x)
    monkeypatch.setattr(structures, "_TILED", x.size + 1)
    assert np.array_equal(tiled, pullback.grad(fn)(x))
