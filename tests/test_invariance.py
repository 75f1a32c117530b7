"""Shifts a computation cancels (`invariance`): their cotangent is never computed.

Each function shifts by a value named `top`; the table says whether the result
depends on it. Values are checked against finite differences at orders 1 and 2,
and against the code computing the shift's cotangent, which must agree up to
rounding."""

import math

import numpy as np
import pytest

import pullback
from pullback.compiler import transform
from pullback.compiler.analysis import invariance
from pullback.testing import check_grads

rng = np.random.default_rng(11)


def logsumexp(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top


def log_softmax_rows(z, labels):
    top = np.max(z, axis=1, keepdims=True)
    shifted = z - top
    return np.sum((shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))) * labels)


def logsumexp_rows_by_method(z):
    top = z.max(axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - top), axis=1, keepdims=True)) + top)


def logsumexp_columns(z):
    """A reduction along the first axis, its axis dropped from both terms."""
    top = np.max(z, axis=0, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - top), axis=0)) + np.squeeze(top, axis=0))


def logsumexp_columns_squeezed(z):
    top = np.max(z, axis=0, keepdims=True)
    lse = np.log(np.sum(np.exp(z - top), axis=0)) + np.squeeze(top, axis=0)
    return np.sum(lse * lse)


def softmax_weights(x, w):
    """`e / sum(e)`: the shift divides out."""
    top = np.max(x)
    e = np.exp(x - top)
    return np.sum(e / np.sum(e) * w)


def mean_shifted_softmax(z, w):
    top = np.mean(z, axis=1, keepdims=True)
    e = np.exp(z - top)
    return np.sum(e / np.sum(e, axis=1, keepdims=True) * w)


def logaddexp(a, b):
    """Scalars with `math`: a sum of two exponentials of the same shift."""
    top = np.maximum(a, b)
    return math.log(math.exp(a - top) + math.exp(b - top)) + top


def scaled_shift(x):
    """`2 * top` does not cancel."""
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + 2.0 * top


def shift_read_again(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top + top ** 2


def shift_of_other_axis(z):
    """The shift is the same along rows; the sum is down columns."""
    top = np.max(z, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z - top), axis=0)))


def shift_of_another_array(z, y):
    """`y - top` may broadcast `top` otherwise than `z - top` would."""
    top = np.max(z, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(y - top), axis=1, keepdims=True)) + top)


def shift_in_a_branch(x, flag):
    top = np.max(x)
    if flag:
        lse = np.log(np.sum(np.exp(x - top))) + top
    else:
        lse = np.log(np.sum(np.exp(x - top)))
    return lse


def shift_returned(x):
    top = np.max(x)
    return np.log(np.sum(np.exp(x - top))) + top, x - top


CASES = [
    ("logsumexp", logsumexp, (rng.standard_normal(5),), True),
    ("logsumexp_tied", logsumexp, (np.array([0.5, 2.0, -1.0, 2.0]),), True),
    ("log_softmax_rows", log_softmax_rows,
     (rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), True),
    ("logsumexp_rows_by_method", logsumexp_rows_by_method, (rng.standard_normal((3, 4)),),
     True),
    ("logsumexp_columns", logsumexp_columns, (rng.standard_normal((4, 3)),), True),
    ("logsumexp_columns_squeezed", logsumexp_columns_squeezed,
     (rng.standard_normal((4, 3)),), True),
    ("softmax_weights", softmax_weights, (rng.standard_normal(5), rng.standard_normal(5)),
     True),
    ("mean_shifted_softmax", mean_shifted_softmax,
     (rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), True),
    ("logaddexp", logaddexp, (0.3, -1.2), True),
    ("scaled_shift", scaled_shift, (rng.standard_normal(5),), False),
    ("shift_read_again", shift_read_again, (rng.standard_normal(5),), False),
    ("shift_of_other_axis", shift_of_other_axis, (rng.standard_normal((3, 4)),), False),
    ("shift_of_another_array", shift_of_another_array,
     (rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), False),
    ("shift_in_a_branch", shift_in_a_branch, (rng.standard_normal(5), True), False),
    ("shift_returned", shift_returned, (rng.standard_normal(5),), False),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args, cancels", CASES, ids=IDS)
def test_derivatives(name, fn, args, cancels, order):
    check_grads(fn, args, order=order)


@pytest.mark.parametrize("name, fn, args, cancels", CASES, ids=IDS)
def test_a_shift_that_cancels_has_no_cotangent(name, fn, args, cancels):
    assert ("dtop" in pullback.source(fn, *args)) != cancels


@pytest.mark.parametrize("name, fn, args, cancels", [c for c in CASES if c[3]],
                         ids=[c[0] for c in CASES if c[3]])
def test_without_the_shifts_cotangent_the_gradient_differs_only_by_rounding(
        name, fn, args, cancels, monkeypatch):
    argnums = tuple(i for i, a in enumerate(args) if not isinstance(a, bool))
    cancelled = pullback.grad(fn, argnums=argnums)(*args)
    monkeypatch.setattr(invariance, "cancelled", lambda *context: False)
    monkeypatch.setattr(transform, "_DERIVATIVES", {})
    assert "dtop" in pullback.source(fn, *args)
    for a, b in zip(cancelled, pullback.grad(fn, argnums=argnums)(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, fn, args, cancels", CASES[:3], ids=IDS[:3])
def test_order_three(name, fn, args, cancels):
    check_grads(fn, args, order=3)


def test_a_logsumexps_pullback_reads_like_its_gradient():
    """No max's share, no sum of the cotangent back to the shift: the cotangent of
    `x` is the softmax times the result's (values checked in the table above)."""
    text = pullback.source(logsumexp, rng.standard_normal(5))
    assert "extremum_share" not in text and "unbroadcast" not in text
    assert "dx = dsum_exp_x_minus_top * exp_x_minus_top" in text

