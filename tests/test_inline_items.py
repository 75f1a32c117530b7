"""The items of a list of numbers' cotangent read and updated in Python by a loop's
pullback (`compiler.optimize.inline_items`): the generated text, and values against
finite differences at orders 1 to 3, where the cotangent comes in as `ZERO`, as a
tuple, after items were removed, in branches, in nested loops, and with a closure and
a record."""

import dataclasses
import math
import re

import gast
import numpy as np
import pytest

import pullback
from pullback.compiler.bindings import Bindings
from pullback.compiler.optimize import inline_items
from pullback.compiler.syntax import nodes
from pullback.compiler.syntax.naming import Namer
from pullback.runtime import mutation, structures
from pullback.runtime.cotangents import ZERO
from pullback.testing import check_grads


def unused_after_the_loop(a, n=5):
    xs = [0.0] * (n + 1)
    total = 0.0
    for t in range(n):
        xs[t + 1] = math.sin(a * xs[t]) + a
        total = total + xs[t + 1] ** 2
    return total


def appended_and_unused(a, n=5):
    xs = [0.5]
    total = 0.0
    for _ in range(n):
        x = xs[-1]
        xs.append(math.cos(a * x))
        total = total + x * xs[-1]
    return total


def trajectory(a, n=4):
    xs = [0.0] * (n + 1)
    xs[0] = a
    for t in range(n):
        xs[t + 1] = a * xs[t] ** 2 + 0.1
    return xs


def in_branches(a, n=6):
    xs = [0.1] * n
    for i in range(1, n):
        v = xs[i - 1] * a
        if i % 2:
            v = v + xs[-1]
        else:
            v = math.tanh(v)
        xs[i] = v
    return sum(x * x for x in xs)


def piecewise(a, n=8):
    xs = [0.5] * (n + 1)
    for t in range(n):
        x = xs[t]
        if x > 0.3:
            xs[t + 1] = a * x - 0.1
        else:
            xs[t + 1] = math.sin(x) + a
    return xs[n] * xs[n - 1]


def prefix_of_a_free_list(a, n=6):
    x = [a * k / n for k in range(n)]
    out = [0.0] * n
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] + x[i] * x[i]
    return out[-1] * out[1]


