"""Calls between user functions, recursion, conditionals, containers, kinds."""

import math

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

rng = np.random.default_rng(1)
SCALE = 2.0
triple = lambda u: u * 3.0


def square(u):
    return u * u


def affine(x, w=2.0, b=0.5):
    return w * x + b


def poly(x, c):
    return square(x) * c + square(c)


def keywords(x, y):
    return affine(x, b=y, w=y * 3.0) + affine(y)


def pair(x):
    return (x, 2 * x)


def unpack_result(x):
    a, b = pair(x)
    return a * b


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def is_even_power(x, n):
    if n == 0:
        return x
    return is_odd_power(x * 1.1, n - 1)


def is_odd_power(x, n):
    return is_even_power(x * x, n)


def tree_sum(t):
    if isinstance(t, tuple):
        return tree_sum(t[0]) * tree_sum(t[1])
    return math.sin(t)


def tree_state(t, w):
    """A tree's value and leaf count: the recursive calls' pairs are unpacked as tuples."""
    if isinstance(t, tuple):
        left, n_left = tree_state(t[0], w)
        right, n_right = tree_state(t[1], w)
        return np.tanh(w * (left + right)), n_left + n_right
    return w * t, 1.0


def tree_state_product(t, w):
    value, count = tree_state(t, w)
    return value * count


def apply(g, x):
    return g(x) * x


def apply_primitive(g, x):
    return np.sum(g(x))


def method_of_unknown_kind(x, h):
    y = h(x)
    return (y * 2.0).sum() + y.max()


def branches(x, y):
    if x > y:
        z = x * y
    elif x > 0:
        z = x + y
    else:
        z = -x
    return z * z


def conditional_expressions(x, y):
    w = x if x > y else y * 2.0
    v = (x > 0 and y) or x
    return w * v


def chained(x):
    return x * 3.0 if 0.0 < x < 2.0 else x * x


def early_return(x):
    if x < 0:
        return -x
    y = x * 2.0
    if y > 3.0:
        return y * y
    return y


def shadowing(x):
    x = np.sin(x)
    x = x * x
    x += 1.0
    return x


def swap(a, b):
    a, b = b, a * b
    return a / b


def nested_unpack(p):
    (a, b), c = p
    return a * b + c


def build_and_read(x, y):
    t = (x, y, 3)
    d = {"x": x, "xy": x * y}
    lst = [t[0], d["xy"]]
    return lst[0] * lst[1] + t[1] * t[2]


def returns_tuple(x, y):
    return x * y, np.sin(x)


def global_scale(x):
    return SCALE * x


def uses_dict_params(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h ** 2)


def integer_loop_free(x, n):
    m = n * 2 + 1
    return x ** m


def walrus(x):
    return (y := x * 2.0) * y


CASES = [
    ("poly", poly, (1.5, 0.7)),
    ("keywords_and_defaults", keywords, (1.5, 0.7)),
    ("unpack_result", unpack_result, (1.5,)),
    ("recursion", power, (1.3, 5)),
    ("mutual_recursion", is_even_power, (1.3, 3)),
    ("recursive_tree", tree_sum, (((0.3, 0.5), (0.7, (1.1, 0.2))),)),
    ("recursion_returning_a_pair", tree_state_product, (((0.3, 0.5), (0.7, 1.1)), 0.8)),
    ("dynamic_callee", lambda x: apply(square, x), (1.3,)),
    ("dynamic_primitive", lambda x: apply_primitive(np.tanh, x), (rng.standard_normal(3),)),
    ("dynamic_lambda", lambda x: apply(triple, x), (1.3,)),
    ("method_of_a_run_time_value", lambda x: method_of_unknown_kind(x, np.sin),
     (rng.standard_normal(4),)),
    ("if_first", branches, (1.5, 0.7)),
    ("if_elif", branches, (0.5, 0.7)),
    ("if_else", branches, (-1.5, 0.7)),
    ("ifexp_and_or", conditional_expressions, (1.5, 0.7)),
    ("ifexp_and_or_other", conditional_expressions, (-1.5, 0.7)),
    ("chained_inside", chained, (1.5,)),
    ("chained_outside", chained, (2.5,)),
    ("early_return_negative", early_return, (-1.5,)),
    ("early_return_big", early_return, (2.5,)),
    ("early_return_small", early_return, (1.2,)),
    ("shadowing", shadowing, (rng.standard_normal(3),)),
    ("swap", swap, (1.5, 0.7)),
    ("nested_unpack", nested_unpack, (((1.5, 0.7), 2.0),)),
    ("build_and_read", build_and_read, (1.5, 0.7)),
    ("returns_tuple", returns_tuple, (1.5, 0.7)),
    ("global_scale", global_scale, (1.5,)),
    ("dict_params", uses_dict_params,
     ({"W": rng.standard_normal((3, 4)), "b": rng.standard_normal(3)}, rng.standard_normal(4))),
    ("integer_arguments", integer_loop_free, (1.3, 2)),
    ("walrus", walrus, (1.3,)),
]


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_gradient(name, fn, args, order):
    check_grads(fn, args, order=order)


