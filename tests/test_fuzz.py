"""Random programs: pullback's derivatives must match finite differences (tests/fuzzing).

`test_random_programs` checks fixed seeds and budgets of generated programs up to order 2
(order 3 when `f` takes one float) and fails on a wrong derivative or a crash, printing the
program hypothesis shrank it to. `test_found_bugs` checks the smallest programs of the bugs
the fuzzer has found (each was wrong or crashed). `test_checker` checks the checker on
programs whose outcome is known: a derivative wrong on purpose, one that raises, a refusal,
kinks.
"""

import hypothesis
import pytest

from fuzzing import checking, drivers, programs, reducing

EXAMPLES = 8  # in each of the PARTS, each program checked in both modes (CI: 15 minutes)
PARTS = 4  # tests with seeds of their own, which pytest's workers run side by side
SHRINK_SECONDS = 20.0

_gate = drivers.FailureGate(max_order=3, seconds=SHRINK_SECONDS)


@pytest.mark.parametrize("part", range(PARTS))
def test_random_programs(part):
    @hypothesis.seed(part)
    @hypothesis.settings(
        database=None, deadline=None, max_examples=EXAMPLES,
        suppress_health_check=list(hypothesis.HealthCheck), report_multiple_bugs=False,
        phases=[hypothesis.Phase.generate, hypothesis.Phase.shrink])
    @hypothesis.given(programs.programs())
    def check(program):
        _gate(program)

    check()


def program(body, arguments, types, header=""):
    """A Program from the text of `f` and of the tuple of its arguments."""
    source = f"{programs.HEADER}\nimport pullback\n\n{programs.RECORDS[programs.P]}\n{header}\n\n" \
             f"{body}\n\n\ndef arguments():\n    return {arguments}\n"
    return programs.Program(source, types)


F, V, M, P = programs.F, programs.V, programs.M, programs.P

# Bugs the fuzzer finds, each as the smallest program it came out wrong or crashed on.
FOUND = {
    "negative literal base": ("def f(x):\n    return (-0.5) ** 2 * x", "(0.7,)", (F,)),
    "field read in a lambda": (
        "def f(y):\n    g = lambda t: y.a * t\n    return g(2.0)", "(Pt(0.7, 1.3),)", (P,)),
    "closure called before and in a loop": (
        "def f(w):\n    def out(h):\n        return h * w\n\n    total = out(1.0)\n"
        "    for i in range(2):\n        total = total + out(2.0)\n    return total",
        "(0.9,)", (F,)),
    "closure read by an unused closure": (
        "def f(y):\n    g = lambda q: q * y\n    v = g(2.0)\n    unused = lambda: g(v)\n"
        "    return v", "(0.9,)", (F,)),
    "list appended to, read by a closure": (
        "def f(y, z):\n    l = [y]\n    l.append(z)\n\n    def first():\n        return l[0]\n\n"
        "    return first() + l[1]", "(0.9, 1.1)", (F, F)),
    "alias updated in a loop": (
        "def f(x):\n    c = np.ones(2)\n    d = c\n    for k in range(2):\n        d /= 2.0\n"
        "    return np.sum(c * x)", "(np.array([0.3, 0.7]),)", (V,)),
    "loop of an unused assignment": (
        "def f(z):\n    for i in range(1):\n        v = z * 2.0\n    return z", "(0.9,)", (F,)),
    "early return in a loop, order 2": (
        "def f(x):\n    l = [x * x]\n    for t in reversed(l):\n        if x > 10.0:\n"
        "            return t\n    return sum(l)", "(0.9,)", (F,)),
    "default of a nested def": (
        "def f(x):\n    def g(n=x):\n        return n\n\n    return x * 2.0", "(0.9,)", (F,)),
    "default from a factory's cell": (
        "def f(z):\n    return make(z)(1.0)", "(0.9,)", (F,),
        "def make(c):\n    def h(a, b=c):\n        return b\n\n    return h"),
    "if of an unused assignment (ANF pass)": (
        "def f(x):\n    if x > 0.0:\n        s = x\n    return x", "(0.9,)", (F,)),
    "chained assignment of ndarray.copy()": (
        "def f(x):\n    v = w = (x * np.ones(2)).copy()\n    return np.sum(v)", "(0.9,)", (F,)),
    "alias made in a loop, updated through": (
        "def f(x):\n    for i in range(1):\n        a = x\n        a[0] = 2.0\n"
        "    return np.sum(x)", "(np.array([0.3, 0.7]),)", (V,)),
    "array updated while its rows are iterated": (
        "def f(y):\n    s = 0.0\n    for t in y:\n        y *= 0.5\n        s = s + np.sum(t)\n"
        "    return s", "(np.array([[0.3, 0.7], [1.1, -0.4]]),)", (M,)),
    "nested function calling one defined after it": (
        "def f(x):\n    def a(t):\n        return b(t) * x\n\n"
        "    def b(t):\n        return t * t * x\n\n    return a(x)", "(0.7,)", (F,)),
    "argument updated through a list holding it": (
        "def f(x):\n    l = [x]\n    l[0][0] = 5.0\n    return np.sum(x)",
        "(np.array([0.3, 0.7]),)", (V,)),
    "updates in both branches, comprehension in the other, order 2": (
        "def f(x):\n    if 1.0:\n        x /= 2.0\n    else:\n        x *= 2.0\n"
        "        return [np.outer(x, 1.0) for g in [1.0]]\n    return x - 0.5",
        "(np.array([-0.98, 1.24]),)", (V,)),
    "update whose value calls a closure reading the updated name": (
        "def f(x):\n    v = np.tanh(x)\n    a = v\n"
        "    a *= (lambda t: t - np.sum(a))(1.0)\n    return np.sum(v)",
        "(np.array([-0.8, 1.2]),)", (V,)),
    "closure from a factory, its capture updated through an alias": (
        "def f(x):\n    def mk():\n        return lambda t: t * np.prod(x)\n\n    g = mk()\n"
        "    a = x\n    for i in range(1):\n        a += np.ones(2)\n    return g(2.0)",
        "(np.array([-0.8, 1.2]),)", (V,)),
}


