"""The abstract interpreter (`analysis/interpret.py`): kinds, steps and both fixed points.

Its facts are checked directly on small functions, its fixed points on stand-in
attempts, and the code generated from them against finite differences at orders
1 and 2, including a recursion the transformer only finds while generating code.
"""

import dataclasses
import types

import numpy as np
import pytest

import pullback
from pullback.compiler import transform
from pullback.compiler.analysis import interpret, kinds
from pullback.compiler.syntax import nodes
from pullback.rules import registry
from pullback.runtime import loops
from pullback.testing import check_grads


def interpreter(fn, **param_kinds):
    """A fresh interpreter of `fn` (after ANF and inlining), its parameters of the
    kinds given (constants otherwise)."""
    _, origin, _, inlined, _ = transform._front(fn)
    return interpret.Interpreter(nodes.clone(inlined), origin, param_kinds,
                                 transform._Calls())


def steps_of(interp):
    """The step each top-level statement of the interpreted function makes (its `how`)."""
    *body, _ = interp.tree.body
    found = []
    for position, stmt in enumerate(body):
        interp.at(body, position)
        step = interp.statement(stmt)
        interp.after(stmt)
        found.append(step and step.how)
    return found


def straight(x, n):
    y = x * 2.0
    k = n + 1
    t = (y, k)
    a, b = t
    return a * b


def test_kinds_and_steps_of_straight_line_code():
    interp = interpreter(straight, x=kinds.SCALAR, n=kinds.CONST_SCALAR)
    assert steps_of(interp) == ["primitive", None, "build", "unpack", "primitive"]
    assert interp.kinds["y"] is kinds.SCALAR
    assert not interp.kinds["k"].active
    assert interp.kinds["a"] is kinds.SCALAR
    assert not interp.kinds["b"].active


def test_a_constant_argument_makes_no_step():
    interp = interpreter(straight, n=kinds.CONST_SCALAR)
    assert steps_of(interp) == [None] * 5
    assert not interpreter(straight, n=kinds.CONST_SCALAR).run().result_kind.active


def horner(n, x):
    y = 0.0
    for _ in range(n):
        y = y * x + 1.0
    return y


def test_a_loops_state_is_joined_over_iterations():
    """`y` starts as a constant and becomes differentiable in the first iteration:
    the loop's state settles on SCALAR, and the function returns a SCALAR."""
    interp = interpreter(horner, x=kinds.SCALAR)
    summary = interp.run()
    loop = next(stmt.targets[0].id for stmt in nodes.walk(interp.tree)
                if isinstance(stmt, nodes.Assign)
                and getattr(stmt.value, "helper", None) is loops.iterate)
    assert kinds.item(summary.kinds[loop], 1) is kinds.SCALAR
    assert summary.result_kind is kinds.SCALAR


def test_horner_gradients():
    check_grads(lambda x: horner(3, x), (0.7,), order=2)


def trajectory(a, n):
    xs = [0.0] * (n + 1)
    for t in range(n):
        xs[t + 1] = a * xs[t] + 1.0
    return xs[n] * xs[n - 1]


def test_a_repeated_list_has_the_kind_of_its_items():
    """`[0.0] * (n + 1)` is a list of numbers whatever its length, and stays one when
    the loop writes numbers into it: its items are scalars, so their cotangents need
    no summing over broadcast axes."""
    summary = interpreter(trajectory, a=kinds.SCALAR, n=kinds.CONST_SCALAR).run()
    assert summary.kinds["xs"] == kinds.Items(kinds.CONST_SCALAR, list)
    assert kinds.Items(kinds.SCALAR, list) in summary.kinds.values()  # after the loop
    assert summary.result_kind is kinds.SCALAR
    check_grads(lambda a: trajectory(a, 5), (0.7,), order=2)
    assert "unbroadcast" not in pullback.source(trajectory, 0.7, 5, argnums=0)


def built_trajectory(a, n):
    xs = [0.0 for _ in range(n + 1)]
    ys = []
    for k in range(n):
        ys.append(float(k))
    for t in range(n):
        xs[t + 1] = a * xs[t] + ys[t]
    return xs[n] * xs[n - 1]


