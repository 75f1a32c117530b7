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

ELEMENTWISE_MORE = []  # issue 6: the rest of NumPy's differentiable ufuncs

REDUCTIONS_MORE = []  # issue 6: var, std, cumsum, cumprod, ...

LINALG = []  # issue 6: contractions and numpy.linalg

SHAPES_MORE = []  # issue 6: the rest of the shape functions

INDEXING_MORE = []  # issue 6: advanced indexing

CREATION = []  # issue 6: arrays made from differentiable values

TABLE = (PYTHON_OPERATORS + MATH + ELEMENTWISE + REDUCTIONS + PRODUCTS_AND_SHAPES + INDEXING
         + ELEMENTWISE_MORE + REDUCTIONS_MORE + LINALG + SHAPES_MORE + INDEXING_MORE + CREATION)


AT_A_KINK = {"max_ties_split"}  # a tie of np.max: no second derivative to compare with


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name, fn, args", TABLE, ids=[row[0] for row in TABLE])
def test_primitive(name, fn, args, order):
    if order > 1 and name in AT_A_KINK:
        pytest.skip("finite differences of the first derivative are meaningless at a tie")
    check_grads(fn, args, order=order)


def test_table_covers_every_numpy_primitive_of_the_core():
    names = {row[0] for row in TABLE}
    for required in ["np_sin_5", "np_arcsin_2x3", "np_reciprocal_scalar", "np_power",
                     "np_maximum", "np_minimum", "np_where", "np_clip", "sum_axis0",
                     "prod_axis_tuple", "max_axis1_keepdims", "dot_matrices", "outer",
                     "matmul_batch_broadcast", "reshape", "transpose_axes", "T", "expand_dims",
                     "squeeze", "concatenate", "stack", "array_nested", "slice_2d"]:
        assert required in names
