"""NumPy functions by name, for the rules of functions that only newer NumPy versions have.

A template registers such a function with `@adjoint(..., *numpy_functions("linalg.vecdot"))`,
so that the templates still import on a NumPy without it.
"""

import numpy as np


def numpy_functions(*names):
    """The functions `numpy.<name>` of `names` ("matvec", "linalg.vecdot") that the
    installed NumPy has."""
    found = []
    for name in names:
        obj = np
        for attr in name.split("."):
            obj = getattr(obj, attr, None)
        if obj is not None:
            found.append(obj)
    return found
