"""The arrays held constant while a gradient runs: the arguments `grad` does not
differentiate (`api.held_constant`), and those of them that are containers or objects,
which are then not walked for their kinds at every call that receives them; and the
data the function reads from its closure and its globals (`Held`). A call
resolved at run time takes its callee's kinds from the values it is passed
(`kinds.of_value`), which cannot tell the data from a weight; holding the data
constant, `layer(images)` in a loop over layer objects is transformed for constant
images, as a direct call is, and makes no cotangent for them. An array object that
is one of those arguments has no derivative wherever it is read, since pullback
never updates an argument in place.

Only the calls resolved at run time read them (`transform.param_kinds(..., held=True)`),
and every differentiation that starts (`transform.new_epoch`) releases them: a `grad`
nested in the function may differentiate with respect to one of them, and from then on
the outer one runs without (they are an optimisation).
"""

import contextlib

import numpy as np

from ..compiler.analysis import kinds

_held = frozenset()


class Held:
    """The ids of the values held constant (`ids`, a set), and values to hold when a
    call first asks about one (`pending`, by id): the data a function reads from its
    closure and its globals, walked only if a call resolved at run time is given it,
    and held, with its arrays, unless a differentiated argument is among its leaves
    (their ids `reached`)."""

    def __init__(self, ids, pending, reached):
        self.ids = ids
        self.pending = pending
        self.reached = reached

    def __contains__(self, key):
        if key in self.ids:
            return True
        value = self.pending.pop(key, None)
        if value is None:
            return False
        leaves = list(kinds.leaves(value, into_closures=True))
        if any(id(leaf) in self.reached for leaf in leaves):
            return False
        self.ids.add(key)
        self.ids.update(id(leaf) for leaf in leaves if type(leaf) is np.ndarray)
        return True


def is_held(value):
    """Whether `value` (an array, a container or an object) is held constant."""
    return id(value) in _held


@contextlib.contextmanager
def holding(ids):
    """Within the block, the values whose ids are in `ids` (a set, or a `Held`) are held
    constant, until `release`."""
    global _held
    before = _held
    _held = ids if isinstance(ids, Held) else frozenset(ids)
    try:
        yield
    finally:
        _held = before


def release():
    """Hold no array constant any more."""
    global _held
    _held = frozenset()
