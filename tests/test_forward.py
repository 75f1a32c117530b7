"""Forward mode: `jvp`, `jacfwd`, `linearize`, the tangent code, and every mix with
reverse mode.

Seed 003's examples (a derivative by dual numbers, nested derivatives without
perturbation confusion, Newton's method on a derivative, the saddle point) with
analytic values at orders 1 to 3; the API's conventions for tangents; forward over
reverse, reverse over forward and forward over forward against each other and
against the analytic values. Every construct of the suite is also checked in forward
mode, and forward over reverse, by `check_grads`.
"""

import collections
import dataclasses
import math

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads


def D(f, x):
    """Seed 003's derivative operator: the tangent of `f` at `x` in the direction 1."""
    return pullback.jvp(f, (x,), (1.0,))[1]


# -- seed 003: dual numbers, nested D, Newton's method, the saddle point ------------


def cubic(x):
    return x ** 3 + math.sin(x)


def test_a_derivative_is_the_tangent_of_the_dual_number():
    assert D(cubic, 0.7) == pytest.approx(3 * 0.7 ** 2 + math.cos(0.7))
    assert D(lambda x: D(cubic, x), 0.7) == pytest.approx(6 * 0.7 - math.sin(0.7))
    assert D(lambda x: D(lambda y: D(cubic, y), x), 0.7) == pytest.approx(6 - math.cos(0.7))


def confused(x):
    return x * D(lambda y: x + y, 1.0)


def test_no_perturbation_confusion():
    """D(λx. x · D(λy. x + y)(1))(1) is 1: the inner derivative's tangent is its own."""
    assert D(confused, 1.0) == 1.0
    assert pullback.grad(confused)(1.0) == 1.0
    assert D(lambda x: x * pullback.grad(lambda y: x + y)(1.0), 1.0) == 1.0
    assert pullback.grad(lambda x: x * D(lambda y: x * y, 2.0))(3.0) == 6.0


def newton_root(g, x, steps=25):
    for _ in range(steps):
        x = x - g(x) / D(g, x)
    return x


def minimum(a):
    """The minimum of x**4 / 4 - a x by Newton's method on its derivative (seed 003's
    line search, ROOT (D f)): a ** (1/3)."""
    return newton_root(lambda x: D(lambda y: y ** 4 / 4.0 - a * y, x), 1.0)


def test_newtons_method_on_a_derivative_at_orders_1_to_3():
    a = 2.0
    assert minimum(a) == pytest.approx(a ** (1 / 3))
    assert D(minimum, a) == pytest.approx(a ** (-2 / 3) / 3)
    assert pullback.grad(minimum)(a) == pytest.approx(a ** (-2 / 3) / 3)
    assert D(lambda b: D(minimum, b), a) == pytest.approx(-2 / 9 * a ** (-5 / 3))
    assert D(lambda b: D(lambda c: D(minimum, c), b), a) == pytest.approx(
        10 / 27 * a ** (-8 / 3))


def forward_gradient(f, x):
    """∇f x by forward mode, one tangent per coordinate (seed 003)."""
    return np.array([pullback.jvp(f, (x,), (e,))[1] for e in np.eye(len(x))])


def gradient_descent(f, x, rate, steps):
    for _ in range(steps):
        x = x - rate * forward_gradient(f, x)
    return x


def payoff(x, y, a):
    return (x[0] - a) ** 2 + x[0] * y[0] - y[0] ** 2


def saddle(a):
    """min over x of max over y of the payoff, both by gradient descent with forward-mode
    gradients (seed 003's saddle point): x* = 4a/5 (and y* = 2a/5)."""
    def best_reply(x):
        return gradient_descent(lambda y: -payoff(x, y, a), np.zeros(1), 0.4, 20)

    def value(x):
        return payoff(x, best_reply(x), a)

    return gradient_descent(value, np.zeros(1), 0.3, 20)[0]


def test_the_saddle_point_with_forward_mode_inner_derivatives():
    a = 1.5
    assert saddle(a) == pytest.approx(0.8 * a, abs=1e-8)
    assert D(saddle, a) == pytest.approx(0.8, abs=1e-7)
    assert pullback.grad(saddle)(a) == pytest.approx(0.8, abs=1e-7)
    assert D(lambda b: D(saddle, b), a) == pytest.approx(0.0, abs=1e-6)


