"""pullback: source-to-source automatic differentiation for Python, in reverse and
forward mode.

`pullback.grad(f)` reads the source of `f`, normalises it to A-normal form,
applies reverse-mode rules that build one pullback closure per function
(Pearlmutter and Siskind's backpropagators), and runs the generated Python;
`pullback.jvp(f, primals, tangents)` runs tangent code beside `f`'s own.
`pullback.source(f)` shows that code.
"""

from . import rules, testing
from .api import (
    differentiable,
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jvp,
    linearize,
    source,
    value_and_grad,
    vjp,
)
from .config import config
from .errors import TransformError
from .rules.registry import adjoint, d, nondifferentiable, t
from .runtime.cotangents import ZERO
from .runtime.custom import custom_jvp, custom_vjp
from .version import __version__

rules.register_all()

__all__ = [
    "__version__",
    "ZERO",
    "TransformError",
    "adjoint",
    "config",
    "custom_jvp",
    "custom_vjp",
    "d",
    "differentiable",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacobian",
    "jvp",
    "linearize",
    "nondifferentiable",
    "source",
    "t",
    "testing",
    "value_and_grad",
    "vjp",
]