def test_a_list_built_by_a_loop_without_derivatives_has_its_items_kind():
    """A loop with nothing to differentiate (a comprehension of constants, appends of
    `float(k)`) has its state's kinds found as any loop's: the list starts empty, which
    adds no kind to the items, and holds numbers; so the states' cotangents need no
    summing over broadcast axes."""
    summary = interpreter(built_trajectory, a=kinds.SCALAR, n=kinds.CONST_SCALAR).run()
    assert summary.kinds["xs"] == kinds.Items(kinds.CONST_SCALAR, list)
    assert summary.kinds["ys_3"] == kinds.Items(kinds.CONST_SCALAR, list)  # after the appends
    check_grads(lambda a: built_trajectory(a, 5), (0.7,), order=2)
    assert "unbroadcast" not in pullback.source(built_trajectory, 0.7, 5, argnums=0)


@pytest.mark.parametrize("a, b, joined, concatenated", [
    (kinds.sequence(list, []), kinds.sequence(list, [kinds.SCALAR]),
     kinds.Items(kinds.SCALAR, list), kinds.sequence(list, [kinds.SCALAR])),
    (kinds.sequence(tuple, []), kinds.sequence(list, []), kinds.Items(kinds.CONST),
     kinds.Items(kinds.CONST)),
    (kinds.Items(kinds.CONST_SCALAR), kinds.sequence(list, [kinds.ARRAY]),
     kinds.Items(kinds.ANY), kinds.Items(kinds.ANY)),
    (kinds.sequence(tuple, []), kinds.Items(kinds.SCALAR), kinds.Items(kinds.SCALAR),
     kinds.Items(kinds.SCALAR)),
])
def test_an_empty_sequence_adds_no_kind_to_the_items(a, b, joined, concatenated):
    assert kinds.join(a, b) == joined == kinds.join(b, a)
    assert kinds.concatenation(a, b) == concatenated


def test_list_and_tuple_calls_say_which_they_make():
    items = kinds.Items(kinds.SCALAR)
    assert registry.spec_of(list).result(items) == kinds.Items(kinds.SCALAR, list)
    assert registry.spec_of(tuple).result(items) == kinds.Items(kinds.SCALAR, tuple)


@pytest.mark.parametrize("count", [kinds.ANY, kinds.CONST, kinds.CONST_ARRAY, kinds.SCALAR])
def test_a_count_that_may_be_an_array_repeats_nothing(count):
    """`[0.0] * c` is an array when `c` is one: a repetition only for a constant number."""
    items = kinds.sequence(list, [kinds.CONST_SCALAR])
    assert kinds.repetition(items, count) is None
    assert kinds.repetition(items, kinds.CONST_SCALAR) == kinds.Items(kinds.CONST_SCALAR, list)
    assert kinds.repetition(kinds.CONST_SCALAR, items) == kinds.Items(kinds.CONST_SCALAR, list)


def attempts(results):
    """A stand-in attempt returning the summaries `results` maps each assumption to,
    and the list of assumptions it was given."""
    seen = []

    def attempt(assumed):
        seen.append(assumed)
        kind, updated = results[assumed]
        return types.SimpleNamespace(result_kind=kind, updated=list(updated))

    return attempt, seen


def test_recursion_settles_on_the_kind_it_returns():
    pair = kinds.sequence(tuple, [kinds.ARRAY, kinds.SCALAR])
    attempt, seen = attempts({(kinds.ANY, ()): (pair, ()), (kinds.NEVER, ()): (pair, ()),
                              (pair, ()): (pair, ())})
    assert interpret.recursion_fixed_point(attempt, lambda: True, 3) == ((pair, ()), True)
    assert seen == [(kinds.ANY, ()), (kinds.NEVER, ()), (pair, ())]


def test_recursion_finds_the_least_fixed_point():
    """Assumed to return anything, a recursion joining its leaf's arrays with its calls'
    results returns anything; assumed never to return, it returns its leaf's arrays,
    and assumed to return those, it does (treelstm's `tree_loss`)."""
    loose = kinds.sequence(tuple, [kinds.ANY, kinds.ANY])
    tight = kinds.sequence(tuple, [kinds.ARRAY, kinds.ARRAY])
    attempt, seen = attempts({(kinds.ANY, ()): (loose, ()), (kinds.NEVER, ()): (tight, ()),
                              (tight, ()): (tight, ())})
    assert interpret.recursion_fixed_point(attempt, lambda: True, 3) == ((tight, ()), True)


def test_recursion_that_always_calls_itself_settles_from_above():
    pair = kinds.sequence(tuple, [kinds.ARRAY, kinds.SCALAR])
    attempt, seen = attempts({(kinds.ANY, ()): (pair, ()), (kinds.NEVER, ()): (kinds.NEVER, ()),
                              (pair, ()): (pair, ())})
    assert interpret.recursion_fixed_point(attempt, lambda: True, 3) == ((pair, ()), True)
    assert seen == [(kinds.ANY, ()), (kinds.NEVER, ()), (pair, ())]


