"""The optimisations of generated pullbacks: the code they give, and that values stay
exact (orders 1 and 2 against finite differences, and bit for bit where the
rewrite must not change a number)."""

import ast
import math
import re

import numpy as np
import pytest
from test_invariant_reads import Layer
from test_regressions import (
    scalars_in_a_list_updated_by_index,
    weights_tree_loss,
    weights_tree_sum,
)

import pullback
from pullback.compiler import transform
from pullback.compiler.optimize import copies, products, rewrite, simplify
from pullback.compiler.syntax import nodes
from pullback.runtime import structures
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


def halves(x):
    """Slices that tile a vector of 1,200, their shared bound two expressions of
    different text: not found to follow one another (`unindex_all` finds the tiles)."""
    n = x.shape[0] // 2
    m = x.shape[0] - n
    return np.sum(np.sin(x[:n]) + x[m:] ** 2)


def gate_columns(x):
    """Columns of a batch of gates read as an LSTM cell does, in another order."""
    n = x.shape[1] // 4
    i, f, o = x[:, 2 * n:3 * n], x[:, :n], x[:, n:2 * n]
    return np.sum(sigmoid(i) * np.tanh(x[:, 3 * n:]) + sigmoid(f) * sigmoid(o))


def constant_slices(x):
    """Slices with constant bounds that follow one another."""
    return np.sum(np.sin(x[2:5]) * x[0:2].sum() + np.cos(x[5:]))


def three_parts(x, a, b):
    """`x[:a]`, `x[a:b]`, `x[b:]`: they follow one another, and tile `x` only when `a`
    and `b`, once clipped, increase."""
    return np.sum(np.sin(x[:a])) + np.sum(x[a:b] ** 2) + np.sum(np.cos(x[b:]) * 3.0)


WIDTH = 2


def global_bounds(x):
    """Slices whose shared bound is a global, which a call could change in between:
    not taken to follow one another."""
    return np.sum(np.sin(x[:WIDTH])) + np.sum(x[WIDTH:] ** 2)


def tuple_parts(params, x):
    """A tuple read in parts: its cotangent is one display."""
    a, b = params[:2]
    c = params[-1]
    return np.sum(a * x + b) * c


def tuple_parts_in_branches(params, x, flag):
    """Parts read in the branches of an `if`, and one before it."""
    scale = params[2]
    if flag > 0:
        y = params[0] * x
    else:
        w, b = params[:2]
        y = w * x + b
    return np.sum(np.sin(y)) * scale


def tuple_read_twice(params, x):
    """The same item read twice, and the tuple passed on whole."""
    first = params[0]
    return np.sum(first * x + params[0] ** 2) + tuple_parts(params, x)


def list_parts(params, x):
    """A list read in parts: its cotangent stays a list made at run time."""
    a, b = params[:2]
    return np.sum(a * x + b)


def tree_sum(params, tree):
    """A recursion over a binary tree of ints, reading parts of `params` at each node."""
    w, b = params[:2]
    if isinstance(tree, int):
        return np.sum(np.tanh(w * tree + b))
    left, right = tree
    return tree_sum(params, left) * params[2] + tree_sum(params, right)


def logsumexp(x):
    """Whole reductions: a max and a sum."""
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top


def rows_logsumexp(x):
    """Reductions keeping their axes."""
    top = np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - top), axis=1, keepdims=True)) + top)


def shifted_log_sum(x):
    """A max that the result depends on: its share of the cotangent is not zero."""
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top)))


def rows_shifted_log_sum(x):
    """The same by rows, keeping the reduced axes."""
    top = np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(x - top), axis=1, keepdims=True)))


def column_sums(x):
    """A reduction along the first axis, and one along the last."""
    return np.sum(np.sum(np.exp(x), axis=0) ** 2) + np.sum(np.sum(np.exp(x), axis=1) ** 2)


def sum_of_sines(x):
    """A reduction's cotangent multiplied by an array of another expression."""
    return np.sum(np.sin(x))


def rnn_by_dot(w, b, xs):
    """`rnn` with `np.dot`: a vector times a matrix is a matrix product, summed alike."""
    h = np.zeros(w.shape[1])
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(np.concatenate([xs[t], h]), w) + b)
    return np.sum(h * h)


def rnn(w, b, xs):
    """A vector state through a weight and a bias, reading a row of `xs` per step: the
    loop's sums are made after it (`loop_sums`), the products stacked as vectors."""
    h = np.zeros(w.shape[1])
    for t in range(xs.shape[0]):
        h = np.tanh(np.concatenate([xs[t], h]) @ w + b)
    return np.sum(h * h)


def column_rnn(w, u, xs):
    """The weights on the left, `w @ h` (column vectors): their products set side by side."""
    h = np.zeros(w.shape[0])
    for x in xs:
        h = np.tanh(w @ h + u @ x)
    return np.sum(h * h)


def batches(w, b, xs):
    """Batches of rows of several sizes through one weight: stacked as matrices."""
    total = 0.0
    for x in xs:
        total = total + np.sum(np.sin(x @ w + b) * x[:, :1])
    return total


def two_weights(w1, w2, xs):
    """Two weights multiplying each step's input: one list of the inputs serves both."""
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(x @ w1) * np.sin(x @ w2))
    return total


def batched_products(w, xs):
    """Stacks of matrices times one weight: no stacking, one product per step."""
    total = 0.0
    for x in xs:
        total = total + np.sum((x @ w) ** 2)
    return total


def broadcasts_of_several_shapes(b, xs):
    """A bias broadcast against arrays of another shape at each step."""
    total = 0.0
    for x in xs:
        total = total + np.sum(np.cos(x + b))
    return total


def weight_read_twice(w, x, steps):
    """A weight read twice in a step: its term is a sum, made in the loop."""
    for _ in range(steps):
        x = np.tanh(x @ w) @ w.T
    return np.sum(x)


def last_step_only(w, xs):
    """Only the last step's product reaches the result: the others' terms are zero."""
    y = 0.0
    for x in xs:
        y = x @ w
    return np.sum(y ** 2)


def until_small(w, x):
    """A loop left by `break` after a number of steps that depends on the values."""
    for _ in range(10):
        x = np.tanh(x @ w)
        if np.sum(x * x) < 0.5:
            break
    return np.sum(x)


def cell(x, c):
    return np.tanh(x) * c, c * x


def inlined_pair(x, c):
    """Calls a function of this module that returns a pair: it is inlined, and the
    cotangent of the pair its pullback reads is the caller's cotangents."""
    h, c_next = cell(x, c)
    return np.sum(h * c_next + h)


def copied_in_branches(x, flag):
    y = x
    if flag > 0:
        y = y * 2.0
    z = y * x
    return np.sum(z + y)


def weight_read_twice_unrolled(w, b, x1, x2):
    """One weight and one bias read by two steps written out: each cotangent is one sum
    of two products, made by the helpers' sums over lists (`summed_helpers`)."""
    h = np.tanh(x1 @ w + b)
    return np.sum(np.tanh(x2 @ w + b) * h)


def weight_in_branches_and_closure(w, x, flag):
    """A weight read before an `if`, in one branch, and by a closure called in a loop:
    its contributions cross the branch and the loop's sum."""
    z = x @ w
    if flag > 0:
        z = z + x @ w * 0.5
    step = lambda h: np.tanh(h @ w[:, :3])
    h = z[:, :3]
    for _ in range(2):
        h = step(h) + h
    return np.sum(h * z[:, :3])