@pytest.mark.parametrize("name", FOUND)
def test_found_bugs(name):
    outcome = checking.check_program(program(*FOUND[name]), max_order=3)
    assert outcome.kind in ("ok", "refused"), drivers.report(program(*FOUND[name]), outcome)


WRONG_RULE = """
@pullback.custom_vjp
def square(x):
    return x * x


def square_fwd(x):
    return x * x, x


def square_bwd(x, g):
    return (g * 3.0 * x,)


square.defvjp(square_fwd, square_bwd)
"""
FAILING_RULE = WRONG_RULE.replace("return (g * 3.0 * x,)", "raise ValueError('no')")


@pytest.mark.parametrize(("body", "arguments", "header", "kind"), [
    ("def f(x):\n    return square(x) + x", "(0.7,)", WRONG_RULE, "wrong"),
    ("def f(x):\n    return np.sum(np.sin(x)) * 2.0", "(np.array([0.3, 0.7]),)", "", "ok"),
    ("def f(x):\n    return square(x)", "(0.7,)", FAILING_RULE, "crash"),
    ("def f(x):\n    match x:\n        case _:\n            return x", "(0.7,)", "", "refused"),
    ("def f(x):\n    return abs(x - 0.25)", "(0.25,)", "", "skipped"),
    ("def f(x):\n    return x if x > 0.2500001 else -x", "(0.25,)", "", "skipped"),
    ("def f(x):\n    return pullback.grad(lambda t: max(x, t))(x) * x", "(0.7,)", "", "invalid"),
    # an inner derivative exactly -1.0 compared with -1.0: the oracle's takes pullback's branch
    ("def f(x):\n    return x if -1.0 < grad(lambda t: 1.0 - t)(-2.0) else 4.0 * x",
     "(0.7,)", "from pullback import grad", "ok"),
])
def test_checker(body, arguments, header, kind):
    types = (V,) if "array" in arguments else (F,)
    outcome = checking.check_program(program(body, arguments, types, header), max_order=2)
    assert outcome.kind == kind, outcome


def test_reduction_keeps_the_failure():
    body = ("def f(x):\n    y = np.sin(x)\n    z = [y, 2.0]\n    if x > 5.0:\n        return z[1]\n"
            "    return square(x) + np.cos(y) * z[1]")
    large = program(body, "(0.7,)", (F,), WRONG_RULE)
    outcome = checking.check_program(large)
    small, same = reducing.reduce_source(large, outcome, 2, seconds=30)
    assert same.signature == outcome.signature == "wrong gradient of float at order 1"
    assert "def f(x):\n    return square(x)\n" in small.source, small.source


def test_generation_is_deterministic():
    sources = [[], []]
    for run in sources:
        drivers.explore(20, seed=7, visit=lambda p, run=run: run.append(p.source))
    assert sources[0] == sources[1] and len(set(sources[0])) == 20
