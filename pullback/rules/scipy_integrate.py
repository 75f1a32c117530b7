"""scipy.integrate's `odeint` and `solve_ivp`, by the adjoint method, registered when the
program imports scipy.integrate (`pullback/rules/__init__.py`, `SCIPY_FAMILIES`).

`odeint(func, y0, t, args=(...))` is differentiable in `y0`, `t` and `args` (floats and
arrays, and tuples, lists and dicts of them), as autograd's is;
`solve_ivp(fun, t_span, y0, t_eval=..., args=(...))` in
`y0`, `args`, `t_eval` and `t_span`, its result's `y` carrying the derivative (the
times the solver chooses without `t_eval` are constants, but the last). Their derivative integrates
the adjoint system backwards from each output time to the one before (Pontryagin's
method, as autograd and JAX do), with the same solver and tolerances:

    d/ds [y, a, a_t, a_args] = [f(y, s), -a^T df/dy, -a^T df/ds, -a^T df/dargs]

started from the solution at `t[i]` with `a` the cotangent gathered so far; the vjp
of the right-hand side there is pullback's own (`dispatch.forward`), so it may be any
function pullback differentiates. The cotangent of an output time `t[i]` is
`g[i] . f(y[i], t[i])`.

The right-hand side's own free variables are constants here: one that closes over a
differentiable value is refused where the solver is called (pass the value in
`args`). The backward calls the solver again, on the adjoint system, so second
derivatives go through the same rule.
"""

import dataclasses

import numpy as np
import scipy.integrate

from pullback.rules.registry import declare, implemented_by, nondifferentiable
from pullback.runtime import cotangents, dispatch
from pullback.runtime.cotangents import ZERO
from pullback.runtime.custom import custom_vjp

_CLOSURE = ("its free variables are constants to the solver's derivative: pass the "
            "differentiable values they hold in args=(...) instead")


@implemented_by(scipy.integrate.odeint)
def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """`scipy.integrate.odeint`, differentiable in `y0`, `t` and `args` (its parameters
    spelled out, so that a call with keywords is compiled with its caller)."""
    if full_output:
        raise ValueError("pullback differentiates odeint(..., full_output=0) only")
    options = {"Dfun": Dfun, "col_deriv": col_deriv, "ml": ml, "mu": mu, "rtol": rtol,
               "atol": atol, "tcrit": tcrit, "h0": h0, "hmax": hmax, "hmin": hmin,
               "ixpr": ixpr, "mxstep": mxstep, "mxhnil": mxhnil, "mxordn": mxordn,
               "mxords": mxords, "printmessg": printmessg}
    ordered = func if not tfirst else (lambda y, s, *values: func(s, y, *values))
    return integrated(ordered, y0, t, tuple(args), options)


@custom_vjp
def integrated(func, y0, t, args, options):
    """`odeint(func, y0, t, args=args, **options)`, with its adjoint derivative."""
    return scipy.integrate.odeint(func, y0, t, args=args, **options)


def integrated_fwd(func, y0, t, args, options):
    ys = scipy.integrate.odeint(func, y0, t, args=args, **options)
    return ys, (func, y0, ys, t, args, options)


def integrated_bwd(residuals, g):
    func, y0, ys, t, args, options = residuals
    g = np.reshape(cotangents.materialize(g, ys), np.shape(ys))
    kept = {k: options[k] for k in ("rtol", "atol", "hmax", "hmin", "mxstep", "mxordn",
                                    "mxords")}

    def segment(dynamics, start, begin, end, flat_args):
        return scipy.integrate.odeint(dynamics, start, np.stack([begin, end]),
                                      args=(flat_args,), **kept)[1]

    dy0, dt, dargs = adjoint(func, ys, t, g, args, segment)
    return (ZERO, np.reshape(dy0, np.shape(y0)), dt, dargs, ZERO)


integrated.defvjp(integrated_fwd, integrated_bwd)
declare(integrated, refused={"func": _CLOSURE})


@dataclasses.dataclass
class IvpResult:
    """What `solve_ivp` returns, as a record whose `y` carries the derivative."""

    t: np.ndarray
    y: np.ndarray
    status: int
    message: str
    success: bool
    nfev: int


