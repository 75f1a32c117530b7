"""Derivative rules, one template per primitive, grouped by family.

Importing this package registers them all. Each module reads like a table:
the primitive, then the cotangent of each of its differentiable arguments. See
`pullback.rules` for the template language. scipy.special's rules are
registered when SciPy is installed.
"""

import importlib.util

from . import (  # noqa: F401  (imported to register the rules)
    nondifferentiable,
    numpy_elementwise,
    numpy_linalg,
    numpy_reductions,
    numpy_shape,
    pullback_helpers,
    python_iteration,
    python_math,
    python_mutation,
    python_objects,
    python_operators,
)

if importlib.util.find_spec("scipy") is not None:
    from . import scipy_special  # noqa: F401