LOOPS = [
    ("rnn", rnn, (rng.standard_normal((5, 3)), rng.standard_normal(3),
                  rng.standard_normal((4, 2)))),
    ("rnn_by_dot", rnn_by_dot, (rng.standard_normal((5, 3)), rng.standard_normal(3),
                                rng.standard_normal((4, 2)))),
    ("column_rnn", column_rnn, (0.5 * rng.standard_normal((3, 3)), rng.standard_normal((3, 2)),
                                [rng.standard_normal(2) for _ in range(4)])),
    ("batches", batches, (rng.standard_normal((2, 3)), rng.standard_normal(3),
                          [rng.standard_normal((m, 2)) for m in (1, 3, 2)])),
    ("two_weights", two_weights, (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
                                  [rng.standard_normal((2, 2)) for _ in range(3)])),
    ("batched_products", batched_products, (rng.standard_normal((2, 3)),
                                            [rng.standard_normal((2, 4, 2)) for _ in range(3)])),
    ("broadcasts_of_several_shapes", broadcasts_of_several_shapes, (
        rng.standard_normal(3), [rng.standard_normal(s) for s in [(2, 3), (3,), (4, 1, 3)]])),
    ("weight_read_twice", weight_read_twice, (0.5 * rng.standard_normal((3, 3)),
                                              rng.standard_normal((2, 3)), 3)),
    ("last_step_only", last_step_only, (rng.standard_normal((2, 3)),
                                        [rng.standard_normal((2, 2)) for _ in range(3)])),
    ("until_small", until_small, (0.8 * rng.standard_normal((3, 3)), rng.standard_normal(3))),
]

LOOP_ARGS = {name: args for name, _, args in LOOPS}

CASES = LOOPS + [
    ("sigmoid_sum", sigmoid_sum, (rng.standard_normal(5),)),
    ("thirds", thirds, (rng.standard_normal(5),)),
    ("square", square, (1.3,)),
    ("branch_sigmoids_then", branch_sigmoids, (rng.standard_normal(5), 1)),
    ("branch_sigmoids_else", branch_sigmoids, (rng.standard_normal(5), -1)),
    ("scaled_twice", scaled_twice, (rng.standard_normal(5), rng.standard_normal(5))),
    ("read_twice", read_twice, (rng.standard_normal(5),)),
    ("columns", columns, (rng.standard_normal((400, 3)),)),
    ("gate_slices", gate_slices, (rng.standard_normal(1200),)),
    ("halves", halves, (rng.standard_normal(1200),)),
    ("gate_columns", gate_columns, (rng.standard_normal((3, 8)),)),
    ("constant_slices", constant_slices, (rng.standard_normal(8),)),
    ("three_parts", three_parts, (rng.standard_normal(7), 2, 4)),
    ("three_parts_overlapping", three_parts, (rng.standard_normal(7), 4, 2)),
    ("three_parts_clipped", three_parts, (rng.standard_normal(7), -3, 10)),
    ("global_bounds", global_bounds, (rng.standard_normal(5),)),
    ("tuple_parts", tuple_parts, ((rng.standard_normal(3), rng.standard_normal(3), 1.5),
                                  rng.standard_normal(3))),
    ("tuple_parts_then", tuple_parts_in_branches, (
        (rng.standard_normal(3), rng.standard_normal(3), 0.7), rng.standard_normal(3), 1)),
    ("tuple_parts_else", tuple_parts_in_branches, (
        (rng.standard_normal(3), rng.standard_normal(3), 0.7), rng.standard_normal(3), -1)),
    ("tuple_read_twice", tuple_read_twice, (
        (rng.standard_normal(3), rng.standard_normal(3), 1.5), rng.standard_normal(3))),
    ("list_parts", list_parts, ([rng.standard_normal(3), rng.standard_normal(3)],
                                rng.standard_normal(3))),
    ("tree_sum", tree_sum, ((rng.standard_normal(3), rng.standard_normal(3), 0.8),
                            ((1, (2, 3)), 4))),
    ("logsumexp", logsumexp, (rng.standard_normal(5),)),
    ("logsumexp_tied", logsumexp, (np.array([0.5, 2.0, -1.0, 2.0]),)),
    ("rows_logsumexp", rows_logsumexp, (rng.standard_normal((3, 4)),)),
    ("shifted_log_sum", shifted_log_sum, (rng.standard_normal(5),)),
    ("rows_shifted_log_sum", rows_shifted_log_sum, (rng.standard_normal((3, 4)),)),
    ("column_sums", column_sums, (rng.standard_normal((3, 4)),)),
    ("sum_of_sines", sum_of_sines, (rng.standard_normal(5),)),
    ("inlined_pair", inlined_pair, (rng.standard_normal(4), rng.standard_normal(4))),
    ("copied_in_branches_then", copied_in_branches, (rng.standard_normal(3), 1)),
    ("copied_in_branches_else", copied_in_branches, (rng.standard_normal(3), -1)),
    ("weight_read_twice_unrolled", weight_read_twice_unrolled, (
        0.5 * rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3),
        rng.standard_normal((2, 3)))),
    ("weight_in_branches_and_closure_then", weight_in_branches_and_closure, (
        0.5 * rng.standard_normal((3, 3)), rng.standard_normal((2, 3)), 1)),
    ("weight_in_branches_and_closure_else", weight_in_branches_and_closure, (
        0.5 * rng.standard_normal((3, 3)), rng.standard_normal((2, 3)), -1)),
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


@pytest.mark.parametrize("fn, shape", [(columns, (400, 3)), (halves, (1200,))])
def test_tiles_of_an_array_are_written_as_the_sum_of_the_scatters_would_be(fn, shape,
                                                                          monkeypatch):
    x = rng.standard_normal(shape)
    assert pullback.source(fn, x).count("unindex_all(") == 1
    tiled = pullback.grad(fn)(x)
    monkeypatch.setattr(structures, "_TILED", x.size + 1)
    assert np.array_equal(tiled, pullback.grad(fn)(x))


@pytest.mark.parametrize("fn, args, order", [
    (gate_slices, (np.ones(12),), "(dx_part_2, dx_part, dx_part_1), x, (slice(None, n), "
                                  "slice(n, v_2_times_n), "
                                  "slice(v_2_times_n_1, None)), 0)"),
    (gate_columns, (np.ones((3, 8)),), "(df, do, di, dx_part_3), x, "),
    (constant_slices, (np.ones(8),), "(dx_part_1, dx_part, dx_part_2), x, (slice(0, 2), "
                                     "slice(2, 5), slice(5, None)), 0)"),
    (three_parts, (np.ones(7), 2, 4), "(dx_part, dx_part_1, dx_part_2), x, (slice(None, a), "
                                      "slice(a, b), slice(b, None)), 0)"),
])
def test_slices_that_follow_one_another_are_joined_in_their_order(fn, args, order):
    text = pullback.source(fn, *args)
    assert f"dx = unindex_tiles({order}" in text and "unindex_all" not in text