def while_in_branches(a, n=6):
    xs = [0.2] * (n + 1)
    t = 0
    while t < n:
        if xs[t] > 0.5:
            xs[t + 1] = xs[t] * a
        else:
            xs[t + 1] = xs[t] + a * 0.1
        t += 1
    return xs[n] + xs[n // 2]


def two_lists(a, n=6):
    xs = [0.5] * (n + 1)
    vs = [0.0] * (n + 1)
    for t in range(n):
        vs[t + 1] = vs[t] - 0.3 * xs[t] * a
        xs[t + 1] = xs[t] + 0.3 * vs[t + 1]
    return xs[n] ** 2 + vs[n] ** 2


def bubble_pass(a, n=6):
    xs = [math.sin(a * k + 0.3) for k in range(n)]
    for i in range(n - 1):
        if xs[i] > xs[i + 1]:
            xs[i], xs[i + 1] = xs[i + 1], xs[i]
    return sum(x * k for k, x in enumerate(xs))


def trajectory_with_a_break(a, n=6):
    xs = [0.5]
    for _ in range(n):
        x = xs[-1]
        if x > 0.9:
            break
        xs.append(x * a + 0.2)
    return xs[-1] * xs[1]


def from_a_list_call(a, n=6):
    xs = list((a, 0.5)) + [0.0] * n
    for t in range(n):
        xs[t + 2] = math.sin(a * xs[t + 1]) + xs[t]
    return xs[n] * xs[2]


def nested(a, n=3, m=3):
    xs = [0] * (m + 1)
    acc = 0.0
    for k in range(n):
        xs[0] = a + k
        for t in range(m):
            xs[t + 1] = xs[t] * a - 0.1 * xs[t] ** 2
        acc = acc + xs[m]
    return acc


@dataclasses.dataclass
class Step:
    w: float
    b: float


def with_a_closure_and_a_record(p, x0, n=4):
    def f(v):
        return math.tanh(p.w * v + p.b)

    xs = [x0] + [0.0] * n
    for t in range(n):
        xs[t + 1] = math.tanh(p.w * xs[t] + p.b) + xs[max(t - 2, 0)]
    return f(xs[n]) - xs[1] * xs[2]


CASES = [
    ("unused_after_the_loop", unused_after_the_loop, (0.7,)),
    ("appended_and_unused", appended_and_unused, (0.6,)),
    ("in_branches", in_branches, (0.4,)),
    ("piecewise", piecewise, (0.7,)),
    ("nested", nested, (0.3,)),
    ("prefix_of_a_free_list", prefix_of_a_free_list, (0.7,)),
    ("while_in_branches", while_in_branches, (0.7,)),
    ("two_lists", two_lists, (0.6,)),
    ("bubble_pass", bubble_pass, (0.7,)),
    ("from_a_list_call", from_a_list_call, (0.7,)),
    ("with_a_closure_and_a_record", with_a_closure_and_a_record, (Step(0.8, -0.2), 0.5)),
]


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_the_items_are_read_and_updated_in_python(name, fn, args):
    text = pullback.source(fn, *args)
    assert "listed(" in text and "add_at_into(" not in text, name
    check_grads(fn, args, order=2)


def test_no_helper_is_left_for_the_items():
    for fn, args in ((unused_after_the_loop, (0.7,)), (appended_and_unused, (0.6,))):
        text = pullback.source(fn, *args)
        assert "written_item(" not in text and "last_item(" not in text
        assert "without_item_into(" not in text


def test_an_update_in_each_branch_or_in_one_is_made_in_place():
    """A version updated in each branch of an `if` (`xs[t + 1] = ...` in both), or in one
    while the other passes it on (`dxs_3 = dxs_1`), is updated in place in the forward
    and the pullback; the reads of the item the update zeroes, which the reverse rules
    write in the branches, are moved before it. Before, each step copied the list."""
    text = pullback.source(piecewise, 0.7)
    assert text.count("with_item_into(") == 2 and "with_item(" not in text
    assert "without_item(" not in text and "add_at(" not in text
    text = pullback.source(in_branches, 0.4)
    assert "dv_1 = dxs_4[i]\n            dv_2 = dxs_4[i]\n            dxs_4[i] = ZERO" in text
    assert "item_of(" not in text  # the cotangent of a list: its items are not views
    check_grads(piecewise, (0.35,), order=3)


def test_a_free_list_read_by_index_has_its_cotangent_summed_in_place():
    """The loop's running sum of the cotangent of a list it reads items of (`x[i]`) is
    its own: its items are added in place (`loop_caches.items_added`, then in Python),
    not a list of the list's length made and added at every step."""
    text = pullback.source(prefix_of_a_free_list, 0.7)
    assert "dx = unindex_all(" not in text and "add(dx_sum" not in text
    assert "dx_sum[i] = dx_sum[i] + " in text


def test_a_while_loops_carried_cotangent_is_not_passed_to_itself():
    """`dxs, dt = (dxs, ZERO)` would tell the alias analysis of the derivative's own
    derivative that `dt` may hold `dxs`, which the step updates in place."""
    text = pullback.source(while_in_branches, 0.7)
    assert "dxs_6, dt_1 = (dxs_6, ZERO)" not in text and "dt_1 = ZERO" in text
    check_grads(while_in_branches, (0.7,), order=3)


def test_a_removal_in_one_branch_is_made_in_place():
    """The pullback of an append in the branch that does not `break` removes the item
    in place (`dxs_3.pop()`) where the other branch passes the list on."""
    text = pullback.source(trajectory_with_a_break, 0.8)
    assert "            dxs_3.pop()\n" in text and "unappended(" not in text
    check_grads(trajectory_with_a_break, (0.8,), order=2)
    check_grads(trajectory_with_a_break, (1.3,), order=2)  # breaks


def test_a_zero_cotangent_of_a_list_items_were_removed_from_is_made_of_its_length():
    """The cotangent that comes into the pullback's loop is that of the list at the end
    of the forward's loop, whose length is taken right after it (`xs_1_end`); the
    pullback's loop removes its items in Python (`dxs_1.pop()`)."""
    text = pullback.source(appended_and_unused, 0.6)
    assert "    xs_1_end = list_version(xs_1)\n" in text
    assert "dxs_1 = listed(dxs_1, xs_1_end)\n        for " in text
    assert "dxs_1.pop()\n" in text and "unappended_into(" not in text
    check_grads(appended_and_unused, (0.6,), order=3)

    def appended_before_its_read(a, n=4):
        xs = [0.5]
        for _ in range(n):
            xs.append(math.cos(a * xs[-1]))
        return 0.0 * xs[0] + a

    text = pullback.source(appended_before_its_read, 0.6)
    assert "dxs_1 = listed(dxs_1, xs_1_end)" in text and "list_version(xs_1)\n" in text
    assert "xs_1.append(" in text and "xs_1_version" not in text  # no step's version
    check_grads(appended_before_its_read, (0.6,), order=2)


def test_a_tuple_cotangent_of_a_list_is_made_a_list():
    out, back = pullback.vjp(trajectory, 0.7)
    seed = [0.5, -1.0, 2.0, 0.25, 1.5]
    assert back(tuple(seed)) == pytest.approx(back(seed))
    eps = 1e-6
    fd = np.dot(seed, (np.array(trajectory(0.7 + eps)) - np.array(trajectory(0.7 - eps)))
                / (2 * eps))
    assert back(tuple(seed))[0] == pytest.approx(fd, rel=1e-6)


def test_a_list_of_arrays_keeps_the_helpers():
    def states(w, x, n=3):
        hs = [x for _ in range(n + 1)]
        for i in range(n):
            hs[i + 1] = np.tanh(w @ hs[i])
        return np.sum(hs[n] * hs[1])

    w, x = 0.4 * np.eye(3) + 0.1, np.array([0.2, -0.4, 0.5])
    text = pullback.source(states, w, x)
    assert "add_at_into(" in text and "listed(" not in text
    check_grads(states, (w, x), order=2)


def test_listed_makes_a_list():
    assert mutation.listed(ZERO, [1.0, 2.0]) == [ZERO, ZERO]
    assert mutation.listed(ZERO, [1.0, 2.0], 1) == [ZERO, ZERO, ZERO]
    g = [0.5, ZERO]
    assert mutation.listed(g, [1.0, 2.0]) is g  # the loop's own copy
    assert mutation.listed((0.5, ZERO), [1.0, 2.0]) == [0.5, ZERO]


def running_item(a, n=6):
    xs = [0.1] * n
    for i in range(1, n):
        xs[i] += a * xs[i - 1]
    return sum(xs)


def dict_in_branches(a, n=7):
    d = {"x": 0.3, "y": 0.1}
    for t in range(n):
        if t % 3 == 0:
            d["x"] = d["x"] * a + d["y"]
        else:
            d["y"] = math.sin(d["x"]) + a
    return d["x"] * d["y"]


def grid_of_lists(a, n=10):
    m = 3
    g = [[0.0] * m for _ in range(m)]
    for t in range(n):
        i, j = t % m, (t * 2) % m
        g[i][j] = g[i][j] * 0.5 + a * (i - j) + g[j][i]
    return sum(sum(r) for r in g)


def array_in_branches(a, n=8):
    xs = np.zeros(n + 1)
    xs[0] = 0.4
    for t in range(n):
        if xs[t] > 0.3:
            xs[t + 1] = a * xs[t] - 0.1
        else:
            xs[t + 1] = math.sin(xs[t]) + a
    return float(np.sum(xs ** 2))


@pytest.mark.parametrize("fn", [running_item, dict_in_branches, grid_of_lists,
                                array_in_branches])
def test_other_containers_updated_in_loops(fn):
    """Formulations beside the lists of numbers (an augmented item, a dict and an array
    updated in branches, a grid of lists), which keep the helpers or copy: their values
    at orders 1 to 2."""
    check_grads(fn, (0.7,), order=2)


def filled_vector(a, x):
    xs = np.zeros(len(x) + 1)
    xs[0] = 0.5
    for t in range(len(x)):
        v = xs[t]
        xs[t + 1] = math.sin(a * v + x[t]) + 0.1 * v
    return np.sum(np.log(1.0 + xs[1:] ** 2))


def vector_in_branches(a, x):
    out = np.zeros_like(x)
    for i in range(1, len(x)):
        if out[i - 1] > 0.2:
            out[i] = out[i - 1] * a + x[i]
        else:
            out[i] = np.tanh(x[i] * a)
    return out @ out


def vector_read_whole(a, x):
    xs = np.zeros(len(x))
    total = 0.0
    for t in range(1, len(x)):
        xs[t] = xs[t - 1] * a + x[t]
        total = total + np.sum(xs * x)  # the whole vector, after each update
    return total


def ints_written_with_floats(a, x):
    """Its tangent in forward mode once went through the ints."""
    ks = np.zeros(len(x), dtype=int)  # rounds what it is given: no derivative through it
    out = np.zeros(len(x))
    for t in range(1, len(x)):
        ks[t] = ks[t - 1] + x[t] * a * 10
        out[t] = out[t - 1] + ks[t] * a
    return np.sum(out ** 2)


def closure_over_a_record(a, x):
    """A closure over a record holding a vector gives each step's value, in a branch."""
    p = Step(a, 0.1)
    coefficients = x * 1.0

    def step(v, i):
        return p.w * v + math.sin(coefficients[i] * p.b) if v < 1.0 else v * 0.5

    out = np.zeros(len(x))
    for i in range(1, len(x)):
        out[i] = step(out[i - 1], i)
    return np.sum(out ** 2)


VECTORS = [filled_vector, vector_in_branches, vector_read_whole, ints_written_with_floats,
           closure_over_a_record]


@pytest.mark.parametrize("fn", VECTORS, ids=[f.__name__ for f in VECTORS])
def test_a_vector_of_floats_filled_in_a_loop(fn):
    """A vector of floats a loop writes numbers into has its cotangent updated in Python
    as a list's is (`arrayed`, `d[i] = 0.0`, reads by `.item`), where the kinds say it is
    one; an array of ints is not one. Orders 1 to 3 against finite differences, and the
    Hessian against finite differences of the gradient."""
    x = np.linspace(0.2, 0.9, 6)
    check_grads(fn, (0.7, x), order=2)
    check_grads(lambda a: fn(a, x), (0.7,), order=3)
    gradient = pullback.grad(lambda a: fn(a, x))
    assert pullback.hessian(lambda a: fn(a, x))(0.7) == pytest.approx(
        (gradient(0.7 + 1e-6) - gradient(0.7 - 1e-6)) / 2e-6, rel=1e-5, abs=1e-7)


def test_a_vectors_items_are_written_as_python():
    """The pullback updates a vector's cotangent by index, in each branch, and reads its
    items as numbers. An array of ints given a dtype is no vector of floats: its
    updates keep the helpers, which round as NumPy does."""
    x = np.linspace(0.2, 0.9, 6)
    text = pullback.source(vector_in_branches, 0.7, x)
    assert "arrayed(" in text and "without_item_into(" not in text
    assert "item_of(" not in text.split("def loop_pb")[1] and "= dout_6.item(i)" in text
    text = pullback.source(ints_written_with_floats, 0.7, x)
    assert "with_item_into(ks_1" in text and "arrayed(dks" not in text


def test_arrayed_makes_an_array():
    x = np.array([1.0, 2.0])
    own = np.zeros(2)
    assert mutation.arrayed(own, x) is own
    assert np.array_equal(mutation.arrayed(ZERO, x), np.zeros(2))


def test_a_lists_cotangent_is_made_a_list_once_before_the_loop():
    """The cotangent that comes into the pullback's loop is that of the list at the end
    of the forward's loop: the pullback makes it a list (or an array) once, before its
    loop, of the length of that list, taken right after the forward's loop (`xs_2_end`),
    and the loop's cache no longer holds the list; then the forward writes into its own
    vector in Python. So too for a loop in the body of another (a function of its own,
    called at each step) and for a list appended to, whose length changes."""
    x = np.linspace(0.2, 0.9, 6)
    text = pullback.source(filled_vector, 0.7, x)
    assert "dxs_2 = arrayed(dxs_2, xs_2_end)\n        for " in text
    assert "xs_2[t_plus_1] = plus" in text and ", xs_2))" not in text
    text = pullback.source(nested, 0.4)
    assert "dxs_3 = listed(dxs_3, xs_3_end)\n            for " in text
    text = pullback.source(appended_and_unused, 0.4)
    assert "dxs_1 = listed(dxs_1, xs_1_end)\n        for " in text
    check_grads(nested, (0.4,), order=3)


def test_values_the_pullbacks_loop_no_longer_reads_are_not_cached():
    """`_unread_dropped`: the positions the loop over the cache does not read are dropped
    from its target and from the tuple the forward appends, both of one length; a
    version of a list that nothing reads then is not taken."""
    bindings = Bindings(Namer(), test_values_the_pullbacks_loop_no_longer_reads_are_not_cached
                        .__code__, {})
    bindings.object("list_version", structures.list_version)
    code = ("cache = []\nfor t in r:\n    v = t * 2.0\n    w = list_version(xs)\n"
            "    cache.append((t, v, w))\n"
            "def pb(g):\n    for t, v, w in reversed(cache):\n        g = g * v\n    return g\n")
    tree = gast.parse(code)
    out = inline_items._unread_dropped(tree.body, bindings)
    text = nodes.unparse(nodes.module(out))
    assert "cache.append((v,))" in text and "for v, in reversed(cache)" in text
    assert "list_version" not in text


def products_of_neighbours(a, x):
    w = np.where(x * a > 0.4, x * a, -x * a)  # an array of unknown rank to the kinds
    out = np.zeros_like(w)
    for i in range(len(w)):
        out[i] = w[i] * w[i - 1]
    return np.sum(out)


def rows_of_a_table(a, table):
    total = 0.0
    for i in range(1, table.shape[0]):
        total = total + np.sum(np.tanh(table[i] * a) * table[i - 1])
    return total


@pytest.mark.parametrize("fn, args", [
    (products_of_neighbours, (0.7, np.linspace(0.2, 0.9, 6))),
    (rows_of_a_table, (0.7, np.arange(12.0).reshape(4, 3) / 10)),
])
def test_a_free_array_read_by_index_has_its_cotangent_summed_in_place(fn, args):
    """As a list's: the running sum of the cotangent of an array the loop reads items or
    rows of adds them at their places (`add_at_into`), not an array of the whole's shape
    made and added at every step. Orders 1 to 3 against finite differences."""
    text = pullback.source(fn, *args)
    assert "add_at_into(d" in text and "unindex_all(" not in text.split("def loop_pb")[1]
    check_grads(fn, args, order=2)
    check_grads(lambda a: fn(a, args[1]), (args[0],), order=3)


def summed_over_a_generator(a, xs):
    return sum(math.log(1.0 + (a * x) ** 2) for x in xs) * a


def test_the_list_a_generator_fills_has_its_items_removed_in_python():
    """`sum(f(x) for x in xs)` appends each value to a list, whose cotangent the
    pullback's loop reads and removes item by item: a state of the loop with no
    `add_at_into` to give its length, which comes from the list at the end of the
    forward's loop (`loop_caches` marks each pullback with the states it carries)."""
    xs = [0.3, -1.2, 0.8, 2.0]
    text = pullback.source(summed_over_a_generator, 0.7, xs)
    assert "unappended_into(" not in text and re.search(r"^\s+ditems_1\.pop\(\)$", text, re.M)
    assert "ditems_1 = listed(ditems_1, items_1_end)\n        for " in text
    check_grads(summed_over_a_generator, (0.7, xs), order=3)
    check_grads(summed_over_a_generator, (0.7, np.array(xs)), order=2)


def filled_matrix(a, x):
    """A table filled by index in nested loops from earlier items, then summed."""
    n = len(x)
    g = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            g[i, j] = math.sin(a * x[j] + g[i - 1, j]) * a
    return np.sum(g ** 2)


def lower_triangle(a, x):
    """gmm_loops' Cholesky factor: a diagonal, then the entries below it one by one."""
    d = 3
    factor = np.diag(np.exp(x[:d] * a))
    p = d
    for column in range(d):
        for row in range(column + 1, d):
            factor[row, column] = x[p] * a
            p += 1
    return np.sum(np.dot(x[:d], factor) ** 2)


def matrix_read_in_a_loop(a, x):
    """A matrix argument read at two ints in a loop, its cotangent added to by index."""
    m = np.outer(x, x) * a
    total = 0.0
    for i in range(1, len(x)):
        total = total + m[i, i - 1] * m[i - 1, i] + math.cos(m[i, i])
    return total


MATRICES = [filled_matrix, lower_triangle, matrix_read_in_a_loop]


@pytest.mark.parametrize("fn", MATRICES, ids=[f.__name__ for f in MATRICES])
def test_a_matrix_of_floats_filled_in_a_loop(fn):
    """A matrix of floats (`kinds.MATRIX`) updated and read at two ints in loops has its
    cotangent updated in Python as a vector's (`arrayed`, `d[index] = 0.0`, reads by
    `.item(index)`), and the forward writes into it in Python. Orders 1 to 3 against
    finite differences, both modes at order 2."""
    x = np.linspace(0.2, 0.9, 6)
    check_grads(fn, (0.7, x), order=2)
    check_grads(fn, (0.7, x), order=2, modes="forward")
    check_grads(lambda a: fn(a, x), (0.7,), order=3)


def test_a_matrixs_items_are_written_as_python():
    """The pullback's loop updates a matrix's cotangent without a helper."""
    x = np.linspace(0.2, 0.9, 6)
    text = pullback.source(lower_triangle, 0.7, x)
    assert "arrayed(dfactor" in text and "= dfactor_2.item(index)" in text
    assert "dfactor_2[index] = 0.0" in text and "factor_2[index] = " in text
    assert "without_item_into(" not in text and "with_item_into(" not in text
    text = pullback.source(matrix_read_in_a_loop, 0.7, x)
    assert "add_at_into(" not in text
