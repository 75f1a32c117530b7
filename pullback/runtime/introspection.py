"""What a value is, at run time: a Python function, a bound method, a module.

The questions generated code and the transformer ask of live values, answered
from Python's own types (the syntax-side questions are `compiler.syntax.scopes`).
"""

import inspect
import types

from .. import errors


def cell_values(fn):
    """The values of a function's closure cells, in `co_freevars` order (None if empty)."""
    for cell in fn.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:
            yield None


def is_python_function(fn):
    """Whether `fn` is a function defined in Python (`def` or `lambda`)."""
    return isinstance(fn, types.FunctionType)


def is_user_function(fn):
    """Whether `fn` (a function or a bound method) is Python the user wrote, not a
    library's (the standard library's, an installed package's, pullback's own)."""
    fn = getattr(fn, "__func__", fn)
    return isinstance(fn, types.FunctionType) and not errors.in_library(
        fn.__code__.co_filename)


def is_module(value):
    """Whether `value` is a module."""
    return isinstance(value, types.ModuleType)


def is_bound_method(fn):
    """Whether `fn` is a method bound to an object (`obj.f`, or `x.sum` for an array `x`)."""
    if isinstance(fn, types.MethodType):
        return True
    if not isinstance(fn, types.BuiltinMethodType):
        return False
    owner = fn.__self__
    return owner is not None and not isinstance(owner, types.ModuleType)


def has_fixed_parameters(fn):
    """Whether Python function `fn` takes neither `*args` nor `**kwargs`."""
    return not fn.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