def test_slices_not_known_to_follow_one_another_are_scattered():
    for fn, x in [(halves, np.ones(12)), (global_bounds, np.ones(5))]:
        text = pullback.source(fn, x)
        assert "unindex_all(" in text and "unindex_tiles" not in text


def test_the_cotangent_of_a_tuple_read_in_parts_is_one_display():
    text = pullback.source(tuple_parts, (np.ones(3), np.ones(3), 1.5), np.ones(3))
    assert "dparams = (da, db, dc)" in text and "unindex(" not in text and "repack(" not in text


def test_the_cotangents_of_a_tuple_read_in_branches_are_displays_in_them():
    text = pullback.source(tuple_parts_in_branches, (np.ones(3), np.ones(3), 0.7), np.ones(3), 1)
    assert "dparams = (dparams0, ZERO, ZERO)" in text and "dparams = (dw, db, ZERO)" in text
    assert "dparams = add(dparams, (ZERO, ZERO, dscale))" in text  # the part read before
    assert "unindex(" not in text


def test_the_items_of_an_inlined_callees_pair_are_the_callers_cotangents():
    x, c = rng.standard_normal(4), rng.standard_normal(4)
    text = pullback.source(inlined_pair, x, c)
    pullback_text = text[text.index("_pullback(dout)"):]
    assert "[0]" not in pullback_text and "[1]" not in pullback_text
    assert "dh" in pullback_text and "dc_next" in pullback_text
    t = np.tanh(x)
    dx, dc = pullback.grad(inlined_pair, argnums=(0, 1))(x, c)
    np.testing.assert_allclose(dx, (1 - t * t) * c * (c * x + 1) + t * c * c)
    np.testing.assert_allclose(dc, t * (c * x + 1) + t * c * x)


def _copies_propagated(source):
    """The block `source` after `copies.propagate_copies` and `simplify.dead_code`."""
    block = nodes.from_ast(ast.parse(source)).body
    return ast.unparse(nodes.to_ast(nodes.module(simplify.dead_code(
        copies.propagate_copies(block), {"result"}))))


def _run_block(source, **values):
    namespace = dict(values)
    exec(source, namespace)
    return namespace["result"]


@pytest.mark.parametrize("source, expected", [
    ("a = b\nc = a * 2\nresult = c + a",
     "c = b * 2\nresult = c + b"),
    ("a = b\nb = b + 1\nresult = a * b",
     "a = b\nb = b + 1\nresult = a * b"),
    ("a = b\na = a + 1\nresult = a",
     "a = b + 1\nresult = a"),
    ("a = b\nif flag:\n    c = a\nelse:\n    b = 5\n    c = a\nresult = a + c + b",
     "a = b\nif flag:\n    c = b\nelse:\n    b = 5\n    c = a\nresult = a + c + b"),
    ("a = b\nfor i in range(3):\n    c = a + i\n    b = c\nresult = a + b",
     "a = b\nfor i in range(3):\n    c = a + i\n    b = c\nresult = a + b"),
    ("a = b\nfor i in range(3):\n    c = a + i\nresult = c",
     "for i in range(3):\n    c = b + i\nresult = c"),
    ("a = b\nf = lambda: a\nb = 7\nresult = f() + b",
     "a = b\nf = lambda: a\nb = 7\nresult = f() + b"),
])
def test_a_copy_is_read_as_what_it_copies_while_both_hold(source, expected):
    propagated = _copies_propagated(source)
    assert propagated == ast.unparse(ast.parse(expected))
    for flag in (True, False):
        assert _run_block(propagated, b=3, flag=flag) == _run_block(source, b=3, flag=flag)


def test_a_return_keeps_the_names_of_the_parameters_cotangents():
    propagated = _copies_propagated("def pb(dout):\n    da = dout\n    return (ZERO, da)")
    assert "return (ZERO, da)" in propagated


def test_the_cotangent_of_a_list_read_in_parts_is_made_at_run_time():
    text = pullback.source(list_parts, [np.ones(3), np.ones(3)], np.ones(3))
    assert "dparams = unindex(" in text


@pytest.mark.parametrize("fn, shape, products, kept", [
    (logsumexp, (5,), ["dx = dsum_exp_x_minus_top * exp_x_minus_top"], 0),
    (shifted_log_sum, (5,), ["dx_minus_top = dsum_exp_x_minus_top * exp_x_minus_top",
                             "dtop * extremum_share(x, top)"], 0),
    (rows_shifted_log_sum, (3, 4), ["dx_minus_top = dsum_exp_x_minus_top * exp_x_minus_top",
                                    "dtop * extremum_share(x, top, 1, True)"], 1),
    (column_sums, (3, 4), ["dsum_exp_x_1 = dout * 2 * sum_exp_x_1",
                           "dx = dexp_x_1 * exp_x_1 + dout * sum_exp_x * exp_x * 2"], 1),
    (sum_of_sines, (5,), [], 1),
])
def test_a_reductions_cotangent_multiplies_without_a_broadcast(fn, shape, products, kept):
    """Unless it is read otherwise, reduced along a later axis without keeping it
    (`column_sums`' second sum), or multiplied by an array of another expression."""
    text = pullback.source(fn, np.ones(shape))
    assert text.count("unreduce(") + text.count("unreduce_to(") == kept
    assert all(p in text for p in products)


@pytest.mark.parametrize("fn, x", [(logsumexp, np.array([0.5, 2.0, -1.0, 2.0])),
                                   (rows_logsumexp, rng.standard_normal((3, 4))),
                                   (rows_shifted_log_sum, rng.standard_normal((3, 4))),
                                   (column_sums, rng.standard_normal((3, 4)))])
def test_a_reductions_cotangent_multiplied_unbroadcast_gives_the_same_numbers(fn, x,
                                                                               monkeypatch):
    folded = pullback.grad(fn)(x)
    monkeypatch.setattr(rewrite, "RULES", tuple(
        rule for rule in rewrite.RULES if rule is not products.unreduced_factor))
    monkeypatch.setattr(transform, "_DERIVATIVES", {})
    assert "unreduce(" in pullback.source(fn, x)
    assert np.array_equal(folded, pullback.grad(fn)(x))


def test_a_weight_and_a_bias_read_twice_are_each_summed_by_one_helper():
    text = pullback.source(weight_read_twice_unrolled,
                           *dict((c[0], c[2]) for c in CASES)["weight_read_twice_unrolled"])
    assert "dw = matmul_right_all((dx2_matmul_w, dx1_matmul_w), (x2, x1), w)" in text
    assert "db = unbroadcast_all((dx2_matmul_w_plus_b, dx1_matmul_w_plus_b), b)" in text


def test_a_loops_sums_over_a_weight_a_bias_and_a_table_are_made_after_it():
    text = pullback.source(rnn, *LOOP_ARGS["rnn"])
    assert "dw_sum = matmul_right_all(dmatmul_all, concatenate_items_all, w)" in text
    assert "db_sum = unbroadcast_all(dmatmul_plus_b_all, b)" in text
    assert "dxs_sum = unindex_all(dxs_t_all, xs, t_all)" in text
    assert "add_into" not in text and "matmul_right(" not in text


def test_a_weight_of_np_dot_is_summed_after_the_loop():
    text = pullback.source(rnn_by_dot, *LOOP_ARGS["rnn_by_dot"])
    assert "dw_sum = dot_right_all(ddot_concatenate_items_all, concatenate_items_all, w)" in text


