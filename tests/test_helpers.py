"""pullback's linear helpers, the maps generated code calls on cotangents.

Each maps the symbolic zero to zero, also where it reads a shape from a cotangent
(which is a value at second order and may be `ZERO`), and each pair of maps is
transposed: <M x, y> = <x, Mᵀ y> for random x and y.
"""

import inspect

import numpy as np
import pytest

from pullback.runtime import calls, iteration, mutation, structures
from pullback.runtime.cotangents import ZERO
from pullback.testing import _inner

rng = np.random.default_rng(7)


def vector(n=3):
    return rng.standard_normal(n)


def defaulted(a, b=1.5, *, c=2.5):
    return a * b * c


_SIGNATURE = inspect.signature(defaulted)
_LAYOUT = calls.defaults_layout(defaulted, _SIGNATURE, (1.0,), {})  # b and c left to defaults

# name: (map, its transpose, an argument x of the map, an argument y of the transpose,
#        the other arguments of the map, those of the transpose)
PAIRS = {
    "repack": (lambda items, x: structures.repack(x, items),
               lambda h, items: structures.unrepack(h, items),
               (1.0, vector()), (2.0, vector()), ((0.0, np.zeros(3)),), ((0.0, np.zeros(3)),)),
    "unreverse": (iteration.unreverse, lambda h, g, items: iteration.rereverse(h, g, items),
                  [1.0, 2.0], (3.0, 4.0, 5.0), ([0.0, 0.0, 0.0],),
                  ([1.0, 2.0], [0.0, 0.0, 0.0])),
    "unappended": (mutation.unappended, mutation.reappended, [1.0, 2.0, 3.0], [4.0, 5.0],
                   (), ()),
    "last_item": (mutation.last_item, mutation.last_item_adjoint, [1.0, 2.0, 3.0], 6.0, (),
                  ([0.0, 0.0, 0.0],)),
    "unrepeated": (lambda g, items, count: structures.unrepeated(g, items, count),
                   structures.rerepeated, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (7.0, 8.0),
                   ((0.0, 0.0), 3), (3,)),
    "with_defaults": (calls.with_defaults, calls.without_defaults,
                      ((0.5,), 1.0, 2.0, 3.0), ((0.5, 1.5, 2.5), 1.0, 4.0, 5.0),
                      (_LAYOUT,), (_LAYOUT,)),
    "unget": (structures.unget, structures.reget, vector(), {"a": 1.0, "b": vector()},
              ({"a": 0.0, "b": np.zeros(3)}, "b"), ({"a": 0.0, "b": np.zeros(3)}, "b")),
    "unget of a missing key": (structures.unget, structures.reget, 2.0, {"a": 1.0},
                               ({"a": 0.0}, "z"), ({"a": 0.0}, "z")),
    "unget_default": (structures.unget_default, structures.unget_default, 2.0, 3.0,
                      ({"a": 0.0}, "z"), ({"a": 0.0}, "z")),
    "unmerged_left": (structures.unmerged_left, lambda h, a, b: structures.merged(h, ZERO, a, b),
                      {"p": 1.0, "q": 2.0, "r": 3.0}, {"p": 4.0, "q": 5.0},
                      ({"p": 0.0, "q": 0.0}, {"q": 0.0, "r": 0.0}),
                      ({"p": 0.0, "q": 0.0}, {"q": 0.0, "r": 0.0})),
    "unmerged_right": (structures.unmerged_right,
                       lambda h, a, b: structures.merged(ZERO, h, a, b),
                       {"p": 1.0, "q": 2.0, "r": 3.0}, {"q": 4.0, "r": 5.0},
                       ({"p": 0.0, "q": 0.0}, {"q": 0.0, "r": 0.0}),
                       ({"p": 0.0, "q": 0.0}, {"q": 0.0, "r": 0.0})),
    "unpop of a dict": (mutation.unpop, mutation.repop, ({"b": 1.0}, 2.0),
                        {"a": 3.0, "b": 4.0}, ({"a": 0.0, "b": 0.0}, "a"),
                        ({"a": 0.0, "b": 0.0}, "a")),
    "unpop_default": (mutation.unpop_default, mutation.repop_default, ({"b": 1.0}, 2.0), 3.0,
                      ({"b": 0.0}, "a"), ({"b": 0.0}, "a")),
}


@pytest.mark.parametrize("name", PAIRS)
def test_the_pair_is_transposed(name):
    forward, transpose, x, y, extra, transpose_extra = PAIRS[name]
    assert _inner(forward(x, *extra), y) == pytest.approx(
        _inner(x, transpose(y, *transpose_extra)))


ZEROS = [
    ("repack", lambda: structures.repack((1.0, 2.0), ZERO)),
    ("rereverse of a zero cotangent", lambda: iteration.rereverse((1.0,), ZERO, [1.0])),
    ("rezip of a zero cotangent", lambda: iteration.rezip(([1.0],), ZERO, ([1.0],))),
    ("reitems of a zero cotangent", lambda: iteration.reitems({"a": 1.0}, ZERO, {"a": 1.0}, 1)),
    ("unappended", lambda: mutation.unappended_into(ZERO)),
    ("reappended", lambda: mutation.reappended(ZERO)),
    ("unrepeated", lambda: structures.unrepeated(ZERO, (1.0,), 2)),
    ("rerepeated", lambda: structures.rerepeated(ZERO, 2)),
    ("last_item of a zero cotangent", lambda: mutation.last_item_adjoint(2.0, ZERO)),
    ("unindex_all", lambda: structures.unindex_all(ZERO, np.zeros(3), (0, 1))),
    ("unindex_tiles", lambda: structures.unindex_tiles(ZERO, np.zeros(3), (slice(0, 1),), 0)),
    ("with_defaults", lambda: calls.with_defaults(ZERO, _LAYOUT)),
    ("unget", lambda: structures.unget(ZERO, {"a": 1.0}, "a")),
    ("reget", lambda: structures.reget(ZERO, {"a": 1.0}, "a")),
    ("unget_default", lambda: structures.unget_default(ZERO, {"a": 1.0}, "z")),
    ("unmerged_left", lambda: structures.unmerged_left(ZERO, {"a": 1.0}, {})),
    ("merged", lambda: structures.merged(ZERO, ZERO, {"a": 1.0}, {})),
    ("unpop_default", lambda: mutation.unpop_default(ZERO, {"a": 1.0}, "z")),
    ("repop_default", lambda: mutation.repop_default(ZERO, {"a": 1.0}, "z")),
    ("without_defaults", lambda: calls.without_defaults(ZERO, _LAYOUT)),
]


@pytest.mark.parametrize("name, call", ZEROS, ids=[name for name, _ in ZEROS])
def test_zero_gives_zero(name, call):
    assert call() is ZERO


def test_the_calls_cotangents_of_zero_are_zeros():
    signature = inspect.signature(defaulted)
    assert calls.by_argument(signature, (1.0, 2.0), {}, ZERO) == (ZERO, ZERO, ZERO)
    assert calls.split_cotangents(ZERO, (1.0,), {}) == (ZERO, ZERO, ZERO)


def test_zero_is_no_container():
    with pytest.raises(TypeError):
        tuple(ZERO)
    with pytest.raises(TypeError):
        iter(ZERO)
