"""Calling conventions: from a callee's parameters back to a call's arguments.

A transformed function's pullback returns the cotangent of the function (its
environment) followed by one per *parameter*: a `*args` parameter gets a
tuple, a `**kwargs` parameter a dict. A call site needs one per *argument* it
passed. `by_argument` does that mapping for calls resolved at run time and for
the public API; `split_cotangents` splits the result of a call written
`f(*args, **kwargs)` into the cotangents of `args` and `kwargs`.

A function value holds its closure cells and its default values, so its
cotangent is a tuple with one item per free variable (in `co_freevars` order)
and, when a default is differentiable, one per default after them
(`__defaults__`, then `__kwdefaults__`): `with_defaults` moves the cotangents
of the parameters a call left to their defaults there.
"""

import inspect

from .cotangents import ZERO, add
from .structures import repack

_SIGNATURES = {}

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def signature(fn):
    """`inspect.signature(fn)`, computed once per code object.

    Only the names and kinds of the parameters are used, which the code object
    fixes; a function's defaults may differ from the cached signature's: read them
    with `defaults`.
    """
    code = getattr(fn, "__code__", None)
    found = _SIGNATURES.get(code) if code is not None else None
    if found is None:
        found = inspect.signature(fn, follow_wrapped=False)
        if code is not None:
            _SIGNATURES[code] = found
    return found