def test_a_weight_on_the_left_is_summed_after_the_loop():
    text = pullback.source(column_rnn, *LOOP_ARGS["column_rnn"])
    assert "dw_sum = matmul_left_all(dw_matmul_h_1_all, w, h_1_all)" in text
    assert "add_into" not in text


def products_one_step_unused(w, xs):
    """A matrix times each step's vector, one step's product unused: its cotangent is
    `ZERO` among the steps' that `dot_left_all` sums after the loop."""
    total = 0.0
    for t in range(xs.shape[0]):
        y = np.dot(w, xs[t])
        if t != 1:
            total = total + np.sum(np.tanh(y))
    return total


def gates_one_unused(w1, w2, w3, h, flag):
    """One vector times three matrices, one product unused unless `flag`: its cotangent
    is then `ZERO` among the gates' that `dot_right_all` sums for the vector."""
    a, b, c = np.dot(w1, h), np.dot(w2, h), np.dot(w3, h)
    out = np.tanh(a) * c
    if flag:
        out = out + b
    return np.sum(out)


def test_products_summed_at_once_skip_the_steps_without_a_cotangent():
    """The sums of a loop's or a node's products (`dot_left_all`, `dot_right_all`) leave
    out a product whose cotangent is `ZERO`, at orders 1 and 2 (where their own code is
    differentiated)."""
    xs = rng.standard_normal((4, 3))
    w = rng.standard_normal((2, 3))
    assert "dot_left_all(" in pullback.source(products_one_step_unused, w, xs)
    check_grads(products_one_step_unused, (w, xs), order=2)
    ws = [rng.standard_normal((3, 4)) for _ in range(3)]
    h = rng.standard_normal(4)
    assert "dot_right_all(" in pullback.source(gates_one_unused, *ws, h, False)
    for flag in (False, True):
        check_grads(gates_one_unused, (*ws, h, flag), order=2, argnums=(0, 1, 2, 3))


def test_terms_reading_one_cached_value_share_its_list():
    text = pullback.source(two_weights, *LOOP_ARGS["two_weights"])
    assert text.count("x_all = []") == 1 and text.count("x_all.append(x)") == 1
    assert "dw1_sum = matmul_right_all(dx_matmul_w1_all, x_all, w1)" in text
    assert "dw2_sum = matmul_right_all(dx_matmul_w2_all, x_all, w2)" in text


def test_a_term_read_twice_is_summed_in_the_loop():
    text = pullback.source(weight_read_twice, *LOOP_ARGS["weight_read_twice"])
    assert "matmul_right_all" not in text and "dw_sum = add_into(dw_sum, dw)" in text


@pytest.mark.parametrize("name, fn, args", LOOPS[:4], ids=[c[0] for c in LOOPS[:4]])
def test_a_loops_sums_made_after_it_at_order_three(name, fn, args):
    check_grads(fn, args, order=3)


THIRD_ORDER = ["weight_read_twice_unrolled", "weight_in_branches_and_closure_then",
               "gate_columns", "three_parts", "tuple_parts", "tree_sum", "logsumexp",
               "rows_logsumexp", "shifted_log_sum", "column_sums"]


@pytest.mark.parametrize("name, fn, args", [c for c in CASES if c[0] in THIRD_ORDER],
                         ids=THIRD_ORDER)
def test_joined_slices_tuple_displays_and_reductions_at_order_three(name, fn, args):
    check_grads(fn, args, order=3)


# -- a cached loop carries the state's cotangents -------------------------------------


def rotated_state(x, y, z, n):
    """Each value of the state moves to another's place: an iteration's pullback reads
    the cotangent coming in for one after assigning its own name for another."""
    for _ in range(n):
        x, y, z = z, x * y, y
    return x * 3.0 + 2.0 * y + z


def swapped_then_updated(x, y, n):
    """The state swapped, then one of it updated from the other."""
    for _ in range(n):
        x, y = y, x
        y = y * 1.3 + np.sin(x)
    return x + 2.0 * y


def passed_through(x, w, n):
    """A value of the state passed on unchanged, read by the environment's sum."""
    for _ in range(n):
        x, w = x * w + w, w
    return x + w


def state_and_weight(x, w, xs):
    """An array state through a weight read as `w @ x`, stopping early on a test."""
    for row in xs:
        x = np.tanh(w @ x + row)
        if np.sum(x) > 2.5:
            break
    return np.sum(x * x)


@pytest.mark.parametrize("fn, args", [
    (rotated_state, (0.3, 0.7, 0.9, 4)),
    (swapped_then_updated, (0.3, 0.7, 3)),
    (passed_through, (0.3, 0.7, 3)),
    (state_and_weight, (np.linspace(0.1, 0.4, 3), np.eye(3) * 0.5 + 0.1,
                        np.linspace(-1.0, 1.0, 15).reshape(5, 3))),
])
def test_a_cached_loop_carries_the_states_cotangents(fn, args):
    """The loop's pullback carries each state's cotangent in the step's own name only
    where the step reads the cotangent coming in before it assigns that name."""
    floats = tuple(i for i, a in enumerate(args) if not isinstance(a, int))
    assert "reversed(loop_body_cache)" in pullback.source(fn, *args, argnums=floats)

    check_grads(fn, args, order=2, argnums=floats)


# -- lists a loop updates by index, updated in place (`in_place_lists`) ------------


def states_by_index_in_a_while(a, steps=5):
    xs = [a for _ in range(steps + 1)]
    t = 0
    while t < steps:
        if xs[t] > 10.0:
            break
        xs[t + 1] = math.cos(a * xs[t]) * xs[t]
        t += 1
    return xs[steps] * xs[2]


def arrays_of_new_shapes_by_index(w, x, n=4):
    hs = [None] * n
    hs[0] = x
    for i in range(1, n):
        hs[i] = np.tanh(w @ hs[i - 1] + hs[0])
    return np.sum(np.stack(hs) ** 2)


def list_argument_by_index(xs, a):
    for t in range(1, len(xs)):
        xs[t] = xs[t - 1] * a + xs[t]
    return xs[-1] * xs[1]


def old_version_read_whole(a, steps=4):
    xs = [a for _ in range(steps)]
    total = 0.0
    for t in range(steps):
        total = total + np.sum(np.array(xs)) * a
        xs[t] = total * a
    return total + xs[-1]


def dict_by_key(a, steps=4):
    d = {"x": a, "y": 0.5}
    for t in range(steps):
        d["y"] = d["y"] * a + d["x"]
        d["x"] = math.sin(d["y"])
    return d["x"] * d["y"]


def slices_by_index(a, steps=3):
    xs = [a, a, a, a]
    for t in range(steps):
        xs[1:3] = [xs[0] * a, xs[3] + t]
        xs[0] = xs[1] * xs[2]
    return xs[0] + xs[1]


IN_PLACE_CASES = [
    ("states_by_index", scalars_in_a_list_updated_by_index, (0.7,), True),
    ("states_by_index_in_a_while", states_by_index_in_a_while, (0.7,), True),
    ("arrays_of_new_shapes_by_index", arrays_of_new_shapes_by_index,
     (0.3 * np.eye(3) + 0.1, np.array([0.2, -0.4, 0.5])), True),
    ("old_version_read_whole", old_version_read_whole, (0.3,), False),
    ("dict_by_key", dict_by_key, (0.4,), True),
    ("slices_by_index", slices_by_index, (0.6,), True),
]


