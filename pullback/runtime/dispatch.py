"""Calls resolved at run time: `forward(f, *args)` and `forward_method(obj, name, *args)`,
and `effect` and `effect_method` for those whose value is dropped.

Generated code calls these when the callee is a value (an argument, a closure,
an item of a list) or a method of a value of unknown type. They are written in
the subset of Python that pullback transforms, with type tests and caches in
non-differentiable helpers, so that differentiating generated code (grad of
grad) goes through them like through any other Python function.
"""

import inspect
import types

from ..compiler import transform
from ..errors import TransformError
from ..rules import registry
from . import calls, cotangents, custom, debugging, introspection, records, tangents
from .cotangents import ZERO


def forward(fn, *args, **kwargs):
    """Call `fn(*args, **kwargs)` and return `(value, pullback)`.

    `fn` may be any callable: a Python function or closure, a bound method, an
    object with a `__call__` method, a primitive with a derivative rule, or a
    non-differentiable function.
    `pullback(ct)` returns the cotangent of `fn` (its environment; for a bound
    method, its object's) followed by one per argument of the call. A library
    function with a Python version (`registry.implemented_by`) is that version, the
    version's cotangent (of its environment: none) standing for the function's.
    """
    if fn is debugging.run_generated:
        value, pullback = forward(*args, **kwargs)
        return value, caller_pullback(pullback)
    if fn is debugging.run_holding_constant:
        value, pullback = forward(*args[1:], **kwargs)
        return value, caller_pullback(caller_pullback(pullback))
    version = registry.implementation_of(fn) or registry.refused_version_for(
        fn, args, kwargs, _holds_differentiable)
    if version is not None:
        return forward(version, *args, **kwargs)
    if introspection.is_bound_method(fn):
        return forward_method(method_object(fn), method_name(fn), *args, **kwargs)
    if records.is_record(fn):
        return forward_method(fn, "__call__", *args, **kwargs)
    vjp = custom.vjp_of(fn)
    if vjp is not None:
        return custom.custom_forward(vjp[0], vjp[1], *args, **kwargs)
    if custom.jvp_of(fn) is not None:
        return custom_jvp_forward(custom.jvp_of(fn), *args)
    target = fn if transformed_as_python(fn) else python_version(fn, len(args), tuple(kwargs))
    if target is None:
        return fn(*args, **kwargs), constant_pullback(1 + len(args) + len(kwargs))
    kinds = transform.param_kinds(target, args, kwargs, held=True)
    value, pullback = transform.forward_function(target, kinds, True)(*args, **kwargs)
    return value, argument_pullback(target, args, kwargs, pullback)


def _holds_differentiable(value):
    """Whether `value` is, or holds (`records.leaves`), a value with a derivative."""
    return any(map(cotangents.is_differentiable, records.leaves(value)))


def forward_method(obj, name, *args, **kwargs):
    """`forward` for `obj.name(*args, **kwargs)`: its pullback starts with `obj`'s cotangent.

    `obj` may also be a module read from a variable, whose functions are not methods,
    or a library's object whose method has a Python version (`registry.implemented_by`).
    """
    if takes_no_object(obj, name):
        return forward(module_attribute(obj, name), *args, **kwargs)
    if records.holds_field(obj, name):
        value, pullback = forward(records.field(obj, name), *args, **kwargs)
        return value, field_call_pullback(pullback, obj, name)
    version = registry.method_implementation(obj, name)
    if version is not None:
        return forward(version, *args, **kwargs)
    fn = registry.object_method(obj, name) or method_function(obj, name)
    receiver = type(obj) if passes_class(obj, name) else obj
    value, pullback = forward(fn, receiver, *args, **kwargs)
    return value, method_pullback(pullback)


def method_pullback(pullback):
    """A method's pullback from its function's: the object is the function's first argument."""

    def of_method(ct):
        cts = pullback(ct)
        return (cts[1], *cts[2:])

    return of_method


