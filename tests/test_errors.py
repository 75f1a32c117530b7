"""Every way pullback refuses: a TransformError naming the user's file:line, never a guess."""

import numpy as np
import pytest

import pullback
from pullback import TransformError

HERE = "test_errors.py"


def for_loop(x):
    for i in range(3):
        x = x * 2.0
    return x


def while_loop(x):
    while x < 10.0:
        x = x * 2.0
    return x


def with_statement(x):
    with open("f") as f:
        f.read()
    return x


def try_statement(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def nested_def(x):
    def inner(y):
        return y * x
    return inner(x)


def inner_lambda(x):
    g = lambda y: y * x  # noqa: E731
    return g(x)


def comprehension(x):
    return sum([x * i for i in range(3)])


def generator(x):
    return sum(x * i for i in range(3))


def global_statement(x):
    global SCALE
    return x


def item_assignment(x):
    y = np.zeros(3)
    y[0] = x
    return np.sum(y)


def attribute_assignment(x):
    x.value = 3.0
    return x


def item_augmented_assignment(x):
    y = np.zeros(3)
    y[0] += x
    return np.sum(y)


def list_append(x):
    items = []
    items.append(x)
    return items[0]


def starred_call(x):
    args = (x, 2.0)
    return np.maximum(*args)


def kwargs_call(x):
    options = {"axis": 0}
    return np.sum(x, **options)


def starred_target(x):
    a, *rest = (x, x, x)
    return a


def yield_statement(x):
    yield x


def no_rule(x):
    return np.sum(np.fft.fft(x).real)


def no_rule_for_a_dropped_effect(x):
    np.random.shuffle(x)
    return x


def out_argument(x):
    y = np.zeros(3)
    return np.sum(np.multiply(x, 2.0, out=y))


def unknown_keyword(x):
    return np.sum(x, where=x > 0)


def undefined_name(x):
    return undefined_function(x)  # noqa: F821


def unknown_array_method(x):
    return x.frobnicate()


def calls_a_refused_function(x):
    return for_loop(x) * 2.0


def apply(g, x):
    return g(x)


REFUSED = [
    (for_loop, "a for loop", 13),
    (while_loop, "a while loop", 19),
    (with_statement, "a with statement", 25),
    (try_statement, "a try statement", 31),
    (nested_def, "a nested function definition", 39),
    (inner_lambda, "a lambda expression", 45),
    (comprehension, "a list comprehension", 50),
    (generator, "a generator expression", 54),
    (global_statement, "a global statement", 58),
    (item_assignment, "assignment to an item or attribute", 64),
    (attribute_assignment, "assignment to an item or attribute", 69),
    (item_augmented_assignment, "augmented assignment to an item or attribute", 75),
    (list_append, r"calling items\.append without using its result", 81),
    (starred_call, r"a starred argument \(\*args\)", 87),
    (kwargs_call, r"a \*\*kwargs argument", 92),
    (starred_target, "starred unpacking", 96),
    (yield_statement, "yield", 101),
    (no_rule, r"no derivative rule for numpy\.fft.*pullback\.adjoint", 105),
    (no_rule_for_a_dropped_effect, r"calling np\.random\.shuffle without using", 109),
    (out_argument, "keyword argument 'out'", 115),
    (unknown_keyword, "unexpected keyword argument 'where'", 119),
    (undefined_name, "name 'undefined_function' is not defined", 123),
    (unknown_array_method, "NumPy arrays have no method .frobnicate", 127),
    (calls_a_refused_function, "a for loop", 13),
]


@pytest.mark.parametrize("fn, message, line", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_with_file_and_line(fn, message, line):
    with pytest.raises(TransformError, match=message) as caught:
        pullback.grad(fn)(np.ones(3) if "array" in fn.__name__ or fn is no_rule else 1.5)
    error = caught.value
    assert error.filename.endswith(HERE) and error.lineno == line
    assert str(error).startswith(f"{error.filename}:{line}: ")


def test_line_numbers_in_the_table_are_the_users():
    import linecache

    for fn, message, line in REFUSED:
        assert linecache.getline(__file__, line).strip(), fn.__name__


def test_run_time_callee_without_a_rule():
    with pytest.raises(TransformError, match=r"no derivative rule for numpy\.fft\.fft"):
        pullback.grad(lambda x: np.sum(apply(np.fft.fft, x)))(np.ones(4))


def test_source_unavailable():
    namespace = {}
    exec("def f(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(TransformError, match="cannot read the source of f"):
        pullback.grad(namespace["f"])(1.0)


def test_builtin_without_rule():
    with pytest.raises(TransformError, match="not a Python function"):
        pullback.grad(len)([1.0])


def test_decorator_refuses_at_definition():
    with pytest.raises(TransformError, match="a for loop"):
        @pullback.differentiable
        def loop(x):
            for i in range(2):
                x = x + 1.0
            return x


def test_constants_are_not_refused():
    def fine(x):
        noise = np.fft.fft(np.ones(4)).real
        np.random.seed(0)
        print("x is", x)
        return x * np.sum(noise)

    assert pullback.grad(fine)(2.0) == 4.0
