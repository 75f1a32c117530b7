"""The code people write around their model (issue 25): calls whose result is dropped
(logging, printing, plotting), `dict(a=...)`, keyword arguments of primitives, import
statements inside the function, `global` and `nonlocal` state, records (dataclasses and
named tuples) built in the function, `getattr`, `map`, `filter`,
`functools` and `itertools` over closures, and objectives returning an array holding one
number.
Values at orders 1 and 2 against finite differences; refusals name the user's line."""

import collections
import contextlib
import dataclasses
import functools
import io
import itertools
import logging
import operator

import numpy as np
import pytest

import pullback
from pullback.runtime import records
from pullback.testing import check_grads

X = np.array([0.5, -1.5, 2.0])
HISTORY = []


def log(message, value):
    HISTORY.append((message, float(np.sum(value))))


def print_progress(loss):
    print(f"loss {loss:.3f}")


class Axes:
    """A stand-in for a plotting library's axes, written by the user."""

    def __init__(self):
        self.lines = []

    def plot(self, x):
        self.lines.append(np.asarray(x).copy())


def plot(ax, x):
    ax.plot(x)


AXES = Axes()
LOGGER = logging.getLogger("pullback.tests.user_code")


def logged_model(x):
    log("x", x)
    y = np.sin(x) * x
    print_progress(np.sum(y))
    plot(AXES, y)
    np.sin(y)
    LOGGER.debug("y %s", y)
    return np.sum(y * y)


def plotted_directly(x):
    AXES.plot(x * 2.0)
    return np.sum(np.cos(x))


def logged_in_a_loop(x, n):
    for i in range(n):
        x = np.tanh(x) * 1.5
        log(f"step {i}", x)
    return np.sum(x)


def calls_a_closure(x):
    seen = []

    def record(v):
        seen.append(v)

    record(x)
    return np.sum(x * x)


def keywords_dict(x):
    d = dict(a=x, b=2.0 * x)
    return np.sum(d["a"] * d["b"])


def dict_updated(x):
    d = dict({"c": x}, a=x * 3.0)
    return np.sum(d["a"] * d["c"])


CONFIG = {"c": 2.0}
PAIRS = [("c", 3.0)]


def constant_items(x):
    d = dict(CONFIG, a=x * 3.0)
    e = dict(PAIRS, a=x)
    return np.sum(d["a"] * d["c"] + e["a"] * e["c"])


def dict_updated_in_a_loop(x):
    """`dict(acc, total=...)` as a loop's state: the keys of `{**acc, 'total': v}` are
    known, so it stays a dict whose items are (it was refused as unknown items)."""
    acc = dict(total=0.0, count=0)
    for v in map(lambda e: e * e, [x[0], x[1]]):
        acc = dict(acc, total=acc["total"] + v)
        acc = {**acc, "count": acc["count"] + 1}
    return acc["total"] * acc["count"]


def keyed_max(x):
    return max(x[0], x[1], key=abs) * x[2]


def flattened(x):
    return np.array([np.sum(x * x * x)])


def column(x):
    return np.reshape(np.sum(np.sin(x) * x), (1, 1))


def imports_inside(x):
    import math

    import numpy.linalg as la
    from numpy import sin

    return np.sum(sin(x)) * math.pi + la.norm(x)


def imports_in_a_loop_and_a_closure(x):
    for _ in range(2):
        import math as m
        x = x * m.e

    from numpy import tanh

    def squash(v):
        return tanh(v) * 2.0

    return np.sum(squash(x))


def imports_a_package_path(x):
    import os.path

    return np.sum(x) * len(os.path.basename("a/bc"))


CALLS = 0
SCALE = 2.0


def counted(x):
    global CALLS
    CALLS += 1
    return np.sum(x * x) * SCALE


def counted_in_a_loop(x, n):
    global CALLS
    for _ in range(n):
        CALLS = CALLS + 1
        x = np.sin(x)
    return np.sum(x)


def stepper():
    steps = 0

    def step(x):
        nonlocal steps
        steps += 1
        return np.sum(np.tanh(x)) * 2.0

    return step, lambda: steps


STEP, STEPS = stepper()


def keeps_a_derivative_in_a_global(x):
    global SCALE
    SCALE = x * 2.0
    return np.sum(x)


def mapped(x, w):
    return sum(map(lambda a, b: a * b * w, [x, x * 2.0], [w, 3.0]))


def mapped_over_an_array(x):
    return np.sum(np.array(list(map(np.sin, x))))