@pytest.mark.parametrize("name, fn, args, in_place", IN_PLACE_CASES,
                         ids=[c[0] for c in IN_PLACE_CASES])
def test_a_list_a_loop_updates_by_index_is_updated_in_place(name, fn, args, in_place):
    """The forward loop writes into its own copy of the list (`copied`, `with_item_into`)
    and the pullback's loop into its copy of the list's cotangent (`add_at_into`,
    `without_item_into`) where nothing reads an earlier version but for its length; a
    pullback reading the items of an earlier version (`np.array(xs)`) keeps the copies.
    Dicts and slices go through the same code, which copies them. Orders 1 and 2."""
    text = pullback.source(fn, *args)
    assert ("with_item_into(" in text and "copied(" in text) == in_place
    check_grads(fn, args, order=2)


def test_the_pullbacks_loop_updates_its_copy_of_the_lists_cotangent():
    """By the helpers for a list of arrays; in Python for a list of numbers, made a list
    once before the loop (`inline_items`), of the length of the list at the end of the
    forward's loop (`xs_2_end`), and the loop's cache no longer holds the list."""
    text = pullback.source(arrays_of_new_shapes_by_index, 0.3 * np.eye(3) + 0.1,
                           np.array([0.2, -0.4, 0.5]))
    assert "add_at_into(without_item_into(dhs_2, i)" in text
    assert "dhs_2 = copied(dhs_2)" in text
    text = pullback.source(scalars_in_a_list_updated_by_index, 0.7)
    assert "dxs_2 = copied(dxs_2)" in text
    assert "dxs_2 = copied(dxs_2)\n        dxs_2 = listed(dxs_2, xs_2_end)\n        for " in text
    assert ", xs_2) in reversed(" not in text
    assert "dxs_2[t_plus_1] = ZERO\n" in text and "dxs_2[t] = dxs_2[t] + " in text


def test_a_list_passed_in_and_updated_by_a_loop_is_left_as_it_was():
    xs = [0.5, -0.3, 0.8]
    value, gradient = pullback.value_and_grad(list_argument_by_index, argnums=(0, 1))(xs, 0.9)
    assert xs == [0.5, -0.3, 0.8]
    assert value == list_argument_by_index(list(xs), 0.9)
    check_grads(list_argument_by_index, ([0.5, -0.3, 0.8], 0.9), order=2)


def test_lists_updated_in_place_at_order_three():
    check_grads(scalars_in_a_list_updated_by_index, (0.7,), order=3)


