"""Calling conventions: from a callee's parameters back to a call's arguments.

A transformed function's pullback returns the cotangent of the function (its
environment) followed by one per *parameter*: a `*args` parameter gets a
tuple, a `**kwargs` parameter a dict. A call site needs one per *argument* it
passed. `by_argument` does that mapping for calls resolved at run time and for
the public API; `split_cotangents` splits the result of a call written
`f(*args, **kwargs)` into the cotangents of `args` and `kwargs`.
"""

import inspect

from .cotangents import ZERO, repack

_SIGNATURES = {}

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def signature(fn):
    """`inspect.signature(fn)`, computed once per code object.

    Only the names and kinds of the parameters are used, which the code object
    fixes; a function's defaults may differ from the cached signature's.
    """
    code = getattr(fn, "__code__", None)
    found = _SIGNATURES.get(code) if code is not None else None
    if found is None:
        found = inspect.signature(fn, follow_wrapped=False)
        if code is not None:
            _SIGNATURES[code] = found
    return found


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


def split_cotangents(cotangents, args, kwargs):
    """`(d_fn, d_args, d_kwargs)` from the result of `by_argument` for `f(*args, **kwargs)`."""
    positional = cotangents[1 : 1 + len(args)]
    keywords = cotangents[1 + len(args) :]
    return cotangents[0], repack(args, positional), dict(zip(kwargs, keywords))