def test_recursion_grows_the_updated_parameters_first():
    attempt, seen = attempts({(kinds.ANY, ()): (kinds.ANY, ("xs",)),
                              (kinds.ANY, ("xs",)): (kinds.ANY, ("xs",)),
                              (kinds.NEVER, ("xs",)): (kinds.ANY, ("xs",))})
    assert interpret.recursion_fixed_point(attempt, lambda: True, 3) == (
        (kinds.ANY, ("xs",)), True)


def test_recursion_that_does_not_settle_assumes_any():
    a, b = kinds.SCALAR, kinds.ARRAY
    attempt, seen = attempts({(kinds.ANY, ()): (a, ()), (kinds.NEVER, ()): (a, ()),
                              (a, ()): (b, ()), (b, ()): (a, ())})
    assert interpret.recursion_fixed_point(attempt, lambda: True, 3) == ((kinds.ANY, ()),
                                                                         False)
    assert len(seen) == 1 + 4 + 3


def test_a_function_that_does_not_call_itself_is_attempted_once():
    attempt, seen = attempts({(kinds.ANY, ()): (kinds.SCALAR, ())})
    assert interpret.recursion_fixed_point(attempt, lambda: False, 3) == ((kinds.ANY, ()),
                                                                          True)
    assert len(seen) == 1


def tree_sum(tree, w):
    """A recursion returning a pair, whose kinds the fixed point finds."""
    if isinstance(tree, tuple):
        left, lw = tree_sum(tree[0], w)
        right, rw = tree_sum(tree[1], w)
        return np.tanh(left + right) * w, lw + rw
    return tree * w, w * w


def through_alias(x, n):
    """Calls itself under another name: its tree does not name it."""
    if n == 0:
        return np.sin(x)
    return x * ALIAS(x, n - 1)


ALIAS = through_alias


def test_a_recursion_returning_a_pair():
    """Assumed never to return, it returns its leaf's pair, whose second item is a
    number; assumed to return that, it does."""
    pair = kinds.sequence(tuple, [kinds.ANY, kinds.SCALAR])
    derivative = transform.derivative(tree_sum, {"tree": kinds.ANY, "w": kinds.SCALAR})
    assert derivative.result_kind == pair
    check_grads(lambda w: sum(tree_sum(((0.5, -1.0), 2.0), w)), (0.3,), order=2)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_recursion_through_another_name(n):
    check_grads(lambda x: through_alias(x, n), (0.8,), order=2)
    derivative = transform.derivative(through_alias, {"x": kinds.SCALAR,
                                                      "n": kinds.CONST_SCALAR})
    assert any(callee is through_alias for callee, *_ in derivative.callees)


@dataclasses.dataclass
class Params:
    w: float
    b: np.ndarray


def loop_closure_record(p, x):
    """A loop whose state starts constant, calling a closure over a record's field."""
    scale = lambda t: t * p.w  # noqa: E731
    acc = 0.0
    state = [0.0, x]
    for _ in range(3):
        acc = acc + scale(np.sum(np.tanh(p.b * state[1])))
        state = [acc, state[1] * 0.5 + acc]
    return acc + np.sum(state[1])


def recursion_with_loop(x, n):
    """A recursion whose body has a loop whose state starts constant."""
    if n == 0:
        return x
    y = 0.0
    for i in range(2):
        y = y + np.sin(x * (i + 1))
    h, = (recursion_with_loop(y, n - 1),)
    return h * x


def nested_loops(x):
    """Inner loop states of int kind that become differentiable in a branch."""
    out = 0
    for i in range(2):
        inner = 1
        for j in range(2):
            inner = inner * x if j else inner + i
        out = out + inner
    return out


def test_a_loop_with_a_closure_over_a_record_field():
    check_grads(loop_closure_record, (Params(0.7, np.array([0.3, -0.2])),
                                      np.array([0.5, 1.5])), order=2)


def test_a_recursion_with_a_loop():
    check_grads(lambda x: recursion_with_loop(x, 2), (0.4,), order=2)


def test_nested_loops_whose_states_change_kind():
    check_grads(nested_loops, (0.9,), order=2)


def filled(a, x, n):
    xs = np.zeros(n + 1)
    xs[0] = a
    v = xs[1]
    xs[2] = v * a + x[1]
    head = xs[1:]
    picked = xs[np.array([0, 2])]
    grid = np.zeros((n, 2))
    counts = np.zeros(n, dtype=int)
    return np.sum(head) + np.sum(picked) + np.sum(grid) + np.sum(counts) + xs[n]


