"""The public entry points: vjp, grad, value_and_grad, differentiable, source."""

import functools
import numbers

import numpy as np

from . import anf, calls, emit, kinds, parse, rules, transform
from .cotangents import is_differentiable, materialize

_STAGES = ("anf", "raw", "optimized")


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
    fn = _function(f)
    for i, arg in enumerate(args):
        _check_supported(fn, i, arg)
    transform.new_epoch()
    forward = transform.forward_function(fn, transform.param_kinds(fn, args, {}))
    out, pullback = forward(*args)

    signature = calls.signature(fn)

    def back(ct):
        cts = calls.by_argument(signature, args, {}, pullback(ct))
        return tuple(materialize(c, a) for c, a in zip(cts[1:], args))

    return out, back


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
    fn = _function(f)
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    @functools.wraps(fn)
    def value_and_gradient(*args, **kwargs):
        names = _argument_names(fn, args, positions)
        _check_differentiable(fn, args, positions)
        param_kinds = transform.param_kinds(fn, args, kwargs, active=set(names))
        transform.new_epoch()
        forward = transform.forward_function(fn, param_kinds)
        out, pullback = forward(*args, **kwargs)
        cts = calls.by_argument(calls.signature(fn), args, kwargs, pullback(_seed(fn, out)))
        grads = tuple(materialize(cts[1 + i], args[i]) for i in positions)
        return out, grads[0] if isinstance(argnums, int) else grads

    return value_and_gradient


def grad(f, argnums=0):
    """Make a function returning the gradient of scalar-valued `f`.

    Args:
      f: a Python function returning a scalar.
      argnums: the position of the argument to differentiate, or a tuple of
        positions.

    Returns:
      A function taking `f`'s arguments and returning the gradient with
      respect to argument `argnums` (a tuple of gradients for a tuple).

    Example:
      >>> import numpy as np, pullback
      >>> pullback.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
      array([2., 4.])
    """
    value_and_gradient = value_and_grad(f, argnums)

    @functools.wraps(_function(f))
    def gradient(*args, **kwargs):
        return value_and_gradient(*args, **kwargs)[1]

    return gradient


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


def source(f, *args, stage="optimized", argnums=None):
    """The derivative code pullback generates for `f`, as Python source.

    Args:
      f: a Python function.
      *args: example arguments; the code is generated for their kinds. Without
        them, parameters annotated `float`, `int` or `np.ndarray` get those
        kinds and the others are taken to be arrays.
      stage: "optimized" (what runs), "raw" (before optimisation) or "anf"
        (the function in A-normal form).
      argnums: positions of the parameters to differentiate (default: all).

    Returns:
      The source text.
    """
    if stage not in _STAGES:
        raise ValueError(f"stage must be one of {_STAGES}, not {stage!r}")
    fn = _function(f)
    param_kinds = _display_kinds(fn, args, argnums)
    transform.new_epoch()
    transform.refresh(fn, param_kinds)
    derivative = transform.derivative(fn, param_kinds)
    if stage == "optimized":
        return derivative.text
    tree = derivative.anf if stage == "anf" else derivative.raw
    return "\n".join(emit.render(tree, derivative.origin)[0]) + "\n"


def _display_kinds(fn, args, argnums):
    params = list(calls.signature(fn).parameters)
    positions = range(len(params)) if argnums is None else (
        (argnums,) if isinstance(argnums, int) else argnums)
    active = {params[i] for i in positions}
    if args:
        return transform.param_kinds(fn, args, {}, active)
    _, origin = parse.parse_function(fn)
    return {
        p: kinds.of_annotation(_evaluate(origin.annotations.get(p), origin), kinds.ARRAY)
        if p in active else kinds.CONST
        for p in params
    }


def _evaluate(annotation, origin):
    if annotation is None:
        return None
    text = emit.unparse(annotation)
    try:
        return eval(text, dict(origin.globals))
    except (NameError, AttributeError, SyntaxError, TypeError):
        return None


def _function(f):
    """The Python function pullback transforms for `f` (a primitive gets a wrapper)."""
    if not callable(f):
        raise TypeError(f"expected a function, got {type(f).__name__}")
    if rules.rule_for(f) is not None:
        return transform.primitive_wrapper(f)
    return parse.python_function(f)


def _argument_names(fn, args, positions):
    params = list(calls.signature(fn).parameters)
    for i in positions:
        if not 0 <= i < len(args):
            raise ValueError(f"argnums {i} is out of range: {fn.__qualname__} was called "
                             f"with {len(args)} positional arguments")
    return [params[i] for i in positions]


def _check_supported(fn, position, value):
    """Refuse an argument whose differentiable parts pullback cannot see."""
    if isinstance(value, (tuple, list)):
        for item in value:
            _check_supported(fn, position, item)
    elif isinstance(value, dict):
        for item in value.values():
            _check_supported(fn, position, item)
    elif not isinstance(value, _LEAF_TYPES) and not callable(value):
        raise TypeError(
            f"argument {position} of {fn.__qualname__} contains a {type(value).__name__}: "
            "pullback differentiates floats, complex numbers, NumPy arrays and tuples, lists "
            "and dicts of them; objects with attributes are not supported yet"
        )


_LEAF_TYPES = (numbers.Number, np.ndarray, np.generic, str, bytes, type(None), slice, range,
               type(Ellipsis))


def _check_differentiable(fn, args, positions):
    for i in positions:
        _check_supported(fn, i, args[i])
        if not kinds.of_value(args[i]).active:
            raise TypeError(
                f"grad of {fn.__qualname__} with respect to argument {i}, of type "
                f"{type(args[i]).__name__}: only floats, complex numbers, inexact arrays "
                "and containers of them have gradients (pullback.vjp gives ZERO for others)"
            )


def _seed(fn, out):
    """The cotangent 1 for a scalar output, or a TypeError pointing to vjp."""
    if isinstance(out, np.ndarray) and out.shape == () and is_differentiable(out):
        return np.ones((), dtype=out.dtype)
    if isinstance(out, (float, np.floating)) or (
        isinstance(out, numbers.Real) and not isinstance(out, (bool, int, np.integer))
    ):
        return type(out)(1.0)
    shape = f" of shape {np.shape(out)}" if isinstance(out, np.ndarray) else ""
    raise TypeError(
        f"grad requires {fn.__qualname__} to return a real scalar, but it returned "
        f"{type(out).__name__}{shape}; use pullback.vjp for non-scalar outputs"
    )
