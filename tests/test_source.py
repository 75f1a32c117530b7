"""The generated code: exact text for small functions, and the tools that read it."""

import inspect
import linecache
import math
import os
import sys
import textwrap
import traceback

import numpy as np
import pytest

import pullback
from pullback.compiler import transform
from pullback.compiler.analysis import kinds
from pullback.testing import check_grads
from test_docs import code_blocks, is_listing, shown_in


def f(a, b):
    return (a + b) * b


def scaled(x, n):
    return x ** n * 3.0


def breaks(x):
    return np.sum(np.sqrt(x))


GOLDEN_F = """
    def f_fwd(a, b):
        # from test_source.py:{1}: return (a + b) * b
        a_plus_b = a + b
        out = a_plus_b * b
        def f_pullback(dout):
            # from test_source.py:{1}: return (a + b) * b
            da_plus_b = dout * b
            da = da_plus_b
            db = dout * a_plus_b + da_plus_b
            return (ZERO, da, db)
        return (out, f_pullback)
"""

GOLDEN_SCALED = """
    def scaled_fwd(x, n):
        # from test_source.py:{1}: return x ** n * 3.0
        x_pow_n = x ** n
        out = x_pow_n * 3.0
        def scaled_pullback(dout):
            # from test_source.py:{1}: return x ** n * 3.0
            dx_pow_n = dout * 3.0
            dx = dx_pow_n * n * x ** np.where(n, n - 1, np.where(x, n - 1, 1.0))
            return (ZERO, dx, ZERO)
        return (out, scaled_pullback)
"""


def expected(text, fn):
    first = fn.__code__.co_firstlineno
    return textwrap.dedent(text).lstrip("\n").format(*[first + i for i in range(10)])


def test_figure_3c():
    """The pullback of (a + b) * b reads like seed 001's Figure 3c."""
    assert pullback.source(f, 1.0, 2.0) == expected(GOLDEN_F, f)


def test_no_code_for_integer_arguments():
    assert pullback.source(scaled, 1.5, 3) == expected(GOLDEN_SCALED, scaled)


def test_quickstart_gradient_only_for_the_weights():
    sys.path.insert(0, "examples")
    try:
        import quickstart
    finally:
        sys.path.pop(0)
    text = pullback.source(quickstart.loss, np.zeros(3), np.ones((2, 3)), np.ones(2), argnums=0)
    assert "dw = matmul_right(dx_matmul_w, x, w)" in text
    assert "return (ZERO, dw, ZERO, ZERO)" in text
    check = quickstart.train(steps=100)
    assert check[1] < 1e-3


def test_array_code_keeps_unbroadcast_where_shapes_may_differ():
    text = pullback.source(f)
    assert "da = unbroadcast(da_plus_b, a)" in text
    assert "db = unbroadcast_all((dout * a_plus_b, da_plus_b), b)" in text


def sines(x):
    t = 0.0
    for i in range(3):
        t = t + math.sin(x) * i
    return t


def test_a_loops_rule_names_the_module_as_the_user_does():
    """The loop's body is not a user function: `math.cos` in its pullback is read
    under the user's own name, not `math_1`."""
    text = pullback.source(sines, 1.0)
    assert "dx = dsin_x * math.cos(x)" in text and "math_1" not in text
    assert pullback.grad(sines)(0.5) == pytest.approx(3 * math.cos(0.5))
    check_grads(sines, (0.5,), order=2)


def sines_in_closures(x):
    t = 0.0
    for i in range(3):
        g = lambda y: np.sin(y) * math.cos(y) * i  # noqa: E731, B023
        t = t + g(x) + np.tanh(x)
    return t


def test_a_closure_in_a_loop_reads_the_modules_the_loops_rules_use():
    """The user's lambda inside the loop keeps `np` and `math` as its own globals
    while the loop's rules read the same modules."""
    x = 0.4
    expected_gradient = 3 * math.cos(2 * x) + 3 * (1 - math.tanh(x) ** 2)
    assert pullback.grad(sines_in_closures)(x) == pytest.approx(expected_gradient)
    check_grads(sines_in_closures, (x,), order=2)


