"""Every primitive's derivative against central finite differences, at several shapes.

One table: a name, the function, and its arguments. Each row is checked by
`pullback.testing.check_grads` (a random direction and a random cotangent).
"""

import math

import numpy as np
import pytest

from pullback.testing import check_grads

rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape)


def positive(*shape):
    return rng.uniform(0.5, 2.0, shape)


def unit(*shape):
    return rng.uniform(-0.9, 0.9, shape)


def weights(*shape):
    """Distinct constant weights, so a wrong permutation changes the result."""
    return np.arange(np.prod(shape, dtype=int), dtype=float).reshape(shape)


def distinct(*shape):
    """Values far enough apart that max/min/clip/abs are smooth nearby."""
    return rng.permutation(np.arange(np.prod(shape, dtype=int)) * 0.37 - 1.1).reshape(shape)


PYTHON_OPERATORS = [
    ("add", lambda x, y: x + y, (1.3, -0.4)),
    ("sub", lambda x, y: x - y, (1.3, -0.4)),
    ("mul", lambda x, y: x * y, (1.3, -0.4)),
    ("div", lambda x, y: x / y, (1.3, -0.4)),
    ("pow", lambda x, y: x ** y, (1.3, 0.7)),
    ("pow_int", lambda x: x ** 3, (1.3,)),
    ("pow_negative_base", lambda x: x ** 2, (-1.3,)),
    ("floordiv", lambda x, y: x // y * x, (3.7, 1.3)),
    ("mod", lambda x, y: x % y, (3.7, 1.3)),
    ("neg", lambda x: -x, (1.3,)),
    ("pos", lambda x: +x * x, (1.3,)),
    ("abs", lambda x: abs(x) * x, (-1.3,)),
    ("float", lambda x: float(x) * 2.0, (1.3,)),
    ("mixed_constants", lambda x: 2 * x - 1 / x + x / 4, (1.3,)),
    ("comparison_is_constant", lambda x: x * (x > 0), (1.3,)),
    ("add_arrays", lambda x, y: np.sum(x + y), (normal(3, 4), normal(3, 4))),
    ("add_broadcast_row", lambda x, y: np.sum((x + y) ** 2), (normal(3, 4), normal(4))),
    ("add_broadcast_column", lambda x, y: np.sum((x - y) ** 2), (normal(3, 4), normal(3, 1))),
    ("mul_broadcast_scalar", lambda x, y: np.sum(x * y), (normal(3, 4), 1.7)),
    ("div_broadcast", lambda x, y: np.sum(x / y), (normal(2, 3), positive(2, 1))),
    ("pow_arrays", lambda x, y: np.sum(x ** y), (positive(3), normal(3))),
    ("pow_broadcast", lambda x, y: np.sum(x ** y), (positive(2, 3), normal(3))),
    ("neg_array", lambda x: np.sum(-x * x), (normal(3),)),
    ("mod_arrays", lambda x, y: np.sum(x % y), (positive(4) * 3, positive(4))),
    ("matmul_2d", lambda a, b: np.sum(np.sin(a @ b)), (normal(3, 4), normal(4, 2))),
    ("matmul_matrix_vector", lambda a, b: np.sum(np.sin(a @ b)), (normal(3, 4), normal(4))),
    ("matmul_vector_matrix", lambda a, b: np.sum(np.sin(a @ b)), (normal(4), normal(4, 2))),
    ("matmul_vectors", lambda a, b: a @ b, (normal(4), normal(4))),
    ("matmul_batch", lambda a, b: np.sum(np.sin(a @ b)), (normal(2, 3, 4), normal(4, 5))),
    ("matmul_batch_broadcast", lambda a, b: np.sum(np.cos(a @ b)),
     (normal(2, 1, 3, 4), normal(5, 4, 2))),
]

MATH = [
    (f"math_{fn.__name__}", fn, args)
    for fn, args in [
        (math.sin, (0.7,)), (math.cos, (0.7,)), (math.tan, (0.7,)), (math.asin, (0.3,)),
        (math.acos, (0.3,)), (math.atan, (0.7,)), (math.sinh, (0.7,)), (math.cosh, (0.7,)),
        (math.tanh, (0.7,)), (math.exp, (0.7,)), (math.expm1, (0.7,)), (math.log, (0.7,)),
        (math.log1p, (0.7,)), (math.log2, (0.7,)), (math.log10, (0.7,)), (math.sqrt, (0.7,)),
        (math.fabs, (-0.7,)), (math.atan2, (0.7, -1.2)), (math.pow, (0.7, 1.9)),
        (math.hypot, (0.7, -1.2)),
    ]
] + [
    ("math_log_base", lambda x, b: math.log(x, b), (3.7, 2.5)),
    ("math_composite", lambda x, y: math.exp(math.sin(x) * y) / math.sqrt(x), (0.7, 1.3)),
]

ELEMENTWISE_FUNCTIONS = {
    "sin": (np.sin, normal), "cos": (np.cos, normal), "tan": (np.tan, unit),
    "arcsin": (np.arcsin, unit), "arccos": (np.arccos, unit), "arctan": (np.arctan, normal),
    "sinh": (np.sinh, normal), "cosh": (np.cosh, normal), "tanh": (np.tanh, normal),
    "exp": (np.exp, normal), "expm1": (np.expm1, normal), "log": (np.log, positive),
    "log1p": (np.log1p, positive), "sqrt": (np.sqrt, positive), "square": (np.square, normal),
    "abs": (np.abs, distinct), "absolute": (np.absolute, distinct),
    "negative": (np.negative, normal), "reciprocal": (np.reciprocal, positive),
}

ELEMENTWISE = [
    (f"np_{name}_{'x'.join(map(str, shape)) or 'scalar'}",
     lambda x, fn=fn: np.sum(fn(x) * np.cos(x)),
     (draw(*shape) if shape else float(draw())))
    for name, (fn, draw) in ELEMENTWISE_FUNCTIONS.items()
    for shape in [(), (5,), (2, 3)]
]
ELEMENTWISE = [(name, fn, (arg,)) for name, fn, arg in ELEMENTWISE] + [
    ("np_sign_is_constant", lambda x: np.sum(np.sign(x) * x), (distinct(4),)),
    ("np_power", lambda x, y: np.sum(np.power(x, y)), (positive(2, 3), normal(3))),
    ("np_power_constant", lambda x: np.sum(np.power(x, 3)), (normal(2, 3),)),
    ("np_maximum", lambda x, y: np.sum(np.maximum(x, y) ** 2),
     (distinct(3, 4), distinct(4) + 0.1)),
    ("np_minimum", lambda x, y: np.sum(np.minimum(x, y) ** 2),
     (distinct(3, 4), distinct(3, 1) + 0.1)),
    ("np_maximum_scalar", lambda x: np.sum(np.maximum(x, 0.05) ** 2), (distinct(6),)),
    ("np_where", lambda c, x, y: np.sum(np.where(c, x, y) ** 2),
     (distinct(3, 4) > 0, normal(3, 4), normal(4))),
    ("np_where_scalar_branch", lambda x: np.sum(np.where(x > 0, x, 0.0) ** 2), (distinct(5),)),
    ("np_clip", lambda x: np.sum(np.clip(x, -0.5, 0.5) ** 2), (distinct(3, 4),)),
    ("np_clip_upper_only", lambda x: np.sum(np.clip(x, None, 0.5) ** 2), (distinct(7),)),
    ("np_clip_array_bounds", lambda x, lo: np.sum(np.clip(x, lo, 1.0) ** 2),
     (distinct(3, 4), distinct(4) * 0.1 + 0.013)),
    ("np_add_function", lambda x, y: np.sum(np.add(x, y) * np.subtract(x, y)),
     (normal(3), normal(2, 3))),
    ("np_multiply_divide", lambda x, y: np.sum(np.divide(np.multiply(x, y), y + 3.0)),
     (normal(3), positive(3))),
]

REDUCTION_CASES = [
    ("all", (3, 4), None, False),
    ("axis0", (3, 4), 0, False),
    ("axis1_keepdims", (3, 4), 1, True),
    ("axis_negative", (2, 3, 4), -1, False),
    ("axis_tuple", (2, 3, 4), (0, 2), False),
    ("vector", (5,), None, False),
]
REDUCTIONS = [
    (f"{name}_{label}", fn, (draw(*shape), axis, keepdims))
    for name, fn, draw in [
        ("sum", lambda x, a, k: np.sum(np.sin(np.sum(x, axis=a, keepdims=k))), normal),
        ("mean", lambda x, a, k: np.sum(np.sin(np.mean(x, axis=a, keepdims=k))), normal),
        ("prod", lambda x, a, k: np.sum(np.sin(np.prod(x, axis=a, keepdims=k))), normal),
        ("max", lambda x, a, k: np.sum(np.sin(np.max(x, axis=a, keepdims=k))), distinct),
        ("min", lambda x, a, k: np.sum(np.sin(np.min(x, axis=a, keepdims=k))), distinct),
    ]
    for label, shape, axis, keepdims in REDUCTION_CASES
] + [
    ("sum_method", lambda x: np.sin(x.sum(axis=0)).sum(), (normal(3, 4),)),
    ("mean_method", lambda x: np.sin(x.mean(1)).sum(), (normal(3, 4),)),
    ("prod_method", lambda x: x.prod(), (normal(4),)),
    ("max_method", lambda x: np.sum(x.max(axis=1) ** 2), (distinct(3, 4),)),
    ("min_method", lambda x: np.sum(x.min(0) ** 2), (distinct(3, 4),)),
    ("prod_with_zero", lambda x: np.sum(np.prod(x, axis=1)),
     (np.array([[0.0, 2.0, 3.0], [1.5, 0.5, 2.0]]),)),
    ("max_ties_split", lambda x: np.max(x) * 3.0, (np.array([1.0, 2.0, 2.0, 0.5]),)),
]

PRODUCTS_AND_SHAPES = [
    ("dot_vectors", lambda a, b: np.dot(a, b), (normal(4), normal(4))),
    ("dot_matrices", lambda a, b: np.sum(np.sin(np.dot(a, b))), (normal(3, 4), normal(4, 2))),
    ("dot_matrix_vector", lambda a, b: np.sum(np.sin(np.dot(a, b))), (normal(3, 4), normal(4))),
    ("dot_tensor", lambda a, b: np.sum(np.sin(np.dot(a, b))), (normal(2, 3, 4), normal(5, 4, 2))),
    ("dot_scalar", lambda a, b: np.sum(np.sin(np.dot(a, b))), (1.5, normal(3))),
    ("dot_method", lambda a, b: np.sum(np.sin(a.dot(b))), (normal(3, 4), normal(4, 2))),
    ("outer", lambda a, b: np.sum(np.sin(np.outer(a, b))), (normal(3), normal(4))),
    ("outer_flattens", lambda a, b: np.sum(np.sin(np.outer(a, b))), (normal(2, 2), normal(3))),
    ("reshape", lambda x: np.sum(np.sin(np.reshape(x, (4, 3))) * weights(4, 3)), (normal(3, 4),)),
    ("reshape_minus_one", lambda x: np.sum(np.reshape(x, (-1,)) * weights(12)), (normal(3, 4),)),
    ("reshape_method_args", lambda x: np.sum(np.sin(x.reshape(2, 6)) * weights(2, 6)),
     (normal(3, 4),)),
    ("reshape_method_tuple", lambda x: np.sum(np.sin(x.reshape((6, 2)))), (normal(3, 4),)),
    ("reshape_order_f", lambda x: np.sum(np.reshape(x, (4, 3), order="F") * weights(4, 3)),
     (normal(3, 4),)),
    ("transpose", lambda x: np.sum(np.transpose(x) * weights(4, 3)), (normal(3, 4),)),
    ("transpose_axes", lambda x: np.sum(np.sin(np.transpose(x, (2, 0, 1))) * weights(4, 2, 3)),
     (normal(2, 3, 4),)),
    ("transpose_method", lambda x: np.sum(x.transpose(1, 0, 2) * weights(3, 2, 4)),
     (normal(2, 3, 4),)),
    ("T", lambda x: np.sum(x.T * weights(4, 3)), (normal(3, 4),)),
    ("expand_dims", lambda x: np.sum(np.expand_dims(x, 1) * np.ones((3, 2, 4))), (normal(3, 4),)),
    ("squeeze", lambda x: np.sum(np.squeeze(x) * np.arange(4.0)), (normal(1, 4, 1),)),
    ("squeeze_method", lambda x: np.sum(x.squeeze(0) * np.arange(4.0)), (normal(1, 4),)),
    ("concatenate", lambda a, b: np.sum(np.concatenate([a, b]) * weights(5)),
     (normal(2), normal(3))),
    ("concatenate_axis1", lambda a, b: np.sum(np.sin(np.concatenate((a, b), axis=1))),
     (normal(2, 3), normal(2, 1))),
    ("concatenate_flat", lambda a, b: np.sum(np.sin(np.concatenate([a, b], axis=None))),
     (normal(2, 3), normal(4))),
    ("stack", lambda a, b: np.sum(np.sin(np.stack([a, b * 2.0]))), (normal(3), normal(3))),
    ("stack_axis1", lambda a, b: np.sum(np.stack([a, b], axis=1) * weights(2, 2, 3)),
     (normal(2, 3), normal(2, 3))),
    ("array_of_scalars", lambda x, y: np.sum(np.sin(np.array([x, y, x * y]))), (0.7, -1.2)),
    ("array_nested", lambda x, y: np.sum(np.sin(np.array([[x, y], [y, 1.0]]))), (0.7, -1.2)),
    ("array_of_arrays", lambda a, b: np.sum(np.sin(np.array([a, b]))), (normal(3), normal(3))),
]

INDEXING = [
    ("index_scalar", lambda x: x[1] * x[-1], (normal(5),)),
    ("index_row", lambda x: np.sum(np.sin(x[2])), (normal(4, 3),)),
    ("index_element", lambda x: x[1, 2] ** 2, (normal(3, 4),)),
    ("slice", lambda x: np.sum(np.sin(x[1:4])), (normal(6),)),
    ("slice_step", lambda x: np.sum(np.sin(x[::2])), (normal(7),)),
    ("slice_negative_step", lambda x: np.sum(x[::-1] * weights(5)), (normal(5),)),
    ("slice_2d", lambda x: np.sum(np.sin(x[1:, :2])), (normal(3, 4),)),
    ("ellipsis", lambda x: np.sum(np.sin(x[..., 0])), (normal(2, 3, 4),)),
    ("newaxis", lambda x: np.sum(x[:, None] * np.ones((3, 2))), (normal(3),)),
    ("repeated_reads", lambda x: x[0] * x[0] + x[0] * x[1], (normal(3),)),
    ("integer_array_repeats", lambda x: np.sum(np.sin(x[np.array([0, 2, 0, 0])])), (normal(4),)),
    ("boolean_mask", lambda x: np.sum(x[x > 0] ** 2), (distinct(6),)),
    ("tuple_index", lambda p: p[0] * p[1], ((1.5, -2.0),)),
    ("list_index", lambda p: p[0] * p[2], ([1.5, 3, -2.0],)),
    ("list_slice", lambda p: np.sum(np.array(p[1:])), ([1.5, 0.5, -2.0],)),
    ("dict_index", lambda p: p["w"] * p["b"], ({"w": 1.5, "b": -2.0},)),
]

ELEMENTWISE_MORE = [  # issue 6: the rest of NumPy's differentiable ufuncs
    (f"np_{name}_{'x'.join(map(str, shape)) or 'scalar'}",
     lambda x, fn=fn: np.sum(fn(x) * np.cos(x)),
     (draw(*shape) if shape else float(draw()),))
    for name, (fn, draw) in {
        "arcsinh": (np.arcsinh, normal), "arccosh": (np.arccosh, lambda *s: positive(*s) + 1.0),
        "arctanh": (np.arctanh, unit), "exp2": (np.exp2, normal), "log2": (np.log2, positive),
        "log10": (np.log10, positive), "cbrt": (np.cbrt, positive),
        "cbrt_negative": (np.cbrt, lambda *s: -positive(*s)), "fabs": (np.fabs, distinct),
        "deg2rad": (np.deg2rad, normal), "radians": (np.radians, normal),
        "rad2deg": (np.rad2deg, normal), "degrees": (np.degrees, normal),
        "sinc": (np.sinc, positive), "sinc_negative": (np.sinc, lambda *s: -positive(*s)),
        "positive": (np.positive, normal), "real": (np.real, normal),
        "imag": (np.imag, normal), "conj": (np.conj, normal),
        "floor": (np.floor, distinct), "ceil": (np.ceil, distinct), "rint": (np.rint, distinct),
        "trunc": (np.trunc, distinct), "sign": (np.sign, distinct),
    }.items()
    for shape in [(), (2, 3)]
] + [
    ("np_arctan2_scalars", np.arctan2, (0.7, -1.2)),
    ("np_arctan2_broadcast", lambda y, x: np.sum(np.sin(np.arctan2(y, x)) * weights(2, 3)),
     (normal(2, 3), normal(3))),
    ("np_hypot_scalars", np.hypot, (0.7, -1.2)),
    ("np_hypot_broadcast", lambda x, y: np.sum(np.sin(np.hypot(x, y)) * weights(2, 3)),
     (normal(2, 3), normal(2, 1))),
    ("np_logaddexp_scalars", np.logaddexp, (0.7, -1.2)),
    ("np_logaddexp_broadcast", lambda x, y: np.sum(np.sin(np.logaddexp(x, y)) * weights(3, 4)),
     (normal(3, 4), normal(4))),
    ("np_logaddexp2_scalars", np.logaddexp2, (0.7, -1.2)),
    ("np_logaddexp2_broadcast",
     lambda x, y: np.sum(np.sin(np.logaddexp2(x, y)) * weights(3, 4)), (normal(3, 4), 0.4)),
    ("np_power_array_exponent", lambda x, y: np.sum(np.sin(np.power(x, y)) * weights(2, 3)),
     (positive(3), normal(2, 3))),
    ("np_power_scalar_base", lambda x, y: np.sum(np.power(x, y) * weights(4)), (1.7, normal(4))),
    ("np_float_power_scalars", np.float_power, (1.3, 0.7)),
    ("np_float_power_broadcast",
     lambda x, y: np.sum(np.sin(np.float_power(x, y)) * weights(2, 3)),
     (positive(2, 3), normal(3))),
    ("np_true_divide_scalars", np.true_divide, (1.3, -0.4)),
    ("np_true_divide_broadcast",
     lambda x, y: np.sum(np.sin(np.true_divide(x, y)) * weights(2, 3)),
     (normal(2, 3), positive(2, 1))),
    ("np_positive_negative", lambda x: np.sum(np.positive(x) * np.negative(x) * weights(3)),
     (normal(3),)),
    ("np_remainder_scalars", np.remainder, (3.7, 1.3)),
    ("np_mod_broadcast", lambda x, y: np.sum(np.sin(np.mod(x, y)) * weights(2, 3)),
     (normal(2, 3) * 3.0, positive(3))),
    ("np_fmod_scalars", np.fmod, (-3.7, 1.3)),
    ("np_fmod_broadcast", lambda x, y: np.sum(np.sin(np.fmod(x, y)) * weights(2, 3)),
     (normal(2, 3) * 3.0, positive(2, 1))),
    ("np_maximum_scalars", lambda x, y: np.sin(np.maximum(x, y)), (0.7, -1.2)),
    ("np_minimum_scalar_array", lambda x, y: np.sum(np.sin(np.minimum(x, y)) * weights(5)),
     (0.1, distinct(5))),
    ("np_fmax", lambda x, y: np.sum(np.sin(np.fmax(x, y)) * weights(3, 4)),
     (distinct(3, 4), distinct(4) + 0.1)),
    ("np_fmin", lambda x, y: np.sum(np.sin(np.fmin(x, y)) * weights(3, 4)),
     (distinct(3, 4), distinct(3, 1) + 0.1)),
    ("np_maximum_tie_split", lambda x: np.sum(np.sin(np.maximum(x, x)) * weights(4)),
     (normal(4),)),
    ("np_fmin_tie_split", lambda x: np.sin(np.fmin(x, x)), (0.7,)),
    ("np_clip_scalar", lambda x: np.sin(np.clip(x, -0.5, 0.5)), (0.3,)),
    ("np_clip_keywords", lambda x: np.sum(np.sin(np.clip(x, a_min=-0.5, a_max=0.5)) * weights(5)),
     (distinct(5),)),
    ("np_clip_min_max_keywords", lambda x, hi: np.sum(np.sin(np.clip(x, min=-0.5, max=hi))),
     (distinct(5), 0.45)),
    ("ndarray_clip", lambda x, lo: np.sum(x.clip(lo, 0.5) ** 2), (distinct(2, 3), -0.45)),
    ("ndarray_clip_max_only", lambda x: np.sum(np.sin(x.clip(max=0.2)) * weights(4)),
     (distinct(4),)),
    ("np_clip_array_upper", lambda x, hi: np.sum(np.sin(np.clip(x, -1.0, hi)) * weights(3, 4)),
     (distinct(3, 4), distinct(3, 1) * 0.1 + 0.013)),
    ("np_where_broadcast", lambda c, x, y: np.sum(np.sin(np.where(c, x, 2.0 * y)) * weights(3, 4)),
     (distinct(3, 1) > 0, normal(4), 0.7)),
    ("ndarray_real_imag_conj",
     lambda x: np.sum(np.sin(x.real + x.imag + x.conj() + x.conjugate()) * weights(2, 3)),
     (normal(2, 3),)),
]

REDUCTIONS_MORE = [  # issue 6: var, std, cumsum, cumprod, ...
    (f"{name}_{label}", fn, (normal(*shape), axis, keepdims))
    for name, fn in [
        ("var", lambda x, a, k: np.sum(np.sin(np.var(x, axis=a, keepdims=k)))),
        ("var_ddof", lambda x, a, k: np.sum(np.sin(np.var(x, axis=a, ddof=1, keepdims=k)))),
        ("std", lambda x, a, k: np.sum(np.sin(np.std(x, axis=a, keepdims=k)))),
        ("std_ddof", lambda x, a, k: np.sum(np.sin(np.std(x, axis=a, ddof=1, keepdims=k)))),
    ]
    for label, shape, axis, keepdims in REDUCTION_CASES
] + [
    (f"{name}_{label}", fn, (draw(*shape), axis))
    for name, fn, draw in [
        ("cumsum", lambda x, a: np.sum(np.sin(np.cumsum(x, axis=a))), normal),
        ("cumprod", lambda x, a: np.sum(np.sin(np.cumprod(x, axis=a))), positive),
    ]
    for label, shape, axis in [
        ("all", (3, 4), None), ("axis0", (3, 4), 0), ("axis1", (3, 4), 1),
        ("axis_negative", (2, 3, 4), -1), ("vector", (5,), None),
    ]
] + [
    ("cumprod_negative", lambda x: np.sum(np.cumprod(x) * weights(5)), (-positive(5),)),
    ("sum_where", lambda x: np.sum(np.sin(x), axis=1, where=x > 0) @ weights(3), (distinct(3, 4),)),
    ("sum_initial", lambda x, c: np.sum(x ** 2, initial=c) ** 2, (normal(3), 0.7)),
    ("sum_method_where", lambda x: x.sum(where=np.array([True, False, True])) ** 2,
     (normal(3),)),
    ("mean_where", lambda x: np.sum(np.mean(x ** 2, axis=0, where=x > -0.5) * weights(4)),
     (distinct(3, 4),)),
    ("var_correction", lambda x: np.sum(np.var(x, axis=1, correction=1) * weights(2)),
     (normal(2, 4),)),
    ("var_where", lambda x: np.var(x, where=np.arange(5) != 2), (normal(5),)),
    ("std_where_axis",
     lambda x: np.std(x, axis=1, where=weights(3, 4) % 3 > 0, keepdims=True)[:, 0] @ weights(3),
     (distinct(3, 4),)),
    ("std_correction", lambda x: np.std(x, correction=1.5), (normal(6),)),
    ("std_method_ddof", lambda x: x.std(ddof=1), (normal(6),)),
    ("cumprod_with_zeros", lambda x: np.sum(np.cumprod(x, axis=1) * weights(2, 3)),
     (np.array([[0.5, 0.0, 2.0], [1.0, 2.0, 0.0]]),)),
    ("cumprod_with_zeros_flat", lambda x: np.sum(np.sin(np.cumprod(x)) * weights(4)),
     (np.array([0.5, 0.0, 2.0, 1.5]),)),
    ("cumsum_scalar", lambda x: np.sum(np.sin(np.cumsum(x))), (0.7,)),
    ("var_method", lambda x: np.sin(x.var()), (normal(3, 4),)),
    ("var_method_axes", lambda x: np.sum(np.sin(x.var(axis=(0, 2), keepdims=True))),
     (normal(2, 3, 4),)),
    ("std_method_ddof", lambda x: np.sum(np.sin(x.std(0, ddof=1))), (normal(3, 4),)),
    ("cumsum_method", lambda x: np.sum(np.sin(x.cumsum(axis=0)) * weights(3, 4)),
     (normal(3, 4),)),
    ("cumprod_method", lambda x: np.sum(np.sin(x.cumprod(1)) * weights(3, 4)),
     (positive(3, 4),)),
    ("amax_axis1", lambda x: np.sum(np.sin(np.amax(x, axis=1)) * weights(3)), (distinct(3, 4),)),
    ("amin_keepdims", lambda x: np.sum(np.sin(np.amin(x, 0, keepdims=True)) * weights(1, 4)),
     (distinct(3, 4),)),
    ("max_ties_split_persistent",
     lambda x, y: np.sum(np.sin(np.max(np.stack([x, y, x]), axis=0)) * weights(4)),
     (distinct(4) + 5.0, distinct(4))),
    ("min_ties_split_persistent", lambda x, y: np.sin(np.min(np.array([x, y, x]))), (0.3, 1.2)),
]

LINALG = [  # issue 6: contractions and numpy.linalg
    ("dot_vector_matrix", lambda a, b: np.sum(np.sin(np.dot(a, b)) * weights(4)),
     (normal(3), normal(3, 4))),
    ("dot_tensor_vector", lambda a, b: np.sum(np.sin(np.dot(a, b)) * weights(2, 3)),
     (normal(2, 3, 4), normal(4))),
    ("vdot_vectors", lambda a, b: np.vdot(a, b) ** 2, (normal(4), normal(4))),
    ("vdot_flattens", lambda a, b: np.sin(np.vdot(a, b)), (normal(2, 3), normal(6))),
    ("inner_vectors", lambda a, b: np.inner(a, b) ** 2, (normal(4), normal(4))),
    ("inner_matrices", lambda a, b: np.sum(np.sin(np.inner(a, b)) * weights(2, 4)),
     (normal(2, 3), normal(4, 3))),
    ("inner_scalar", lambda a, b: np.sum(np.sin(np.inner(a, b)) * weights(2, 3)),
     (1.3, normal(2, 3))),
    ("np_matmul", lambda a, b: np.sum(np.sin(np.matmul(a, b)) * weights(3, 2)),
     (normal(3, 4), normal(4, 2))),
    ("np_matmul_batch", lambda a, b: np.sum(np.sin(np.matmul(a, b)) * weights(2, 3, 5)),
     (normal(2, 3, 4), normal(2, 4, 5))),
    ("np_matmul_batch_broadcast",
     lambda a, b: np.sum(np.sin(np.matmul(a, b)) * weights(2, 5, 3, 2)),
     (normal(2, 1, 3, 4), normal(5, 4, 2))),
    ("np_matmul_vector_batch", lambda a, b: np.sum(np.sin(np.matmul(a, b)) * weights(2, 3)),
     (normal(4), normal(2, 4, 3))),
    ("np_matmul_batch_vector", lambda a, b: np.sum(np.sin(np.matmul(a, b)) * weights(2, 3)),
     (normal(2, 3, 4), normal(4))),
    ("tensordot_axes0", lambda a, b: np.sum(np.sin(np.tensordot(a, b, 0)) * weights(2, 3)),
     (normal(2), normal(3))),
    ("tensordot_axes1", lambda a, b: np.sum(np.sin(np.tensordot(a, b, 1)) * weights(2, 4)),
     (normal(2, 3), normal(3, 4))),
    ("tensordot_axes2", lambda a, b: np.sum(np.sin(np.tensordot(a, b)) * weights(2, 5)),
     (normal(2, 3, 4), normal(3, 4, 5))),
    ("tensordot_axes_lists",
     lambda a, b: np.sum(np.sin(np.tensordot(a, b, axes=([1, 0], [0, 2]))) * weights(4, 5)),
     (normal(3, 2, 4), normal(2, 5, 3))),
    ("tensordot_axes_pair",
     lambda a, b: np.sum(np.sin(np.tensordot(a, b, axes=(2, 0))) * weights(2, 3, 5)),
     (normal(2, 3, 4), normal(4, 5))),
    ("einsum_explicit", lambda a, b: np.sum(np.sin(np.einsum("ij,jk->ik", a, b)) * weights(2, 4)),
     (normal(2, 3), normal(3, 4))),
    ("einsum_implicit", lambda a, b: np.sum(np.sin(np.einsum("jk,ij", a, b)) * weights(2, 4)),
     (normal(3, 4), normal(2, 3))),
    ("einsum_ellipsis", lambda a, b: np.sum(
        np.sin(np.einsum("...ij,...jk->...ik", a, b)) * weights(2, 3, 5)),
     (normal(2, 3, 4), normal(4, 5))),
    ("einsum_ellipsis_implicit",
     lambda a, b: np.sum(np.sin(np.einsum("...ij,jk", a, b)) * weights(2, 3, 5)),
     (normal(2, 3, 4), normal(4, 5))),
    ("einsum_ellipsis_broadcast",
     lambda a, b: np.sum(np.sin(np.einsum("...i,...i->...", a, b)) * weights(2, 4)),
     (normal(2, 1, 3), normal(4, 3))),
    ("einsum_trace", lambda a: np.sin(np.einsum("ii->", a)), (normal(3, 3),)),
    ("einsum_trace_implicit", lambda a: np.einsum("ii", a) ** 3, (normal(3, 3),)),
    ("einsum_diagonal", lambda a: np.sum(np.sin(np.einsum("ii->i", a)) * weights(3)),
     (normal(3, 3),)),
    ("einsum_batch_diagonal",
     lambda a: np.sum(np.sin(np.einsum("bii->bi", a)) * weights(2, 3)), (normal(2, 3, 3),)),
    ("einsum_repeated_and_contracted",
     lambda a, b: np.sum(np.sin(np.einsum("iij,j->i", a, b)) * weights(3)),
     (normal(3, 3, 4), normal(4))),
    ("einsum_sum_out", lambda a: np.sum(np.sin(np.einsum("ijk->j", a)) * weights(3)),
     (normal(2, 3, 4),)),
    ("einsum_outer", lambda a, b: np.sum(np.sin(np.einsum("i,j->ij", a, b)) * weights(2, 3)),
     (normal(2), normal(3))),
    ("einsum_three_operands",
     lambda a, b, c: np.sum(np.sin(np.einsum("ij,jk,kl->il", a, b, c)) * weights(2, 2)),
     (normal(2, 3), normal(3, 4), normal(4, 2))),
    ("einsum_same_operand", lambda a: np.einsum("ij,ij->", a, a) ** 2, (normal(2, 3),)),
    ("kron_matrices", lambda a, b: np.sum(np.sin(np.kron(a, b)) * weights(4, 6)),
     (normal(2, 3), normal(2, 2))),
    ("kron_vectors", lambda a, b: np.sum(np.sin(np.kron(a, b)) * weights(6)),
     (normal(3), normal(2))),
    ("kron_vector_matrix", lambda a, b: np.sum(np.sin(np.kron(a, b)) * weights(2, 6)),
     (normal(3), normal(2, 2))),
    ("cross_vectors", lambda a, b: np.sum(np.sin(np.cross(a, b)) * weights(3)),
     (normal(3), normal(3))),
    ("cross_broadcast", lambda a, b: np.sum(np.sin(np.cross(a, b)) * weights(4, 3)),
     (normal(4, 3), normal(3))),
    ("cross_axis", lambda a, b: np.sum(np.sin(np.cross(a, b, axis=0)) * weights(3, 4)),
     (normal(3, 4), normal(3, 4))),
    ("cross_axes_abc",
     lambda a, b: np.sum(np.sin(np.cross(a, b, axisa=0, axisc=0)) * weights(3, 2)),
     (normal(3, 2), normal(2, 3))),
    ("trace", lambda a: np.sin(np.trace(a)), (normal(3, 3),)),
    ("trace_offset", lambda a: np.sin(np.trace(a, 1)), (normal(3, 4),)),
    ("trace_axes", lambda a: np.sum(np.sin(np.trace(a, 0, 1, 2)) * weights(2)),
     (normal(2, 3, 3),)),
    ("trace_axes_reversed",
     lambda a: np.sum(np.sin(np.trace(a, -1, axis1=2, axis2=0)) * weights(2)),
     (normal(3, 2, 4),)),
    ("trace_method", lambda a: np.sin(a.trace(offset=-1)), (normal(3, 3),)),
    ("inv", lambda a: np.sum(np.sin(np.linalg.inv(a)) * weights(3, 3)),
     (3.0 * np.eye(3) + normal(3, 3),)),
    ("inv_batch", lambda a: np.sum(np.sin(np.linalg.inv(a)) * weights(2, 3, 3)),
     (3.0 * np.eye(3) + normal(2, 3, 3),)),
    ("pinv_tall", lambda a: np.sum(np.sin(np.linalg.pinv(a)) * weights(2, 3)), (normal(3, 2),)),
    ("pinv_wide", lambda a: np.sum(np.sin(np.linalg.pinv(a)) * weights(4, 2)), (normal(2, 4),)),
    ("pinv_batch", lambda a: np.sum(np.sin(np.linalg.pinv(a)) * weights(2, 2, 3)),
     (normal(2, 3, 2),)),
    ("pinv_hermitian",
     lambda a: np.sum(np.sin(np.linalg.pinv(a, hermitian=True)) * weights(3, 3)),
     ((lambda m: np.diag([3.0, -1.5, 0.7]) + 0.2 * (m + m.T))(normal(3, 3)),)),
    ("det", lambda a: np.linalg.det(a), (3.0 * np.eye(3) + normal(3, 3),)),
    ("det_batch", lambda a: np.sum(np.linalg.det(a) * weights(2)),
     (3.0 * np.eye(3) + normal(2, 3, 3),)),
    ("slogdet_negative", lambda a: np.linalg.slogdet(a)[1], (-3.0 * np.eye(3) + normal(3, 3),)),
    ("slogdet_batch", lambda a: np.sum(np.sin(np.linalg.slogdet(a).logabsdet) * weights(2)),
     (3.0 * np.eye(3) + normal(2, 3, 3),)),
    ("solve_vector", lambda a, b: np.sum(np.sin(np.linalg.solve(a, b)) * weights(3)),
     (3.0 * np.eye(3) + normal(3, 3), normal(3))),
    ("solve_matrix", lambda a, b: np.sum(np.sin(np.linalg.solve(a, b)) * weights(3, 2)),
     (3.0 * np.eye(3) + normal(3, 3), normal(3, 2))),
    ("solve_batch_vector", lambda a, b: np.sum(np.sin(np.linalg.solve(a, b)) * weights(2, 3)),
     (3.0 * np.eye(3) + normal(2, 3, 3), normal(3))),
    ("solve_batch", lambda a, b: np.sum(np.sin(np.linalg.solve(a, b)) * weights(2, 3, 2)),
     (3.0 * np.eye(3) + normal(2, 3, 3), normal(2, 3, 2))),
    ("solve_broadcast", lambda a, b: np.sum(np.sin(np.linalg.solve(a, b)) * weights(2, 3, 4)),
     (3.0 * np.eye(3) + normal(3, 3), normal(2, 3, 4))),
    ("cholesky", lambda a: np.sum(np.sin(np.linalg.cholesky(a)) * weights(3, 3)),
     (3.0 * np.eye(3) + 0.5 * normal(3, 3),)),
    ("cholesky_batch", lambda a: np.sum(np.sin(np.linalg.cholesky(a)) * weights(2, 3, 3)),
     (3.0 * np.eye(3) + 0.5 * normal(2, 3, 3),)),
    ("cholesky_upper",
     lambda a: np.sum(np.sin(np.linalg.cholesky(a, upper=True)) * weights(3, 3)),
     (3.0 * np.eye(3) + 0.5 * normal(3, 3),)),
    ("eigh_eigenvalues", lambda a: np.sum(np.sin(np.linalg.eigh(a)[0]) * weights(3)),
     (np.diag([1.0, 2.0, 3.5]) + 0.3 * normal(3, 3),)),
    ("eigh_eigenvectors", lambda a: np.sum(np.sin(np.linalg.eigh(a)[1] ** 2) * weights(3, 3)),
     (np.diag([1.0, 2.0, 3.5]) + 0.3 * normal(3, 3),)),
    ("eigh_batch", lambda a: np.sum(np.sin(np.linalg.eigh(a).eigenvalues) * weights(2, 3))
     + np.sum(np.sin(np.linalg.eigh(a).eigenvectors ** 2) * weights(2, 3, 3)),
     ((lambda m: np.diag([1.0, 2.0, 3.5]) + 0.2 * (m + np.swapaxes(m, 1, 2)))(
         normal(2, 3, 3)),)),
    ("eigh_upper", lambda a: np.sum(np.sin(np.linalg.eigh(a, "U")[1] ** 2) * weights(3, 3)),
     (np.diag([1.0, 2.0, 3.5]) + 0.3 * normal(3, 3),)),
    ("svd_tall", lambda a: np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[0] ** 2)
                                  * weights(3, 2))
     + np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[1]) * weights(2)),
     (np.eye(3, 2) * [2.0, 1.0] + 0.3 * normal(3, 2),)),
    ("svd_wide", lambda a: np.sum(np.sin(np.linalg.svd(a, full_matrices=False).Vh ** 2)
                                  * weights(2, 4)),
     (np.eye(2, 4) * [[2.0], [1.0]] + 0.3 * normal(2, 4),)),
    ("svd_batch", lambda a: np.sum(np.sin(np.linalg.svd(a, full_matrices=False)[0] ** 2)
                                   * weights(2, 3, 2)),
     (np.eye(3, 2) * [2.0, 1.0] + 0.3 * normal(2, 3, 2),)),
    ("svd_square", lambda a: np.sum(np.sin(np.linalg.svd(a)[2] ** 2) * weights(3, 3)),
     (np.diag([3.0, 2.0, 1.0]) + 0.3 * normal(3, 3),)),
    ("svd_hermitian", lambda a: np.sum(np.sin(np.linalg.svd(a, hermitian=True)[0] ** 2)
                                       * weights(3, 3)),
     ((lambda m: np.diag([3.0, -1.5, 0.7]) + 0.2 * (m + m.T))(normal(3, 3)),)),
    ("svd_values", lambda a: np.sum(np.sin(np.linalg.svd(a, compute_uv=False)) * weights(3)),
     (np.eye(3, 4) * [[3.0], [2.0], [1.0]] + 0.3 * normal(3, 4),)),
] + [
    (f"norm_vector_{label}", lambda x, o=o: np.linalg.norm(x, o), (normal(5),))
    for label, o in [("default", None), ("2", 2), ("1", 1), ("inf", np.inf),
                     ("minus_inf", -np.inf), ("3", 3), ("half", 0.5), ("0", 0)]
] + [
    (f"norm_matrix_{label}", lambda x, o=o: np.linalg.norm(x, o),
     (np.eye(3, 4) * [[3.0], [2.0], [1.0]] + 0.3 * normal(3, 4),))
    for label, o in [("default", None), ("fro", "fro"), ("nuc", "nuc"), ("2", 2),
                     ("minus_2", -2), ("1", 1), ("minus_1", -1), ("inf", np.inf),
                     ("minus_inf", -np.inf)]
] + [
    ("norm_axis", lambda x: np.sum(np.sin(np.linalg.norm(x, axis=1)) * weights(3)),
     (normal(3, 4),)),
    ("norm_flattens", lambda x: np.linalg.norm(x), (normal(2, 3, 4),)),
    ("norm_vector_axis_keepdims",
     lambda x: np.sum(np.sin(np.linalg.norm(x, np.inf, 0, True)) * weights(1, 4)),
     (normal(3, 4),)),
    ("norm_vector_p_axis", lambda x: np.sum(np.sin(np.linalg.norm(x, 3, -1)) * weights(2, 3)),
     (normal(2, 3, 4),)),
    ("norm_matrix_axes", lambda x: np.sum(np.sin(np.linalg.norm(x, "nuc", (1, 2))) * weights(2)),
     (np.eye(3, 4) * [[3.0], [2.0], [1.0]] + 0.3 * normal(2, 3, 4),)),
    ("norm_matrix_axes_reversed_keepdims",
     lambda x: np.sum(np.sin(np.linalg.norm(x, 2, (2, 0), True)) * weights(1, 3, 1)),
     (np.eye(4, 2)[:, None, :] * [3.0, 1.0] + 0.3 * normal(4, 3, 2),)),
    ("norm_matrix_one_axes",
     lambda x: np.sum(np.sin(np.linalg.norm(x, 1, (2, 0))) * weights(3)), (normal(4, 3, 2),)),
    ("norm_matrix_fro_axes",
     lambda x: np.sum(np.sin(np.linalg.norm(x, axis=(0, 2), keepdims=True)) * weights(1, 3, 1)),
     (normal(4, 3, 2),)),
]

