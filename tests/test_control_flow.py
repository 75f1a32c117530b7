"""Control flow, mutation, data structures, objects and iteration builtins.

A corpus in the style of autograd's `check_grads` tests: a table of small
functions, each with its inputs, all checked against finite differences by one
helper at every order in ORDERS (the derivative and the derivative of the
derivative). Inputs keep away from kinks (ties of `max`, branch boundaries),
which central differences would straddle.
"""

import collections
import copy
import dataclasses
import inspect
import sys

import numpy as np
import pytest

import pullback
from pullback import TransformError
from pullback.testing import check_grads

ORDERS = [1, 2]
HERE = "test_control_flow.py"
rng = np.random.default_rng(11)


def vec(*shape):
    return rng.standard_normal(shape)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# -- conditionals --------------------------------------------------------------


def if_elif_else(x):
    if x > 1.0:
        y = x ** 3
    elif x > 0.0:
        y = np.sin(x) * 2.0
    else:
        y = -x * 3.0
    return y * x


def conditional_expression(x, y):
    z = x * y if x > y else x + y * y
    return z * (np.sin(x) if y > 0 else np.cos(x))


def and_or_not(x, y):
    if x > 0 and not y < 0:
        z = x * y
    elif x > 0 or y > 5.0:
        z = x - y
    else:
        z = x * x
    return z * 2.0


def and_or_values(x, y):
    a = (x > 0 and y) or x
    b = y or 1.0
    c = x > 10.0 and y
    return a * b + (c or y * x)


def not_of_a_value(x, n):
    flag = not n
    if flag:
        return x * x
    return x * 3.0


def any_predicate(x):
    if np.any(x > 1.5):
        return np.sum(x ** 2)
    return np.sum(np.sin(x))


def all_predicate(x):
    if np.all(x > 0):
        return np.sum(np.log(x))
    if not np.all(x < 0):
        return np.sum(x ** 3)
    return np.sum(-x)


def array_comparisons(x, y):
    mask = x > y
    z = np.where(mask, x * y, x + y)
    if (x @ y) > 0:
        z = z * 2.0
    return np.sum(z ** 2)


def branches_assign_different_variables(x, flip):
    if flip:
        a = np.sin(x)
        scale = 2.0
    else:
        b = np.cos(x)
        scale = 3.0
    if flip:
        return a * scale
    return b * scale


def variable_defined_in_one_branch(x):
    y = x * 2.0
    if x > 0:
        z = y * y
        y = z + x
    return y


def piecewise(x):
    if x < -1.0:
        return 2.0 * x + 1.0
    elif x < 0.0:
        return -x * x
    elif x < 1.0:
        return x ** 3
    return np.exp(x - 1.0)


def chained_comparison(x, y):
    if 0.0 < x < y:
        return x * y
    return x + y


def branch_on_shape(x):
    if x.ndim == 2:
        return np.sum(x @ x.T)
    return np.sum(x * x)


def nested_ifs_in_a_loop(xs):
    total = 0.0
    for x in xs:
        if x > 0:
            if x > 1.0:
                total = total + x * x
            else:
                total = total + np.sin(x)
        else:
            total = total - x * 3.0
    return total


def if_inside_while(x):
    i = 0
    while i < 6:
        if i % 2 == 0:
            x = x * 1.1
        elif i == 3:
            x = np.sin(x) + x
        else:
            x = x - 0.1 * x * x
        i += 1
    return x


# -- loops ---------------------------------------------------------------------


def for_range(x, n):
    total = 0.0
    for i in range(n):
        total = total + x ** (i + 1) / (i + 1)
    return total


def for_range_step(x):
    total = x
    for i in range(1, 10, 3):
        total = total * x + i
    return total


def for_over_list(x, w):
    total = 0.0
    for item in [x, w, x * w, 2.0]:
        total = total + item * item
    return total


def for_over_a_list_argument(xs):
    total = 1.0
    for item in xs:
        total = total * (1.0 + item)
    return total


def for_over_tuple(x, y):
    total = 0.0
    for item in (x, y, np.sin(x)):
        total = total + item ** 2
    return total


def for_over_array_rows(a, w):
    total = 0.0
    for row in a:
        total = total + np.tanh(row @ w)
    return total


def for_over_array_elements(x):
    total = 0.0
    for v in x:
        total = total + v * v * v
    return total


