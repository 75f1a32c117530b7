"""The public entry points: vjp, grad, value_and_grad, differentiable, source."""

import functools
import numbers

import numpy as np

from .compiler import emit, transform
from .compiler.analysis import kinds
from .compiler.frontend import anf, parse
from .compiler.syntax import nodes
from .rules import registry
from .runtime import (
    calls,
    cotangents,
    custom,
    debugging,
    dispatch,
    introspection,
    records,
)
from .runtime import tangents as tangents_
from .runtime.cotangents import ZERO, is_differentiable

_STAGES = ("anf", "raw", "optimized")
_MODES = (transform.REVERSE, transform.FORWARD)


def vjp(f, *args):
    """Evaluate `f(*args)` and return its value with its pullback.

    Args:
      f: a Python function of positional arguments: floats, NumPy arrays, and
        tuples, lists and dicts of them (ints, bools and strings are allowed
        and are constants).
      *args: the arguments.

    Returns:
      `(out, back)`: `out = f(*args)`, and `back(ct)`, which maps a cotangent
      `ct` shaped like `out` to a tuple with one cotangent per argument, each
      shaped like its argument (`pullback.ZERO` for non-differentiable ones).

    Example:
      >>> import pullback
      >>> out, back = pullback.vjp(lambda a, b: a * b, 3.0, 4.0)
      >>> out, back(1.0)
      (12.0, (4.0, 3.0))
    """
    fn = function_of(f)
    check_arguments(fn, args)
    transform.new_epoch()
    parameters = set(calls.signature(fn).parameters)
    forward = transform.forward_function(fn, transform.param_kinds(fn, args, {}, parameters))
    out, pullback = debugging.run_generated(forward, *args)
    return out, back_to_arguments(fn, args, pullback)


def jvp(f, primals, tangents):
    """Evaluate `f(*primals)` and its derivative in the direction `tangents` (forward mode).

    Args:
      f: a Python function of positional arguments.
      primals: a tuple (or list) of the arguments.
      tangents: a tuple with one tangent per argument, shaped like it (floats, arrays,
        and tuples, lists, dicts and records of them); None for an argument without
        one (an int, a string, or a value held fixed).

    Returns:
      `(out, tangent_out)`: `out = f(*primals)`, and the derivative of `f` at `primals`
      applied to `tangents`, shaped like `out`.

    Example:
      >>> import pullback
      >>> pullback.jvp(lambda a, b: a * b, (3.0, 4.0), (1.0, 0.0))
      (12.0, 4.0)
    """
    fn = function_of(f)
    check_tangents(fn, primals, tangents)
    primals = tuple(primals)
    dots = tuple([tangents_.internal(t, x) for t, x in zip(tangents, primals)])
    transform.new_epoch()
    dots = dispatch.parameter_tangents(fn, primals, {}, (ZERO, *dots))
    derivative = transform.jvp_function(fn, transform.tangent_kinds(fn, primals, {}, dots))
    out, out_dot = debugging.run_generated(derivative, dots, *primals)
    return out, tangents_.external(out_dot, out)


