"""scipy.integrate.odeint (issue 25), differentiated by the adjoint method: in the
initial state, the output times and the parameters passed in `args`, at orders 1 and 2
against finite differences; a right-hand side closing over a differentiable value is
refused at the user's line."""

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

scipy_integrate = pytest.importorskip("scipy.integrate")
odeint = scipy_integrate.odeint
TIGHT = {"rtol": 1e-11, "atol": 1e-11}
T = np.linspace(0.0, 1.0, 4)


def decay(y, t, k):
    return -k * y + np.sin(t)


def oscillator(y, t, w, damping):
    position, velocity = y
    return np.array([velocity, -w @ w * position - damping * velocity])


def of_state_and_rate(y0, k):
    return np.sum(odeint(decay, y0, T, args=(k,), **TIGHT) ** 2)


def of_a_vector_parameter(y0, w):
    ys = odeint(oscillator, y0, T, args=(w, 0.3), **TIGHT)
    return np.sum(ys[:, 0] * np.linspace(1.0, 2.0, 4)) + ys[-1, 1] ** 2


def of_the_times(t, k):
    return np.sum(odeint(decay, np.array([1.0, -0.5]), t, args=(k,), **TIGHT) ** 2)


def of_a_scalar_state(y0, k):
    return np.sum(np.cos(odeint(decay, y0, T, args=(k,), **TIGHT)))


def in_a_fit(y0, k):
    loss = 0.0
    for target in (0.5, 0.2):
        ys = odeint(lambda y, t, rate: -rate * y, y0, T, args=(k,), **TIGHT)
        loss = loss + np.sum((ys[-1] - target) ** 2)
    return loss


def layers(y, t, params):
    for w, b in params:
        y = np.tanh(np.dot(y, w) + b)
    return y


def of_layers_in_a_list(params):
    """`args` holding a list of `(w, b)` tuples, as autograd's ODE net passes its layers."""
    return np.sum(odeint(layers, np.array([1.0, 0.5]), T, args=(params,), **TIGHT))


def scaled(y, t, p):
    return -p["rate"] * y + p["forcing"]


def of_a_dict(p):
    return np.sum(odeint(scaled, np.array([1.0, 0.5]), T, args=(p,), **TIGHT) ** 2)


@pytest.mark.parametrize("fn, args", [
    (of_state_and_rate, (np.array([1.0, 0.5]), 0.7)),
    (of_layers_in_a_list, ([(0.3 * np.eye(2), np.ones(2)),
                            (np.array([[0.5, 0.1], [-0.2, 0.4]]), np.array([0.1, -0.3]))],)),
    (of_a_dict, ({"rate": 0.7, "forcing": np.array([0.2, -0.1])},)),
    (of_a_vector_parameter, (np.array([1.0, 0.0]), np.array([0.8, 1.1]))),
    (of_the_times, (np.array([0.0, 0.3, 0.7, 1.2]), 0.7)),
    (of_a_scalar_state, (0.8, 0.7)),
    (in_a_fit, (np.array([1.0, 2.0]), 0.4)),
])
def test_values_at_order_two(fn, args):
    check_grads(fn, args, order=2, rtol=1e-4, atol=1e-5)


def closes_over_the_rate(y0, k):
    return np.sum(odeint(lambda y, t: -k * y, y0, T))


def test_a_right_hand_side_closing_over_a_differentiable_value_is_refused():
    with pytest.raises(pullback.TransformError, match="pass the differentiable values") as info:
        pullback.grad(closes_over_the_rate, argnums=(0, 1))(np.array([1.0]), 0.5)
    line = closes_over_the_rate.__code__.co_firstlineno + 1
    assert (info.value.filename, info.value.lineno) == (__file__, line)


def test_a_right_hand_side_closing_over_constants_is_differentiated():
    rate = 0.5

    def solved(y0):
        return np.sum(odeint(lambda y, t: -rate * y, y0, T, rtol=1e-11, atol=1e-11)[-1])

    assert pullback.grad(solved)(np.array([1.0, 2.0])) == pytest.approx(np.exp(-0.5))


def test_options_of_the_forward_only_are_left_to_it():
    def jacobian(y, t, k):
        return -k * np.eye(2)

    def solved(y0, k):
        ys = odeint(decay, y0, T, args=(k,), Dfun=jacobian, rtol=1e-11, atol=1e-11)
        return np.sum(ys ** 2)

    def first(t, y, k):
        return decay(y, t, k)

    def time_first(y0, k):
        return np.sum(odeint(first, y0, T, args=(k,), tfirst=True, rtol=1e-11, atol=1e-11))

    check_grads(solved, (np.array([1.0, 0.5]), 0.7), order=1, rtol=1e-4, atol=1e-5)
    check_grads(time_first, (np.array([1.0, 0.5]), 0.7), order=2, rtol=1e-4, atol=1e-5)


solve_ivp = scipy_integrate.solve_ivp


def rhs(t, y, k):
    return -k * y + np.sin(t)


def ivp_at_outputs(y0, k):
    sol = solve_ivp(rhs, (0.0, 1.0), y0, t_eval=np.linspace(0.2, 1.0, 4), args=(k,),
                    rtol=1e-10, atol=1e-10)
    return np.sum(sol.y ** 2) + sol.y[1, -1]


def ivp_of_the_times(span_end, first_output, k):
    sol = solve_ivp(rhs, (0.0, span_end), np.array([1.0, -0.5]),
                    t_eval=np.stack([first_output, 0.6, span_end]), args=(k,),
                    rtol=1e-10, atol=1e-10)
    return np.sum(sol.y ** 2)


def ivp_from_the_first_output(start, k):
    sol = solve_ivp(rhs, (start, 1.0), np.array([1.0, -0.5]),
                    t_eval=np.stack([start, 0.5, 1.0]), args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y ** 2)


def ivp_at_solver_times(y0, k, end):
    sol = solve_ivp(rhs, (0.0, end), y0, args=(k,), rtol=1e-10, atol=1e-10,
                    method="DOP853")
    return np.sum(sol.y[:, -1] ** 2) + float(sol.success)


@pytest.mark.parametrize("fn, args", [
    (ivp_at_outputs, (np.array([1.0, 0.5]), 0.7)),
    (ivp_of_the_times, (1.1, 0.3, 0.7)),
    (ivp_from_the_first_output, (0.1, 0.7)),
    (ivp_at_solver_times, (np.array([1.0, 0.5]), 0.7, 1.2)),
])
def test_solve_ivp_at_order_two(fn, args):
    check_grads(fn, args, order=2, rtol=1e-4, atol=1e-5)