def test_recursion_value():
    assert pullback.grad(power)(1.3, 5) == pytest.approx(5 * 1.3 ** 4)


def _tree_state_gradient(t, w):
    """d/dw of `tree_state_product` by hand: the value's derivative times the count."""
    if isinstance(t, tuple):
        left, dleft, n_left = _tree_state_gradient(t[0], w)
        right, dright, n_right = _tree_state_gradient(t[1], w)
        value = np.tanh(w * (left + right))
        return value, (1 - value ** 2) * (left + right + w * (dleft + dright)), n_left + n_right
    return w * t, t, 1.0


def test_a_recursive_call_returns_the_kind_its_function_returns():
    tree = ((0.3, 0.5), (0.7, 1.1))
    text = pullback.source(tree_state, tree, 0.8, argnums=1)
    # the count, 1.0 at a leaf, is a constant: the least fixed point finds it so
    assert "repack(" not in text and "dtree_state_t1 = (dright, ZERO)" in text
    _, dvalue, count = _tree_state_gradient(tree, 0.8)
    assert pullback.grad(tree_state_product, argnums=1)(tree, 0.8) == pytest.approx(
        dvalue * count)


def test_a_recursion_whose_kinds_do_not_settle_keeps_the_generic_code(monkeypatch):
    from pullback.compiler import transform

    monkeypatch.setattr(transform, "_ROUNDS", 0)
    monkeypatch.setattr(transform, "_DERIVATIVES", {})
    tree = ((0.3, 0.5), (0.7, 1.1))
    assert "repack(" in pullback.source(tree_state, tree, 0.9, argnums=1)
    _, dvalue, count = _tree_state_gradient(tree, 0.9)
    assert pullback.grad(tree_state_product, argnums=1)(tree, 0.9) == pytest.approx(
        dvalue * count)


def test_globals_are_read_live():
    global SCALE
    assert pullback.grad(global_scale)(1.0) == 2.0
    SCALE = 3.0
    try:
        assert pullback.grad(global_scale)(1.0) == 3.0
    finally:
        SCALE = 2.0
triple = lambda u: u * 3.0


def test_integer_arguments_get_no_cotangent_code():
    text = pullback.source(integer_loop_free, 1.3, 2)
    assert "dn" not in text and "dm" not in text
    assert pullback.vjp(integer_loop_free, 1.3, 2)[1](1.0)[1] is pullback.ZERO


def test_argnums_restricts_the_generated_code():
    text = pullback.source(uses_dict_params, {"W": np.eye(2), "b": np.zeros(2)}, np.ones(2),
                           argnums=0)
    assert "dx" not in text


@pytest.mark.parametrize("fn, args", [(poly, (1.0, 2.0)), (power, (1.3, 4)),
                                      (is_even_power, (1.3, 3))])
def test_transformed_once_per_kinds(fn, args, monkeypatch):
    from pullback.compiler import transform

    pullback.grad(fn)(*args)
    runs = []
    monkeypatch.setattr(transform, "_run_pipeline", lambda *a: runs.append(a))
    assert pullback.grad(fn)(*args) == pullback.grad(fn)(*args)
    assert runs == []


def test_redefined_callee_is_seen(tmp_path, monkeypatch):
    module = tmp_path / "notebook_cell.py"
    module.write_text("def g(x):\n    return x * 2.0\n\n"
                      "def h(x):\n    return g(x) + 1.0\n\n"
                      "def f(x):\n    return h(x) * 3.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import notebook_cell

    assert pullback.grad(notebook_cell.f)(1.0) == 6.0
    redefinition = tmp_path / "next_cell.py"
    redefinition.write_text("def g(x):\n    return x * x * 5.0\n")
    exec(compile(redefinition.read_text(), str(redefinition), "exec"), notebook_cell.__dict__)
    assert pullback.grad(notebook_cell.f)(2.0) == 60.0