def field_call_pullback(pullback, obj, name):
    """The pullback of `obj.name(...)` calling the function field `name` of `obj`, from
    that of the function's call: the function's cotangent is the field's."""

    def of_field_call(ct):
        cts = pullback(ct)
        return (records.unfield(cts[0], obj, name), *cts[1:])

    return of_field_call


def caller_pullback(pullback):
    """The pullback of `run_generated(f, ...)` from that of `f(...)`: `run_generated`
    closes over nothing (applied twice, of `run_holding_constant(held, f, ...)`, whose
    `held` is a constant)."""

    def of_caller(ct):
        return (ZERO, *pullback(ct))

    return of_caller


def effect(fn, *args, **kwargs):
    """`forward` of `fn(*args, **kwargs)` whose value is dropped (`log(x)`): the user's
    function is transformed, so that what it updates in place is followed; any other
    (`print`, a library's plot or log) runs as it is, with no pullback, since a dropped
    value has no cotangent."""
    if introspection.is_user_function(fn):
        return forward(fn, *args, **kwargs)
    return run_as_is(fn, args, kwargs), None


def effect_method(obj, name, *args, **kwargs):
    """`effect` for `obj.name(*args, **kwargs)` (`ax.plot(x)`, `logger.info(...)`)."""
    if introspection.is_module(obj) or not introspection.is_user_function(
            records.field(obj, name) if records.holds_field(obj, name)
            else method_function(obj, name)):
        return run_as_is(module_attribute(obj, name), args, kwargs), None
    return forward_method(obj, name, *args, **kwargs)


def run_as_is(fn, args, kwargs):
    """`fn(*args, **kwargs)`, not differentiated (a call whose value is dropped)."""
    return fn(*args, **kwargs)


def argument_pullback(fn, args, kwargs, pullback):
    """`pullback`, returning one cotangent per argument of the call rather than per
    parameter of `fn` (see `calls.by_argument`), those of the parameters left to
    differentiable defaults in the cotangent of `fn` (see `calls.with_defaults`)."""
    signature = calls.signature(fn)
    layout = calls.defaults_layout(fn, signature, args, kwargs)
    if layout is None and calls.is_plain_call(signature, args, kwargs):
        return pullback
    if layout is None:
        def by_argument(ct):
            return calls.by_argument(signature, args, kwargs, pullback(ct))

        return by_argument

    def with_defaults(ct):
        cts = calls.with_defaults(pullback(ct), layout)
        return calls.by_argument(signature, args, kwargs, cts)

    return with_defaults


def constant_pullback(count):
    """The pullback of a non-differentiable call with `count - 1` arguments."""

    def of_constant(ct):
        return calls.zeros(count)

    return of_constant


def transformed_as_python(fn):
    """Whether `fn` is differentiated by transforming its source: a Python function
    without a derivative rule (one with a rule, `scipy.special.logsumexp`, is a
    primitive however it is reached: a closure's variable, an argument)."""
    return introspection.is_python_function(fn) and registry.rule_for(fn) is None and (
        not registry.is_nondifferentiable(fn))


def python_version(fn, count=None, keywords=()):
    """The Python function to transform for callable `fn` called with `count`
    positional arguments and keyword arguments `keywords`: the wrapper of a primitive
    or of a record class, or None for a non-differentiable function. Anything else has
    no derivative."""
    if registry.rule_for(fn) is not None:
        return transform.primitive_wrapper(fn, count)
    if records.init_fields(fn) is not None:
        return transform.record_wrapper(fn, count, keywords)
    if registry.is_nondifferentiable(fn):
        return None
    raise TransformError(registry.no_rule_message(fn), construct=registry.describe(fn))


def method_object(method):
    """The object a bound method is bound to; its cotangent is the method's."""
    return method.__self__


def method_name(method):
    """The name of a bound method."""
    return method.__name__


def module_attribute(module, name):
    """`module.name` (or a staticmethod `obj.name`)."""
    return getattr(module, name)


