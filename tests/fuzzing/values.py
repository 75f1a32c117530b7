"""The values programs take and return: flattened, compared by structure, drawn at random."""


import dataclasses

import numpy as np


class Invalid(Exception):
    """A program's `f` returns what is not a finite float, float array or container of them."""



# -- values: flattening, structure, random cotangents --------------------------


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_dataclass(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def _children(x):
    """The parts of a container, in a fixed order, or None for a leaf."""
    if _is_dataclass(x):
        return [getattr(x, f.name) for f in dataclasses.fields(x)]
    if isinstance(x, (tuple, list)):
        return list(x)
    if isinstance(x, dict):
        return [x[k] for k in sorted(x, key=repr)]
    return None


def _rebuild(x, children):
    """A container like `x` holding `children`."""
    if _is_dataclass(x):
        return type(x)(*children)
    if _is_namedtuple(x):
        return type(x)(*children)
    if isinstance(x, (tuple, list)):
        return type(x)(children)
    return dict(zip(sorted(x, key=repr), children))


def _is_float(x):
    return isinstance(x, (float, np.floating)) or (
        isinstance(x, np.ndarray) and x.dtype.kind == "f")


def flatten(x, strict=False):
    """The float leaves of `x` (floats, float arrays, in containers) as one float64 vector.
    Other leaves are skipped, or raise Invalid when `strict`."""
    children = _children(x)
    if children is not None:
        parts = [flatten(c, strict) for c in children]
        return np.concatenate(parts) if parts else np.zeros(0)
    if _is_float(x):
        return np.ravel(np.asarray(x, dtype=np.float64))
    if strict:
        raise Invalid(f"not a float: {x!r}")
    return np.zeros(0)


def unflatten(template, theta):
    """`template` with its float leaves replaced, in order, by the values of `theta`."""
    position = 0

    def build(x):
        nonlocal position
        children = _children(x)
        if children is not None:
            return _rebuild(x, [build(c) for c in children])
        if not _is_float(x):
            return x
        size = np.size(x)
        values = theta[position:position + size]
        position += size
        if isinstance(x, np.ndarray):
            return values.reshape(x.shape).copy()
        return type(x)(values[0])

    return build(template)


def describe(x):
    """The structure of `x`, to compare a gradient with its argument: types, shapes, keys."""
    children = _children(x)
    if isinstance(x, np.ndarray):
        return f"array{x.shape}:{x.dtype}"
    if isinstance(x, (float, np.floating)):
        return "float"
    if children is None:
        return type(x).__name__
    inner = ", ".join(describe(c) for c in children)
    if isinstance(x, dict):
        inner = ", ".join(f"{k!r}: {describe(x[k])}" for k in sorted(x, key=repr))
    return f"{type(x).__name__}({inner})"


def random_like(x, rng):
    """A random value with the structure of `x`: a cotangent for it."""
    return unflatten(x, rng.standard_normal(flatten(x).size))


def literal(x, digits=None):
    """Python source that builds `x` (floats, arrays, records and containers of them): exact,
    or rounded to `digits` significant digits, for reading."""
    if isinstance(x, np.ndarray):
        if digits is None:
            return f"np.array({x.tolist()!r})"
        with np.printoptions(precision=digits, linewidth=10**6, threshold=10**6):
            return f"np.array({np.array2string(x, separator=', ')})"
    if isinstance(x, (float, np.floating)):
        return repr(float(x) if digits is None else float(f"{float(x):.{digits}g}"))
    children = _children(x)
    if children is None:
        return repr(x)
    items = ", ".join(literal(c, digits) for c in children)
    if _is_dataclass(x) or _is_namedtuple(x):
        return f"{type(x).__name__}({items})"
    if isinstance(x, dict):
        pairs = (f"{k!r}: {literal(x[k], digits)}" for k in sorted(x, key=repr))
        return "{" + ", ".join(pairs) + "}"
    return f"[{items}]" if isinstance(x, list) else f"({items}{',' if len(children) == 1 else ''})"


def is_scalar(x):
    """Whether `x` is a real scalar: what `pullback.grad` differentiates."""
    return isinstance(x, (float, np.floating)) or (isinstance(x, np.ndarray) and x.ndim == 0)
