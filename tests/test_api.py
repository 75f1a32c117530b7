"""The public API: vjp, grad, value_and_grad, differentiable; values and their types."""

import gc
import sys

import numpy as np
import pytest

import pullback
from pullback.api import fixed_leaves, held_constant
from pullback.compiler import transform
from pullback.compiler.analysis import kinds
from pullback.runtime import constants


def product(a, b):
    return a * b


def scaled_sum(x, y, scale=2.0):
    return np.sum(x * y) * scale


def structured(p, x):
    return p[0] * x + p[1] ** 2


def constant_in_x(x, y):
    return y * 3.0


def vector_out(x):
    return x * 2.0


def int_out(x):
    return 1


def test_vjp_returns_value_and_one_cotangent_per_argument():
    out, back = pullback.vjp(product, 3.0, 4.0)
    assert out == 12.0
    assert back(1.0) == (4.0, 3.0)
    assert back(2.0) == (8.0, 6.0)


def test_vjp_of_a_vector_output():
    x = np.array([1.0, 2.0, 3.0])
    _, back = pullback.vjp(vector_out, x)
    np.testing.assert_allclose(back(np.array([1.0, 0.0, 2.0]))[0], [2.0, 0.0, 4.0])


def test_vjp_pullback_can_be_called_again():
    _, back = pullback.vjp(product, 3.0, 4.0)
    assert back(1.0) == back(1.0)


def test_grad_of_floats_is_a_float():
    g = pullback.grad(product)(3.0, 4.0)
    assert type(g) is float and g == 4.0


def test_grad_keeps_numpy_scalar_types():
    g = pullback.grad(lambda x: x * x)(np.float32(3.0))
    assert type(g) is np.float32 and g == 6.0


def test_grad_of_an_array_has_its_shape_and_dtype():
    x = np.ones((2, 3), dtype=np.float32)
    g = pullback.grad(lambda x: np.sum(x * x))(x)
    assert g.shape == (2, 3) and g.dtype == np.float32 and g.flags.writeable
    np.testing.assert_allclose(g, 2.0)


def test_argnums_tuple():
    assert pullback.grad(product, argnums=(0, 1))(3.0, 4.0) == (4.0, 3.0)
    assert pullback.grad(product, argnums=1)(3.0, 4.0) == 3.0


def test_value_and_grad():
    x, y = np.arange(3.0), np.ones(3)
    value, g = pullback.value_and_grad(scaled_sum, argnums=1)(x, y)
    assert value == 6.0
    np.testing.assert_allclose(g, 2.0 * x)


def test_keyword_arguments_pass_through_as_constants():
    x, y = np.arange(3.0), np.ones(3)
    np.testing.assert_allclose(pullback.grad(scaled_sum)(x, y, scale=5.0), 5.0 * y)


def test_structured_arguments_get_structured_cotangents():
    p = (2.0, 3)
    _, back = pullback.vjp(structured, p, 1.5)
    (dp, dx) = back(1.0)
    assert dp == (1.5, pullback.ZERO) and dx == 2.0


def test_dict_arguments():
    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    g = pullback.grad(lambda p: np.sum(p["w"] ** 2) + p["b"])(params)
    assert set(g) == {"w", "b"} and g["b"] == 1.0
    np.testing.assert_allclose(g["w"], [2.0, 4.0])


def test_unused_argument_gets_zeros_of_its_shape():
    assert pullback.grad(constant_in_x)(np.ones(2), 1.0).tolist() == [0.0, 0.0]
    assert pullback.grad(constant_in_x, argnums=1)(np.ones(2), 1.0) == 3.0


def test_vjp_gives_symbolic_zero_for_non_differentiable_arguments():
    _, back = pullback.vjp(lambda x, n: x ** n, 2.0, 3)
    assert back(1.0) == (12.0, pullback.ZERO)


def test_differentiable_decorator_keeps_the_function():
    @pullback.differentiable
    def cube(x):
        return x * x * x

    assert cube(2.0) == 8.0
    assert pullback.grad(cube)(2.0) == 12.0


def test_primitives_can_be_differentiated_directly():
    assert pullback.grad(np.sin)(0.0) == 1.0
    np.testing.assert_allclose(pullback.vjp(np.multiply, 2.0, 3.0)[1](1.0), (3.0, 2.0))


def test_grad_of_a_vector_output_points_to_vjp():
    with pytest.raises(TypeError, match="pullback.vjp"):
        pullback.grad(vector_out)(np.ones(3))


def test_grad_of_an_integer_output_points_to_vjp():
    with pytest.raises(TypeError, match="real scalar"):
        pullback.grad(int_out)(1.0)