def method_function(obj, name):
    """The function behind `obj.name`, taking `obj` as its first argument (its class, for
    a classmethod: `passes_class`)."""
    found = _class_attribute(obj, name)
    if isinstance(found, classmethod):
        return found.__func__
    return getattr(type(obj), name)


def passes_class(obj, name):
    """Whether `obj.name(...)` passes its function `obj`'s class, not `obj`: a classmethod
    called on an instance."""
    return isinstance(_class_attribute(obj, name), classmethod) and not isinstance(obj, type)


def takes_no_object(obj, name):
    """Whether `obj.name(...)` passes no object to the function: a module's function, or
    a staticmethod of `obj`'s class (of `obj`, a class)."""
    return introspection.is_module(obj) or isinstance(_class_attribute(obj, name),
                                                      staticmethod)


def super_method(cls, obj, name):
    """The function `super(cls, obj).name` calls with `obj` (`compiler.frontend.super_calls`):
    the method of the first class after `cls` in `obj`'s order that has one."""
    found = getattr(super(cls, obj), name)
    if not (isinstance(found, types.MethodType) and found.__self__ is obj):
        raise TransformError(f"super().{name} is not a method of the object (a "
                             f"{type(found).__name__}): pullback calls methods through "
                             f"super(); call {name} on the class", construct="super()")
    return found.__func__


def _class_attribute(obj, name):
    """`name` as the class of `obj` (or `obj`, a class) defines it, unbound."""
    return inspect.getattr_static(obj if isinstance(obj, type) else type(obj), name, None)


# -- forward mode ----------------------------------------------------------------------


def jvp_call(fn, dots, *args, **kwargs):
    """Call `fn(*args, **kwargs)` in forward mode: return `(value, tangent)`.

    `dots` holds the tangent of `fn` (its environment; a bound method's object's),
    then one per argument as the call passes them (positional, then keyword). `fn`
    may be any callable `forward` accepts; a non-differentiable one's value has the
    tangent `ZERO`.
    """
    if fn is debugging.run_generated:
        return jvp_call(args[0], dots[1:], *args[1:], **kwargs)
    if fn is debugging.run_holding_constant:
        return jvp_call(args[1], dots[2:], *args[2:], **kwargs)
    version = registry.implementation_of(fn) or registry.refused_version_for(
        fn, args, kwargs, _holds_differentiable)
    if version is not None:
        return jvp_call(version, (ZERO, *dots[1:]), *args, **kwargs)
    if introspection.is_bound_method(fn):
        return jvp_method(method_object(fn), method_name(fn), dots, *args, **kwargs)
    if records.is_record(fn):
        return jvp_method(fn, "__call__", dots, *args, **kwargs)
    vjp = custom.vjp_of(fn)
    if vjp is not None:
        return custom_tangent(vjp[0], vjp[1], dots[1:], *args, **kwargs)
    if custom.jvp_of(fn) is not None:
        return custom_jvp_tangent(custom.jvp_of(fn), dots[1:], *args)
    target = fn if transformed_as_python(fn) else python_version(fn, len(args), tuple(kwargs))
    if target is None:
        return fn(*args, **kwargs), ZERO
    dots = parameter_tangents(target, args, kwargs, dots)
    kinds = transform.tangent_kinds(target, args, kwargs, dots)
    return transform.jvp_function(target, kinds, True)(dots, *args, **kwargs)


def jvp_method(obj, name, dots, *args, **kwargs):
    """`jvp_call` for `obj.name(*args, **kwargs)`: `dots` starts with `obj`'s tangent."""
    if takes_no_object(obj, name):
        return jvp_call(module_attribute(obj, name), (ZERO, *dots[1:]), *args, **kwargs)
    if records.holds_field(obj, name):
        return jvp_call(records.field(obj, name), (records.refield(dots[0], obj, name),
                                                   *dots[1:]), *args, **kwargs)
    version = registry.method_implementation(obj, name)
    if version is not None:
        return jvp_call(version, (ZERO, *dots[1:]), *args, **kwargs)
    fn = registry.object_method(obj, name) or method_function(obj, name)
    if passes_class(obj, name):
        return jvp_call(fn, (ZERO, ZERO, *dots[1:]), type(obj), *args, **kwargs)
    return jvp_call(fn, (ZERO, *dots), obj, *args, **kwargs)


