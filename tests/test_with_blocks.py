"""`with` blocks (issue 25): np.errstate, contextlib's managers and the user's own,
around straight code, branches, loops with break and continue, early returns, nested
functions and nested blocks. Values at orders 1 and 2 against finite differences; the
context manager is entered and exited as Python does, also when an exception ends the
function; a manager that suppresses an exception, or one built from differentiable
values, is refused at the user's line."""

import contextlib
import warnings

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

X = np.array([0.5, -1.5, 2.0])
EVENTS = []


class Recorded:
    """The user's context manager: it records entering and exiting, and touches no
    differentiable value."""

    def __init__(self, label):
        self.label = label

    def __enter__(self):
        EVENTS.append(("enter", self.label))
        return self.label

    def __exit__(self, kind, error, trace):
        EVENTS.append(("exit", self.label, kind))
        return False


def errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.sin(x) * x
    return np.sum(y)


def errstate_named(x):
    with np.errstate(over="ignore") as state:
        y = np.exp(x) * 2.0
    return np.sum(y) + 0.0 * len(str(state))


def nested_and_several(x):
    with contextlib.nullcontext(), np.errstate(all="ignore"):  # noqa: SIM117 (nested blocks)
        with Recorded("inner") as label:
            y = np.tanh(x) ** 2 + len(label)
    return np.sum(y * x)


def returns_inside(x):
    with Recorded("return"):
        if np.sum(x) > 0:
            return np.sum(np.sin(x) * x)
        y = x ** 3
    return np.sum(y)


def loop_with_break_and_continue(x):
    total = 0.0
    for i in range(5):
        with Recorded("loop"):
            if i == 1:
                continue
            total = total + np.sum(x ** 2) * i
            if i == 3:
                break
    return total


def loop_inside(x):
    y = x
    with np.errstate(all="ignore"):
        for i in range(3):
            y = np.sin(y) * x
            if i == 1:
                break
    return np.sum(y)


def while_inside(x):
    y, n = x, 0
    while n < 3:
        with contextlib.suppress(KeyError):
            y = y * np.cos(y)
        n += 1
    return np.sum(y)


def closure_inside(x, w):
    with Recorded("closure"):
        def scaled(v):
            with np.errstate(all="ignore"):
                return v * w
        y = scaled(x) + scaled(x * x)
    return np.sum(np.sin(y))


def callee(x):
    with Recorded("callee"):
        return np.log1p(x * x)


def calls_a_function_with_a_block(x):
    with np.errstate(divide="ignore"):
        return np.sum(callee(x) * x)


@pytest.mark.parametrize("fn, args", [
    (errstate, (X,)),
    (errstate_named, (X,)),
    (nested_and_several, (X,)),
    (returns_inside, (X,)),
    (returns_inside, (-X - 1.0,)),
    (loop_with_break_and_continue, (X,)),
    (loop_inside, (X,)),
    (while_inside, (X,)),
    (closure_inside, (X, 0.7)),
    (calls_a_function_with_a_block, (X,)),
])
def test_values_at_order_two(fn, args):
    check_grads(fn, args, order=2)


def test_contexts_are_entered_and_exited_as_python_does():
    del EVENTS[:]
    expected = loop_with_break_and_continue(X)
    python = list(EVENTS)
    del EVENTS[:]
    value, _ = pullback.value_and_grad(loop_with_break_and_continue)(X)
    assert value == expected
    assert python == EVENTS
    assert [e[0] for e in python] == ["enter", "exit"] * 4


def test_an_exception_exits_the_open_contexts():
    def fails(x):
        with np.errstate(divide="raise"):  # noqa: SIM117 (nested blocks)
            with Recorded("failing"):
                return np.sum(np.log(x - x))

    before = np.geterr()
    del EVENTS[:]
    with pytest.raises(FloatingPointError):
        pullback.grad(fails)(X)
    assert np.geterr() == before
    assert [("enter", "failing"), ("exit", "failing", FloatingPointError)] == EVENTS


def test_errstate_holds_in_the_forward():
    def quiet(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.log(np.abs(x) - np.abs(x)) * 0.0
        return np.sum(np.where(np.isfinite(y), y, 0.0) + x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, back = pullback.vjp(quiet, X)
    assert value == pytest.approx(np.sum(X))


def suppresses(x):
    with contextlib.suppress(KeyError):
        x = x * {}["missing"]
    return np.sum(x)


def suppresses_nothing(x):
    with contextlib.suppress(ZeroDivisionError):
        y = np.sum(x) * 2.0
    return y


def manager_of_a_differentiable_value(x):
    with contextlib.nullcontext(x) as y:
        z = y * 2.0
    return np.sum(z)


def test_a_manager_that_suppresses_nothing():
    check_grads(suppresses_nothing, (X,), order=2)


def test_a_suppressed_exception_is_refused_at_the_line_of_the_block():
    line = suppresses.__code__.co_firstlineno + 1
    with pytest.raises(pullback.TransformError, match="suppressed the KeyError") as info:
        pullback.grad(suppresses)(X)
    assert (info.value.filename, info.value.lineno) == (__file__, line)


def manager_passed_in(x, managers):
    with managers[0]:
        z = x * 2.0
    return np.sum(z)


@pytest.mark.parametrize("fn, args, message", [
    (manager_of_a_differentiable_value, (X,), "calling class contextlib.nullcontext"),
    (manager_passed_in, (X, [X]), "not differentiable in its argument context"),
])
def test_a_manager_of_a_differentiable_value_is_refused(fn, args, message):
    line = fn.__code__.co_firstlineno + 1
    with pytest.raises(pullback.TransformError, match=message) as info:
        pullback.grad(fn, argnums=tuple(range(len(args))))(*args)
    assert (info.value.filename, info.value.lineno) == (__file__, line)


def test_the_derivative_reads_like_the_users_code():
    text = pullback.source(errstate, X)
    assert "context = np.errstate(divide='ignore', invalid='ignore')" in text
    assert "enter_context(context)" in text and "exit_context(context)" in text
