"""Functions whose results carry no derivative: shapes, counts, indices, tests, rounding."""

import functools
import math
import operator

import numpy as np

from pullback import api
from pullback.compiler import transform
from pullback.compiler.analysis.kinds import (
    CONST,
    CONST_ARRAY,
    CONST_SCALAR,
    Container,
    Items,
    rank_of,
    vector_or_array,
)
from pullback.rules import registry
from pullback.rules.registry import declare, nondifferentiable
from pullback.runtime import (
    calls,
    contexts,
    cotangents,
    custom,
    debugging,
    dispatch,
    handlers,
    introspection,
    iteration,
    loops,
    mutation,
    records,
    structures,
    tangents,
)

nondifferentiable(len, int, round, id, hash, np.ndim, np.size, np.ndarray.ndim,
                  np.ndarray.size, result=CONST_SCALAR)
nondifferentiable(bool, any, all)  # a bool is no int index (`kinds._EXACT`)
# NumPy's integer and bool types called on a number or an array: a cast, as `int`, but
# of an array too
nondifferentiable(*{np.dtype(code).type for code in np.typecodes["AllInteger"]},
                  np.bool_)
declare(len, np.shape, np.ndim, np.size, structural=(0,))
nondifferentiable(range, np.shape, np.ndarray.shape, result=Items(CONST_SCALAR))
# the shape a pullback keeps of a value it sums a cotangent to (optimize/shape_reads)
nondifferentiable(cotangents.shape_of, result=Items(CONST_SCALAR))
nondifferentiable(np.arange, result=CONST_ARRAY)


def _made(shape, *options, **named):
    """`np.zeros(n)` is a vector of floats, `np.zeros((n, m))` a matrix; with a shape of
    more axes or a dtype, an array."""
    parts = shape.items if isinstance(shape, Container) and shape.type is tuple else (shape,)
    numbers = all(part is CONST_SCALAR for part in parts)
    rank = len(parts) if numbers and not options and not named else None
    return vector_or_array(False, rank)


def _made_like(prototype, *options, **named):
    """`np.zeros_like(x)` of a vector or matrix of floats `x` is one; else an array."""
    return vector_or_array(False, None if options or named else rank_of(prototype))


def _identity(n, *options, **named):
    """`np.eye(n)` and `np.identity(n)` are matrices of floats; with more options, arrays."""
    return vector_or_array(False, None if options or named else 2)


nondifferentiable(np.zeros, np.ones, np.empty, result=_made)
nondifferentiable(np.eye, np.identity, result=_identity)
nondifferentiable(np.zeros_like, np.ones_like, np.empty_like, result=_made_like)
nondifferentiable(dict.keys, result=Items(CONST))

nondifferentiable(
    # Python
    isinstance, type, print, str, repr, hasattr, callable,
    operator.not_, operator.invert, operator.floordiv, operator.and_, operator.xor,
    operator.lshift, operator.rshift,
    math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite, math.isclose,
    # NumPy
    np.ndarray.dtype, np.sign, np.angle, np.floor, np.ceil,
    np.round, np.rint, np.trunc, np.floor_divide, np.argmax, np.argmin, np.argsort,
    np.isnan, np.isinf, np.isfinite, np.isposinf, np.isneginf, np.iscomplexobj, np.allclose,
    np.iscomplex, np.isreal, np.isrealobj,
    np.isclose, np.array_equal, np.equal,
    np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and,
    np.logical_or, np.logical_not, np.any, np.all, np.ndarray.any, np.ndarray.all,
    np.ndarray.argmax, np.ndarray.argmin, np.searchsorted, np.ndarray.searchsorted,
    np.digitize, np.linalg.matrix_rank, np.result_type,
    # pullback's own masks, counts, shapes and bookkeeping
    cotangents.extremum_share, cotangents.tie_share, cotangents.within,
    cotangents.reduced_size, cotangents.reduced_size_of, cotangents.degrees_of_freedom,
    cotangents.broadcast_axes,
    cotangents.normalize_axis,
    cotangents.reduction_order, cotangents.pair_shape, cotangents.inverse_permutation,
    cotangents.dot_axes_left, cotangents.dot_axes_right, cotangents.tensordot_layout,
    cotangents.is_differentiable, cotangents.any_zero, cotangents.counted,
    cotangents.weights_layout, cotangents.one_shape, cotangents.stacked_rank,
    cotangents.all_matmul, slice, getattr,
    functools.update_wrapper,
    transform.param_kinds, transform.new_epoch, calls.signature, calls.is_plain_call,
    calls.zeros, calls.parameter_at, calls.defaults_layout, loops.forever, loops.finished,
    iteration.sort_order,
    introspection.is_bound_method, introspection.is_python_function,
    introspection.is_user_function, dispatch.run_as_is, dispatch.transformed_as_python,
    dispatch.python_version, registry.implementation_of, registry.method_implementation,
    registry.refused_version_for,
    registry.object_method,
    dispatch.method_name, dispatch.method_function, dispatch.passes_class,
    dispatch.takes_no_object, dispatch.super_method,
    dispatch.module_attribute, introspection.is_module, records.is_record, records.is_named_tuple,
    records.holds_field, records.defines,
    custom.vjp_of, custom.jvp_of, custom.is_custom, custom.check_cotangents, debugging.check_nan,
    api.check_gradient_call, api.held_constant, api.arrays_of, api.check_arguments,
    api.argnums_tuple, api.seed,
    api.named_after, api.check_tangents, transform.tangent_kinds, tangents.zeros_of,
    tangents.zero_mapping,
)

# `with` blocks (compiler.frontend.with_blocks): the context manager runs as it is
nondifferentiable(contexts.enter_context, contexts.exit_context)
# `try` statements (compiler.frontend.try_blocks): the flag the pullback tests
nondifferentiable(handlers.try_started, handlers.try_failed, handlers.caught_types)
# an update in place another name or place may see, if an array's item is a view, or a
# container holds the item twice (analysis/updates)
nondifferentiable(mutation.refuse_if_shared, mutation.refuse_if_held_twice,
                  mutation.refuse_repetition)
# an operand of an operator that the kinds could not tell, its class checked (analysis/
# interpret): it reads only the operands' types
nondifferentiable(records.refuse_if_overloaded)
nondifferentiable(records.refuse_if_computing)
declare(records.refuse_if_overloaded, structural=(0, 1))
# a mean's count, which reads only the shape of what it reduced (optimize/shape_reads)
declare(cotangents.reduced_size, shaped=(0, cotangents.reduced_size_of))
# the length a pullback keeps of a list appended to in place (optimize/in_place_lists)
nondifferentiable(structures.list_version)
declare(structures.list_version, structural=(0,))
registry.declare(contexts.enter_context, refused={
    "context": "its __enter__ and __exit__ run as they are, not differentiated; compute "
               "the differentiable values inside the with block, not in its manager"})