def test_grad_with_respect_to_an_int_refuses():
    with pytest.raises(TypeError, match="argument 1, of type int"):
        pullback.grad(lambda x, n: x ** n, argnums=1)(2.0, 3)


def test_objects_pullback_cannot_see_into_are_refused_not_treated_as_constants():
    class Slotted:
        __slots__ = ("w",)

        def __init__(self, w):
            self.w = w

    def uses(p, x):
        return np.sum(x * 2.0)

    with pytest.raises(TypeError, match="argument 0 of .*uses contains a Slotted"):
        pullback.vjp(uses, Slotted(np.ones(3)), np.ones(3))
    with pytest.raises(TypeError, match="contains a Slotted"):
        pullback.grad(uses)([Slotted(np.ones(3))], np.ones(3))
    assert pullback.grad(uses, argnums=1)(Slotted(1.0), np.ones(3)).tolist() == [2.0] * 3


def test_the_gradient_of_an_object_is_an_object_of_its_class_holding_cotangents():
    class Params:
        def __init__(self, w, n):
            self.w, self.n = w, n

    gradient = pullback.grad(lambda p: np.sum(p.w ** 2) * p.n)(Params(np.ones(2), 3))
    assert isinstance(gradient, Params) and gradient.n == 3
    np.testing.assert_allclose(gradient.w, [6.0, 6.0])


def test_wrapped_functions_are_differentiated_with_their_own_parameters():
    import functools

    def twice(x):
        return 2.0 * x

    @functools.wraps(twice)
    def wrapper(*args):
        return twice(*args) * 3.0

    assert pullback.grad(wrapper)(1.0) == 6.0


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        pullback.grad(product, argnums=2)(1.0, 2.0)


def test_zero_is_a_singleton_that_absorbs_linear_operations():
    zero = pullback.ZERO
    assert zero * 3.0 is zero and np.ones(2) * zero is zero and zero + 2.0 == 2.0
    assert np.sum(zero, axis=0) is zero and zero[1] is zero and not zero
    with pytest.raises(TypeError, match="not linear"):
        np.exp(zero)


@pytest.mark.parametrize("x", [2.0, np.array([2.0, -1.0])])
def test_zero_adds_and_subtracts_as_zero(x):
    zero = pullback.ZERO
    for value, expected in [(x - zero, x), (zero - x, -x), (x + zero, x), (zero + x, x),
                            (np.subtract(x, zero), x), (np.subtract(zero, x), -x)]:
        np.testing.assert_array_equal(value, expected)


def closures_in_a_loop(x, n):
    total = 0.0
    for _ in range(n):
        scaled = lambda y: y * x
        total = total + scaled(1.0)
    return total


def test_the_cycle_collector_is_paused_while_a_gradient_runs():
    collections = []

    def count(phase, info):
        frame = sys._getframe(1)
        while frame is not None and not frame.f_code.co_filename.startswith("<pullback"):
            frame = frame.f_back
        if frame is not None:
            collections.append(frame.f_code.co_name)

    value_and_slope = pullback.value_and_grad(closures_in_a_loop)
    gc.callbacks.append(count)
    try:
        value, slope = value_and_slope(2.0, 2000)
    finally:
        gc.callbacks.remove(count)
    assert collections == []  # none started from generated code
    assert gc.isenabled()
    assert (value, slope) == (4000.0, 2000.0)


def test_the_cycle_collector_is_left_as_it_was_after_a_gradient_or_an_error():
    gc.disable()
    try:
        assert pullback.grad(product)(2.0, 3.0) == 3.0
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError):
        pullback.grad(lambda x: x / 0.0)(1.0)
    assert gc.isenabled()


class _Scale:
    """A layer called through a value: `forward` resolves the call at run time."""

    def __init__(self, w):
        self.w = w

    def __call__(self, v):
        return np.sin(v) * self.w


def _through_values(w, data, extra):
    layers = [_Scale(w), _Scale(extra)]
    total = data
    for layer in layers:
        total = layer(total) + total
    return np.sum(total * total)