SHAPES_MORE = [  # issue 6: the rest of the shape functions
    ("rollaxis", lambda x: np.sum(np.rollaxis(x, 2) * weights(4, 2, 3)), (normal(2, 3, 4),)),
    ("rollaxis_start", lambda x: np.sum(np.sin(np.rollaxis(x, 0, 2)) * weights(3, 2, 4)),
     (normal(2, 3, 4),)),
    ("swapaxes", lambda x: np.sum(np.swapaxes(x, 0, 2) * weights(4, 3, 2)), (normal(2, 3, 4),)),
    ("swapaxes_method", lambda x: np.sum(np.sin(x.swapaxes(0, 1)) * weights(4, 3)),
     (normal(3, 4),)),
    ("moveaxis", lambda x: np.sum(np.moveaxis(x, 0, -1) * weights(3, 4, 2)), (normal(2, 3, 4),)),
    ("moveaxis_several", lambda x: np.sum(np.moveaxis(x, (0, 1), (2, 0)) * weights(3, 4, 2)),
     (normal(2, 3, 4),)),
    ("ravel", lambda x: np.sum(np.ravel(x) * weights(12)), (normal(3, 4),)),
    ("ravel_method", lambda x: np.sum(np.sin(x.ravel()) * weights(6)), (normal(2, 3),)),
    ("flatten", lambda x: np.sum(x.flatten() * weights(6)), (normal(3, 2),)),
    ("atleast_1d", lambda x: np.sum(np.sin(np.atleast_1d(x))), (0.7,)),
    ("atleast_2d", lambda x: np.sum(np.atleast_2d(x) * weights(1, 3)), (normal(3),)),
    ("atleast_3d", lambda x: np.sum(np.atleast_3d(x) * weights(2, 3, 1)), (normal(2, 3),)),
    ("broadcast_to", lambda x: np.sum(np.sin(np.broadcast_to(x, (2, 3, 4))) * weights(2, 3, 4)),
     (normal(3, 1),)),
    ("tile", lambda x: np.sum(np.tile(x, 3) * weights(6)), (normal(2),)),
    ("tile_2d", lambda x: np.sum(np.sin(np.tile(x, (2, 3))) * weights(4, 9)), (normal(2, 3),)),
    ("tile_more_reps_than_axes", lambda x: np.sum(np.tile(x, (2, 1, 2)) ** 2), (normal(2, 3),)),
    ("repeat_flat", lambda x: np.sum(np.repeat(x, 2) * weights(12)), (normal(2, 3),)),
    ("repeat_axis", lambda x: np.sum(np.sin(np.repeat(x, [1, 3], axis=0)) * weights(4, 3)),
     (normal(2, 3),)),
    ("repeat_method", lambda x: np.sum(x.repeat(3, axis=1) ** 2), (normal(2, 2),)),
    ("flip", lambda x: np.sum(np.flip(x) * weights(2, 3)), (normal(2, 3),)),
    ("flip_axis", lambda x: np.sum(np.flip(x, 1) * weights(2, 3)), (normal(2, 3),)),
    ("flipud", lambda x: np.sum(np.sin(np.flipud(x)) * weights(3, 2)), (normal(3, 2),)),
    ("fliplr", lambda x: np.sum(np.fliplr(x) * weights(3, 2)), (normal(3, 2),)),
    ("rot90", lambda x: np.sum(np.rot90(x) * weights(3, 2)), (normal(2, 3),)),
    ("rot90_k3_axes", lambda x: np.sum(np.sin(np.rot90(x, 3, (1, 2))) * weights(2, 4, 3)),
     (normal(2, 3, 4),)),
    ("roll", lambda x: np.sum(np.roll(x, 2) * weights(5)), (normal(5),)),
    ("roll_axis", lambda x: np.sum(np.roll(x, -1, axis=1) * weights(2, 3)), (normal(2, 3),)),
    ("roll_several", lambda x: np.sum(np.roll(x, (1, 2), axis=(0, 1)) * weights(2, 3)),
     (normal(2, 3),)),
    ("triu", lambda x: np.sum(np.sin(np.triu(x)) * weights(3, 3)), (normal(3, 3),)),
    ("triu_k", lambda x: np.sum(np.triu(x, 1) * weights(3, 4)), (normal(3, 4),)),
    ("tril", lambda x: np.sum(np.tril(x) * weights(3, 3)), (normal(3, 3),)),
    ("tril_batch", lambda x: np.sum(np.tril(x, -1) ** 2), (normal(2, 3, 3),)),
    ("diag_of_vector", lambda x: np.sum(np.sin(np.diag(x)) * weights(3, 3)), (normal(3),)),
    ("diag_offset", lambda x: np.sum(np.diag(x, 1) * weights(4, 4)), (normal(3),)),
    ("diag_of_matrix", lambda x: np.sum(np.diag(x) * weights(3)), (normal(3, 3),)),
    ("diag_of_matrix_negative", lambda x: np.sum(np.diag(x, -1) ** 2), (normal(3, 4),)),
    ("diagonal", lambda x: np.sum(np.sin(np.diagonal(x)) * weights(3)), (normal(3, 4),)),
    ("diagonal_axes", lambda x: np.sum(np.diagonal(x, 1, 0, 2) * weights(3, 2)),
     (normal(3, 3, 3),)),
    ("diagonal_method", lambda x: np.sum(x.diagonal() ** 2), (normal(3, 3),)),
    ("pad_constant", lambda x: np.sum(np.sin(np.pad(x, 1)) * weights(4, 5)), (normal(2, 3),)),
    ("pad_widths", lambda x: np.sum(np.pad(x, ((0, 1), (2, 1))) * weights(3, 6)),
     (normal(2, 3),)),
    ("pad_constant_value", lambda x, c: np.sum(np.pad(x, 1, constant_values=c) * weights(5)),
     (normal(3), 0.7)),
    ("pad_edge", lambda x: np.sum(np.pad(x, 2, mode="edge") * weights(7)), (normal(3),)),
    ("pad_reflect", lambda x: np.sum(np.pad(x, (1, 2), mode="reflect") * weights(7)),
     (normal(4),)),
    ("pad_wrap_2d", lambda x: np.sum(np.sin(np.pad(x, 1, mode="wrap")) * weights(4, 5)),
     (normal(2, 3),)),
    ("diff", lambda x: np.sum(np.diff(x) * weights(4)), (normal(5),)),
    ("diff_n2", lambda x: np.sum(np.sin(np.diff(x, 2)) * weights(3)), (normal(5),)),
    ("diff_axis0", lambda x: np.sum(np.diff(x, axis=0) ** 2), (normal(3, 4),)),
    ("vstack", lambda a, b: np.sum(np.vstack([a, b]) * weights(3, 3)),
     (normal(3), normal(2, 3))),
    ("hstack_vectors", lambda a, b: np.sum(np.sin(np.hstack((a, b))) * weights(5)),
     (normal(2), normal(3))),
    ("hstack_matrices", lambda a, b: np.sum(np.hstack([a, b]) * weights(2, 5)),
     (normal(2, 3), normal(2, 2))),
    ("dstack", lambda a, b: np.sum(np.dstack([a, b]) * weights(1, 3, 2)), (normal(3), normal(3))),
    ("column_stack", lambda a, b: np.sum(np.column_stack([a, b]) * weights(3, 3)),
     (normal(3), normal(3, 2))),
    ("append_flat", lambda a, b: np.sum(np.sin(np.append(a, b)) * weights(7)),
     (normal(2, 2), normal(3))),
    ("append_axis", lambda a, b: np.sum(np.append(a, b, axis=0) * weights(3, 2)),
     (normal(2, 2), normal(1, 2))),
    ("split_sections", lambda x: np.sum(np.split(x, 3)[1] * weights(2)), (normal(6),)),
    ("split_indices", lambda x: np.sum(np.sin(np.split(x, [1, 3], axis=1)[2]) * weights(2, 1)),
     (normal(2, 4),)),
    ("split_all_parts", lambda x: sum(np.sum(p ** 2) * i for i, p in enumerate(np.split(x, 2))),
     (normal(4),)),
    ("array_split", lambda x: np.sum(np.array_split(x, 3)[0] * weights(2)), (normal(5),)),
    ("hsplit", lambda x: np.sum(np.hsplit(x, 2)[1] * weights(3, 2)), (normal(3, 4),)),
    ("vsplit", lambda x: np.sum(np.sin(np.vsplit(x, [1])[1]) * weights(2, 2)), (normal(3, 2),)),
    ("dsplit", lambda x: np.sum(np.dsplit(x, 2)[0] * weights(1, 2, 1)), (normal(1, 2, 2),)),
    ("sort", lambda x: np.sum(np.sort(x) * weights(5)), (distinct(5),)),
    ("sort_axis0", lambda x: np.sum(np.sin(np.sort(x, axis=0)) * weights(3, 2)),
     (distinct(3, 2),)),
    ("sort_flat", lambda x: np.sum(np.sort(x, axis=None) * weights(6)), (distinct(2, 3),)),
    ("partition", lambda x: np.partition(x, 2)[2] * 3.0 + np.partition(x, 2)[0], (distinct(5),)),
    ("partition_2d", lambda x: np.sum(np.partition(x, 1, axis=1)[:, 1] ** 2), (distinct(3, 4),)),
    ("take", lambda x: np.sum(np.take(x, [2, 0, 2]) * weights(3)), (normal(2, 2),)),
    ("take_axis", lambda x: np.sum(np.sin(np.take(x, [1, 1], axis=1)) * weights(3, 2)),
     (normal(3, 2),)),
    ("take_along_axis", lambda x: np.sum(
        np.take_along_axis(x, np.array([[1, 0, 1], [2, 2, 0]]), axis=0) * weights(2, 3)),
     (normal(3, 3),)),
]

