"""A recursion's contributions to a cotangent, collected and summed once.

A recursive function that passes a parameter on unchanged (`forward(params, node.left)`)
reads it at every level, and its pullback would return that parameter's cotangent
from every level to add it into its caller's: one sum of the whole cotangent (a
dict of fifteen weights' cotangents, say) per call. The optimisation
`compiler.optimize.recursion_terms` makes the recursive calls' pullbacks return
their contributions as they are, `collected` into a tree, and the outermost call
sum them once (`summed_once`), as a person's backward pass would add a node's
contributions into one running gradient. The tree is the sum it stands for: its
cotangent (at order 2) is one cotangent for all its terms, like `add_all`'s.
"""

import numpy as np

from .cotangents import ZERO, add_all


class Terms:
    """The sum of `parts`, cotangents or other `Terms`, not made yet (NumPy reading it
    gets the sum)."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    def __repr__(self):
        return f"Terms({len(self.parts)} parts)"

    def __array__(self, dtype=None, copy=None):
        total = summed_once(self, False)
        return np.asarray(total) if dtype is None else np.asarray(total, dtype)


def collected(parts):
    """The sum of the tuple `parts` (cotangents, `ZERO` or `Terms`), as a `Terms` of
    those that are not `ZERO` (`ZERO` if none is; the part itself if one is)."""
    present = tuple(part for part in parts if part is not ZERO)
    if len(present) < 2:
        return present[0] if present else ZERO
    return Terms(present)


def summed_once(x, nested):
    """`x` itself when `nested` (a recursive call's pullback passing its terms to its
    caller's), else the sum of the cotangents `x` collects, made at once (`add_all`)."""
    if nested or type(x) is not Terms:
        return x
    leaves, pending = [], [x]
    while pending:
        node = pending.pop()
        if type(node) is Terms:
            pending.extend(reversed(node.parts))
        else:
            leaves.append(node)
    return add_all(tuple(leaves))