def _central_difference(f, x, e=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = e
        out[i] = (f(x + step) - f(x - step)) / (2 * e)
    return out


def test_arguments_not_differentiated_are_constants_in_calls_resolved_at_run_time():
    """`grad(f, argnums)` holds the arrays of the other arguments constant, so a layer
    called through a value with the data makes no cotangent for it; an array the
    differentiated arguments also reach (the same object, or one a closure holds) stays
    differentiable, and grad of grad is unchanged."""
    rng = np.random.default_rng(0)
    w, data, extra = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    args, kwargs = (w, [data, 1.0], w), {"k": extra}
    assert held_constant(_through_values, args, kwargs, (0,),
                         fixed_leaves(args, kwargs, (0,))) == {
        id(data), id(extra), id(args[1])}  # the list too: calls given it do not walk it
    assert held_constant(_through_values, (w, data), {}, (0, 1),
                         fixed_leaves((w, data), {}, (0, 1))) == frozenset()
    reaching = ([data, lambda: w],)  # a closure over the differentiated array
    assert id(reaching[0]) not in held_constant(_through_values, (w, *reaching), {}, (0,),
                                                fixed_leaves((w, *reaching),
                                                             {}, (0,)))
    with constants.holding({id(data)}):
        held = transform.param_kinds(_through_values, (w, data, extra), {}, held=True)
        assert held["data"].active is False and held["w"] is kinds.VECTOR
        assert transform.param_kinds(_through_values, (w, data, extra), {})["data"].active
        transform.new_epoch()  # a differentiation starting inside releases them
        assert transform.param_kinds(_through_values, (w, data, extra), {}, held=True)[
            "data"].active
    got = pullback.grad(_through_values, argnums=0)(w, data, extra)
    want = _central_difference(lambda v: _through_values(v, data, extra), w)
    assert np.allclose(got, want, atol=1e-6)
    assert np.allclose(got, pullback.grad(_through_values, argnums=(0, 1, 2))(w, data, extra)[0])
    # the same array differentiated and passed again as a constant
    got = pullback.grad(_through_values, argnums=0)(w, data, w)
    want = _central_difference(lambda v: _through_values(v, data, w), w)
    assert np.allclose(got, want, atol=1e-6)
    hessian = pullback.hessian(_through_values, argnums=0)(w, data, extra)
    want = np.stack([_central_difference(
        lambda v, i=i: pullback.grad(_through_values, argnums=0)(v, data, extra)[i], w)
        for i in range(3)])
    assert np.allclose(hessian, want, atol=1e-5)


def _closure_over_data(data):
    def f(w):
        return np.sum(np.tanh(w * data) * data)
    return f


def _apply(fn, w, data):
    return fn(w) + np.sum(data * w)


def test_an_array_held_constant_is_differentiable_through_a_closure_argument():
    """An array passed as a constant is not held constant when a differentiated closure
    holds it too."""
    rng = np.random.default_rng(1)
    data, w = rng.standard_normal(3), rng.standard_normal(3)
    fn = _closure_over_data(data)
    got = pullback.grad(_apply, argnums=(0, 1))(fn, w, data)
    assert np.allclose(got[1], _central_difference(lambda v: _apply(fn, v, data), w), atol=1e-6)
    # d/d(data) through fn's closure: fn is differentiated, so data is not held constant
    grads = pullback.grad(lambda f, d: _apply(f, w, d), argnums=0)(fn, data)
    want = _central_difference(lambda d: _apply(_closure_over_data(d), w, data) - np.sum(
        data * w), data)
    assert np.allclose(grads[0], want, atol=1e-6)


def _inner_gradient_of_the_data(w, data):
    layer = _Scale(w)
    inner = pullback.grad(lambda d: np.sum(layer(d) * d))(data)
    return np.sum(inner * w)


def test_a_gradient_nested_with_respect_to_an_argument_held_constant():
    """`grad(f, argnums=0)(w, data)` holds `data` constant; a `grad` inside `f` with
    respect to `data`, calling a layer through a value on it, must not see it held."""
    rng = np.random.default_rng(3)
    w, data = rng.standard_normal(3), rng.standard_normal(3)
    got = pullback.grad(_inner_gradient_of_the_data, argnums=0)(w, data)
    want = _central_difference(lambda v: _inner_gradient_of_the_data(v, data), w)
    assert np.allclose(got, want, atol=1e-6)


def test_hessian_of_a_dict_argument_says_what_it_takes():
    """`hessian(f)(params)` with a dict `params`: the gradient is a dict, which
    `jacobian` cannot take apart; it said "'float' object is not iterable"."""

    def loss(params):
        return np.sum(params["w"] ** 2) * params["s"]

    params = {"w": np.array([0.3, -0.2]), "s": 1.5}
    with pytest.raises(TypeError, match="hessian take functions whose result is a float"):
        pullback.hessian(loss)(params)
    np.testing.assert_allclose(pullback.hvp(lambda w: loss({"w": w, "s": 1.5}), params["w"],
                                            np.array([1.0, 0.0])), [3.0, 0.0])