def check_tangents(fn, primals, tangents):
    """Refuse the arguments of `jvp(fn, primals, tangents)` when they do not fit: a
    TypeError (see `tangents.internal` for each tangent)."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp of {fn.__qualname__}: {len(primals)} primals but "
                        f"{len(tangents)} tangents; give one tangent per argument (None "
                        "for none)")
    check_arguments(fn, primals)
    for i, (t, x) in enumerate(zip(tangents, primals)):
        tangents_.internal(t, x, f"the tangent of argument {i}")


def linearize(f, *primals):
    """Evaluate `f(*primals)` once and return its value with its derivative there, a
    function of tangents alone.

    The derivative is found from the pullback (`vjp`, which keeps the values `f`
    computed) by transposing it, itself by reverse mode, once: each call of
    `f_jvp` runs that transpose, never `f`.

    Returns:
      `(out, f_jvp)`: `f_jvp(*tangents)`, one tangent per argument (None for none),
      gives `jvp(f, primals, tangents)[1]`.

    Example:
      >>> import pullback
      >>> out, f_jvp = pullback.linearize(lambda a, b: a * b, 3.0, 4.0)
      >>> out, f_jvp(1.0, 0.0), f_jvp(0.0, 1.0)
      (12.0, 4.0, 3.0)
    """
    fn = function_of(f)
    out, back = vjp(fn, *primals)
    _, transpose = vjp(back, tangents_.zeros_of(out))

    def f_jvp(*tangents):
        check_tangents(fn, primals, tangents)
        dots = tuple(tangents_.internal(t, x) for t, x in zip(tangents, primals))
        return tangents_.external(transpose(dots)[0], out)

    named_after(f_jvp, fn)
    return out, f_jvp


def jacfwd(f, argnums=0):
    """Make a function returning the Jacobian of `f` by forward mode: one `jvp` per
    element of the arguments differentiated. Same results and shapes as `jacobian`.

    Example:
      >>> import numpy as np, pullback
      >>> pullback.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
      array([[2., 0.],
             [0., 4.]])
    """
    fn = function_of(f)
    positions = argnums_tuple(argnums)

    def jacobian_of(*args, **kwargs):
        blocks = []
        for i in positions:
            columns = []
            for basis in _basis(args[i]):
                dots = [None] * len(args)
                dots[i] = basis
                out, column = jvp(lambda *xs: fn(*xs, **kwargs), args, dots)
                columns.append(np.asarray(column, dtype=float))
            block = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(out) + (0,))
            blocks.append(np.reshape(block, np.shape(out) + np.shape(args[i])))
        return blocks[0] if isinstance(argnums, int) else tuple(blocks)

    named_after(jacobian_of, fn)
    return jacobian_of


def back_to_arguments(fn, args, pullback):
    """The `back` of `vjp`: one materialised cotangent per argument of `fn`."""
    signature = calls.signature(fn)

    def back(ct):
        cts = calls.by_argument(signature, args, {},
                                debugging.run_generated(pullback, records.internal(ct)))
        return cotangents.materialize_all(cts[1:], args, held=ct)

    return back


def value_and_grad(f, argnums=0):
    """Make a function returning `f`'s value and its gradient.

    Args:
      f: a Python function returning a scalar (a float, a NumPy scalar or a
        0-d array).
      argnums: the position of the argument to differentiate, or a tuple of
        positions.

    Returns:
      A function taking `f`'s arguments (keyword arguments are passed through
      as constants) and returning `(value, gradient)`; the gradient is shaped
      like the argument, or is a tuple of those when `argnums` is a tuple.

    Example:
      >>> import pullback
      >>> pullback.value_and_grad(lambda x: x ** 2)(3.0)
      (9.0, 6.0)
    """
    fn = function_of(f)
    positions = argnums_tuple(argnums)

    def value_and_gradient(*args, **kwargs):
        active, fixed = check_gradient_call(fn, args, kwargs, positions)
        param_kinds = transform.param_kinds(fn, args, kwargs, active)
        transform.new_epoch()
        forward = transform.forward_function(fn, param_kinds)
        out, cts = debugging.run_holding_constant(held_constant(fn, args, kwargs, positions,
                                                                fixed),
                                                  forward_and_back, fn, forward, args, kwargs)
        cts = calls.by_argument(calls.signature(fn), args, kwargs, cts)
        grads = cotangents.materialize_all(calls.pick(cts[1:], positions),
                                           calls.pick(args, positions), held=arrays_of(fixed))
        return out, grads[0] if isinstance(argnums, int) else grads

    named_after(value_and_gradient, fn)
    return value_and_gradient


def forward_and_back(fn, forward, args, kwargs):
    """`(out, cts)`: `fn`'s value, from its generated `forward`, and the cotangents its
    pullback gives for the seed 1. Both run in one call of `run_generated`, which
    pauses the cycle collector: it would otherwise walk the pullback's closures
    between the two."""
    out, pullback = forward(*args, **kwargs)
    return out, pullback(seed(fn, out))


def grad(f, argnums=0):
    """Make a function returning the gradient of scalar-valued `f`.

    Args:
      f: a Python function returning a scalar.
      argnums: the position of the argument to differentiate, or a tuple of
        positions.

    Returns:
      A function taking `f`'s arguments and returning the gradient with
      respect to argument `argnums` (a tuple of gradients for a tuple). It can
      itself be differentiated: `grad(grad(f))`.

    Example:
      >>> import numpy as np, pullback
      >>> pullback.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
      array([2., 4.])
    """
    value_and_gradient = value_and_grad(f, argnums)

    def gradient(*args, **kwargs):
        return value_and_gradient(*args, **kwargs)[1]

    named_after(gradient, function_of(f), argnums)
    return gradient


def jacobian(f, argnums=0):
    """Make a function returning the Jacobian of `f` (one reverse pass per output element).

    Args:
      f: a Python function returning a float or an array.
      argnums: the position of the argument (a float or an array), or a tuple.

    Returns:
      A function taking `f`'s arguments and returning an array of shape
      `out.shape + arg.shape` (a tuple of those when `argnums` is a tuple).

    Example:
      >>> import numpy as np, pullback
      >>> pullback.jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
      array([[2., 0.],
             [0., 4.]])
    """
    fn = function_of(f)
    positions = argnums_tuple(argnums)

    def jacobian_of(*args, **kwargs):
        out, back = vjp(lambda *xs: fn(*xs, **kwargs), *args)
        rows = [back(basis) for basis in _basis(out)]
        jacobians = tuple(_stack(rows, i, out, args[i]) for i in positions)
        return jacobians[0] if isinstance(argnums, int) else jacobians

    named_after(jacobian_of, fn)
    return jacobian_of


def hessian(f, argnums=0):
    """Make a function returning the Hessian of scalar-valued `f`: the Jacobian of its
    gradient, computed by reverse mode over reverse mode.

    Example:
      >>> import numpy as np, pullback
      >>> pullback.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 3.0]))
      array([[6., 2.],
             [2., 0.]])
    """
    return jacobian(grad(f, argnums), argnums)


def hvp(f, x, v):
    """The Hessian of scalar-valued `f` at `x` times `v`, by forward over reverse mode.

    Costs a constant factor of one evaluation of `f` (Pearlmutter and Siskind,
    section 5): the derivative of the gradient in the direction `v`, by `jvp`, which
    is faster than the pullback of the gradient applied to `v` (double reverse mode,
    the same numbers; `benchmarks/jvp.py` times both).

    Example:
      >>> import numpy as np, pullback
      >>> f = lambda p: 2 * p[0] ** 2 + 3 * p[0] * p[1] + 4 * p[1] ** 2
      >>> pullback.hvp(f, np.array([3.0, 4.0]), np.array([7.0, 8.0]))
      array([52., 85.])
    """
    return jvp(grad(f), (x,), (v,))[1]


def _basis(out):
    """The unit cotangents of `out`, one per element, in C order."""
    if not isinstance(out, np.ndarray):
        if not isinstance(out, (float, int, np.number)):
            raise TypeError(
                f"jacobian and hessian take functions whose result is a float or an array, "
                f"and for hessian whose differentiated argument is one too; this result "
                f"is a {type(out).__name__}: differentiate with respect to an array (pass "
                f"the weights as one), or use pullback.hvp for Hessian-vector products")
        return [type(out)(1.0)]
    units = []
    for index in np.ndindex(out.shape):
        unit = np.zeros(out.shape, dtype=out.dtype)
        unit[index] = 1.0
        units.append(unit)
    return units


def _stack(rows, position, out, arg):
    """The Jacobian block of argument `position` from the rows of all outputs."""
    block = np.array([np.asarray(row[position], dtype=float) for row in rows])
    return np.reshape(block, np.shape(out) + np.shape(arg))


def differentiable(fn):
    """Declare `fn` differentiable: it is checked now and still computes its value.

    The function's source is parsed and normalised at decoration time, so a
    construct pullback cannot differentiate raises `TransformError` where the
    function is defined rather than at the first gradient.

    Example:
      >>> import pullback
      >>> @pullback.differentiable
      ... def f(x):
      ...     return x * x
      >>> f(3.0), pullback.grad(f)(3.0)
      (9.0, 6.0)
    """
    tree, origin = parse.parse_function(fn)
    anf.to_anf(tree, origin)
    return fn


def source(f, *args, stage="optimized", argnums=None, optimize=True, mode="reverse"):
    """The derivative code pullback generates for `f`, as Python source.

    Args:
      f: a Python function. For `grad(g)` (or `grad(grad(g))`...) this is the
        code that differentiating it runs: the derivatives of `g`'s forward and
        pullback (and so on), that is, second-order (or higher) code.
      *args: example arguments; the code is generated for their kinds. Without
        them, parameters annotated `float`, `int` or `np.ndarray` get those
        kinds and the others are taken to be arrays.
      stage: "optimized" (what runs), "raw" (before optimisation) or "anf"
        (the function in A-normal form).
      argnums: positions of the parameters to differentiate (default: all).
      optimize: False shows the code before optimisation (as `stage="raw"`).
      mode: "reverse", the forward function with its pullback, or "forward", the
        derivative in forward mode (`jvp`'s tangent code). For `grad(g)`, "forward"
        shows forward over reverse: the tangent code of `g`'s forward and pullback.

    Returns:
      The source text.
    """
    if not optimize and stage == "optimized":
        stage = "raw"
    if stage not in _STAGES:
        raise ValueError(f"stage must be one of {_STAGES}, not {stage!r}")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, not {mode!r}")
    fn, order = function_of(f), 1
    while hasattr(fn, "__pullback_gradient_of__"):
        fn, argnums = fn.__pullback_gradient_of__
        order += 1
    if custom.is_custom(fn):
        return custom.describe(fn)
    functions = [(fn, _display_kinds(fn, args, argnums))]
    transform.new_epoch()
    for _ in range(order - 1):
        functions = [g for h, k in functions for g in transform.generated_functions(h, k)]
    return "\n".join(_stage_text(h, k, stage, mode) for h, k in functions)


def _stage_text(fn, param_kinds, stage, mode):
    transform.refresh(fn, param_kinds, mode)
    derivative = transform.derivative(fn, param_kinds, mode)
    if stage == "optimized":
        return derivative.text
    tree = derivative.anf if stage == "anf" else derivative.unoptimized()
    return "\n".join(emit.render(tree, derivative.origin)[0]) + "\n"


def _display_kinds(fn, args, argnums):
    params = list(calls.signature(fn).parameters)
    positions = range(len(params)) if argnums is None else argnums_tuple(argnums)
    active = {params[i] for i in positions}
    if args:  # with all the arguments active, a closure's cells are too, as when it runs
        return transform.param_kinds(fn, args, {}, None if argnums is None else active)
    _, origin = parse.parse_function(fn)
    return {
        p: kinds.of_annotation(_evaluate(origin.annotations.get(p), origin), kinds.ARRAY)
        if p in active else kinds.CONST
        for p in params
    }


def _evaluate(annotation, origin):
    if annotation is None:
        return None
    text = nodes.unparse(annotation)
    try:
        return eval(text, dict(origin.globals))
    except (NameError, AttributeError, SyntaxError, TypeError):
        return None


def function_of(f):
    """The Python function pullback transforms for `f` (a primitive gets a wrapper)."""
    if not callable(f):
        raise TypeError(f"expected a function, got {type(f).__name__}")
    if registry.rule_for(f) is not None:
        return transform.primitive_wrapper(f)
    return parse.python_function(f)


def named_after(wrapper, fn, argnums=None):
    """Give `wrapper` the name and docstring of `fn`; a gradient also records what it
    is the gradient of, for `source`."""
    functools.update_wrapper(wrapper, fn)
    if argnums is not None:
        wrapper.__pullback_gradient_of__ = (fn, argnums)


def argnums_tuple(argnums):
    """`argnums` as a tuple of positions."""
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def check_gradient_call(fn, args, kwargs, positions):
    """Check a call of `grad(fn)`; return the names of the parameters differentiated and
    what the arguments not differentiated hold (`fixed_leaves`)."""
    for i in positions:
        if not 0 <= i < len(args):
            raise ValueError(f"argnums {i} is out of range: {fn.__qualname__} was called "
                             f"with {len(args)} positional arguments")
        check_supported(fn, i, args[i])
        if not kinds.of_value(args[i]).active:
            raise TypeError(
                f"grad of {fn.__qualname__} with respect to argument {i}, of type "
                f"{type(args[i]).__name__}: only floats, real inexact arrays "
                "and containers of them have gradients (pullback.vjp gives ZERO for others)"
            )
    names = {calls.parameter_at(calls.signature(fn), i) for i in positions}
    return names, fixed_leaves(args, kwargs, positions)


def fixed_leaves(args, kwargs, positions):
    """The leaves (`records.leaves`) of each argument not differentiated, in its containers,
    records and closures, a list per argument: walked once a call, for `held_constant`,
    and for the gradients, which must not be one of their arrays (`arrays_of`)."""
    return [[arg] if type(arg) in _PLAIN else list(records.leaves(arg, into_closures=True))
            for arg in _not_differentiated(args, kwargs, positions)]


def arrays_of(fixed):
    """The arrays among the leaves `fixed` (`fixed_leaves`)."""
    return [leaf for leaves in fixed for leaf in leaves if type(leaf) is np.ndarray]


def _not_differentiated(args, kwargs, positions):
    return [arg for i, arg in enumerate(args) if i not in positions] + list(kwargs.values())


def read_data(fn):
    """The data `fn` reads from its closure cells and its module's globals (a model or a
    table that `lambda w: loss(w, table)` reads): containers, arrays and objects with
    fields."""
    module = fn.__globals__
    return [value for value in [*introspection.cell_values(fn), *(
        module[name] for name in fn.__code__.co_names if name in module)]
            if type(value) in (tuple, list, dict, np.ndarray) or records.is_record(value)]


def held_constant(fn, args, kwargs, positions, fixed):
    """What a call of `fn` with `args` holds constant (`runtime.constants`): the arrays
    among the arguments not differentiated (their leaves `fixed`), and those arguments
    that are containers or objects, but for those the differentiated arguments reach (in
    their closures too); and, when a call resolved at run time is first given one, the
    data `fn` reads from its closure and its globals (`read_data`), walked then. Calls
    resolved at run time take them as constants until a differentiation nested in the
    function starts, without walking them (a parser object holding a table of
    thousands of slices, passed to a method called in a loop, or read from a global).

    An array object that is one of these has a zero derivative wherever the function
    reads it: pullback never updates an argument in place.
    """
    others = _not_differentiated(args, kwargs, positions)
    data = read_data(fn)
    if not data and all(type(arg) in _PLAIN for arg in others):
        return frozenset()
    reached = {id(leaf) for i in positions for leaf in records.leaves(args[i], into_closures=True)}
    held = set()
    for arg, leaves in zip(others, fixed):
        held.update(id(leaf) for leaf in leaves if type(leaf) is np.ndarray
                    and id(leaf) not in reached)
        if type(arg) not in _PLAIN and type(arg) is not np.ndarray and not any(
                id(leaf) in reached for leaf in leaves):
            held.add(id(arg))
    if not data:
        return frozenset(held)
    return Held(held, {id(value): value for value in data}, reached)


class Held:
    """The ids of the values held constant (`ids`, a set), and values to hold when a
    call first asks about one (`pending`, by id): the data a function reads from its
    closure and its globals, walked only if a call resolved at run time is given it,
    and held, with its arrays, unless a differentiated argument is among its leaves
    (their ids `reached`)."""

    def __init__(self, ids, pending, reached):
        self.ids = ids
        self.pending = pending
        self.reached = reached

    def __contains__(self, key):
        if key in self.ids:
            return True
        value = self.pending.pop(key, None)
        if value is None:
            return False
        leaves = list(records.leaves(value, into_closures=True))
        if any(id(leaf) in self.reached for leaf in leaves):
            return False
        self.ids.add(key)
        self.ids.update(id(leaf) for leaf in leaves if type(leaf) is np.ndarray)
        return True


def check_arguments(fn, args):
    """Refuse arguments whose differentiable parts pullback cannot see."""
    for i, arg in enumerate(args):
        check_supported(fn, i, arg)


def check_supported(fn, position, value):
    """Refuse an argument whose differentiable parts pullback cannot see."""
    if type(value) in _PLAIN or type(value) is np.ndarray and value.dtype.kind == "f":
        return
    for leaf in records.leaves(value):
        if type(leaf) in _PLAIN:
            continue
        if isinstance(leaf, complex) or np.iscomplexobj(leaf) and isinstance(
                leaf, (np.ndarray, np.generic)):
            raise TypeError(
                f"argument {position} of {fn.__qualname__} is complex: pullback's derivative "
                "rules are written for real values (see docs/rules.md)")
        if not isinstance(leaf, _LEAF_TYPES) and not callable(leaf):
            raise TypeError(
                f"argument {position} of {fn.__qualname__} contains a "
                f"{type(leaf).__name__}: pullback differentiates floats, "
                "NumPy arrays, objects with attributes and tuples, lists and dicts of them")


_LEAF_TYPES = (numbers.Number, np.ndarray, np.generic, str, bytes, type(None), slice, range,
               type(Ellipsis))
_PLAIN = {int, float, bool, str, type(None)}


def seed(fn, out):
    """The cotangent 1 for a scalar output (or an array holding one number, as a flattened
    objective returns: shape `(1,)` or `(1, 1)`), or a TypeError pointing to vjp."""
    if isinstance(out, np.ndarray) and out.size == 1 and is_differentiable(out):
        return np.ones(out.shape, dtype=out.dtype)
    if isinstance(out, (float, np.floating)) or (
        isinstance(out, numbers.Real) and not isinstance(out, (bool, int, np.integer))
    ):
        return type(out)(1.0)
    shape = f" of shape {np.shape(out)}" if isinstance(out, np.ndarray) else ""
    raise TypeError(
        f"grad requires {fn.__qualname__} to return a real scalar, but it returned "
        f"{type(out).__name__}{shape}; use pullback.vjp for non-scalar outputs"
    )