INDEXING_MORE = [  # issue 6: advanced indexing
    ("negative_index_2d", lambda x: np.sum(x[-1, -2:] * weights(2)), (normal(3, 4),)),
    ("negative_step_2d", lambda x: np.sum(x[::-2, 1::2] * weights(2, 2)), (normal(3, 4),)),
    ("ellipsis_middle", lambda x: np.sum(np.sin(x[0, ..., 1:]) * weights(3, 3)),
     (normal(2, 3, 4),)),
    ("newaxis_middle", lambda x: np.sum(x[:, None, :] * weights(2, 3, 4)), (normal(2, 4),)),
    ("mask_2d", lambda x: np.sum(np.sin(x[x > 0.0])), (distinct(3, 4),)),
    ("mask_rows", lambda x: np.sum(x[np.array([True, False, True])] * weights(2, 4)),
     (normal(3, 4),)),
    ("mask_constant", lambda x: np.sum(x[np.arange(6) % 2 == 0] ** 2), (normal(6),)),
    ("integer_array_2d_repeats", lambda x: np.sum(x[np.array([[0, 1], [1, 1]])] * weights(2, 2, 3)),
     (normal(2, 3),)),
    ("integer_list", lambda x: np.sum(np.sin(x[[2, 2, 0]])), (normal(3),)),
    ("integer_arrays_pairs", lambda x: np.sum(x[np.array([0, 1, 0]), np.array([2, 0, 2])] ** 3),
     (normal(2, 3),)),
    ("integer_array_with_slice", lambda x: np.sum(x[1:, np.array([0, 0, 2])] * weights(2, 3)),
     (normal(3, 4),)),
    ("integer_array_negative", lambda x: np.sum(x[np.array([-1, 0, -1])] * weights(3)),
     (normal(4),)),
    ("integer_and_scalar", lambda x: np.sum(np.sin(x[np.array([1, 0]), 1])), (normal(2, 3),)),
    ("ix", lambda x: np.sum(x[np.ix_([0, 2], [1, 1, 3])] * weights(2, 3)), (normal(3, 4),)),
    ("argmax_index", lambda x: x[np.argmax(x)] * x[0], (distinct(4),)),
    ("nonzero_index", lambda x: np.sum(x[np.nonzero(x > 0)] ** 2), (distinct(2, 3),)),
]