def jvp_effect(fn, dots, *args, **kwargs):
    """`jvp_call` of `fn(*args, **kwargs)` whose value is dropped (see `effect`)."""
    if introspection.is_user_function(fn):
        return jvp_call(fn, dots, *args, **kwargs)
    return run_as_is(fn, args, kwargs), ZERO


def jvp_effect_method(obj, name, dots, *args, **kwargs):
    """`jvp_effect` for `obj.name(*args, **kwargs)`."""
    if introspection.is_module(obj) or not introspection.is_user_function(
            records.field(obj, name) if records.holds_field(obj, name)
            else method_function(obj, name)):
        return run_as_is(module_attribute(obj, name), args, kwargs), ZERO
    return jvp_method(obj, name, dots, *args, **kwargs)


def parameter_tangents(fn, args, kwargs, dots):
    """The tangents of a call `fn(*args, **kwargs)` by parameter of `fn`, its
    environment's first, from those by argument (`dots`): the transpose of
    `argument_pullback`'s mapping, a parameter left to its default taking the default's
    tangent from the environment's."""
    dots = (tangents.environment_of(fn, dots[0]), *dots[1:])
    signature = calls.signature(fn)
    layout = calls.defaults_layout(fn, signature, args, kwargs)
    if layout is None and calls.is_plain_call(signature, args, kwargs):
        return dots
    per_parameter = calls.by_parameter(signature, args, kwargs, dots)
    if layout is None:
        return per_parameter
    return calls.without_defaults(per_parameter, layout)


def custom_tangent(fwd, bwd, dots, *args):
    """`(value, tangent)` of a call of a function with a hand-written reverse derivative
    (`custom_vjp`): its backward function `bwd(residuals, g)` is linear in `g`, and the
    tangent is its transpose applied to the arguments' tangents `dots`, which its own
    pullback computes."""
    out, residuals = fwd(*args)
    _, pullback = forward(bwd, residuals, tangents.zeros_of(out))
    return out, pullback(dots)[2]


def custom_jvp_tangent(rule, dots, *args):
    """`(value, tangent)` of a call of a function with a hand-written derivative in
    forward mode (`custom_jvp`): its rule, given tangents that are values."""
    dense = tuple([tangents.dense(t, x) for t, x in zip(dots, args)])
    return rule(args, dense)


def custom_jvp_forward(rule, *args):
    """`(value, pullback)` of a call of a function with a hand-written derivative in
    forward mode (`custom_jvp`): the rule's tangent is linear in the tangents, and the
    pullback is its transpose, which the rule's own pullback computes."""
    zeros = tuple([tangents.zeros_of(x) for x in args])
    (out, _), pullback = forward(rule, args, zeros)

    def custom_jvp_pullback(ct):
        return (ZERO, *pullback((ZERO, ct))[2])

    return out, custom_jvp_pullback


def custom_jvp_function(fn):
    """The derivative in forward mode of `fn`, which has a hand-written one in either mode."""
    rule = custom.jvp_of(fn)
    if rule is not None:
        def custom_jvp(dots, *args):
            return custom_jvp_tangent(rule, dots[1:], *args)

        return custom_jvp
    fwd, bwd = custom.vjp_of(fn)

    def custom_vjp_jvp(dots, *args):
        return custom_tangent(fwd, bwd, dots[1:], *args)

    return custom_vjp_jvp


def custom_forward_function(fn):
    """The forward function of `fn`, which has a hand-written derivative in either mode."""
    rule = custom.jvp_of(fn)
    if rule is None:
        return custom.forward_of(fn)

    def custom_fwd(*args):
        return custom_jvp_forward(rule, *args)

    return custom_fwd
