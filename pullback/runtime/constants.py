"""The arrays held constant while a gradient runs: the arguments `grad` does not
differentiate (`api.held_constant`), and those of them that are containers or objects,
which are then not walked for their kinds at every call that receives them; and the
data the function reads from its closure and its globals (`api.Held`). A call
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

_held = frozenset()


def is_held(value):
    """Whether `value` (an array, a container or an object) is held constant."""
    return id(value) in _held


@contextlib.contextmanager
def holding(ids):
    """Within the block, the values whose ids are in `ids` (a set, or what answers `in`
    for them: `api.Held`) are held constant, until `release`."""
    global _held
    before = _held
    _held = ids
    try:
        yield
    finally:
        _held = before


def release():
    """Hold no array constant any more."""
    global _held
    _held = frozenset()