def for_zip(xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        total = total + x * np.sin(y)
    return total


def for_enumerate(xs):
    total = 0.0
    for i, x in enumerate(xs):
        total = total + (i + 1) * x * x
    return total


def for_enumerate_start(xs):
    total = 0.0
    for i, x in enumerate(xs, 2):
        total = total + x ** i
    return total


def for_reversed(xs):
    acc = 0.0
    for x in reversed(xs):
        acc = acc * 0.5 + x
    return acc * acc


def for_dict_items(d):
    total = 0.0
    for k, v in d.items():
        weight = 2.0 if k == "a" else 1.0
        total = total + weight * np.sum(v * v)
    return total


def for_dict_values(d):
    total = 1.0
    for v in d.values():
        total = total * np.sum(np.sin(v))
    return total


def for_dict_keys(d):
    total = 0.0
    for k in d:
        total = total + np.sum(d[k]) ** 2
    return total


def while_fixed_count(x):
    i = 0
    while i < 5:
        x = np.sin(x) + x
        i += 1
    return x


def while_value_dependent(x):
    y = x
    steps = 0
    while y < 10.0:
        y = y * 1.7 + x
        steps += 1
    return y * steps


def loop_with_break(xs):
    total = 0.0
    for x in xs:
        if x < 0:
            break
        total = total + x * x
    return total


def loop_with_continue(xs):
    total = 0.0
    for x in xs:
        if x < 0:
            continue
        total = total + np.sin(x)
    return total


def while_with_break_and_continue(x):
    i = 0
    while i < 40:
        i += 1
        if i % 3 == 0:
            continue
        x = x * 0.9 + 0.1 * np.cos(x)
        if i > 7:
            break
    return x


def counter_with_break(x):
    i = 0
    for _ in range(20):
        i += 1  # noqa: SIM113
        if i > 3:
            break
        x = x * np.cos(x) + x
    return x


def for_else_completes(xs):
    total = 0.0
    for x in xs:
        if x > 100.0:
            break
        total = total + x
    else:
        total = total * total
    return total


def for_else_broken(xs):
    total = 0.0
    for x in xs:
        total = total + x
        if x < 0.0:
            break
    else:
        total = total * total
    return total * 3.0


def while_else(x):
    i = 0
    while i < 3:
        x = x * x * 0.5
        i += 1
    else:
        x = x + 1.0
    return x


def while_else_broken(x):
    i = 0
    while i < 10:
        x = x + 0.5 * np.sin(x)
        if i == 2:
            break
        i += 1
    else:
        x = x * 100.0
    return x


def return_inside_loop(xs):
    acc = 0.0
    for x in xs:
        acc = acc + x * x
        if acc > 2.0:
            return acc * x
    return acc


def return_inside_nested_loops(a):
    total = 0.0
    for row in a:
        for v in row:
            total = total + v * v
            if total > 2.5:
                return total * v
    return -total


def return_inside_while(x):
    while True:
        x = x * 1.5
        if x > 4.0:
            return x * x


def return_from_loop_in_else(xs):
    for x in xs:
        if x > 100.0:
            return x
    else:
        return xs[0] * xs[1]
    return 0.0


def nested_loops(a, b):
    n, m = a.shape
    total = 0.0
    for i in range(n):
        for j in range(m):
            total = total + a[i, j] * b[j, i]
    return total


def nested_loops_with_inner_break(a):
    total = 0.0
    for row in a:
        for v in row:
            if v < 0:
                break
            total = total + v
        total = total * 0.9
    return total


def loop_accumulators(xs):
    total, squares, product = 0.0, 0.0, 1.0
    for x in xs:
        total = total + x
        squares += x * x
        product *= x
    return total * squares + product


def while_on_a_norm(x):
    while np.linalg.norm(x) > 0.1:
        x = x * 0.5
    return np.sum(np.sin(x))


def return_in_a_for_inside_a_while(x):
    k = 0
    while k < 5:
        for _ in range(3):
            x = x * 1.2 + 0.1
            if x > 3.0:
                return x * k
        k += 1
    return x


def closure_defined_in_a_loop_called_at_once(xs, w):
    total = 0.0
    for x in xs:
        def g(y):
            return y * w + x  # noqa: B023

        total = total + g(x * x)
    return total


def newton_sqrt_fixed(a):
    x = a
    for _ in range(8):
        x = x - (x * x - a) / (2.0 * x)
    return x


def newton_sqrt_until_converged(a):
    x = a
    i = 0
    while abs(x * x - a) > 1e-13 and i < 100:
        x = 0.5 * (x + a / x)
        i += 1
    return x


def newton_cube_root_array(a):
    x = np.ones_like(a)
    for _ in range(30):
        x = x - (x ** 3 - a) / (3.0 * x ** 2)
    return np.sum(x)


def horner(coeffs, x):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def cumulative_sum(x):
    out = np.zeros_like(x)
    running = 0.0
    for i in range(len(x)):
        running = running + x[i]
        out[i] = running
    return np.sum(out * out)


def tuple_state(x, y):
    state = (x, y)
    for _ in range(5):
        a, b = state
        state = (b, a * 0.5 + np.sin(b))
    return state[0] * state[1]


def list_state(x, y):
    state = [x, y]
    for _ in range(4):
        state = [state[1], state[0] + state[1] * 0.5]
    return state[0] * state[1]


def long_for_loop(x):
    for _ in range(2000):
        x = x + 0.001 * np.sin(x)
    return x


def long_while_loop(x):
    i = 0
    while i < 2000:
        x = x - 0.0005 * x * x
        i += 1
    return x


def layers_loop(ws, x):
    h = x
    for w in ws:
        h = np.tanh(w @ h)
    return np.sum(h)


def loop_variable_after_loop(x):
    for i in range(4):
        pass
    return x * i


def empty_loop(x):
    total = x
    for i in range(0):
        total = total * i
    return total * 2.0


def integer_state_only(x):
    count = 0
    for i in range(5):
        count = count + i
    return x * count


# -- mutation of values created inside the function ------------------------------


def item_assignment(x):
    y = np.zeros(3)
    y[0] = x[1] * 2.0
    y[2] = np.sin(x[0])
    return np.sum(y * y) + y[0] * x[2]


def slice_augmented_assignment(x):
    y = np.ones(5)
    y[1:3] += x[:2] * x[2]
    y[3:] *= x[1:3]
    return np.sum(y ** 2)


def item_assignment_in_a_loop(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] * x[i - 1]
    return np.sum(np.sin(out))


def row_assignment(a):
    out = np.zeros((3, 2))
    out[0] = a[1] * 2.0
    out[1, :] = np.tanh(a[0])
    out[:, 1] += a[2, 0]
    return np.sum(out ** 2)


def rnn(w, u, xs):
    steps = xs.shape[0]
    n = w.shape[0]
    h = np.zeros((steps + 1, n))
    for t in range(steps):
        h[t + 1] = np.tanh(w @ h[t] + u @ xs[t])
    return np.sum(h[-1] ** 2) + np.sum(h)


def enumerate_rows_assignment(a, w):
    out = np.zeros(a.shape[0])
    for i, row in enumerate(a):
        out[i] = np.tanh(row @ w)
    return np.sum(out ** 2)


def item_of_a_row_view_assignment(v):
    m = np.zeros((2, 2))
    m[0][1] = v[0] * 2.0
    m[1][0] = v[1] * v[0]
    return np.sum(m * m) + m[0, 1]


def dict_of_arrays_accumulate(xs):
    acc = {"s": np.zeros(2), "q": np.zeros(2)}
    for x in xs:
        acc["s"] += x
        acc["q"] += x * x
    return np.sum(acc["s"] * acc["q"])


def boolean_mask_assignment(x):
    y = x * 2.0
    y[x < 0] = 0.5
    return np.sum(y * x)


def overwrite_twice(a, b):
    y = np.zeros(2)
    y[0] = a * 3.0
    y[0] = b * b
    y[1] = a
    return np.sum(y * y)


def list_append(x, y):
    xs = []
    for i in range(3):
        xs.append(x * i + y)
    xs.append(np.sin(x))
    return xs[0] * xs[1] + xs[2] * xs[3]


def list_pop(x, y):
    xs = [x, y, x * y]
    last = xs.pop()
    first = xs.pop(0)
    return last * first + xs[0]


def list_extend(x, y):
    xs = [x]
    xs.extend([y, x * y])
    xs.extend((np.sin(y),))
    return xs[0] * xs[1] + xs[2] * xs[3]


def list_item_assignment(x, y):
    xs = [x, y, 0.0]
    xs[2] = xs[0] * xs[1]
    xs[0] = xs[0] + 1.0
    xs[1] *= x
    return xs[0] * xs[1] * xs[2]


def stack_as_a_list(xs):
    stack = list(xs)
    total = 0.0
    while stack:
        v = stack.pop()
        total = total * 0.5 + v * v
    return total


def dict_item_assignment(x, y):
    d = {}
    d["a"] = x * y
    d["b"] = np.sin(x)
    d["a"] += y
    d["b"] *= d["a"]
    return d["a"] + d["b"]


def dict_accumulate_in_a_loop(xs):
    counts = {"pos": 0.0, "neg": 0.0}
    for x in xs:
        key = "pos" if x > 0 else "neg"
        counts[key] += x * x
    return counts["pos"] * counts["neg"]


def nested_list_item_assignment(x):
    m = [[0.0, 0.0], [0.0, 0.0]]
    for i in range(2):
        for j in range(2):
            m[i][j] = x[i] * x[j] + i
    return m[0][1] * m[1][0] + m[1][1] * m[0][0]


def mutate_a_copy_of_an_array(x):
    y = x.copy()
    y[0] = y[0] * 3.0
    y[1:] += 1.0
    return np.sum(y * x)


def mutate_a_copy_of_a_list(xs):
    ys = list(xs)
    ys[0] = ys[1] * ys[2]
    ys.append(ys[0] * 2.0)
    return sum(ys) * xs[0]


def mutate_a_copy_of_a_dict(params):
    p = params.copy()
    p["w"] = p["w"] * 2.0
    p["b"] = p["b"] + 1.0
    return np.sum(p["w"] * params["w"]) + np.sum(p["b"] * params["b"])


def copy_a_dict_with_the_constructor(params):
    p = dict(params)
    p["w"] = p["w"] * 2.0
    return np.sum(p["w"] * params["w"])


def mutate_an_argument(x):
    x[0] = x[0] * 2.0
    x += 1.0
    return np.sum(x * x)


def mutate_a_list_argument(xs):
    xs.append(xs[0] * 2.0)
    xs[1] = xs[1] * xs[1]
    return sum(xs)


# -- data structures -------------------------------------------------------------


def list_comprehension(x):
    ys = [x * i for i in range(4)]
    return ys[1] * ys[3] + np.sum(np.sin(ys[2]))


def comprehension_with_condition(xs):
    ys = [x * x for x in xs if x > 0]
    return sum(ys)


def nested_comprehension(a):
    grid = [[a[i] * a[j] for j in range(3)] for i in range(3)]
    return grid[0][1] + grid[2][2] * grid[1][0]


def conditional_in_a_comprehension(xs):
    return sum([x * x if x > 0 else -x for x in xs])


def generator_with_a_filter_to_max(xs):
    return max(x * 2.0 for x in xs if x < 0.8) * min(x for x in xs if x > 0)


def dict_comprehension(x):
    d = {k: x ** k for k in range(1, 4)}
    return d[1] * d[3] + d[2]


def dict_comprehension_over_items(params):
    scaled = {k: v * 2.0 for k, v in params.items()}
    return np.sum(scaled["w"] * params["b"])


def set_comprehension_of_constants(x):
    keys = {i % 3 for i in range(7)}
    total = 0.0
    for k in keys:
        total = total + x[k] * (k + 1)
    if 2 in keys:
        total = total * x[0]
    return total * len(keys)


def generator_to_sum(xs):
    return sum(x * x for x in xs) + sum((np.sin(x) for x in xs), 1.0)


def generator_to_max(xs):
    return max(x * x for x in xs) + min(np.sin(x) for x in xs)


def generator_to_np_stack(a, w):
    return np.sum(np.stack(tuple(row * w for row in a)) ** 2) + np.sum(
        np.stack([np.tanh(row) for row in a], axis=1))


def tuple_unpacking(x, y):
    a, (b, c) = x, (y, x * y)
    a, b = b, a
    return a * b + c


def starred_unpacking(xs):
    first, *rest = xs
    *init, last = xs
    a, *middle, b = xs
    return first * sum(rest) + last * init[0] + a * b * middle[0]


def starred_unpacking_of_an_array(x):
    first, *rest = x
    return first * np.sum(np.stack(rest))


def dict_params(params, x):
    h = np.tanh(params["w"] @ x + params["b"])
    out = {}
    out["h"] = h
    out["score"] = np.sum(h * params["v"])
    return out["score"] + np.sum(out["h"] ** 2)


def returns_a_dict(params, x):
    return {"y": params["w"] @ x, "z": np.sum(params["b"] * x)}


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


def dataclass_params(p, x):
    return np.sum(np.tanh(p.w @ x + p.b)) * p.b


Point = collections.namedtuple("Point", ["x", "y"])


def namedtuple_params(p):
    a, b = p
    return p.x * p.y + np.sin(p[0]) + a * b


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def apply(self, x):
        return self.w @ x + self.b

    def __call__(self, x):
        return np.tanh(self.apply(x))


def method_call(layer, x):
    return np.sum(layer.apply(x) ** 2)


def callable_object(layer, x):
    return np.sum(layer(x) * x[: layer.b.shape[0]])


def list_of_objects(layers, x):
    for layer in layers:
        x = layer(x)
    return np.sum(x)


def tree_product(tree, w):
    if isinstance(tree, tuple):
        return tree_product(tree[0], w) * tree_product(tree[1], w) + w
    return np.sin(tree * w)


def tree_lstm_node(tree, w, u):
    n = u.shape[0]
    if isinstance(tree, tuple):
        hl, cl = tree_lstm_node(tree[0], w, u)
        hr, cr = tree_lstm_node(tree[1], w, u)
        gates = w @ np.concatenate([hl, hr])
        i = sigmoid(gates[:n])
        fl = sigmoid(gates[n:2 * n])
        fr = sigmoid(gates[2 * n:3 * n])
        o = sigmoid(gates[3 * n:4 * n])
        g = np.tanh(gates[4 * n:])
        c = i * g + fl * cl + fr * cr
        return o * np.tanh(c), c
    c = u @ tree
    return np.tanh(c), c


def tree_lstm(tree, w, u):
    h, c = tree_lstm_node(tree, w, u)
    return np.sum(h ** 2) + np.sum(c)


def tree_of_shared_weights(params, tree):
    if isinstance(tree, tuple):
        left = tree_of_shared_weights(params, tree[0])
        right = tree_of_shared_weights(params, tree[1])
        return combined(params, left, right)
    w, b = params
    return np.tanh(w[:, tree] + b)


def combined(params, left, right):
    w, b = params
    return np.tanh(w @ (left * right) + b)


def tree_of_shared_weights_loss(w, b, tree):
    return np.sum(tree_of_shared_weights((w, b), tree) ** 2)


def tree_with_closure(tree, w):
    def walk(t, depth):
        if isinstance(t, list):
            return sum(walk(child, depth + 1) for child in t)
        return np.tanh(t * w) * depth

    return walk(tree, 1)


# -- builtins ----------------------------------------------------------------------


def builtin_sum(xs, w):
    return sum(xs) * w + sum([w, w * w], 2.0)


def builtin_max_min_iterable(xs):
    return max(xs) * min(xs) + max([x * x for x in xs])


def builtin_max_min_arguments(x, y, z):
    return max(x, y, z) * min(x * 2.0, y) + max(x, 0.5)


def builtin_max_of_arrays(a, b):
    return np.sum(max(a, b, key=lambda v: v[0]) ** 2) + max(np.sum(a), np.sum(b))


def builtin_abs(x, y):
    return abs(x) * abs(y - 3.0) + np.sum(abs(np.array([x, y])))


def builtin_float(x, n):
    return float(x) * float(n) + float(np.sum(x * x))


def builtin_len(xs):
    return sum(xs) / len(xs) + xs[0] * len([1, 2, 3])


def builtin_range_len(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + x[i] * x[i + 1]
    return total


def builtin_zip_three(xs, ys, zs):
    return sum(x * y * z for x, y, z in zip(xs, ys, zs))


def builtin_isinstance(value):
    if isinstance(value, dict):
        return sum(builtin_isinstance(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(builtin_isinstance(v) for v in value)
    if isinstance(value, np.ndarray):
        return np.sum(value ** 2)
    return value * 3.0


def builtin_sorted_and_list(xs):
    ys = sorted(xs)
    return ys[0] * 2.0 + ys[-1] * list(xs)[0]


def builtin_any_all(xs):
    if any(x > 1.5 for x in xs) and all(x > -5.0 for x in xs):
        return sum(xs) ** 2
    return sum(xs)


# -- the table ---------------------------------------------------------------------

TREE = ((0.3, 0.5), (0.7, (1.1, 0.2)))
LSTM_N = 2
LAYER = Linear(vec(3, 3) * 0.5, vec(3))

CASES = [
    (if_elif_else, (1.5,)),
    (if_elif_else, (0.5,)),
    (if_elif_else, (-0.7,)),
    (conditional_expression, (1.5, 0.7)),
    (conditional_expression, (0.3, -0.7)),
    (and_or_not, (1.5, 0.7)),
    (and_or_not, (1.5, -0.7)),
    (and_or_not, (-1.5, 0.7)),
    (and_or_values, (1.5, 0.7)),
    (and_or_values, (-1.5, 0.7)),
    (not_of_a_value, (1.3, 0)),
    (not_of_a_value, (1.3, 2)),
    (any_predicate, (np.array([0.3, 2.0, -0.5]),)),
    (any_predicate, (np.array([0.3, 1.0, -0.5]),)),
    (all_predicate, (np.array([0.3, 2.0, 0.5]),)),
    (all_predicate, (np.array([0.3, -2.0, 0.5]),)),
    (all_predicate, (np.array([-0.3, -2.0, -0.5]),)),
    (array_comparisons, (np.array([0.3, 2.0, -0.5]), np.array([0.8, 1.0, -1.5]))),
    (branches_assign_different_variables, (0.7, True)),
    (branches_assign_different_variables, (0.7, False)),
    (variable_defined_in_one_branch, (0.7,)),
    (variable_defined_in_one_branch, (-0.7,)),
    (piecewise, (-1.5,)),
    (piecewise, (-0.5,)),
    (piecewise, (0.5,)),
    (piecewise, (1.5,)),
    (chained_comparison, (0.5, 1.5)),
    (chained_comparison, (1.5, 0.5)),
    (branch_on_shape, (vec(2, 3),)),
    (branch_on_shape, (vec(3),)),
    (nested_ifs_in_a_loop, ([1.5, 0.5, -0.3, 2.0],)),
    (if_inside_while, (0.8,)),
    (for_range, (0.7, 5)),
    (for_range_step, (0.7,)),
    (for_over_list, (0.7, 1.3)),
    (for_over_a_list_argument, ([0.3, -0.2, 0.5, 1.1],)),
    (for_over_tuple, (0.7, 1.3)),
    (for_over_array_rows, (vec(4, 3), vec(3))),
    (for_over_array_elements, (vec(5),)),
    (for_zip, ([0.3, 0.5, 0.7], vec(3))),
    (for_enumerate, (vec(4),)),
    (for_enumerate_start, ((0.3, 0.5, 0.7),)),
    (for_reversed, ([0.3, -0.5, 0.7],)),
    (for_dict_items, ({"a": vec(2), "b": vec(3)},)),
    (for_dict_values, ({"a": vec(2), "b": vec(3)},)),
    (for_dict_keys, ({"a": vec(2), "b": vec(3)},)),
    (while_fixed_count, (0.7,)),
    (while_value_dependent, (1.3,)),
    (loop_with_break, ([0.3, 0.5, -0.7, 1.1],)),
    (loop_with_break, (np.array([0.3, 0.5, 0.7, 1.1]),)),
    (loop_with_continue, ([0.3, -0.5, 0.7, -1.1, 0.4],)),
    (while_with_break_and_continue, (0.7,)),
    (counter_with_break, (0.7,)),
    (for_else_completes, ([0.3, 0.5, 0.7],)),
    (for_else_broken, ([0.3, -0.5, 0.7],)),
    (for_else_broken, ([0.3, 0.5, 0.7],)),
    (while_else, (1.3,)),
    (while_else_broken, (1.3,)),
    (return_inside_loop, ([0.3, 1.2, 0.7, 1.1],)),
    (return_inside_loop, ([0.3, 0.2, 0.1],)),
    (return_inside_nested_loops, (np.array([[0.3, 1.2], [1.1, 0.5], [0.2, 0.4]]),)),
    (return_inside_nested_loops, (np.array([[0.3, 0.2], [0.1, 0.5]]),)),
    (return_inside_while, (0.7,)),
    (return_from_loop_in_else, ([0.3, 0.7, 1.1],)),
    (nested_loops, (vec(2, 3), vec(3, 2))),
    (nested_loops_with_inner_break, (np.array([[0.3, -1.2, 0.5], [1.1, 0.5, 0.4]]),)),
    (loop_accumulators, ([0.3, 1.2, 0.7],)),
    (while_on_a_norm, (np.array([0.3, 0.5, 0.7]),)),
    (return_in_a_for_inside_a_while, (0.7,)),
    (closure_defined_in_a_loop_called_at_once, ([0.3, 0.5, 0.7], 1.3)),
    (newton_sqrt_fixed, (2.0,)),
    (newton_sqrt_until_converged, (2.0,)),
    (newton_cube_root_array, (np.array([0.5, 2.0, 3.0]),)),
    (horner, ([1.0, -2.0, 0.5, 3.0], 0.7)),
    (horner, (np.array([1.0, -2.0, 0.5, 3.0]), 0.7)),
    (cumulative_sum, (vec(5),)),
    (tuple_state, (0.3, 0.7)),
    (list_state, (0.3, 0.7)),
    (long_for_loop, (0.5,)),
    (long_while_loop, (0.5,)),
    (layers_loop, ([vec(3, 3), vec(2, 3)], vec(3))),
    (loop_variable_after_loop, (0.7,)),
    (empty_loop, (0.7,)),
    (integer_state_only, (0.7,)),
    (item_assignment, (vec(3),)),
    (slice_augmented_assignment, (vec(3),)),
    (item_assignment_in_a_loop, (vec(4),)),
    (row_assignment, (vec(3, 2),)),
    (rnn, (vec(3, 3) * 0.5, vec(3, 2), vec(4, 2))),
    (enumerate_rows_assignment, (vec(3, 2), vec(2))),
    (item_of_a_row_view_assignment, (vec(2),)),
    (dict_of_arrays_accumulate, (vec(3, 2),)),
    (boolean_mask_assignment, (np.array([0.3, -0.5, 0.7]),)),
    (overwrite_twice, (0.7, 1.3)),
    (list_append, (0.7, 1.3)),
    (list_pop, (0.7, 1.3)),
    (list_extend, (0.7, 1.3)),
    (list_item_assignment, (0.7, 1.3)),
    (stack_as_a_list, ([0.3, 0.5, -0.7],)),
    (dict_item_assignment, (0.7, 1.3)),
    (dict_accumulate_in_a_loop, ([0.3, -0.5, 0.7, -1.1],)),
    (nested_list_item_assignment, (vec(2),)),
    (mutate_a_copy_of_an_array, (vec(3),)),
    (mutate_a_copy_of_a_list, ([0.3, 0.5, 0.7],)),
    (mutate_a_copy_of_a_dict, ({"w": vec(3), "b": vec(3)},)),
    (copy_a_dict_with_the_constructor, ({"w": vec(3), "b": vec(3)},)),
    (mutate_an_argument, (vec(3),)),
    (mutate_a_list_argument, ([0.3, 0.5, 0.7],)),
    (list_comprehension, (0.7,)),
    (comprehension_with_condition, ([0.3, -0.5, 0.7],)),
    (nested_comprehension, (vec(3),)),
    (conditional_in_a_comprehension, ([0.3, -0.5, 0.7],)),
    (generator_with_a_filter_to_max, ([0.3, -0.5, 0.7, 1.1],)),
    (dict_comprehension, (0.7,)),
    (dict_comprehension_over_items, ({"w": vec(3), "b": vec(3)},)),
    (set_comprehension_of_constants, (vec(3),)),
    (generator_to_sum, ([0.3, 0.5, 0.7],)),
    (generator_to_max, ([0.3, -0.5, 0.9],)),
    (generator_to_np_stack, (vec(3, 2), vec(2))),
    (tuple_unpacking, (0.7, 1.3)),
    (starred_unpacking, ([0.3, 0.5, 0.7, 1.1],)),
    (starred_unpacking_of_an_array, (vec(4),)),
    (dict_params, ({"w": vec(3, 2), "b": vec(3), "v": vec(3)}, vec(2))),
    (returns_a_dict, ({"w": vec(3, 2), "b": vec(2)}, vec(2))),
    (dataclass_params, (Params(vec(3, 2), 0.4), vec(2))),
    (namedtuple_params, (Point(0.7, 1.3),)),
    (method_call, (LAYER, vec(3))),
    (callable_object, (LAYER, vec(3))),
    (list_of_objects, ([Linear(vec(3, 3), vec(3)), Linear(vec(2, 3), vec(2))], vec(3))),
    (tree_product, (TREE, 0.9)),
    (tree_of_shared_weights_loss, (vec(3, 3) * 0.5, vec(3), ((0, (1, 2)), 1))),
    (tree_lstm, (((vec(2), vec(2)), vec(2)), vec(5 * LSTM_N, 2 * LSTM_N) * 0.5,
                 vec(LSTM_N, 2))),
    (tree_with_closure, ([0.3, [0.5, 0.7], [[1.1]]], 0.9)),
    (builtin_sum, ([0.3, 0.5, 0.7], 1.3)),
    (builtin_max_min_iterable, ([0.3, -0.5, 0.9],)),
    (builtin_max_min_arguments, (0.3, 0.8, -0.5)),
    (builtin_max_of_arrays, (vec(3), vec(3))),
    (builtin_abs, (0.7, 1.3)),
    (builtin_abs, (-0.7, 4.3)),
    (builtin_float, (0.7, 3)),
    (builtin_len, ([0.3, 0.5, 0.7],)),
    (builtin_range_len, (vec(4),)),
    (builtin_zip_three, ([0.3, 0.5], (0.7, 1.1), vec(2))),
    (builtin_isinstance, ({"a": [0.3, vec(2)], "b": (0.7, {"c": vec(3)})},)),
    (builtin_sorted_and_list, ([0.3, -0.5, 0.9],)),
    (builtin_any_all, ([0.3, 2.5, 0.9],)),
    (builtin_any_all, ([0.3, 0.5, 0.9],)),
]


def case_ids(cases):
    seen = collections.Counter()
    ids = []
    for fn, _ in cases:
        seen[fn.__name__] += 1
        ids.append(fn.__name__ if seen[fn.__name__] == 1 else f"{fn.__name__}_{seen[fn.__name__]}")
    return ids


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("fn, args", CASES, ids=case_ids(CASES))
def test_gradient(fn, args, order):
    check_grads(fn, copy.deepcopy(args), order=order)


# -- plain checks ------------------------------------------------------------------


def overwritten(a, b):
    y = np.zeros(2)
    y[0] = a
    y[0] = b * 2.0
    return np.sum(y)


def test_overwritten_value_gets_zero_gradient():
    da, db = pullback.grad(overwritten, argnums=(0, 1))(0.7, 1.3)
    assert da == 0.0 and db == 2.0


@pytest.mark.parametrize("fn, args", CASES, ids=case_ids(CASES))
def test_value_matches_python(fn, args):
    out, _ = pullback.vjp(fn, *copy.deepcopy(args))
    expected = fn(*copy.deepcopy(args))
    if isinstance(expected, dict):
        assert out.keys() == expected.keys()
        for k in expected:
            np.testing.assert_allclose(out[k], expected[k])
    else:
        np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize("fn, args", [
    (mutate_an_argument, (np.array([0.3, 0.5, 0.7]),)),
    (mutate_a_list_argument, ([0.3, 0.5, 0.7],)),
    (mutate_a_copy_of_an_array, (np.array([0.3, 0.5, 0.7]),)),
    (mutate_a_copy_of_a_list, ([0.3, 0.5, 0.7],)),
    (mutate_a_copy_of_a_dict, ({"w": np.array([0.3, 0.5]), "b": np.array([0.7, 1.1])},)),
    (stack_as_a_list, ([0.3, 0.5, -0.7],)),
    (starred_unpacking, ([0.3, 0.5, 0.7, 1.1],)),
], ids=lambda v: v.__name__ if callable(v) else "args")
def test_arguments_are_not_modified(fn, args):
    before = copy.deepcopy(args)
    pullback.grad(fn)(*args)
    pullback.vjp(fn, *args)[1](1.0)
    for a, b in zip(args, before):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            for k in a:
                np.testing.assert_array_equal(a[k], b[k])
        else:
            assert type(a) is type(b) and len(a) == len(b)
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_gradients_of_objects_are_objects():
    d = pullback.grad(dataclass_params)(Params(np.ones((3, 2)), 0.4), np.ones(2))
    assert isinstance(d, Params) and d.w.shape == (3, 2)
    d = pullback.grad(namedtuple_params)(Point(0.7, 1.3))
    assert isinstance(d, Point)
    d = pullback.grad(method_call)(LAYER, np.ones(3))
    assert isinstance(d, Linear) and d.w.shape == (3, 3) and d.b.shape == (3,)


def test_long_loops_do_not_recurse():
    pullback.grad(long_for_loop)(0.5)  # transformed before the limit is lowered
    pullback.grad(long_while_loop)(0.5)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 200)
    try:
        expected = 1.0
        x = 0.5
        for _ in range(2000):
            expected *= 1.0 + 0.001 * np.cos(x)
            x = x + 0.001 * np.sin(x)
        assert pullback.grad(long_for_loop)(0.5) == pytest.approx(expected)
        pullback.grad(long_while_loop)(0.5)
    finally:
        sys.setrecursionlimit(limit)


def hundred_thousand_steps(x, n):
    total = 0.0
    for i in range(n):
        total = total + x * 1e-5
    return total


def test_a_hundred_thousand_iterations():
    assert pullback.grad(hundred_thousand_steps)(0.5, 100_000) == pytest.approx(1.0)


def rows_of_a_loop(x):
    out = []
    for i in range(3):
        out.append(x[i] * x[(i + 1) % 3])
    return np.stack(out)


def test_a_loop_pullback_gives_the_same_cotangents_every_time():
    x = np.array([0.3, 0.5, 0.7])
    _, back = pullback.vjp(rows_of_a_loop, x)
    first = [back(row)[0] for row in np.eye(3)]
    again = [back(row)[0] for row in np.eye(3)]
    np.testing.assert_array_equal(first, again)
    expected = [[x[1], x[0], 0.0], [0.0, x[2], x[1]], [x[2], 0.0, x[0]]]
    np.testing.assert_allclose(pullback.jacobian(rows_of_a_loop)(x), expected)


# -- refused -----------------------------------------------------------------------


def view_read_after_update(x):
    y = x * 1.0
    v = y[0:2]
    y[0] = 5.0
    return np.sum(v)


def list_appended_under_another_name(x):
    xs = [x[0]]
    ys = xs
    xs.append(x[1] * 2.0)
    return sum(ys)


def array_kept_in_a_list_and_updated(x):
    h = x * 1.0
    hs = []
    for t in range(3):
        h[0] = x[1] * t
        hs.append(h)
    return np.sum(hs[0] * hs[2])


def shallow_copy_of_a_dict_updated_in_place(x):
    params = {"b": x * 1.0}
    p = params.copy()
    p["b"] += 1.0
    return np.sum(p["b"] * params["b"])


def argument_in_a_list_updated_in_place(x):
    ys = [x]
    ys[0] += 1.0
    return np.sum(ys[0] * x)


def lambda_capturing_the_loop_variable(x):
    fs = []
    for w in x:
        fs.append(lambda y: y * w)  # noqa: B023
    return sum(f(2.0) for f in fs)


REFUSED = [  # the function, the message, the line of the refused construct below `def`
    (view_read_after_update, r"y\[\.\.\.\] = \.\.\. updates y in place, and v, ", 3),
    (list_appended_under_another_name, r"xs\.append\(\.\.\.\) updates xs in place, and ys,", 3),
    (array_kept_in_a_list_and_updated, r"loop updates h in place and keeps hs", 4),
    (lambda_capturing_the_loop_variable,
     r"\bw\b.*(loop|nested function)|(loop|nested function).*\bw\b", 3),
    (shallow_copy_of_a_dict_updated_in_place, r"p\[\.\.\.\].*in place.*params", 3),
    (argument_in_a_list_updated_in_place, r"ys\[\.\.\.\].*in place.*\bx\b", 2),
]


@pytest.mark.parametrize("fn, message, offset", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused(fn, message, offset):
    with pytest.raises(TransformError, match=message) as caught:
        pullback.grad(fn)(np.array([0.3, 0.5, 0.7]))
    error = caught.value
    assert error.filename.endswith(HERE)
    assert error.lineno == fn.__code__.co_firstlineno + offset
    assert str(error).startswith(f"{error.filename}:{error.lineno}: ")
