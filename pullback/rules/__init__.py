"""Derivative rules, one template per primitive, grouped by family.

`registry` is the template language (`adjoint`, `nondifferentiable`, `d`) and the
table of rules. Every other module here reads like a table: the primitive, then
the cotangent of each of its differentiable arguments. `register_all()` imports
them, which registers their rules; scipy.special's and scipy.linalg's rules, and the
Python versions of scipy.stats's distributions and of scipy.integrate.odeint, are
registered when SciPy is installed.
"""

import importlib
import importlib.util

FAMILIES = (
    "in_place",
    "nondifferentiable",
    "numpy_elementwise",
    "numpy_linalg",
    "numpy_python",
    "numpy_reductions",
    "numpy_shape",
    "pullback_helpers",
    "python_functional",
    "python_iteration",
    "python_math",
    "python_mutation",
    "python_objects",
    "python_operators",
)


def register_all():
    """Import every family of rules (SciPy's only if SciPy is installed)."""
    for family in FAMILIES:
        importlib.import_module(f"{__name__}.{family}")
    if importlib.util.find_spec("scipy") is not None:
        importlib.import_module(f"{__name__}.scipy_integrate")
        importlib.import_module(f"{__name__}.scipy_special")
        importlib.import_module(f"{__name__}.scipy_linalg")
        importlib.import_module(f"{__name__}.scipy_stats")