def test_the_compiled_factory_names_only_the_cells_the_code_reads():
    transform.forward_function(sines, {"x": kinds.SCALAR})
    derivative = transform.derivative(sines, {"x": kinds.SCALAR})
    factory = linecache.getlines(derivative.filename)[1]
    params = factory[factory.index("(") + 1:factory.index(")")].split(", ")
    assert set(params) == set(derivative.cells) == set(derivative.code.co_freevars) - {
        "sines_fwd"}


def test_stages():
    assert "def f(a, b):" in pullback.source(f, stage="anf")
    assert "def f_fwd(a, b):" in pullback.source(f, stage="raw")
    with pytest.raises(ValueError, match="stage"):
        pullback.source(f, stage="bytecode")


def test_generated_code_is_in_linecache_and_inspect():
    scalars = {"a": kinds.SCALAR, "b": kinds.SCALAR}
    forward = transform.forward_function(f, scalars)
    text = inspect.getsource(forward)
    assert text.lstrip().startswith("def f_fwd(a, b):")
    filename = forward.__code__.co_filename
    assert "test_source.py" in filename and linecache.getlines(filename)


def test_traceback_shows_the_generated_line_and_its_origin():
    _, back = pullback.vjp(breaks, np.array([0.0, 2.0]))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as caught:
        back(1.0)
    text = "".join(traceback.format_exception(caught.value))
    assert "in breaks_pullback" in text and "/ (2.0 * sqrt_x)" in text


def test_source_map_points_to_user_lines():
    derivative = transform.derivative(breaks, {"x": kinds.ARRAY})
    line = breaks.__code__.co_firstlineno + 1
    assert line in derivative.source_map
    text = linecache.getlines(derivative.filename)
    for generated, user in enumerate(derivative.source_map):
        if user is not None and text[generated].strip().startswith("#"):
            assert f":{user}:" in text[generated]


# -- docs/design.md shows the code pullback generates ---------------------------------


def _control_flow():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples"))
    try:
        import control_flow
    finally:
        sys.path.pop(0)
    return control_flow


@pytest.mark.parametrize("name, args, optimized", [
    ("clip_square", (3.0, 2.0), [True]),
    ("horner", ([1.0, -2.0, 3.0], 2.0), [False, True]),
])
def test_design_document_shows_the_generated_code(name, args, optimized):
    texts = [pullback.source(getattr(_control_flow(), name), *args, optimize=flag)
             for flag in optimized]
    assert texts == [block.text for block in code_blocks("design.md")
                     if block.text.startswith(f"def {name}_fwd(")]


def test_design_document_shows_an_update_in_a_loop_and_its_sums_made_after_it():
    shapes = [(3, 3), (3, 2), (4, 2)]
    excerpts = [block for block in code_blocks("design.md")
                if is_listing(block) and block.text[0].isspace()]
    assert len(excerpts) == 2
    for optimize in (False, True):
        text = pullback.source(_control_flow().rnn_loss, *map(np.ones, shapes), argnums=(0, 1),
                               optimize=optimize)
        shown = [block for block in excerpts if ("_all(" in block.text) == optimize]
        assert len(shown) == 1 and shown_in(text, shown[0])



def test_a_cotangent_summed_from_several_calls_is_summed_once():
    from test_control_flow import tree_of_shared_weights, tree_of_shared_weights_loss, vec

    params, tree = (vec(3, 3) * 0.5, vec(3)), ((0, (1, 2)), 1)
    text = pullback.source(tree_of_shared_weights, params, tree, argnums=0)
    assert "dparams_2 = collected((dparams_own, dparams, dparams_1))" in text
    assert "return (ZERO, summed_once(dparams_2, nested), ZERO)" in text
    assert "dparams_3 = add_all((dparams, dparams_1, dparams_2))" in pullback.source(
        tree_of_shared_weights, params, tree, argnums=0, optimize=False)
    check_grads(tree_of_shared_weights_loss, (*params, tree), order=3)