CREATION = [  # issue 6: arrays made from differentiable values
    ("array_of_rows", lambda a, b: np.sum(np.array([a, b, a]) * weights(3, 2)),
     (normal(2), normal(2))),
    ("array_mixed_constants", lambda x: np.sum(np.sin(np.array([[x, 1.0], [2.0, x * x]]))), (0.3,)),
    ("array_of_tuple", lambda x, y: np.sum(np.array((x, y)) * weights(2)), (0.3, -1.1)),
    ("array_of_array", lambda x: np.sum(np.array(x) * weights(3)), (normal(3),)),
    ("array_dtype", lambda x, y: np.sum(np.array([x, y], dtype=float) ** 2), (0.3, -1.1)),
    ("asarray", lambda x, y: np.sum(np.sin(np.asarray([x, y, x]))), (0.3, -1.1)),
    ("asarray_of_array", lambda x: np.sum(np.asarray(x) ** 2), (normal(2, 2),)),
    ("linspace", lambda a, b: np.sum(np.sin(np.linspace(a, b, 5))), (0.3, 1.7)),
    ("linspace_no_endpoint", lambda a, b: np.sum(np.linspace(a, b, 4, endpoint=False) ** 2),
     (0.3, 1.7)),
    ("linspace_arrays", lambda a, b: np.sum(np.sin(np.linspace(a, b, 3)) * weights(3, 2)),
     (normal(2), normal(2))),
    ("linspace_axis", lambda a, b: np.sum(np.linspace(a, b, 3, axis=1) ** 2 * weights(2, 3)),
     (normal(2), normal(2))),
    ("full", lambda c: np.sum(np.full((2, 3), c) * weights(2, 3)), (0.7,)),
    ("full_array_fill", lambda c: np.sum(np.sin(np.full((2, 3), c))), (normal(3),)),
    ("full_like", lambda x, c: np.sum(np.full_like(x, c) * x), (normal(3), 0.7)),
    ("zeros_like_constant", lambda x: np.sum((np.zeros_like(x) + 1.0) * x ** 2), (normal(3),)),
    ("ones_like_constant", lambda x: np.sum(np.ones_like(x) * np.sin(x)), (normal(2, 2),)),
    ("empty_filled", lambda x: np.sum(np.zeros((2,)) + x), (normal(2),)),
]