def test_a_vector_of_floats_has_numbers_for_items():
    """`np.zeros(n)` makes a vector of floats (not with a shape of two axes, nor with a
    dtype), which writing a number keeps one; its item at a number is a number, its
    slice a vector, and its items at an array of indices an array. A 1-D float argument
    is a vector too."""
    interp = interpreter(filled, a=kinds.SCALAR, x=kinds.VECTOR, n=kinds.CONST_SCALAR)
    found = interp.run().kinds
    assert found["xs"] is kinds.CONST_VECTOR and found["xs_2"] is kinds.VECTOR
    assert found["v"] is kinds.SCALAR
    assert found["head"] is kinds.VECTOR and found["picked"] is kinds.ARRAY
    assert found["grid"] is kinds.CONST_MATRIX and found["counts"] is kinds.CONST_ARRAY
    assert kinds.of_value(np.ones(3)) is kinds.VECTOR
    assert kinds.of_value(np.ones(3, complex)) is kinds.VECTOR
    assert kinds.of_value(np.ones((3, 1))) is kinds.MATRIX
    assert kinds.of_value(np.ones((3, 1, 2))) is kinds.ARRAY
    assert kinds.of_value(np.arange(3)) is kinds.CONST
    check_grads(lambda a, x: filled(a, x, 4), (0.7, np.linspace(0.1, 0.4, 4)), order=2)


@pytest.mark.parametrize("operands, result", [
    ((kinds.VECTOR, kinds.SCALAR), kinds.VECTOR),
    ((kinds.VECTOR, kinds.CONST_VECTOR, kinds.CONST_SCALAR), kinds.VECTOR),
    ((kinds.VECTOR, kinds.ARRAY), kinds.ARRAY),
    ((kinds.VECTOR, kinds.CONST), kinds.ARRAY),  # an array of ints of any rank
    ((kinds.CONST_VECTOR, kinds.CONST_SCALAR), kinds.CONST_ARRAY),  # `v > 0` is no float
    ((kinds.MATRIX, kinds.VECTOR, kinds.SCALAR), kinds.MATRIX),  # NumPy broadcasts
    ((kinds.CONST_MATRIX, kinds.VECTOR), kinds.MATRIX),
    ((kinds.MATRIX, kinds.ARRAY), kinds.ARRAY),
])
def test_an_elementwise_operation_on_vectors_and_numbers_makes_a_vector(operands, result):
    assert kinds.promote(operands) is result


def matrix_items(m, v, n, flag):
    grid = np.zeros((n, n))
    grid[0, 1] = v[0]
    number = grid[1, 0]
    row = m[0]
    rows = m[1:]
    both = m * v
    like = np.zeros_like(m)
    masked = v[flag]
    literal = v[True]
    diagonal = np.diag(v)
    picked = m[np.array([0, 1])]
    for each in m:
        last = each
    return number + row + rows + both + like + masked + literal + diagonal + picked + last


def test_a_matrix_of_floats_has_numbers_at_two_indices():
    """`np.zeros((n, m))`, `np.diag(v)` and a 2-D float argument are matrices of floats:
    an item at two ints is a number; a row, at one int or as a loop's item, a vector (a
    view of the matrix, which the alias analysis reads as any part of an array); a slice
    of rows a matrix; rows at an array of indices an array. A bool index is no int
    (`v[True]` is `v[None]`, an array): neither a literal nor an argument is taken for
    one."""
    interp = interpreter(matrix_items, m=kinds.MATRIX, v=kinds.VECTOR, n=kinds.CONST_SCALAR,
                         flag=kinds.of_value(True))
    found = interp.run().kinds
    assert found["grid"] is kinds.CONST_MATRIX and found["grid_1"] is kinds.MATRIX
    assert found["number"] is kinds.SCALAR and found["row"] is kinds.VECTOR
    assert found["rows"] is kinds.MATRIX and found["both"] is kinds.MATRIX
    assert found["like"] is kinds.CONST_MATRIX and found["diagonal"] is kinds.MATRIX
    assert found["picked"] is kinds.ARRAY and found["last_2"] is kinds.VECTOR
    assert found["masked"] is kinds.ARRAY and found["literal"] is kinds.ARRAY
    assert kinds.of_value(True) is kinds.CONST and kinds.of_value(np.True_) is kinds.CONST
