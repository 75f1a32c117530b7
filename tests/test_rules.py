"""User-defined rules: `@pullback.adjoint` templates and `@pullback.custom_vjp` derivatives."""

import os
import sys

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads
from test_docs import code_blocks, is_listing, shown_in

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import custom_rules  # noqa: E402

sys.path.pop(0)


def calls_twice(x):
    return custom_rules.logsumexp(x) * custom_rules.logsumexp(2.0 * x)


def passes_it_on(f, x):
    return f(x) ** 2


def wrong_backward(x):
    return x * 2.0


def wrong_backward_fwd(x):
    return x * 2.0, None


def wrong_backward_bwd(residuals, g):
    return g * 2.0


wrong_backward = pullback.custom_vjp(wrong_backward)
wrong_backward.defvjp(wrong_backward_fwd, wrong_backward_bwd)

X = np.array([0.3, -0.5, 1.1])
CASES = [
    ("adjoint_template", custom_rules.loss, (np.array([0.5, -1.0, 2.0]), X)),
    ("custom_vjp_direct", custom_rules.logsumexp, (X,)),
    ("custom_vjp_called_twice", calls_twice, (X,)),
    ("custom_vjp_passed_as_a_value", passes_it_on, (custom_rules.logsumexp, X)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_user_rules(name, fn, args, order):
    check_grads(fn, args, order=order)


def test_custom_vjp_is_what_runs():
    big = np.array([1000.0, 1001.0, 1002.0])
    softmax = np.exp(big - 1002.0) / np.sum(np.exp(big - 1002.0))
    np.testing.assert_allclose(pullback.grad(custom_rules.logsumexp)(big), softmax)
    assert custom_rules.logsumexp(np.zeros(2)) == pytest.approx(np.log(2.0))


def test_custom_vjp_and_the_template_show_in_the_source():
    text = pullback.source(custom_rules.loss, np.ones(3), np.ones(3))
    assert "custom_forward(logsumexp_fwd, logsumexp_bwd, " in text
    assert "/ (1.0 + np.exp(-w_times_x))" in text
    shown = pullback.source(custom_rules.logsumexp)
    assert shown.startswith("# logsumexp has a hand-written derivative")
    assert "def logsumexp_bwd(softmax, g):" in shown


def test_a_backward_must_return_one_cotangent_per_argument():
    with pytest.raises(TypeError, match="wrong_backward_bwd must return a tuple of 1"):
        pullback.grad(wrong_backward)(1.5)


def test_complex_arguments_are_refused():
    with pytest.raises(TypeError, match="is complex"):
        pullback.grad(lambda z: abs(z))(1.0 + 2.0j)
    with pytest.raises(TypeError, match="is complex"):
        pullback.vjp(np.sum, np.ones(2, dtype=complex))


def phase_magnitude(x):
    return np.sum(np.abs(np.exp(1j * x) * x))


def real_part_of_rotation(x):
    return np.sum(np.real(np.exp(1j * x)))


@pytest.mark.parametrize("fn", [phase_magnitude, real_part_of_rotation])
def test_complex_intermediate_values_are_refused_at_the_line(fn):
    with pytest.raises(pullback.TransformError, match=r"complex numbers \(1j here") as caught:
        pullback.grad(fn)(np.array([0.7, -0.3]))
    assert caught.value.lineno == fn.__code__.co_firstlineno + 1


def rotated_by_a_held_constant(x):
    turns = {"quarter": 1j}
    return np.sum(np.real(x * turns["quarter"]))


def test_complex_values_met_when_the_function_runs_are_refused():
    with pytest.raises(TypeError, match="complex cotangent reached a real argument"):
        pullback.grad(rotated_by_a_held_constant)(np.array([0.7, -0.3]))


def test_the_rules_page_shows_the_generated_code():
    """Its other blocks are quotes of custom_rules.py and templates/ (see test_docs.py)."""
    text = pullback.source(custom_rules.loss, np.ones(3), np.ones(3))
    excerpts = [block for block in code_blocks("rules.md") if is_listing(block)]
    assert len(excerpts) == 1 and shown_in(text, excerpts[0])