def defaults(fn):
    """The default value of each parameter of Python function `fn` that has one, by
    name: `fn`'s own, which functions sharing one code object (made by a factory) do
    not share."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = fn.__defaults__ or ()
    found = dict(zip(positional[len(positional) - len(values):], values))
    found.update(fn.__kwdefaults__ or {})
    return found


def parameter_at(signature, position):
    """The name of the parameter that positional argument `position` binds to."""
    found = _POSITIONS.get(id(signature))
    if found is None or found[0] is not signature:
        params = list(signature.parameters.values())
        found = _POSITIONS[id(signature)] = (signature, [
            p.name for p in params if p.kind in _POSITIONAL], next(
            (p.name for p in params if p.kind is p.VAR_POSITIONAL), None))
    _, positional, rest = found
    return positional[position] if position < len(positional) else rest


_POSITIONS = {}  # id of a signature -> (it, its positional parameters, its *args)


def by_argument(signature, args, kwargs, cotangents):
    """Re-order a pullback's result for a call `fn(*args, **kwargs)`.

    Args:
      signature: `inspect.signature(fn)`.
      args, kwargs: the call's arguments.
      cotangents: what `fn`'s pullback returned: the cotangent of `fn`, then
        one per parameter in signature order.

    Returns:
      The cotangent of `fn`, then one per positional argument, then one per
      keyword argument in the order of `kwargs`.
    """
    if cotangents is ZERO:
        return zeros(1 + len(args) + len(kwargs))
    if is_plain_call(signature, args, kwargs):
        return tuple(cotangents)
    params = list(signature.parameters.values())
    index = {p.name: i + 1 for i, p in enumerate(params)}
    positional = [p for p in params if p.kind in _POSITIONAL]
    star = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    double_star = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    result = [cotangents[0]]
    for i in range(len(args)):
        if i < len(positional):
            result.append(cotangents[index[positional[i].name]])
        else:
            result.append(_item(cotangents[index[star.name]], i - len(positional)))
    for name in kwargs:
        param = signature.parameters.get(name)
        if param is not None and param.kind is not param.POSITIONAL_ONLY and param is not star:
            result.append(cotangents[index[name]])
        else:
            result.append(_item(cotangents[index[double_star.name]], name))
    return tuple(result)


def _item(ct, key):
    return ZERO if ct is ZERO else ct[key]


def restrict_environment(h, forward, fn):
    """The environment cotangent of `fn` from that of `forward`, its transformed code.

    `forward` reads `fn`'s cells and pullback's own; only `fn`'s count. Both have
    `fn`'s defaults, whose cotangents follow the cells'.
    """
    if h is ZERO:
        return ZERO
    own, names = forward.__code__.co_freevars, fn.__code__.co_freevars
    defaults_ = tuple(h[len(own):])
    if not names and not defaults_:
        return ZERO
    by_name = dict(zip(own, h))
    return tuple(by_name.get(name, ZERO) for name in names) + defaults_


def extend_environment(h, forward, fn):
    """The transpose of `restrict_environment`."""
    if h is ZERO:
        return ZERO
    names = fn.__code__.co_freevars
    by_name = dict(zip(names, h))
    return tuple(by_name.get(name, ZERO) for name in forward.__code__.co_freevars) + tuple(
        h[len(names):])


def defaults_layout(fn, signature, args, kwargs):
    """Where `with_defaults` puts the cotangents of the parameters that a call of `fn`
    leaves to their defaults, or None when `fn` has no defaults.

    Returns:
      `(count, slots)`: the number of `fn`'s free variables, and for each default
      (`__defaults__`, then `__kwdefaults__`) the position of its parameter's
      cotangent in what `fn`'s pullback returns, or None where the call passes it.
    """
    if not (fn.__defaults__ or fn.__kwdefaults__):
        return None
    bound = signature.bind(*args, **kwargs).arguments
    positions = {name: 1 + i for i, name in enumerate(signature.parameters)}
    return (len(fn.__code__.co_freevars),
            tuple(None if name in bound else positions[name] for name in defaults(fn)))


def with_defaults(cotangents, layout):
    """`cotangents`, what a pullback returned (the function's, then one per parameter),
    with those of the parameters left to their defaults moved into the function's,
    after its free variables' (see `defaults_layout`): every cotangent of a function
    with defaults has an item per default, or is `ZERO`."""
    if cotangents is ZERO:
        return ZERO
    count, slots = layout
    env = cotangents[0]
    tail = tuple(ZERO if slot is None else cotangents[slot] for slot in slots)
    result = list(cotangents)
    if env is not ZERO or any(ct is not ZERO for ct in tail):
        result[0] = ((ZERO,) * count if env is ZERO else tuple(env[:count])) + tail
    for slot in slots:
        if slot is not None:
            result[slot] = ZERO
    return tuple(result)


def without_defaults(h, layout):
    """The transpose of `with_defaults`."""
    if h is ZERO:
        return ZERO
    count, slots = layout
    env = h[0]
    result = list(h)
    result[0] = ZERO if env is ZERO else tuple(env[:count])
    for i, slot in enumerate(slots):
        if slot is not None:
            result[slot] = ZERO if env is ZERO else env[count + i]
    return tuple(result)


def is_plain_call(signature, args, kwargs):
    """Whether a call passes exactly one positional argument per parameter."""
    return not kwargs and len(args) == len(signature.parameters) and all(
        p.kind in _POSITIONAL for p in signature.parameters.values())


def zeros(count):
    """`count` symbolic zeros, as a tuple."""
    return (ZERO,) * count


def pick(values, positions):
    """The items of tuple `values` at `positions`, as a tuple."""
    return tuple(values[i] for i in positions)


def place(h, values, positions):
    """The transpose of `pick`: `h`'s items at `positions` of a tuple shaped like `values`."""
    items = [ZERO] * len(values)
    if h is not ZERO:
        for item, i in zip(h, positions):
            items[i] = add(items[i], item)
    return tuple(items)


def by_parameter(signature, args, kwargs, h):
    """The transpose of `by_argument`: per-argument cotangents back to per parameter."""
    params = list(signature.parameters.values())
    result = [ZERO] * (len(params) + 1)
    if h is ZERO:
        return tuple(result)
    result[0] = h[0]
    index = {p.name: i + 1 for i, p in enumerate(params)}
    positional = [p for p in params if p.kind in _POSITIONAL]
    star = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    double_star = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    extra = []
    for i in range(len(args)):
        if i < len(positional):
            result[index[positional[i].name]] = h[1 + i]
        else:
            extra.append(h[1 + i])
    if star is not None:
        result[index[star.name]] = tuple(extra)
    named = {}
    for j, name in enumerate(kwargs):
        param = signature.parameters.get(name)
        if param is not None and param.kind is not param.POSITIONAL_ONLY and param is not star:
            result[index[name]] = h[1 + len(args) + j]
        else:
            named[name] = h[1 + len(args) + j]
    if double_star is not None:
        result[index[double_star.name]] = named
    return tuple(result)


def join_cotangents(h, args, kwargs):
    """The transpose of `split_cotangents`."""
    if h is ZERO:
        return ZERO
    d_fn, d_args, d_kwargs = h
    positional = [ZERO] * len(args) if d_args is ZERO else [d_args[i] for i in range(len(args))]
    named = [ZERO if d_kwargs is ZERO else d_kwargs[k] for k in kwargs]
    return (d_fn, *positional, *named)


def split_cotangents(cotangents, args, kwargs):
    """`(d_fn, d_args, d_kwargs)` from the result of `by_argument` for `f(*args, **kwargs)`."""
    if cotangents is ZERO:
        return (ZERO, ZERO, ZERO)
    positional = cotangents[1 : 1 + len(args)]
    keywords = cotangents[1 + len(args) :]
    return cotangents[0], repack(args, positional), dict(zip(kwargs, keywords))