@implemented_by(scipy.integrate.solve_ivp)
def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, rtol=1e-3, atol=1e-6, max_step=np.inf,
              first_step=None):
    """`scipy.integrate.solve_ivp`, differentiable in `y0` and `args`: `sol.y` and
    `sol.t` as SciPy gives them, in a record (its parameters spelled out, so that a call
    with keywords is compiled with its caller)."""
    if dense_output or events is not None:
        raise ValueError("pullback differentiates solve_ivp without dense_output or events")
    options = {"method": method, "vectorized": vectorized, "rtol": rtol, "atol": atol,
               "max_step": max_step, "first_step": first_step}
    ordered = lambda y, s, *values: fun(s, y, *values)  # noqa: E731
    times, status, message, nfev = ivp_outline(fun, t_span, y0, t_eval, args, options)
    ys = solved(ordered, y0, t_span, t_eval, tuple(args or ()), options)
    return IvpResult(times, ys, status, message, status >= 0, nfev)


def ivp_outline(fun, t_span, y0, t_eval, args, options):
    """`solve_ivp`'s times, status, message and count of evaluations (constants)."""
    sol = _solve_ivp(fun, t_span, y0, t_eval, args, options)
    return sol.t, sol.status, sol.message, sol.nfev


nondifferentiable(ivp_outline)


@custom_vjp
def solved(func, y0, t_span, t_eval, args, options):
    """`solve_ivp(...).y`, with its adjoint derivative (`func` takes `y` first)."""
    return _solve_ivp(lambda s, y, *values: func(y, s, *values), t_span, y0, t_eval, args,
                      options).y


def solved_fwd(func, y0, t_span, t_eval, args, options):
    sol = _solve_ivp(lambda s, y, *values: func(y, s, *values), t_span, y0, t_eval, args,
                     options)
    return sol.y, (func, y0, sol.y, output_times(sol.t, t_span, t_eval), t_span, t_eval,
                   args, options)


def output_times(times, t_span, t_eval):
    """The times of `solve_ivp`'s outputs, `times`, as functions of the arguments, for
    derivatives of the derivative: `t_eval`, or the solver's, from `t_span[0]` to
    `t_span[1]`."""
    if t_eval is not None:
        return np.asarray(t_eval) + 0.0
    inner = times[1:-1]
    return np.concatenate([np.reshape(t_span[0], (1,)), inner, np.reshape(t_span[1], (1,))])


def solved_bwd(residuals, g):
    func, y0, ys, times, t_span, t_eval, args, options = residuals
    g = np.reshape(cotangents.materialize(g, ys), np.shape(ys)).T
    rows = ys.T
    prepended = times[0] != t_span[0]
    if prepended:  # the solution starts before the first output
        rows = np.concatenate([np.reshape(y0, (1, -1)), rows])
        g = np.concatenate([np.zeros((1, np.size(y0))), g])
        times = np.concatenate([np.reshape(t_span[0], (1,)), times])

    def segment(dynamics, start, begin, end, flat_args):
        return _solve_ivp(lambda s, y, fa: dynamics(y, s, fa), (begin, end), start, None,
                          (flat_args,), options).y[:, -1]

    dy0, dts, dargs = adjoint(func, rows, times, g, args, segment)
    dt_span, dt_eval = span_and_output_times(dts, prepended, t_eval is None,
                                             np.dot(g[0], func(rows[0], times[0], *args)))
    return (ZERO, np.reshape(dy0, np.shape(y0)), dt_span, dt_eval, dargs, ZERO)


def span_and_output_times(dts, prepended, solver_times, first):
    """The cotangents of `t_span` and `t_eval` from those `dts` of the times the adjoint
    went through: `t_span[0]` first (`prepended` when no output is there), then the
    outputs; `first` is the share of the first output in the cotangent of the start
    when they are the same time. Times the solver chose (`solver_times`, no `t_eval`)
    are constants, but the last, `t_span[1]`."""
    if solver_times:
        return np.stack([dts[0], dts[-1]]), ZERO
    if prepended:
        return np.stack([dts[0], 0.0]), dts[1:]
    return np.stack([dts[0] - first, 0.0]), np.concatenate([np.reshape(first, (1,)), dts[1:]])


solved.defvjp(solved_fwd, solved_bwd)
declare(solved, refused={"func": _CLOSURE})


