"""Derivative rules, one template per primitive, grouped by family.

`registry` is the template language (`adjoint`, `nondifferentiable`, `d`) and the
table of rules. Every other module here reads like a table: the primitive, then
the cotangent of each of its differentiable arguments. `register_all()` imports
them, which registers their rules. scipy.special's and scipy.linalg's rules, and the
Python versions of scipy.stats's distributions and of scipy.integrate's solvers, are
registered when the program has imported that part of SciPy (`SCIPY_FAMILIES`), at
the first look-up of a rule after it: importing SciPy takes longer than importing
pullback, and a program that does not use it should not wait for it.
"""

import importlib

from . import registry

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


# family of rules: the module of SciPy whose import registers them
SCIPY_FAMILIES = {
    "scipy_integrate": "scipy.integrate",
    "scipy_special": "scipy.special",
    "scipy_linalg": "scipy.linalg",
    "scipy_stats": "scipy.stats",
}


def register_all():
    """Import every family of rules; SciPy's wait until the program imports SciPy's."""
    for family in FAMILIES:
        importlib.import_module(f"{__name__}.{family}")
    for family, library in SCIPY_FAMILIES.items():
        registry.register_when_imported(library, f"{__name__}.{family}")