def test_lists_updated_in_place_forward_over_reverse():
    """`hvp` runs the tangent code of the forward and pullback that update lists in
    place: the Hessian-vector product agrees with the gradients' finite differences."""
    w, x = 0.3 * np.eye(3) + 0.1, np.array([0.2, -0.4, 0.5])
    v = np.array([0.3, 0.1, -0.2])

    def f(x):
        return arrays_of_new_shapes_by_index(w, x)

    gradient = pullback.grad(f)
    expected = (gradient(x + 1e-6 * v) - gradient(x - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(pullback.hvp(f, x, v), expected, rtol=1e-6)
    states = scalars_in_a_list_updated_by_index
    assert pullback.jvp(pullback.grad(states), (0.7,), (1.0,))[1] == pytest.approx(
        pullback.hessian(states)(0.7))


def outputs_appended(a, b, steps=5):
    """An RNN's outputs gathered by `append`, the state carried in a name."""
    x, xs = 0.5, []
    for _ in range(steps):
        x = math.sin(a * x + b)
        xs.append(x)
    return np.sum(np.array(xs) ** 2)


def appended_and_counted(a, steps=4):
    """The list's length read after each append (of the new version: allowed)."""
    xs, total = [], 0.0
    for t in range(steps):
        xs.append(a * t + total)
        total = total + len(xs) * xs[-1] * a
    return total * xs[0]


def appended_rows(w, x, steps=3):
    hs = [x]
    for _ in range(steps):
        hs.append(np.tanh(w @ hs[-1]))
    return np.sum(np.stack(hs) ** 2)


def appended_and_summed(a, steps=3):
    """The whole list read after each append (`np.array`, whose pullback reads the
    list's items' shapes): each step appends to a copy, and the pullback adds the
    array's cotangent to a copy of the list's."""
    xs, total = [a], 0.0
    for _ in range(steps):
        xs.append(np.sin(xs[-1]) * a)
        total = total + np.sum(np.array(xs) ** 2)
    return total


def trajectory_unread(a, steps=4):
    """Each state read back by `xs[-1]`, the list itself not read after the loop: its
    cotangent is `ZERO` as the pullback's loop starts, made a list of the length the
    cache kept (`ListVersion`)."""
    xs, total = [0.5], 0.0
    for _ in range(steps):
        xs.append(math.sin(a * xs[-1]) + 0.1)
        total = total + xs[-1] ** 2
    return total


def trajectory_window(a, steps=4):
    """The last two states read by a slice, the first by `xs[0]`, the list read after."""
    xs = [0.3, 0.5]
    for _ in range(steps):
        prev, last = xs[-2:]
        xs.append(math.sin(a * last) + 0.5 * prev * xs[0])
    return xs[-1] * xs[2] + sum(xs)


APPEND_CASES = [
    ("outputs_appended", outputs_appended, (0.7, 0.2), True),
    ("appended_and_counted", appended_and_counted, (0.4,), True),
    ("appended_and_summed", appended_and_summed, (0.4,), False),
    ("appended_rows", appended_rows, (0.3 * np.eye(3) + 0.1, np.array([0.2, -0.4, 0.5])),
     True),
    ("trajectory_unread", trajectory_unread, (0.7,), True),
    ("trajectory_window", trajectory_window, (0.7,), True),
]


@pytest.mark.parametrize("name, fn, args, in_place", APPEND_CASES,
                         ids=[c[0] for c in APPEND_CASES])
def test_a_list_a_loop_appends_to_is_appended_to_in_place(name, fn, args, in_place):
    """The forward loop appends to its own copy of the list (`appended_into`) where
    nothing reads an earlier version after the append but the pullback, for its length
    (`hs[-1]`'s cotangent): the cache then keeps the length as the step starts
    (`list_version`), as the step starts or after the append. Reading the list whole
    after the append keeps the copies.
    The pullback's loop removes the last item of its copy of the cotangent
    (`unappended_into`, or `dxs.pop()` for a list of numbers) whenever nothing reads an
    earlier version after. Orders 1, 2 and 3, and forward over reverse."""
    text = pullback.source(fn, *args)
    assert ("= appended_into(" in text or _appends_in_python(text)) == in_place
    assert ("unappended_into(" in text or re.search(r"^\s+\w+\.pop\(\)$", text, re.M)
            is not None) == in_place
    check_grads(fn, args, order=2)
    if len(args) == 1:
        check_grads(fn, args, order=3)
        assert pullback.jvp(pullback.grad(fn), args, (1.0,))[1] == pytest.approx(
            pullback.hessian(fn)(*args))


def _appends_in_python(text):
    """Whether generated code `text` appends to a list of the user's by `.append`."""
    return re.search(r"^\s+(?!loop_body\w*_cache)\w+\.append\(", text, re.M) is not None


def array_filled(a, x):
    """`out[i] = ...` into an array of numbers, reading the number before."""
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = np.sin(a * x[i]) + out[i - 1] * 0.5
    return np.sum(out ** 2)


def rows_filled(w, xs):
    """Rows of a matrix written by index, each from a row read before (a view: copied)."""
    out = np.zeros((len(xs) + 1, w.shape[0]))
    for i in range(len(xs)):
        out[i + 1] = np.tanh(w @ out[i] + xs[i])
    return np.sum(out ** 2)


def row_read_then_overwritten(w, x, n=3):
    """The row read (`prev`) is overwritten after: the pullback of `w @ prev` must see
    the row as it was read, so the read copies it."""
    out = np.zeros((n + 1, 2))
    out[0] = x
    for i in range(n):
        prev = out[i]
        out[i + 1] = np.tanh(w @ prev)
        out[i] = out[i] * 2.0
    return np.sum(out ** 2)


def slice_read_then_overwritten(w, x, n=3):
    """A slice read (a view) that the pullback of `w * pair` reads after the update of
    its first item."""
    out = np.zeros(n + 2)
    out[0], out[1] = x[0], x[1]
    for i in range(n):
        pair = out[i:i + 2]
        out[i + 2] = np.tanh(np.sum(w * pair))
        out[i] = out[i] * 0.5
    return np.sum(out ** 2)


ARRAY_CASES = [  # and whether the forward updates in place
    ("array_filled", array_filled, (0.7, np.linspace(0.0, 1.0, 5)), True),
    ("rows_filled", rows_filled, (0.4 * np.eye(2) + 0.1, np.array([[0.2, -0.4], [0.5, 0.1],
                                                                  [-0.3, 0.2]])), True),
    ("row_read_then_overwritten", row_read_then_overwritten,
     (np.array([[0.5, -0.3], [0.2, 0.4]]), np.array([0.3, -0.6])), True),
    ("slice_read_then_overwritten", slice_read_then_overwritten,
     (np.array([0.5, -0.3]), np.array([0.3, -0.6])), False),  # a slice: not `item_of`
]


@pytest.mark.parametrize("name, fn, args, in_place", ARRAY_CASES,
                         ids=[c[0] for c in ARRAY_CASES])
def test_an_array_a_loop_updates_by_index_is_updated_in_place(name, fn, args, in_place):
    """An array a loop updates by index is updated in its own copy (`with_item_into`),
    its cotangent too (`without_item_into`, `add_at_into`); a read of a row whose value
    is read after an update copies it (`item_of`), and a slice whose value is needed
    after keeps the forward's copying updates. Orders 1 and 2, and forward over
    reverse."""
    text = pullback.source(fn, *args, argnums=(0, 1))
    assert ("= with_item_into(" in text or "out_1[i] = plus" in text) == in_place
    assert "add_at_into(without_item_into(" in text or "= arrayed(" in text
    check_grads(fn, args, order=2)
    x, v = args[0], np.ones_like(args[0])
    gradient = pullback.grad(lambda w: fn(w, args[1]))
    np.testing.assert_allclose(
        pullback.hvp(lambda w: fn(w, args[1]), x, v),
        (gradient(x + 1e-6 * v) - gradient(x - 1e-6 * v)) / 2e-6, rtol=1e-5, atol=1e-7)


def dict_accumulated(w, xs):
    """A dict of running sums updated by its keys in a loop, and one gaining a key per
    step (`with_item_into` copies it then: its keys change)."""
    acc, seen = {"a": 0.0, "b": 0.0}, {}
    for i, x in enumerate(xs):
        acc["a"] = acc["a"] + w[0] * x * i
        acc["b"] = acc["b"] + np.sin(w[1] * x)
        seen[i] = acc["a"] * x
    return acc["a"] * acc["b"] + sum(seen.values())


def test_a_dict_a_loop_updates_by_key_is_updated_in_place():
    """Orders 1 and 2; the loop and its pullback update their own copies."""
    args = (np.array([0.3, 0.7]), [0.1, 0.5, -0.4, 0.9])
    text = pullback.source(dict_accumulated, *args, argnums=0)
    assert "acc_1 = copied(acc)" in text and "add_at_into(without_item_into(dacc_" in text
    check_grads(dict_accumulated, args, order=2, argnums=0)


def rows_filled_in_a_closure(a, x):
    """Rows filled in place inside a closure, which a loop calls."""
    def fill(scale):
        out = np.zeros((3, 2))
        for i in range(3):
            out[i] = np.tanh(scale * x[i] + out[i - 1])
        return out

    total = 0.0
    for j in range(2):
        total = total + np.sum(fill(a * (j + 1)) ** 2)
    return total


def trajectories_in_a_loop(a, x):
    """A trajectory appended from its last state in a loop nested in a loop."""
    sums = []
    for j in range(2):
        xs = [x[j]]
        for _ in range(3):
            xs.append(math.sin(a * xs[-1]) + 0.1)
        sums.append(sum(xs))
    return sums[0] * sums[1]


def rows_filled_in_a_while(a, x):
    out = np.zeros((4, 2))
    out[0] = x[:2]
    i = 0
    while i < 3:
        out[i + 1] = np.sin(a * out[i])
        i += 1
    return np.sum(out * out)


def arrays_in_a_dict(a, x):
    """A dict whose array and number are rebound by key at every step."""
    d = {"h": np.zeros(2), "c": 0.0}
    for i in range(3):
        d["h"] = np.tanh(a * x[i] + d["h"])
        d["c"] = d["c"] + np.sum(d["h"])
    return d["c"] ** 2


@pytest.mark.parametrize("fn", [rows_filled_in_a_closure, trajectories_in_a_loop,
                                rows_filled_in_a_while, arrays_in_a_dict])
def test_updates_in_place_in_combination(fn):
    """The in-place updates inside a closure, a nested loop, a `while` loop and a dict:
    orders 1 to 3 against finite differences."""
    x = np.array([0.3, -0.5, 0.8])
    check_grads(fn, (0.7, x), order=2)
    check_grads(lambda a: fn(a, x), (0.7,), order=3)


def test_a_row_read_whose_value_outlives_the_update_is_copied():
    text = pullback.source(row_read_then_overwritten, *ARRAY_CASES[2][2], argnums=(0, 1))
    assert "prev = item_of(out_" in text
    assert "item_of(" not in pullback.source(array_filled, *ARRAY_CASES[0][2], argnums=0)


def comprehensions(a, n=4):
    """A comprehension of constants (a loop with nothing to differentiate), one nested
    in another, and one of differentiable values, each in a loop."""
    total = 0.0
    for k in range(2):
        zeros = [0.0 for _ in range(n)]
        grid = [[a * i + j for i in range(3)] for j in range(k + 2)]
        zeros[k] = sum(row[-1] for row in grid) * a
        total = total + sum(zeros) * len(zeros)
    return total


def test_a_comprehension_appends_to_its_own_list_in_place():
    """A comprehension's list is its own until it is built: a loop with nothing to
    differentiate appends to it in place; each run, and each step of an outer loop,
    builds a new one. Orders 1 to 3."""
    text = pullback.source(comprehensions, 0.7)
    assert "appended_into(items_1, 0.0)" in text
    grad = pullback.grad(comprehensions)
    assert grad(0.7) == grad(0.7)
    for order in (1, 2, 3):
        check_grads(comprehensions, (0.7,), order=order)


def test_generated_code_read_again_runs_the_copying_updates():
    """The derivative of code that appends in place appends to a copy (`mutation.COPYING`),
    as its tangent rule reads the list it appended to; the optimiser may then append in
    place again where that holds."""
    def inner(a, b):
        return pullback.grad(outputs_appended, argnums=(0, 1))(a, b)[0]

    check_grads(inner, (0.7, 0.2), order=1)
    assert pullback.jvp(inner, (0.7, 0.2), (1.0, 0.0))[1] == pytest.approx(
        pullback.hessian(outputs_appended)(0.7, 0.2), rel=1e-7)


# -- a recursion's cotangents of a parameter it passes on unchanged ---------------------


def chain_sum(w, scale, xs, i):
    """Two parameters passed unchanged, one changed (`i + 1`), the call in one branch."""
    if i == len(xs):
        return w * 0.0
    return np.sin(w * xs[i] * scale) + chain_sum(w, scale, xs, i + 1) * 0.5


def chain_loss(w, scale):
    return np.sum(chain_sum(w, scale, [0.3, -0.5, 0.8, 0.2], 0))


def scaled_recursion(w, n):
    """`w` passed changed (`w * 0.5`): its cotangents are returned and added as before."""
    if n == 0:
        return np.sum(np.sin(w))
    return scaled_recursion(w * 0.5, n - 1) + np.sum(w * w)


def children_sum(w, node):
    """The calls of itself in a loop: left as they are."""
    total = np.tanh(w * node[0])
    for child in node[1]:
        total = total + children_sum(w, child) * 0.5
    return total


TREE = ((0.3, (-0.5, 0.8)), (0.2, -0.4))
NODE = (0.3, [(0.5, []), (-0.2, [(0.7, [])])])


def _tree_params():
    return {"w": np.array([0.3, -0.2, 0.5]), "b": np.array([0.1, 0.0, -0.1]),
            "u": 0.4 * np.eye(3) + 0.1}


RECURSION_CASES = [
    ("dict_of_weights", weights_tree_loss, lambda: (_tree_params(), TREE), (0,), True),
    ("two_parameters", chain_loss, lambda: (np.array([0.4, -0.3]), 1.5), (0, 1), True),
    ("changed_parameter", scaled_recursion, lambda: (np.array([0.4, -0.3]), 3), (0,), False),
    ("calls_in_a_loop", lambda w: np.sum(children_sum(w, NODE)),
     lambda: (np.array([0.4, -0.3]),), (0,), False),
]


@pytest.mark.parametrize("name, fn, make_args, argnums, collected", RECURSION_CASES,
                         ids=[c[0] for c in RECURSION_CASES])
def test_a_recursions_unchanged_parameters_cotangents_are_summed_once(
        name, fn, make_args, argnums, collected):
    """The recursive calls' pullbacks return their contributions to the cotangent of a
    parameter passed to them unchanged as they are (`nested`), collected into a tree
    (`collected`), which the outermost call sums once (`summed_once`); a parameter
    passed changed, or calls of itself in a loop, are left as they were. Orders 1 to 3."""
    args = make_args()
    recursive = {"dict_of_weights": weights_tree_sum, "two_parameters": chain_sum}.get(
        name, fn if name == "changed_parameter" else children_sum)
    text = pullback.source(recursive, *_recursive_arguments(name, args), argnums=argnums)
    assert ("collected((" in text and "summed_once(" in text and ", True)" in text) == collected
    check_grads(fn, args, order=2, argnums=argnums)
    if name == "dict_of_weights":
        check_grads(lambda w: weights_tree_loss({**args[0], "w": w}, TREE), (args[0]["w"],),
                    order=3)


def _recursive_arguments(name, args):
    if name == "dict_of_weights":
        return args
    if name == "two_parameters":
        return (*args, [0.3, -0.5, 0.8, 0.2], 0)
    if name == "changed_parameter":
        return args
    return (*args, NODE)


def test_a_recursions_collected_cotangents_forward_over_reverse():
    """`hvp` and `jvp` of `grad` run the tangent code of the pullback that collects its
    calls' contributions: they agree with the gradients' finite differences."""
    params = _tree_params()

    def f(w):
        return weights_tree_loss({**params, "w": w}, TREE)

    w, v = params["w"], np.array([0.3, 0.1, -0.2])
    gradient = pullback.grad(f)
    expected = (gradient(w + 1e-6 * v) - gradient(w - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(pullback.hvp(f, w, v), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(pullback.jvp(gradient, (w,), (v,))[1], expected, rtol=1e-6,
                               atol=1e-9)


def test_a_recursions_pullback_called_twice_sums_each_time():
    """The pullback `vjp` returns may be called again: each call sums its own tree."""
    params = _tree_params()
    value, pullback_fn = pullback.vjp(lambda p: weights_tree_loss(p, TREE), params)
    first, second = pullback_fn(1.0)[0], pullback_fn(2.0)[0]
    for key in params:
        np.testing.assert_allclose(second[key], 2.0 * first[key])


# -- values a pullback reads only for their shape ------------------------------------


def dense_layer_energy(w, b, x):
    """`h` is read by the pullback only to sum `dh` to its shape; `out` for its values."""
    h = x @ w
    out = np.tanh(h + b)
    return np.sum(out * out)


def gated_steps(w, b, xs):
    """A loop's value `a` read by its step only for its shape; the bias `b`, read from
    outside the loop, keeps its one sum after the loop (`unbroadcast_all`)."""
    h = np.zeros(3)
    for x in xs:
        a = w @ h + x
        h = np.tanh(a + b)
    return np.sum(h * h)


def mean_squared_error(w, x, y):
    """`np.mean` reads the squares for their shape twice: to broadcast its cotangent
    back (`unreduce`) and to count them (`reduced_size`)."""
    err = x @ w - y
    return np.mean(err ** 2)


def closure_reads_it(w, x):
    """A closure reading `h` itself: `h` stays held as it is."""
    h = x * w

    def scaled(s):
        return h * s + w

    return np.sum(scaled(2.0) ** 2)


SHAPE_CASES = [
    ("dense_layer", dense_layer_energy, lambda: (
        np.linspace(-0.5, 0.5, 12).reshape(4, 3), np.array([0.1, -0.2, 0.3]),
        np.linspace(-1.0, 1.0, 20).reshape(5, 4)), (0, 1)),
    ("loop_step", gated_steps, lambda: (
        np.array([[0.2, -0.1, 0.3], [0.0, 0.4, -0.2], [0.1, 0.1, 0.1]]),
        np.array([0.05, -0.1, 0.2]), [np.array([0.3, -0.2, 0.1]), np.array([0.0, 0.5, -0.4])]),
     (0, 1)),
    ("mean", mean_squared_error, lambda: (
        np.array([0.5, -0.3]), np.linspace(-1.0, 1.0, 12).reshape(6, 2),
        np.linspace(0.2, 0.7, 6)), (0,)),
    ("closure", closure_reads_it, lambda: (np.array([0.3, -0.4, 0.5]),
                                           np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 1.5]])), (0,)),
]


@pytest.mark.parametrize("name, fn, make_args, argnums", SHAPE_CASES,
                         ids=[c[0] for c in SHAPE_CASES])
def test_a_value_read_only_for_its_shape_is_held_as_its_shape(name, fn, make_args, argnums):
    """The forward binds `x_shape = shape_of(x)` and the pullback's helpers read it
    (`unbroadcast_to`, `unreduce_to`, `reduced_size_of`); a value a closure reads, or
    a loop reads from outside it, is held as before. Orders 1 to 3, and forward over
    reverse."""
    args = make_args()
    text = pullback.source(fn, *args, argnums=argnums)
    held_as_shape = {"dense_layer": "h", "loop_step": "a", "mean": "err_pow_2",
                     "closure": None}[name]
    if held_as_shape:
        assert f"{held_as_shape}_shape = shape_of({held_as_shape})" in text
        assert f"{held_as_shape}_shape)" in text
        assert not re.search(rf"(unbroadcast|unreduce)\([^)]*, {held_as_shape}\b", text)
    else:
        assert "shape_of(" not in text
    if name == "loop_step":
        assert "unbroadcast_all(" in text
    if name == "mean":
        assert "reduced_size_of(err_pow_2_shape" in text
    check_grads(fn, args, order=3, argnums=argnums)
    first = args[argnums[0]]
    direction = np.ones_like(first) * 0.3

    def along(t):
        return fn(*[first + t * direction if i == argnums[0] else a for i, a in enumerate(args)])

    assert pullback.jvp(pullback.grad(along), (0.0,), (1.0,))[1] == pytest.approx(
        pullback.hessian(along)(0.0), rel=1e-7)


def test_a_pullback_holding_shapes_keeps_less():
    """`vjp` of `dense_layer_energy` keeps `out` (read by its pullback), not `h` too."""
    import tracemalloc

    w, b, x = np.full((100, 200), 0.01), np.zeros(200), np.ones((300, 100))
    pullback.vjp(dense_layer_energy, w, b, x)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = pullback.vjp(dense_layer_energy, w, b, x)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    out_bytes = 300 * 200 * 8
    assert out_bytes <= held < 1.5 * out_bytes
    assert kept[1](1.0)[0].shape == w.shape


def summed_parts(x, n):
    """`sum(parts)` has an array's kind, and is the int 0 when the loop runs no step."""
    parts = []
    for i in range(n):
        parts.append(x * float(i))
    total = sum(parts)
    y = total + x
    return np.sum(y * y)


@pytest.mark.parametrize("n", [0, 3])
def test_the_shape_held_of_an_array_that_is_a_number_at_run_time(n):
    """`shape_of` reads any value's shape, as `unbroadcast` did (`0.shape` would raise)."""
    x = np.array([0.3, -0.2])
    assert "total_shape = shape_of(total)" in pullback.source(summed_parts, x, n, argnums=0)
    check_grads(summed_parts, (x, n), order=2, argnums=(0,))


# Constructs combined around values held as their shape: assigned in branches, rebound by
# a loop and read after it, in a `while` loop left by `break`, in a closure reading a
# record's fields in a loop, in a recursion, in a `try`, in a generator, reduced along an
# axis, and under a nested `grad`.

def shape_branches(w, x):
    if np.sum(x) > 0:
        h = x * w
    else:
        h = x @ np.ones((3, 3)) * w
    return np.sum(np.tanh(h + w))

def shape_rebound_in_loop(w, xs):
    total = 0.0
    for x in xs:
        a = x * w           # rebound every step, read after the loop by the closure only for shape
        total = total + np.sum(np.sin(a))
    return total + np.sum(a + w)

def shape_while_break(w, x):
    h = x
    i = 0
    while True:
        g = h * w
        h = np.tanh(g + w)
        i += 1
        if i > 3:
            break
    return np.sum(h)

def shape_record_loop_closure(w, b, xs):
    layer = Layer(w, b)
    def step(h, x):
        pre = h @ layer.w + x
        return np.tanh(pre + layer.b)
    h = np.zeros(3)
    for x in xs:
        h = step(h, x)
    return np.mean(h ** 2)

def shape_tree(w, node):
    if isinstance(node, float):
        return np.tanh(w * node)
    left, right = node
    s = shape_tree(w, left) + shape_tree(w, right)
    return np.tanh(s + w) * 0.5

def shape_tree_loss(w):
    return np.sum(shape_tree(w, ((0.3, -0.2), (0.5, (0.1, 0.4)))))

def shape_try_block(w, x):
    try:
        y = x * w
        z = np.sqrt(y * y + 1.0)
    except FloatingPointError:
        z = w
    return np.mean(z + w)

def shape_generator_sum(w, xs):
    return sum(np.sum((x * w + w) ** 2) for x in xs)

def shape_mean_axis(w, x):
    y = x @ w
    m = np.mean(y, axis=0)
    v = np.mean((y - m) ** 2, axis=0)
    return np.sum(v + w[0])

def shape_nested_grad(w, x):
    inner = pullback.grad(lambda u: np.sum(np.tanh(u * x + u) ** 2))
    return np.sum(inner(w) * w)


_W3, _X3 = np.array([0.3, -0.4, 0.5]), np.array([0.2, -0.1, 0.4])
_XS3 = [np.array([0.1, 0.2, -0.3]), np.array([-0.5, 0.4, 0.2])]
_M3 = np.array([[0.2, -0.1, 0.3], [0.0, 0.4, -0.2], [0.1, 0.1, 0.1]])
SHAPE_COMBINATIONS = [
    (shape_branches, (_W3, np.array([0.1, 0.2, 0.3])), (0,)),
    (shape_branches, (_W3, np.array([-0.1, -0.2, 0.3])), (0,)),
    (shape_rebound_in_loop, (_W3, _XS3), (0,)),
    (shape_while_break, (_W3, _X3), (0,)),
    (shape_record_loop_closure, (_M3, _W3, _XS3), (0, 1)),
    (shape_tree_loss, (_W3,), (0,)),
    (shape_try_block, (_W3, _X3), (0,)),
    (shape_generator_sum, (_W3, _XS3), (0,)),
    (shape_mean_axis, (_M3, np.arange(6.0).reshape(2, 3) * 0.1), (0,)),
    (shape_nested_grad, (_W3, _X3), (0,)),
]


@pytest.mark.parametrize("fn, args, argnums", SHAPE_COMBINATIONS,
                         ids=[f"{c[0].__name__}_{i}" for i, c in enumerate(SHAPE_COMBINATIONS)])
def test_shapes_held_in_combination(fn, args, argnums):
    """Orders 1 and 2 against finite differences, and `hvp` (forward over reverse)."""
    check_grads(fn, args, order=2, argnums=argnums)
    first = args[argnums[0]]
    direction = np.ones_like(first) * 0.3

    def along(u):
        return fn(*[u if i == argnums[0] else a for i, a in enumerate(args)])

    gradient = pullback.grad(along)
    expected = (gradient(first + 1e-6 * direction) - gradient(first - 1e-6 * direction)) / 2e-6
    np.testing.assert_allclose(pullback.hvp(along, first, direction), expected, rtol=1e-5,
                               atol=1e-7)
