"""Small functions inlined where they are called (`pullback.inline`): which are, the code
that results, and derivatives through them at orders 1 and 2."""

import math

import numpy as np
import pytest

import pullback
from pullback.compiler.frontend import anf, inline, parse
from pullback.testing import check_grads

rng = np.random.default_rng(5)


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def scaled(x, scale=2.0, shift=0.5):
    return x * scale + shift


def branchy(x, limit):
    if x > limit:
        return limit * x + 1.0
    return x * x * 0.5


def identity(x):
    return x


def outer(x):
    return sigmoid(x) * 2.0


def uses_sigmoid(x):
    return np.sum(sigmoid(x) * sigmoid(x * 2.0))


def uses_defaults(x, y):
    return scaled(x) + scaled(x, shift=y) + scaled(y, 3.0)


def uses_constant_argument(x):
    return scaled(1.5, x) * x


def uses_branch(x, limit):
    return branchy(x, limit) + branchy(x * 2.0, limit)


def uses_identity(x):
    return identity(x) * identity(3.0)


def uses_nested(x):
    return np.sum(outer(x) * x)


def shadows_a_global(x):
    np = 2.0
    return sigmoid(x) * np


def has_a_loop(x, n):
    for _ in range(n):
        x = x * 0.9
    return x


def calls_loop(x):
    return has_a_loop(x, 3) * x


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 1.1, n - 1)


def calls_recursive(x):
    return recursive(x, 3)


def star(*values):
    return values[0] * values[1]


def calls_star(x):
    return star(x, x)


def updates(x):
    y = np.array(x)
    y[0] = 2.0 * x[1]
    return y


def calls_updates(x):
    return np.sum(updates(x) * x)


def step(x, a):
    return math.sin(x) * a + x * 0.5


def scalar_loop(x, a):
    for _ in range(20):
        x = step(x, a)
    return x


CASES = [
    ("sigmoid", uses_sigmoid, (rng.standard_normal(4),)),
    ("defaults_and_keywords", uses_defaults, (0.7, 1.3)),
    ("constant_argument", uses_constant_argument, (0.7,)),
    ("branch", uses_branch, (0.7, 1.0)),
    ("identity", uses_identity, (0.7,)),
    ("nested", uses_nested, (rng.standard_normal(3),)),
    ("global_shadowed", shadows_a_global, (0.7,)),
    ("loop_not_inlined", calls_loop, (0.7,)),
    ("recursion_not_inlined", calls_recursive, (0.7,)),
    ("star_not_inlined", calls_star, (0.7,)),
    ("update_not_inlined", calls_updates, (rng.standard_normal(3),)),
    ("scalar_loop", scalar_loop, (0.3, 0.9)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_derivatives(name, fn, args, order):
    check_grads(fn, args, order=order)


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_inlined_code_is_in_anf(name, fn, args):
    tree, origin = parse.parse_function(fn)
    inlined, _ = inline.inline_calls(anf.to_anf(tree, origin), origin)
    anf.check_anf(inlined)


def source(fn, *args, **options):
    return pullback.source(fn, *args, **options)


def test_the_callee_is_inlined_with_the_arguments_in_place_of_its_parameters():
    text = source(uses_sigmoid, rng.standard_normal(4))
    assert "= sigmoid_fwd(" not in text and "_pb(" not in text
    assert "v_0_5_times_z = 0.5 * x\n" in text
    assert "sigmoid_x = 0.5 * plus\n" in text
    assert "v_0_5_times_z_1 = 0.5 * x_times_2_0\n" in text


def test_without_optimisation_the_call_stays():
    text = source(uses_sigmoid, rng.standard_normal(4), optimize=False)
    assert "sigmoid_x, sigmoid_x_pb = sigmoid_fwd(x)" in text


def test_parameters_become_their_arguments_or_defaults():
    text = source(uses_defaults, 0.7, 1.3)
    assert "x_times_scale = x * 2.0\n" in text and "scaled_x = x_times_scale + 0.5\n" in text
    assert "scaled_x_1 = x_times_scale_1 + y\n" in text
    assert "x_times_scale_2 = y * 3.0\n" in text


@pytest.mark.parametrize("fn, callee", [
    (shadows_a_global, "sigmoid_fwd"), (calls_loop, "has_a_loop_fwd"),
    (calls_recursive, "recursive_fwd"), (calls_star, "forward"),
    (calls_updates, "updates_fwd")])
def test_what_is_not_inlined_is_called(fn, callee):
    args = (rng.standard_normal(3),) if fn is calls_updates else (0.7,)
    assert f"= {callee}(" in source(fn, *args)


def test_callees_over_the_limit_are_called(monkeypatch):
    monkeypatch.setattr(inline, "LIMIT", 3)
    tree, origin = parse.parse_function(uses_sigmoid)
    inlined, used = inline.inline_calls(anf.to_anf(tree, origin), origin)
    assert used == {} and inlined.body[0].value.func.id == "sigmoid"


def test_the_inlined_functions_are_recorded_so_that_redefinitions_are_seen():
    tree, origin = parse.parse_function(uses_nested)
    _, used = inline.inline_calls(anf.to_anf(tree, origin), origin)
    assert used == {"outer": outer, "sigmoid": sigmoid}
