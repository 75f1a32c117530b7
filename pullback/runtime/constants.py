"""The arrays held constant while a gradient runs: the arguments `grad` does not
differentiate (`api.held_constant`). A call resolved at run time takes its callee's
kinds from the values it is passed (`kinds.of_value`), which cannot tell the data
from a weight; holding the data constant, `layer(images)` in a loop over layer
objects is transformed for constant images, as a direct call is, and makes no
cotangent for them. An array object that is one of those arguments has no
derivative wherever it is read, since pullback never updates an argument in place.
"""

import contextlib

_held = frozenset()


def is_held(value):
    """Whether array `value` is held constant."""
    return id(value) in _held


@contextlib.contextmanager
def holding(ids):
    """Within the block, the arrays whose ids are in `ids` are held constant too."""
    global _held
    before = _held
    _held = before | ids
    try:
        yield
    finally:
        _held = before
