"""Generator functions the differentiated function consumes (issue 25): `sum`, `list`,
`for`, `zip` and `enumerate` over them, `yield from`, recursion, closures, loops with
`break` and `return` inside the generator. Values at orders 1 and 2 against finite
differences; what cannot be run to its end when called is refused at the user's line."""

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

X = np.array([0.5, -1.5, 2.0])


def powers(x, n):
    for k in range(n):
        yield x ** k


def pairs(x):
    yield x[0], x[1]
    yield x[1] * x[2], x[0]


def up_to(x, limit):
    total = 0.0
    for v in x:
        total = total + v * v
        if total > limit:
            return
        yield total


def chained(x):
    yield from powers(x, 3)
    yield from [np.sin(x), np.cos(x)]
    yield x


def leaves(tree):
    if isinstance(tree, tuple):
        for child in tree:
            yield from leaves(child)
    else:
        yield tree


def summed(x):
    return np.sum(sum(powers(x, 4)))


def listed(x):
    return np.sum(np.stack(list(powers(x, 3))) * x)


def iterated(x):
    total = 0.0
    for a, b in pairs(x):
        total = total + a * np.sin(b)
    return total


def zipped_and_enumerated(x):
    total = 0.0
    for i, (p, v) in enumerate(zip(powers(x[0], 3), x)):
        total = total + i * p * v
    return total


def stops_early(x):
    return sum(up_to(x, 1.0)) + 0.0


def yields_from(x):
    return np.sum(sum(chained(x)))


def recursive(x):
    tree = ((x[0], x[1] * 2.0), (np.sin(x[2]), (x[0] * x[1],)))
    return sum(v ** 2 for v in leaves(tree))


def closure_generator(x, w):
    def scaled(n):
        for k in range(n):
            yield np.tanh(w * x) * k
    return np.sum(sum(scaled(3)))


def in_a_loop(x):
    total = 0.0
    for n in range(1, 4):
        total = total + np.sum(sum(powers(x, n)))
    return total


@pytest.mark.parametrize("fn, args", [
    (summed, (X,)),
    (listed, (X,)),
    (iterated, (X,)),
    (zipped_and_enumerated, (X,)),
    (stops_early, (X,)),
    (stops_early, (X * 0.1,)),
    (yields_from, (X,)),
    (recursive, (X,)),
    (closure_generator, (X, 0.7)),
    (in_a_loop, (X,)),
])
def test_values_at_order_two(fn, args):
    check_grads(fn, args, order=2)


def test_a_generator_of_constants_stays_a_generator():
    def counted(x):
        return x * sum(powers(2.0, 3))

    assert pullback.grad(counted)(1.5) == pytest.approx(7.0)


def forever(x):
    while True:
        yield x


def takes_from_forever(x):
    total = 0.0
    for i, v in zip(range(3), forever(x)):
        total = total + v * i
    return total


def receives(x):
    sent = yield x
    yield sent


def sends(x):
    return sum(receives(x))


@pytest.mark.parametrize("fn, generator, offset, message", [
    (takes_from_forever, forever, 1, "a generator whose while True loop never ends"),
    (sends, receives, 1, "a yield whose value is used"),
])
def test_what_cannot_run_to_its_end_is_refused(fn, generator, offset, message):
    with pytest.raises(pullback.TransformError, match=message) as info:
        pullback.grad(fn)(1.5)
    line = generator.__code__.co_firstlineno + offset
    assert (info.value.filename, info.value.lineno) == (__file__, line)


def test_the_derivative_reads_like_the_users_code():
    text = pullback.source(powers, X, 3)
    assert "items = []" in text and "items_1.append(x_pow_k)" in text
