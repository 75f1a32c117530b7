"""Checking derivatives against finite differences.

`check_grads(f, args)` compares the derivatives of `f` with central finite
differences in a random direction: for random `v` (shaped like the arguments)
and `u` (shaped like the output), <u, J v> computed numerically must match
<J^T u, v> computed by the pullback (reverse mode) and <u, J v> computed by `jvp`
(forward mode). The project's own tests use it.
"""

import numpy as np

from . import api
from .runtime import records
from .runtime.cotangents import ZERO, is_differentiable


def check_grads(f, args, order=1, eps=1e-6, rtol=1e-5, atol=1e-6, seed=0, argnums=None,
                modes=None):
    """Assert that pullback's derivatives of `f` at `args` match finite differences.

    Args:
      f: a function of positional arguments (floats, arrays, containers).
      args: a tuple of arguments (or a single argument).
      order: the highest order checked: 1 checks the pullback (`vjp`) and the
        derivative in forward mode (`jvp`); 2 also checks the derivative of the
        pullback (grad of grad) and, for a scalar `f`, its derivative in forward mode
        (forward over reverse); and so on, in reverse mode.
      eps: the finite-difference step (in float64).
      rtol, atol: the tolerances of the comparison.
      seed: the seed of the random directions.
      argnums: the position, or a tuple of the positions, of the arguments the
        derivatives are taken in (all of them when None); the others stay as they are
        (an int count, a string key).
      modes: the modes checked at every order, "reverse", "forward" or both, in place
        of the choice above.

    Raises:
      AssertionError: naming `f`, the mode, the analytic and the numeric value.
    """
    args = args if isinstance(args, tuple) else (args,)
    if argnums is not None:
        argnums = api.argnums_tuple(argnums)
        f, args = of_arguments(f, args, argnums), tuple(args[i] for i in argnums)
    _check(f, args, order, (eps, rtol, atol), seed, modes, 1, None)


def _check(f, args, order, tolerances, seed, modes, level, scalar):
    """`check_grads` at derivative `level` of the function checked (`scalar`: whether it
    returns a scalar, once known)."""
    eps, rtol, atol = tolerances
    rng = np.random.default_rng(seed)
    out, back = api.vjp(f, *args)
    if scalar is None:
        scalar = isinstance(out, (float, np.floating)) or isinstance(out, np.ndarray) and (
            out.ndim == 0)
    u = _random_like(out, rng)
    direction = _random_like(args, rng)
    numeric = _numeric(f, args, u, direction, eps)
    default = ("reverse", "forward") if level == 1 or level == 2 and scalar else ("reverse",)
    if "reverse" in (modes or default):
        _compare(f, "pullback", _inner(back(u), direction), numeric, rtol, atol)
    if "forward" in (modes or default):
        dots = tuple(None if v is ZERO else v for v in direction)
        _, tangent = api.jvp(f, args, dots)
        _compare(f, "jvp", _inner(u, tangent), numeric, rtol, atol)
    if order > 1:
        _check(_pullback_of(f, u), args, order - 1, tolerances, seed + 1, modes, level + 1,
               scalar)


def of_arguments(f, args, argnums):
    """`f` as a function of its arguments at positions `argnums` alone, the others being
    those of `args`."""

    def of_arguments(*values):
        full = list(args)
        for i, value in zip(argnums, values):
            full[i] = value
        return f(*full)

    return of_arguments


def _pullback_of(f, u):
    """The function `x -> vjp(f, x)[1](u)`, whose derivative is `f`'s second."""

    def pullback_of(*xs):
        return api.vjp(f, *xs)[1](u)

    pullback_of.__qualname__ = f"pullback of {getattr(f, '__qualname__', f)}"
    return pullback_of


def _numeric(f, args, u, direction, eps):
    """<u, J v> by central differences along `direction`."""
    plus = f(*_step(args, direction, eps))
    minus = f(*_step(args, direction, -eps))
    return (_inner(u, plus) - _inner(u, minus)) / (2 * eps)


def _compare(f, how, analytic, numeric, rtol, atol):
    if not np.allclose(analytic, numeric, rtol=rtol, atol=atol):
        name = getattr(f, "__qualname__", repr(f))
        raise AssertionError(
            f"derivative of {name} does not match finite differences: "
            f"{how} gives {analytic!r}, finite differences {numeric!r} "
            f"(difference {analytic - numeric:.3g})"
        )


def _random_like(x, rng):
    """A random value shaped like `x` in its differentiable leaves, ZERO elsewhere."""
    if records.is_record(x):
        return records.rebuild(x, {k: _random_like(v, rng) for k, v in records.fields(x).items()})
    if isinstance(x, (tuple, list)):
        items = [_random_like(v, rng) for v in x]
        return items if isinstance(x, list) else tuple(items)
    if isinstance(x, dict):
        return {k: _random_like(v, rng) for k, v in x.items()}
    if not is_differentiable(x):
        return ZERO
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return type(x)(rng.standard_normal())
    return rng.standard_normal(np.shape(x)).astype(np.asarray(x).dtype)


def _step(x, v, eps):
    """`x + eps * v` on differentiable leaves."""
    if records.is_record(x):
        steps = records.fields(v)
        return records.rebuild(x, {k: _step(a, steps[k], eps)
                                   for k, a in records.fields(x).items()})
    if isinstance(x, (tuple, list)):
        items = [_step(a, b, eps) for a, b in zip(x, v)]
        return items if isinstance(x, list) else tuple(items)
    if isinstance(x, dict):
        return {k: _step(x[k], v[k], eps) for k in x}
    if v is ZERO:
        return x
    return x + eps * v


def _inner(a, b):
    """The sum of the products of the differentiable leaves of `a` and `b`."""
    if a is ZERO or b is ZERO:
        return 0.0
    if records.is_record(a):
        others = records.fields(b)
        return sum(_inner(v, others[k]) for k, v in records.fields(a).items())
    if isinstance(a, (tuple, list)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return sum(_inner(a[k], b[k]) for k in a)
    if not is_differentiable(a) and not is_differentiable(b):
        return 0.0
    return float(np.sum(np.asarray(a) * np.asarray(b)))
