"""Higher-order derivatives and nested AD: the transformation applied to its own output."""

import math
import os
import sys

import numpy as np
import pytest

import pullback
from pullback import grad, hessian, hvp, jacobian, value_and_grad, vjp
from pullback.testing import check_grads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rng = np.random.default_rng(7)


def cubic_sine(x):
    return math.sin(x) * x ** 3


def numpy_mix(x, w):
    return np.sum(np.tanh(x @ w) ** 2) + np.prod(x[:2])


def branchy(x):
    if x > 0.5:
        return x ** 3
    return math.exp(x) * x


def closure_heavy(x, w):
    scale = lambda y: w * y * y
    return scale(x) + scale(scale(x))


def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


THIRD_ORDER = [
    ("cubic_sine", cubic_sine, (0.7,)),
    ("numpy_mix", numpy_mix, (rng.standard_normal(3), rng.standard_normal((3, 2)))),
    ("branchy_high", branchy, (0.9,)),
    ("branchy_low", branchy, (0.2,)),
    ("closure_heavy", closure_heavy, (0.7, 1.3)),
    ("recursion", power, (1.1, 4)),
]


@pytest.mark.parametrize("name, fn, args", THIRD_ORDER, ids=[c[0] for c in THIRD_ORDER])
def test_third_order(name, fn, args):
    check_grads(fn, args, order=3, rtol=1e-4, atol=1e-5)


def test_grad_of_grad_of_grad_is_exact():
    x = 0.7
    third = -math.cos(x) * x ** 3 - 9 * math.sin(x) * x ** 2 + 18 * math.cos(x) * x + (
        6 * math.sin(x))
    assert grad(grad(grad(cubic_sine)))(x) == pytest.approx(third, rel=1e-12)


# -- nested AD ---------------------------------------------------------------------


def test_no_perturbation_confusion():
    assert grad(lambda x: x * grad(lambda y: x * y)(2.0))(1.0) == 2.0
    assert grad(lambda x: x * grad(lambda y: x + y)(1.0))(1.0) == 1.0


def nested_three_deep(x):
    return grad(lambda y: y * grad(lambda z: x * y * z * z)(y))(x)


def grad_of_nested_def(x, w):
    def inner(y):
        return np.sin(y * w) * x

    return grad(inner)(x * 2.0) + x


def vjp_inside(x):
    out, back = vjp(lambda y: y * y * x, x)
    return out + back(2.0)[0]


def value_and_grad_inside(x):
    value, slope = value_and_grad(lambda y: np.exp(y * x))(x)
    return value * slope


NESTED = [
    ("three_deep", nested_three_deep, (0.5,)),
    ("grad_of_nested_def", grad_of_nested_def, (0.4, 1.3)),
    ("vjp_inside", vjp_inside, (0.8,)),
    ("value_and_grad_inside", value_and_grad_inside, (0.3,)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", NESTED, ids=[c[0] for c in NESTED])
def test_nested_ad(name, fn, args, order):
    check_grads(fn, args, order=order)


def test_nested_three_deep_value():
    # g(x) = d/dy [2 x y^3] at y = x = 6 x^3, so g'(x) = 18 x^2
    assert grad(nested_three_deep)(0.5) == pytest.approx(18 * 0.25)


# -- jacobian, hessian, hvp --------------------------------------------------------


def quadratic(p):
    x, y = p
    return 2.0 * x * x + 3.0 * x * y + 4.0 * y * y


def test_paper_hessian_vector_product():
    p, v = np.array([3.0, 4.0]), np.array([7.0, 8.0])
    assert hvp(quadratic, p, v).tolist() == [52.0, 85.0]
    nested = grad(lambda q: np.dot(grad(quadratic)(q), v))(p)
    assert nested.tolist() == [52.0, 85.0]


def test_hessian_matches_finite_differences_of_the_gradient():
    x = rng.standard_normal(4)
    f = lambda x: np.sum(np.sin(x) * x ** 2) + x[0] * x[3]
    h = hessian(f)(x)
    eps = 1e-6
    columns = [(grad(f)(x + eps * e) - grad(f)(x - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(h, np.array(columns).T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, atol=1e-12)


def test_jacobian_shapes_and_values():
    x = rng.standard_normal((2, 3))
    j = jacobian(lambda x: np.tanh(x).sum(axis=0))(x)
    assert j.shape == (3, 2, 3)
    expected = np.zeros((3, 2, 3))
    for i in range(2):
        for k in range(3):
            expected[k, i, k] = 1.0 - np.tanh(x[i, k]) ** 2
    np.testing.assert_allclose(j, expected)
    ja, jb = jacobian(lambda a, b: a * b, argnums=(0, 1))(2.0, np.array([1.0, 3.0]))
    np.testing.assert_allclose(ja, [1.0, 3.0])
    np.testing.assert_allclose(jb, [[2.0, 0.0], [0.0, 2.0]])


def test_hvp_equals_hessian_times_vector():
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    f = lambda x: np.sum(np.exp(x[:-1] * x[1:]))
    np.testing.assert_allclose(hvp(f, x, v), hessian(f)(x) @ v, rtol=1e-10)


# -- the generated code ------------------------------------------------------------


def f_for_source(a, b):
    return (a + b) * b


def test_helpers_stay_known_when_an_equal_code_object_is_dropped():
    """Code compiled from the same text under two file names compares equal; forgetting
    the first must leave the second's helpers known, or its derivative would transform
    the helpers' own source."""
    from pullback.compiler import bindings

    text = "def make(h):\n    def f():\n        return h\n    return f\n"
    first, second = (compile(text, name, "exec").co_consts[0].co_consts[1]
                     for name in ("<first>", "<second>"))
    assert first == second and first is not second
    bindings.mark_helpers(first, {"h"})
    bindings.mark_helpers(second, {"h"})
    del first
    assert bindings.helper_names(second) == {"h"}


def test_source_of_grad_is_the_second_order_code():
    text = pullback.source(grad(f_for_source, (0, 1)), 1.0, 2.0)
    assert "def f_for_source_fwd_fwd(a, b):" in text
    assert "def f_for_source_pullback_fwd(dout):" in text
    assert "return ((ZERO_1, da_plus_b_1, db_1), ddout)" in text


def test_source_of_grad_of_grad_is_third_order():
    text = pullback.source(grad(grad(cubic_sine)), 0.7)
    assert "def f_fwd_fwd_fwd" not in text
    assert "cubic_sine_fwd_fwd_fwd" in text and "cubic_sine_pullback_pullback_fwd" in text


# -- the paper's section-5 saddle point (the scripts run in test_examples.py) ----------


def test_saddle_point_is_found_from_other_starts():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import saddle_point
    finally:
        sys.path.pop(0)
    x, y = saddle_point.saddle_point(np.array([-3.0, 0.5]), np.array([2.0, -1.0]))
    np.testing.assert_allclose(x, 0.0, atol=1e-6)
    np.testing.assert_allclose(y, 0.0, atol=1e-6)
