"""Hand-written derivatives for Python functions: `custom_vjp`.

A function decorated with `custom_vjp` and given a forward and a backward
function with `defvjp` is not transformed where it is called: the caller's
forward runs `fwd(*args) -> (out, residuals)` and its pullback runs
`bwd(residuals, g) -> (one cotangent per argument)`. This is for derivatives
that are more stable or cheaper than the transformed code (a log-sum-exp, an
implicit function, a fixed point). `fwd` and `bwd` are ordinary Python that
pullback transforms in turn, so their derivatives, and grad of grad, work.
"""

import inspect
import textwrap

from .cotangents import ZERO
from .deferred import concrete


def custom_vjp(fn):
    """Mark `fn` as having a hand-written derivative, given with `fn.defvjp(fwd, bwd)`.

    `fwd(*args)` returns `(fn(*args), residuals)`, the values `bwd` needs;
    `bwd(residuals, g)` returns a tuple with the cotangent of each argument of
    `fn` (`pullback.ZERO` for none) given the cotangent `g` of its result.
    Calling `fn` still runs `fn`. Its free variables are constants to pullback.

    Example:
      >>> import numpy as np, pullback
      >>> @pullback.custom_vjp
      ... def clipped_sqrt(x):
      ...     return np.sqrt(x)
      >>> def clipped_sqrt_fwd(x):
      ...     out = np.sqrt(x)
      ...     return out, out
      >>> def clipped_sqrt_bwd(out, g):
      ...     return (g / (2.0 * np.maximum(out, 1e-3)),)
      >>> clipped_sqrt.defvjp(clipped_sqrt_fwd, clipped_sqrt_bwd)
      >>> float(pullback.grad(clipped_sqrt)(0.0))
      500.0
    """

    def defvjp(fwd, bwd):
        fn.__pullback_vjp__ = (fn, fwd, bwd)

    fn.defvjp = defvjp
    return fn


def vjp_of(fn):
    """`(fwd, bwd)` of a function decorated with `custom_vjp`, or None (also for a
    wrapper that copied the attributes of such a function)."""
    found = getattr(fn, "__pullback_vjp__", None)
    return found[1:] if found is not None and found[0] is fn else None


def describe(fn):
    """What `pullback.source` shows for `fn`: its hand-written forward and backward."""
    fwd, bwd = vjp_of(fn)
    header = (f"# {fn.__qualname__} has a hand-written derivative (pullback.custom_vjp):\n"
              f"# calls run {fwd.__qualname__}, pullbacks {bwd.__qualname__}.\n")
    return header + "\n".join(textwrap.dedent(inspect.getsource(f)) for f in (fwd, bwd))


def forward_of(fn):
    """The forward function of `fn`, which has a hand-written derivative."""
    fwd, bwd = vjp_of(fn)

    def custom_fwd(*args):
        return custom_forward(fwd, bwd, *args)

    return custom_fwd


def custom_forward(fwd, bwd, *args):
    """`(value, pullback)` of a call of a function with a hand-written derivative."""
    out, residuals = fwd(*args)

    def custom_pullback(g):
        cotangents = bwd(residuals, concrete(g))
        check_cotangents(bwd, cotangents, len(args))
        return (ZERO, *cotangents)

    return out, custom_pullback


def check_cotangents(bwd, cotangents, count):
    """Refuse a backward function that does not return one cotangent per argument."""
    if not isinstance(cotangents, tuple) or len(cotangents) != count:
        raise TypeError(f"{bwd.__qualname__} must return a tuple of {count} cotangent(s), one "
                        f"per argument; it returned {cotangents!r}")