def filtered(x):
    return sum(filter(lambda e: e > 0.0, [x, -x, 2.0 * x]))


def reduced(x, w):
    return functools.reduce(lambda a, b: a * b + w, [x, x + 1.0, 2.0]) + functools.reduce(
        operator.add, [x, x * 3.0], 1.0)


def accumulated(x):
    return sum(itertools.accumulate([x, x * x, 3.0])) * list(
        itertools.accumulate([x, 2.0], operator.mul))[-1]


def starmapped(x):
    return sum(itertools.starmap(lambda a, b: a * b, [(x, 2.0), (x, x)]))


def partially_applied(x, w):
    def layer(w, v, scale=1.0):
        return np.tanh(w * v) * scale

    return np.sum(functools.partial(layer, w, scale=2.0)(x))


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float = 0.5


Pair = collections.namedtuple("Pair", "a b")


def records_built(x):
    p = Params(x * 2.0, 1.5)
    q = Params(w=x, b=x[0])
    r = Params(x)
    return np.sum(p.w * q.w) + p.b * q.b + np.sum(r.w) * r.b


def named_tuples_built(x):
    t = Pair(b=x * 2.0, a=x)
    u = Pair(x[0], 3.0)
    return np.sum(t.a * t.b) + u.a * u.b + t[1][0]


def sgd_step(p, g):
    return Params(p.w - 0.1 * g, p.b)


def records_in_a_loop(x):
    p = Params(x, 1.0)
    for _ in range(3):
        p = sgd_step(p, x * p.b)
    states = [Params(x * i, float(i)) for i in range(3)]
    return np.sum(p.w * p.w) + sum(np.sum(s.w) * s.b for s in states)


def replaced_records(x):
    p = Params(x * 2.0)
    for _ in range(3):
        p = dataclasses.replace(p, w=p.w - 0.1 * x * p.b)
    q = dataclasses.replace(p, b=np.sum(x))
    t = Pair(x, 2.0)._replace(b=x * x)
    return np.sum(q.w * q.b) + np.sum(t.a * t.b)


def built_through_the_class_of_a_value(x):
    p = Params(x, 2.0)
    q = type(p)(p.w * 3.0, b=p.b)
    kinds = [Params, Pair]
    r = kinds[1](q.w, x)
    return np.sum(q.w) * q.b + np.sum(r.a * r.b)


class Layer:
    """The user's class whose __init__ only stores its parameters."""

    def __init__(self, weight, bias, name="layer"):
        self.w = weight
        self.b = bias

    def __call__(self, h):
        return np.tanh(self.w * h + self.b)


def plain_objects_built(x):
    layers = [Layer(x * i, 0.5) for i in range(1, 4)]
    h = x
    for layer in layers:
        h = layer(h)
    last = Layer(weight=h, bias=np.sum(x), name="last")
    return np.sum(last(x))


class PairLayer:
    """Its __init__ stores its parameters by one tuple assignment, and with an annotation."""

    def __init__(self, w, b, scale):
        self.w, self.b = w, b
        self.scale: float = scale

    def __call__(self, h):
        return np.tanh(self.w * h + self.b) * self.scale


def pair_layers_built(x):
    layers = [PairLayer(x * i, 0.5, 1.5) for i in range(1, 3)]
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h)


class Scaled:
    def __init__(self, w):
        self.w = w * 2.0


def computes_in_init(x):
    return np.sum(Scaled(x).w)


def attribute_by_getattr(x):
    p = Params(x, 2.0)
    return np.sum(p.w) * p.b


def attribute_by_computed_name(p, name):
    return np.sum(getattr(p, name)) * 3.0


def returns_inside_a_loop(x):
    out = []
    for v in x:
        if v > 1.0:
            return sum(out)
        out.append(v * v)
    return sum(out)


def returns_the_list_inside_a_loop(x):
    out = []
    for v in x:
        out.append(v * v)
        if v > 1.0:
            return sum(out)
    return sum(out) + 1.0