TABLE = (PYTHON_OPERATORS + MATH + ELEMENTWISE + REDUCTIONS + PRODUCTS_AND_SHAPES + INDEXING
         + ELEMENTWISE_MORE + REDUCTIONS_MORE + LINALG + SHAPES_MORE + INDEXING_MORE + CREATION)


# Rows whose finite differences stop meaning anything above an order: at a tie of
# np.max there is no second derivative; beside a zero, cumprod's third derivative
# comes from the division formula (exact at the zero itself), which loses digits there.
HIGHEST_ORDER = {"max_ties_split": 1, "cumprod_with_zeros": 2, "cumprod_with_zeros_flat": 2}


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name, fn, args", TABLE, ids=[row[0] for row in TABLE])
def test_primitive(name, fn, args, order):
    if order > HIGHEST_ORDER.get(name, 3):
        pytest.skip("finite differences at this point do not check this order")
    check_grads(fn, args, order=order)


def test_table_covers_every_numpy_primitive_of_the_core():
    names = {row[0] for row in TABLE}
    for required in ["np_sin_5", "np_arcsin_2x3", "np_reciprocal_scalar", "np_power",
                     "np_maximum", "np_minimum", "np_where", "np_clip", "sum_axis0",
                     "prod_axis_tuple", "max_axis1_keepdims", "dot_matrices", "outer",
                     "matmul_batch_broadcast", "reshape", "transpose_axes", "T", "expand_dims",
                     "squeeze", "concatenate", "stack", "array_nested", "slice_2d"]:
        assert required in names