# -- the API --------------------------------------------------------------------


Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


def structured(p, q, d, n):
    return p.x * p.y + np.sum(q.w) * q.b + d["k"] ** 2 * n


def test_tangents_have_the_structure_of_their_values():
    p, q, d = Point(1.5, 2.0), Params(np.array([1.0, 2.0]), 0.5), {"k": 3.0}
    out, tangent = pullback.jvp(structured, (p, q, d, 2),
                                (Point(1.0, 0.0), Params(np.array([0.0, 1.0]), 2.0),
                                 {"k": 1.0}, None))
    assert out == structured(p, q, d, 2)
    assert tangent == pytest.approx(2.0 + 0.5 + 3.0 * 2.0 + 6.0 * 2)


def pair(x):
    return {"double": 2.0 * x, "parts": (x[0], np.sin(x))}


def test_the_output_tangent_mirrors_the_output():
    x = np.array([0.5, 1.0])
    out, tangent = pullback.jvp(pair, (x,), (np.ones(2),))
    assert tangent["double"] == pytest.approx(2.0 * np.ones(2))
    assert tangent["parts"][0] == pytest.approx(1.0)
    assert tangent["parts"][1] == pytest.approx(np.cos(x))


def constant_output(x):
    return np.zeros(3)


def test_a_zero_tangent_is_zeros_of_the_output():
    _, tangent = pullback.jvp(constant_output, (1.0,), (1.0,))
    assert isinstance(tangent, np.ndarray) and np.all(tangent == 0.0)


def test_a_tangent_must_fit_its_value():
    with pytest.raises(TypeError, match="shape"):
        pullback.jvp(np.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="one tangent per argument"):
        pullback.jvp(cubic, (1.0,), ())


def mixed(x, y):
    return np.array([x[0] * y, np.sum(np.exp(x)), y ** 2])


def test_jacfwd_is_jacobian():
    x, y = np.array([0.3, -0.2]), 1.5
    for argnums in (0, 1, (0, 1)):
        forward = pullback.jacfwd(mixed, argnums)(x, y)
        reverse = pullback.jacobian(mixed, argnums)(x, y)
        for f, r in zip(np.atleast_1d(forward) if argnums != (0, 1) else forward,
                        np.atleast_1d(reverse) if argnums != (0, 1) else reverse):
            assert np.allclose(f, r)


def test_linearize_evaluates_once_and_gives_the_jvp():
    x, y = np.array([0.3, -0.2]), 1.5
    out, f_jvp = pullback.linearize(mixed, x, y)
    assert np.allclose(out, mixed(x, y))
    for tangents in [(np.ones(2), 0.0), (np.zeros(2), 1.0), (np.array([2.0, -1.0]), 0.5)]:
        assert np.allclose(f_jvp(*tangents), pullback.jvp(mixed, (x, y), tangents)[1])


# -- mixed orders -----------------------------------------------------------------


def energy(x):
    return np.sum(np.tanh(x) ** 2) + x[0] * x[1] ** 3


def test_every_mix_of_modes_at_order_two():
    x, v = np.array([0.4, -0.7]), np.array([1.0, 2.0])
    hessian = pullback.hessian(energy)(x)
    hv = hessian @ v
    assert np.allclose(pullback.hvp(energy, x, v), hv)
    assert np.allclose(pullback.jvp(pullback.grad(energy), (x,), (v,))[1], hv)
    assert np.allclose(pullback.grad(lambda y: pullback.jvp(energy, (y,), (v,))[1])(x), hv)
    assert np.allclose(
        pullback.jvp(lambda y: pullback.jvp(energy, (y,), (v,))[1], (x,), (v,))[1], v @ hv)
    assert np.allclose(pullback.jacfwd(pullback.grad(energy))(x), hessian)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_check_grads_in_forward_mode_alone(order):
    check_grads(energy, (np.array([0.4, -0.7]),), order=order, modes=("forward",))


# A tangent that is ZERO at run time only (`smaller`'s, when the constant is the
# smaller) must not shrink a sum of tangents to its other term's shape.