@pytest.mark.parametrize("fn, args", [
    (returns_inside_a_loop, (X,)), (returns_the_list_inside_a_loop, (X,)),
    (logged_model, (X,)), (plotted_directly, (X,)), (logged_in_a_loop, (X, 3)),
    (calls_a_closure, (X,)),
    (keywords_dict, (X,)), (dict_updated, (X,)), (constant_items, (X,)), (keyed_max, (X,)),
    (dict_updated_in_a_loop, (X,)),
    (imports_inside, (X,)), (imports_in_a_loop_and_a_closure, (X,)),
    (imports_a_package_path, (X,)), (counted, (X,)), (counted_in_a_loop, (X, 3)),
    (STEP, (X,)), (mapped, (0.7, 1.3)), (mapped_over_an_array, (X,)), (filtered, (0.7,)),
    (reduced, (0.7, 1.3)), (accumulated, (0.7,)), (starmapped, (0.7,)),
    (partially_applied, (X, 1.3)), (records_built, (X,)), (named_tuples_built, (X,)),
    (records_in_a_loop, (X,)), (attribute_by_getattr, (X,)), (replaced_records, (X,)),
    (built_through_the_class_of_a_value, (X,)), (plain_objects_built, (X,)),
    (pair_layers_built, (X,)),
])
def test_values_at_order_two(fn, args):
    """With respect to every argument but the ints (step counts)."""
    differentiated = [i for i, a in enumerate(args) if not isinstance(a, int)]
    with contextlib.redirect_stdout(io.StringIO()):
        check_grads(fn, args, order=2, argnums=differentiated)


def test_a_dropped_call_runs_each_time_the_function_does():
    with contextlib.redirect_stdout(io.StringIO()):
        expected = logged_model(X)
    HISTORY.clear()
    before = len(AXES.lines)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        value, gradient = pullback.value_and_grad(logged_model)(X)
    assert value == pytest.approx(expected)
    y = np.sin(X) * X
    assert gradient == pytest.approx(2 * y * (np.cos(X) * X + np.sin(X)))
    assert len(HISTORY) == 1 and HISTORY[0][1] == pytest.approx(np.sum(X))
    assert len(AXES.lines) == before + 1 and AXES.lines[-1] == pytest.approx(y)
    assert printed.getvalue().startswith("loss ")


def test_a_dropped_call_reads_like_the_users():
    """The user's function is transformed; a primitive's value, or a library's method,
    computed as written; a method of a value, resolved when it runs (`effect_method`)."""
    text = pullback.source(logged_model, X)
    assert "log_result, log_result_pb = log_fwd('x', x)" in text
    assert "\n    np.sin(y)\n" in text and "\n    LOGGER.debug('y %s', y)\n" in text
    assert "effect_method(ax, 'plot', x)" in pullback.source(plot, Axes(), X)


def rule_through_a_closure(x):
    from scipy import special

    lse = special.logsumexp

    def inner(v):
        return lse(v * 2.0)

    return inner(x)


def test_a_rule_reached_through_a_closure_variable():
    """`lse = scipy.special.logsumexp` read by a nested function: called through a value,
    a Python function with a derivative rule is that primitive, not its source."""
    pytest.importorskip("scipy")
    check_grads(rule_through_a_closure, (X,), order=2)


def test_which_classes_are_built_as_records():
    class Derived(Layer):
        pass

    class Checked(Layer):
        def __setattr__(self, name, value):
            object.__setattr__(self, name, value)

    assert records.init_fields(Layer) == {"weight": "w", "bias": "b", "name": None}
    assert records.init_fields(Derived) == records.init_fields(Layer)
    assert records.init_fields(Params) == {"w": "w", "b": "b"}
    assert records.init_fields(Scaled) is None
    assert records.init_fields(Checked) is None
    assert records.init_fields(Axes) is None
    assert records.init_fields(dict) is None


def test_which_objects_are_records_and_their_fields():
    """What `is_record` and `fields` say depends on the class alone, and is kept per class
    (the walk of a forest of node objects asks it of every node, every gradient)."""
    class Slotted:
        __slots__ = ("w",)

        def __init__(self, w):
            self.w = w

    for _ in range(2):  # the second time from what was kept
        assert records.fields(Params(X, 2.0)) == {"w": X, "b": 2.0}
        assert records.fields(Pair(1.0, X)) == {"a": 1.0, "b": X}
        assert records.fields(Layer(X, 1.0, "n")) == {"w": X, "b": 1.0}
        assert [records.is_record(x) for x in (Params(X, 2.0), Params, Pair(1, 2), (1, 2),
                                               Layer(X, 1.0, "n"), Layer, Slotted(X), X, {},
                                               collections.Counter(), len, np.float64(1.0))] == [
            True, False, True, False, True, False, False, False, False, False, False, False]


def test_getattr_of_a_record_is_its_field():
    """`getattr(p, "w")` was non-differentiable: a zero gradient, silently."""
    grad = pullback.grad(attribute_by_computed_name)(Params(X, 2.0), "w")
    assert grad.w == pytest.approx(np.full(3, 3.0)) and grad.b == 0.0
    assert pullback.grad(attribute_by_getattr)(X) == pytest.approx(np.full(3, 2.0))


