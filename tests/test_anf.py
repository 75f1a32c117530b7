"""A-normal form: exact output for small functions, and the contract on a corpus."""

import inspect
import textwrap

import pytest

import pullback
import test_calls
import test_primitives
from pullback.compiler.frontend import anf, flow, parse
from pullback.compiler.syntax import annotations, nodes


def normalise(fn):
    tree, origin = parse.parse_function(fn)
    return anf.to_anf(tree, origin)


def anf_text(fn):
    return pullback.source(fn, stage="anf")


def example(a, b):
    return (a + b) * b


def augmented(x, y):
    x += y
    x *= 2.0
    return x


def targets(x):
    a = b = x * 2.0
    c, (d, e) = a, (b, x)
    return c * d * e


def chained(x, y):
    return 0.0 < x < y


def boolean(x, y):
    return (x and y) or -x


def choose(x):
    return x if x > 0 else -x


def early(x):
    if x > 0:
        return x
    return -x


def annotated(x: float) -> float:
    y: float = x * 2.0
    return y


GOLDEN = [
    (example, """
        def example(a, b):
            # from test_anf.py:{1}: return (a + b) * b
            a_plus_b = a + b
            out = a_plus_b * b
            return out
    """),
    (augmented, """
        def augmented(x, y):
            # from test_anf.py:{1}: x += y
            x_1 = x + y
            # from test_anf.py:{2}: x *= 2.0
            x_2 = x_1 * 2.0
            # from test_anf.py:{3}: return x
            return x_2
    """),
    (targets, """
        def targets(x):
            # from test_anf.py:{1}: a = b = x * 2.0
            x_times_2_0 = x * 2.0
            a = x_times_2_0
            b = x_times_2_0
            # from test_anf.py:{2}: c, (d, e) = a, (b, x)
            items = (b, x)
            c = a
            d, e = items
            # from test_anf.py:{3}: return c * d * e
            c_times_d = c * d
            out = c_times_d * e
            return out
    """),
    (chained, """
        def chained(x, y):
            # from test_anf.py:{1}: return 0.0 < x < y
            cond = 0.0 < x
            if cond:
                out = x < y
            else:
                out = cond
            return out
    """),
    (boolean, """
        def boolean(x, y):
            # from test_anf.py:{1}: return (x and y) or -x
            if x:
                choice = y
            else:
                choice = x
            if choice:
                out = choice
            else:
                out = -x
            return out
    """),
    (choose, """
        def choose(x):
            # from test_anf.py:{1}: return x if x > 0 else -x
            cond = x > 0
            if cond:
                out = x
            else:
                out = -x
            return out
    """),
    (early, """
        def early(x):
            # from test_anf.py:{1}: if x > 0
            cond = x > 0
            if cond:
                # from test_anf.py:{2}: return x
                out = x
            else:
                # from test_anf.py:{3}: return -x
                out = -x
            return out
    """),
    (annotated, """
        def annotated(x):
            # from test_anf.py:{1}: y: float = x * 2.0
            y = x * 2.0
            # from test_anf.py:{2}: return y
            return y
    """),
]


@pytest.mark.parametrize("fn, expected", GOLDEN, ids=[g[0].__name__ for g in GOLDEN])
def test_golden(fn, expected):
    first = fn.__code__.co_firstlineno
    lines = [first + offset for offset in range(10)]
    assert anf_text(fn) == textwrap.dedent(expected).lstrip("\n").format(*lines)


def corpus():
    """Every function the test suite differentiates."""
    functions = [fn for fn, _ in GOLDEN]
    functions += [row[1] for row in test_primitives.TABLE]
    functions += [row[1] for row in test_calls.CASES]
    functions += [obj for obj in vars(test_calls).values()
                  if inspect.isfunction(obj) and obj.__module__ == "test_calls"
                  and not obj.__name__.startswith("test_")]
    return [fn for fn in functions if inspect.isfunction(fn)]


@pytest.mark.parametrize("fn", corpus(), ids=lambda fn: fn.__qualname__)
def test_contract_holds_on_the_corpus(fn):
    anf.check_anf(normalise(fn))


def test_single_assignment():
    tree = normalise(test_calls.shadowing)
    assigned = [node.targets[0].id for node in tree.body if hasattr(node, "targets")]
    assert len(assigned) == len(set(assigned))


def assigned_twice_on_one_path(x, c):
    if c:
        y = x
    else:
        y = -x
    y = y * 2.0
    return y


def test_the_validator_rejects_a_second_assignment_on_one_path():
    tree, _ = parse.parse_function(assigned_twice_on_one_path)
    with pytest.raises(AssertionError, match="y assigned again"):
        anf.check_anf(tree)


def test_the_validator_rejects_nested_expressions():
    tree, _ = parse.parse_function(example)
    with pytest.raises(AssertionError, match="expected an atom"):
        anf.check_anf(tree)


def test_an_undeclared_annotation_is_refused():
    tree = nodes.parse("def f(x):\n    return x").body[0]
    annotations.check(tree)
    tree.body[0].loop = True
    with pytest.raises(AssertionError, match="Return.loop is not a declared annotation"):
        annotations.check(tree)


CARRIED = '''
def f(a, xs):
    total = 0.0
    for t in range(3):
        x = a * t
        y = x + 1.0
        total = total + x * y
    g = lambda x: x * 3
    def h(y):
        return y * 2
    return total + sum(x * 2 for x in xs) + g(a) + h(a)
'''


def test_a_loop_does_not_carry_what_only_another_scope_reads_after_it():
    """`x` and `y` read after the loop only as a comprehension's target and as the
    parameters of a lambda and a function are other variables: the loop need not pass
    them on. A name a nested function reads from outside stays carried."""
    tree = nodes.parse(CARRIED).body[0]
    flow.mark_carried(tree.body, ["a", "xs"])
    assert tree.body[1].carried == ["total"]
    free = CARRIED.replace("def h(y):\n        return y * 2", "def h(z):\n        return y * z")
    tree = nodes.parse(free).body[0]
    flow.mark_carried(tree.body, ["a", "xs"])
    assert tree.body[1].carried == ["y", "total"]