def _solve_ivp(fun, t_span, y0, t_eval, args, options):
    return scipy.integrate.solve_ivp(fun, t_span, y0, t_eval=t_eval, args=args or None,
                                     **options)


def adjoint(func, ys, t, g, args, segment):
    """The cotangents of `y0`, of the output times `t` and of `args`, given those `g` of
    the solution's rows `ys` at `t`; `segment(dynamics, start, t0, t1, flat_args)`
    integrates the adjoint system from `t0` to `t1`."""
    size = np.shape(ys)[1]
    layout = _layout(args)
    dynamics = adjoint_dynamics(func, size, layout)
    a = g[-1]
    a_t0 = 0.0
    a_args = np.zeros(np.size(flat(args)))
    dts = []
    for i in range(len(t) - 1, 0, -1):
        dt = np.dot(g[i], func(ys[i], t[i], *args))
        dts.append(dt)
        start = np.concatenate([ys[i], a, np.reshape(a_t0 - dt, (1,)), a_args])
        state = segment(dynamics, start, t[i], t[i - 1], flat(args))
        a = state[size:2 * size] + g[i - 1]
        a_t0 = state[2 * size]
        a_args = state[2 * size + 1:]
    dts.append(a_t0)
    return a, np.stack(dts[::-1]), unflat(a_args, layout)


def adjoint_dynamics(func, size, layout):
    """The adjoint system of `dy/ds = func(y, s, *args)`: the state, its cotangent, and
    the cotangents of the time and of `args` (of `layout`, flattened as `flat` does)."""

    def dynamics(state, s, flat_args):
        y, a = state[:size], state[size:2 * size]
        values = unflat(flat_args, layout)
        dy, back = dispatch.forward(func, y, s, *values)
        _, dy_ct, ds_ct, *value_cts = back(-a)
        value_cts = cotangents.materialize(tuple(value_cts), values)
        return np.concatenate([
            dy, cotangents.materialize(dy_ct, y),
            np.reshape(cotangents.materialize(ds_ct, s), (1,)),
            flat(tuple(np.zeros(np.shape(v)) if ct is ZERO else ct
                       for ct, v in zip(_leaves(value_cts), _leaves(values))))])

    return dynamics


def flat(values):
    """The floats and arrays in `values` (in its tuples, lists and dicts, at any depth),
    as one vector."""
    return np.concatenate([np.ravel(v) for v in _leaves(values)] + [np.zeros(0)])


@dataclasses.dataclass(frozen=True)
class _Shape:
    """The shape of a float's or an array's place in `args` (see `_layout`)."""

    shape: tuple


def _layout(values):
    """`values` with `_Shape`s in place of its floats and arrays: their structure, holding
    nothing to differentiate (the adjoint system's closure is a constant)."""
    if isinstance(values, (tuple, list, dict)):
        return _rebuilt_with(values, [_layout(item) for item in _items(values)])
    return _Shape(np.shape(values))


nondifferentiable(_layout)


def _items(value):
    return list(value.values()) if isinstance(value, dict) else list(value)


def _rebuilt_with(like, items):
    """A container of `like`'s type (and keys) holding `items`."""
    if isinstance(like, dict):
        return dict(zip(like.keys(), items))
    if hasattr(like, "_fields"):  # a named tuple
        return type(like)(*items)
    return items if isinstance(like, list) else tuple(items)


def _leaves(value):
    if isinstance(value, (tuple, list, dict)):
        return [leaf for item in _items(value) for leaf in _leaves(item)]
    return [value]


def unflat(vector, like):
    """`vector` cut into values of the shapes and structure of `like` (`flat`'s inverse; a
    number is a float)."""
    return _rebuilt(vector, like, 0)[0]


def _rebuilt(vector, like, start):
    """The value shaped like `like` read from `vector` at `start`, and where it ends."""
    if isinstance(like, (tuple, list, dict)):
        items = []
        for item in _items(like):
            value, start = _rebuilt(vector, item, start)
            items.append(value)
        return _rebuilt_with(like, items), start
    shape = like.shape
    size = int(np.prod(shape))
    part = vector[start:start + size]
    return (np.reshape(part, shape) if shape else part[0]), start + size