def test_a_record_built_reads_like_the_users():
    text = pullback.source(records_built, X)
    assert "p = Params(x_times_2_0, 1.5)" in text and "unrecord(" in text


def test_an_import_resolves_like_a_global():
    """`from numpy import sin` inside the function: `sin(x)` is numpy's primitive,
    compiled as such, not a call resolved when it runs."""
    text = pullback.source(imports_inside, X)
    assert "    from numpy import sin\n" in text and "np.cos(x)" in text
    assert "forward(" not in text


def test_global_and_nonlocal_state_changes_as_python_changes_it():
    """Each run of the forward counts, as the function does; the derivative ignores it."""
    before, steps = CALLS, STEPS()
    assert pullback.grad(counted)(X) == pytest.approx(2 * X * SCALE)
    assert pullback.grad(counted_in_a_loop)(X, 3) == pytest.approx(
        np.cos(np.sin(np.sin(X))) * np.cos(np.sin(X)) * np.cos(X))
    pullback.grad(STEP)(X)
    assert (CALLS - before, STEPS() - steps) == (4, 1)
    assert "    global CALLS\n" in pullback.source(counted_in_a_loop, X, 3)


def sorts_in_place(x):
    y = x * 2.0
    y.sort()
    return np.sum(y * x)


def copies_into(x):
    y = np.zeros(3)
    np.copyto(y, x)
    return np.sum(y * x)


def updates_a_dict(x):
    d = {}
    d.update(a=x)
    return np.sum(d["a"])


def writes_out(x):
    y = np.zeros(3)
    np.multiply(x, 2.0, out=y)
    return np.sum(y)


def scale(v, s):
    v *= s


def user_update_read_later(x):
    y = x * 1.0
    scale(y, 3.0)
    return np.sum(y * x)


def pairs_of_values(x):
    d = dict([("c", x)], a=x)
    return np.sum(d["a"] * d["c"])


@pytest.mark.parametrize("fn, line, message", [
    (sorts_in_place, 2, "y.sort updates a value in place"),
    (copies_into, 2, "np.copyto updates a value in place"),
    (updates_a_dict, 2, "d.update updates a value in place"),
    (writes_out, 2, "np.multiply updates a value in place"),
    (user_update_read_later, 2, "calling scale updates y in place, and y is read at line"),
    (pairs_of_values, 1, r"dict\(items, key=value\) with differentiable items"),
    (computes_in_init, 1, r"calling class .*Scaled with a differentiable argument: .* "
                          r"make it a dataclass"),
    (keeps_a_derivative_in_a_global, 2, "SCALE is declared global or nonlocal and is "
                                        "assigned a differentiable value"),
])
def test_refusals_name_the_line(fn, line, message):
    with pytest.raises(pullback.TransformError, match=message) as caught:
        pullback.grad(fn)(X)
    assert caught.value.filename == __file__
    assert caught.value.lineno == fn.__code__.co_firstlineno + line


@pytest.mark.parametrize("fn, gradient", [
    (flattened, lambda x: 3 * x ** 2),
    (column, lambda x: np.cos(x) * x + np.sin(x)),
])
def test_grad_of_an_array_holding_one_number(fn, gradient):
    assert pullback.grad(fn)(X) == pytest.approx(gradient(X))
    value, grad = pullback.value_and_grad(fn)(X)
    assert value.shape == fn(X).shape and grad == pytest.approx(gradient(X))
    check_grads(lambda x: pullback.grad(fn)(x), (X,), order=1)


def test_grad_of_two_numbers_still_points_to_vjp():
    with pytest.raises(TypeError, match="pullback.vjp"):
        pullback.grad(lambda x: x[:2] * 1.0)(X)


# -- del ----------------------------------------------------------------------------
# `del x[i]` and `del d[k]` are `.pop`, their value dropped; `del x` unbinds a local, which
# no later read may see. Refused before: "a del statement is not supported: not yet".


def del_a_temporary(x):
    t = np.sin(x) * 2.0
    y = t * x
    del t
    return np.sum(y * y)


def del_in_a_loop_and_a_branch(x):
    s = 0.0
    for i in range(3):
        t = x * (i + 1.0)
        if i % 2:
            s = s + np.sum(np.cos(t))
            del t
        else:
            s = s + np.sum(t * t)
    return s


