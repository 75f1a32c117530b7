"""Hand-written derivatives for Python functions: `custom_vjp` and `custom_jvp`.

A function decorated with `custom_vjp` and given a forward and a backward
function with `defvjp` is not transformed where it is called: the caller's
forward runs `fwd(*args) -> (out, residuals)` and its pullback runs
`bwd(residuals, g) -> (one cotangent per argument)`. This is for derivatives
that are more stable or cheaper than the transformed code (a log-sum-exp, an
implicit function, a fixed point). `fwd` and `bwd` are ordinary Python that
pullback transforms in turn, so their derivatives, and grad of grad, work.

A function decorated with `custom_jvp` and given `rule(primals, tangents) ->
(out, tangent_out)` with `defjvp` runs the rule in forward mode; in reverse mode
its pullback is the transpose of the rule's tangent map, which pullback's own
reverse mode finds (`dispatch.custom_jvp_forward`). A `custom_vjp` function in
forward mode is the other way round (`dispatch.custom_tangent`).
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


def custom_jvp(fn):
    """Mark `fn` as having a hand-written derivative in forward mode, given with
    `fn.defjvp(rule)`.

    `rule(primals, tangents)` returns `(fn(*primals), tangent)`: `primals` and
    `tangents` are tuples, one item per argument (a tangent is an array of zeros
    where the argument has none), and the tangent must be linear in `tangents`.
    Reverse mode transposes it. Calling `fn` still runs `fn`.

    Example:
      >>> import numpy as np, pullback
      >>> @pullback.custom_jvp
      ... def safe_log1p(x):
      ...     return np.log1p(x)
      >>> def safe_log1p_jvp(primals, tangents):
      ...     (x,), (t,) = primals, tangents
      ...     return np.log1p(x), t / (1.0 + x)
      >>> safe_log1p.defjvp(safe_log1p_jvp)
      >>> [float(v) for v in pullback.jvp(safe_log1p, (1.0,), (2.0,))]
      [0.6931471805599453, 1.0]
      >>> float(pullback.grad(safe_log1p)(1.0))
      0.5
    """

    def defjvp(rule):
        fn.__pullback_jvp__ = (fn, rule)

    fn.defjvp = defjvp
    return fn


def jvp_of(fn):
    """The rule of a function decorated with `custom_jvp`, or None."""
    found = getattr(fn, "__pullback_jvp__", None)
    return found[1] if found is not None and found[0] is fn else None


def is_custom(fn):
    """Whether `fn` has a hand-written derivative (`custom_vjp` or `custom_jvp`)."""
    return vjp_of(fn) is not None or jvp_of(fn) is not None


def vjp_of(fn):
    """`(fwd, bwd)` of a function decorated with `custom_vjp`, or None (also for a
    wrapper that copied the attributes of such a function)."""
    found = getattr(fn, "__pullback_vjp__", None)
    return found[1:] if found is not None and found[0] is fn else None


def describe(fn):
    """What `pullback.source` shows for `fn`: its hand-written forward and backward, or
    its rule in forward mode."""
    rule = jvp_of(fn)
    if rule is not None:
        return (f"# {fn.__qualname__} has a hand-written derivative (pullback.custom_jvp): "
                f"{rule.__qualname__}.\n" + textwrap.dedent(inspect.getsource(rule)))
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