def smaller(s):
    return sorted([0.5, abs(s)])[0]


def broadcast_difference(x, s):
    c = smaller(s)
    return np.sum(x - np.full(3, c))


def broadcast_sum_indexed(x, s):
    c = smaller(s)
    return (np.full(3, c) + x)[0] * 3.0


def broadcast_np_add_cumsum(x, s):
    c = smaller(s)
    return np.sum(np.cumsum(np.add(x, np.full(3, c))))


def broadcast_mean_axis(x, s):
    c = smaller(s)
    return np.sum(np.mean(x + np.full((2, 3), c), axis=0))


@pytest.mark.parametrize("fn", [broadcast_difference, broadcast_sum_indexed,
                                broadcast_np_add_cumsum, broadcast_mean_axis])
@pytest.mark.parametrize("s", [0.8, 0.3])  # the constant is the smaller; s is
def test_a_tangent_zero_at_run_time_keeps_the_sum_broadcast(fn, s):
    check_grads(fn, (0.7, s), order=2)


# -- the tangent code ----------------------------------------------------------------


def sine_product(x, y):
    return np.sin(x) * y


def test_the_tangent_code_reads_like_the_function():
    text = pullback.source(sine_product, 1.0, 2.0, mode="forward")
    assert "sin_x_dot = x_dot * np.cos(x)" in text
    assert "out_dot = sin_x_dot * y + sin_x * y_dot" in text
    assert text.startswith("def sine_product_jvp(tangents, x, y):")
    assert "# from test_forward.py:" in text


def difference(x, y):
    return x - 2.0 * y


def test_a_difference_of_tangents_reads_as_one():
    assert "out_dot = x_dot - v_2_0_times_y_dot" in pullback.source(
        difference, 1.0, 2.0, mode="forward")


def test_the_tangent_code_leaves_out_constants():
    text = pullback.source(sine_product, 1.0, 2.0, mode="forward", argnums=1)
    assert "x_dot" not in text and "out_dot = sin_x * y_dot" in text


def test_the_command_line_prints_the_tangent_code():
    from pullback.cli import command

    text = command.derivative_text("examples/quickstart.py:loss", wrt="w", mode="forward")
    assert text.startswith("def loss_jvp(tangents, w, x, y):")
    assert "pred_dot = x_matmul_w_dot * (1.0 - pred * pred)" in text


# -- hand-written derivatives in the other mode -------------------------------------


@pullback.custom_jvp
def soft_clip(x):
    return np.tanh(x) * 2.0


def soft_clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = np.tanh(x) * 2.0
    return out, t * (2.0 - out * out / 2.0)


soft_clip.defjvp(soft_clip_jvp)


def uses_soft_clip(x):
    return np.sum(soft_clip(x * x) * x)


@pullback.custom_vjp
def cube_root(x):
    return np.cbrt(x)


def cube_root_fwd(x):
    out = np.cbrt(x)
    return out, out


def cube_root_bwd(out, g):
    return (g / (3.0 * out * out),)


cube_root.defvjp(cube_root_fwd, cube_root_bwd)


def uses_cube_root(x):
    return np.sum(cube_root(x) ** 2 * x)


@pytest.mark.parametrize("fn", [uses_soft_clip, uses_cube_root])
def test_a_hand_written_derivative_serves_both_modes(fn):
    """A `custom_jvp` rule is transposed for reverse mode; a `custom_vjp` backward
    function for forward mode; both by pullback's own other mode."""
    check_grads(fn, (np.array([0.5, 1.2]),), order=2, modes=("reverse", "forward"))


def test_a_custom_jvp_rule_is_what_runs():
    calls = []

    @pullback.custom_jvp
    def doubled(x):
        return 2.0 * x

    def doubled_jvp(primals, tangents):
        calls.append(1)
        return 2.0 * primals[0], 3.0 * tangents[0]  # deliberately not the derivative

    doubled.defjvp(doubled_jvp)
    assert pullback.jvp(doubled, (1.0,), (1.0,))[1] == 3.0
    assert pullback.grad(doubled)(1.0) == 3.0
    assert calls