def del_keys_of_a_dict_being_filtered(x):
    d = {"a": x, "b": 2.0 * x, "c": x * x, "d": np.sin(x)}
    for k in list(d):  # list(d): the keys, which the dels leave as they were
        if k in ("b", "d"):
            del d[k]
    return np.sum(d["a"] * d["c"]) + len(d)


def del_items_of_a_queue_of_records(x):
    Layer = collections.namedtuple("Layer", "w b")
    queue = [Layer(x, 1.0), Layer(2.0 * x, 0.5), Layer(x * x, 0.1)]
    h = x
    while queue:
        h = np.tanh(queue[0].w * h + queue[0].b)
        del queue[0]
    return np.sum(h)


def del_nested_items_and_names(x):
    d = {"a": {"p": np.cos(x), "q": x * x}, "b": [np.sin(x), 2.0 * x, 3.0]}
    p, q = d["a"]["p"], d["b"][-1]
    del d["a"]["q"], d["b"][-1], p
    p = q * x
    return np.sum(d["a"]["p"] * d["b"][1] + p) + len(d["a"]) + len(d["b"])


def del_in_a_closure(x):
    def step(v):
        t = v * 2.0
        u = np.sin(t) * v
        del t
        return u

    return np.sum(step(x) + step(step(x)))


def del_after_a_loop_of_its_variable(x):
    s = 0.0
    for v in [x, 2.0 * x, x * x]:
        s = s + np.sum(v * s + v)
    del v  # the loop's last item, which Python keeps after the loop
    return s


def del_keys_in_sorted_order(x):
    d = {"a": x, "b": 2.0 * x, "c": 3.0 * x}
    for k in sorted(d):  # sorted(d), as list(d): a new list of the keys
        if k != "a":
            del d[k]
    return np.sum(d["a"] * x)


def del_before_a_comprehension(x):
    t = np.sin(x)
    s = np.sum(t * x)
    del t  # the generator below is a loop: it neither reads nor deletes t
    return s + sum(np.sum(v * x) for v in (x, 2.0 * x))


@pytest.mark.parametrize("fn", [del_a_temporary, del_before_a_comprehension,
                                del_after_a_loop_of_its_variable, del_keys_in_sorted_order,
                                del_in_a_loop_and_a_branch,
                                del_keys_of_a_dict_being_filtered,
                                del_items_of_a_queue_of_records, del_nested_items_and_names,
                                del_in_a_closure])
def test_del_statements(fn):
    check_grads(fn, (X,), order=2)


def read_after_del(x):
    t = x * 2.0
    del t
    return t  # noqa: F821


def read_after_del_in_a_branch(x):
    t = x * 2.0
    if x[0] > 0:
        del t
    return x + t


def read_after_del_in_a_loop(x):
    t = x
    for _ in range(2):
        t = t * x
        del t
    return t  # noqa: F821


def del_in_a_loop_of_a_variable_from_before(x):
    t = x
    s = 0.0
    for _ in range(2):
        s = s + x
        del t
    return s


def del_of_a_slice(x):
    xs = [x, x, x]
    del xs[0:2]
    return xs[0]


def del_of_a_captured_variable(x):
    t = x * 2.0
    f = lambda: t  # noqa: E731, F821
    del t
    return f()


def del_of_a_name_never_assigned(x):
    del y  # noqa: F821
    return x


def del_of_an_array_item(x):
    v = x * 2.0
    del v[0]
    return v


@pytest.mark.parametrize("fn, line, message", [
    (read_after_del, 3, "t is read after del t at line .*: Python raises UnboundLocalError"),
    (read_after_del_in_a_branch, 4, "t is read after del t"),
    (read_after_del_in_a_loop, 2, "t is read after del t"),  # at its next iteration
    (del_in_a_loop_of_a_variable_from_before, 5, "del t in a loop that does not assign t"),
    (del_of_a_slice, 2, "del of a slice is not supported"),
    (del_of_a_captured_variable, 3, "del t is not supported: a nested function reads it"),
    (del_of_a_name_never_assigned, 1, "del y is not supported: the function does not "
                                      "assign it"),
    (del_of_an_array_item, 2, r"treats \.pop\(\) \(and del x\[i\], which is x\.pop\(i\)\)"),
])
def test_del_refused_where_python_raises_or_not_yet(fn, line, message):
    with pytest.raises(pullback.TransformError, match=message) as caught:
        pullback.grad(lambda x: np.sum(fn(x)))(X)
    assert caught.value.filename == __file__
    assert caught.value.lineno == fn.__code__.co_firstlineno + line
