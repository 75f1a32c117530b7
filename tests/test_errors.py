"""Every way pullback refuses: a TransformError naming the user's file:line, never a guess."""

import linecache

import numpy as np
import pytest

import pullback
from pullback import TransformError

try:
    from scipy.integrate import quad
except ImportError:  # the library tests below are skipped
    quad = None

HERE = "test_errors.py"


def del_statement(x):
    y = x * 2.0
    del y
    return y  # noqa: F821 (read after del: refused, as Python raises here)


def try_statement(x):
    try:
        y = x * 2.0
    finally:
        return x  # noqa: B012
    return y


def global_statement(x):
    global SCALE
    SCALE = x
    return x


def attribute_assignment(x):
    x.value = 3.0
    return x


def yield_statement(x):
    sent = yield x
    yield sent


def no_rule(x):
    return np.sum(np.unwrap(x))


TWIDDLES = np.exp(-2j * np.pi * np.outer(np.arange(3), np.arange(3)) / 3)


def complex_literal(x):
    return np.real(np.exp(1j * x))


def complex_global_array(x):
    return np.sum(np.real(TWIDDLES @ x))


def complex_constant_computed(x):
    c = np.exp(1j * 0.5)
    return np.real(x * c)


def complex_dtype_array(x):
    return np.sum(np.abs(x.astype(np.complex128)))


def fourier_transform_array(x):
    return np.sum(np.abs(np.fft.rfft(x)))


def no_rule_for_a_dropped_effect(x):
    np.random.shuffle(x)
    return x


def out_argument(x):
    y = np.zeros(3)
    return np.sum(np.multiply(x, 2.0, out=y))


def unknown_keyword(x):
    return np.max(x, initial=0.0)


def undefined_name(x):
    return undefined_function(x)  # noqa: F821


def unknown_array_method(x):
    return x.frobnicate()


def calls_a_refused_function(x):
    return del_statement(x) * 2.0


def array_updated_in_place(x):
    y = x * 1.0
    view = y[0:2]
    y += 1.0
    return np.sum(view * y[0:2])


def set_display(x):
    return sum({x * 2.0})


def set_comprehension(x):
    return sum({x * i for i in range(1, 3)})


async def coroutine(x):
    return x


COUNTS = [3]


def list_repetition(x):
    return sum([x] * COUNTS[0])  # a count the kinds cannot tell from an array


def nonlocal_statement(x):
    y = x

    def increment():
        nonlocal y
        y = y + 1.0

    increment()
    return y


def apply(g, x):
    return g(x)


REFUSED = [  # the function, the message, the line of the refused construct below `def`
    (del_statement, "y is read after del y at line", 3),
    (try_statement, "a return in a finally clause", 4),
    (global_statement, "SCALE is declared global or nonlocal and is assigned a differentiable", 2),
    (attribute_assignment, "assignment to an attribute", 1),
    (yield_statement, "a yield whose value is used", 1),
    (no_rule, r"no derivative rule for numpy\.unwrap.*pullback\.adjoint", 1),
    (complex_literal, r"computing with complex numbers \(1j here, with a differentiable", 1),
    (complex_global_array, r"complex numbers \(TWIDDLES here", 1),
    (complex_constant_computed, r"complex numbers \(a complex value here", 2),
    (complex_dtype_array, r"complex numbers \(np\.complex128 here", 1),
    (fourier_transform_array, r"numpy\.fft\.rfft returns complex numbers", 1),
    (no_rule_for_a_dropped_effect, r"np\.random\.shuffle updates a value in place", 1),
    (out_argument, "keyword argument 'out'", 2),
    (unknown_keyword, "unexpected keyword argument 'initial'", 1),
    (undefined_name, "name 'undefined_function' is not defined", 1),
    (unknown_array_method, "NumPy arrays have no method .frobnicate", 1),
    (calls_a_refused_function, "y is read after del y at line", 3),
    (array_updated_in_place, r"y \+= \.\.\. updates y in place, and view, .* Write y = y \+", 3),
    (set_display, "a set holding a differentiable value: .* use a list or a tuple", 1),
    (set_comprehension, "a set holding a differentiable value", 1),
    (list_repetition, r"repeating a list .* \[x for _ in range\(n\)\]", 1),
    (nonlocal_statement, "a nonlocal statement", 4),
    (coroutine, "coroutine is an async function, which is not supported", 0),
]


def refused_line(fn, offset):
    """The line `offset` lines below the `def` of `fn` (or of `del_statement` it calls)."""
    fn = del_statement if fn is calls_a_refused_function else fn
    return fn.__code__.co_firstlineno + offset


@pytest.mark.parametrize("fn, message, offset", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused_with_file_and_line(fn, message, offset):
    line = refused_line(fn, offset)
    with pytest.raises(TransformError, match=message) as caught:
        pullback.grad(fn)(np.ones(3) if "array" in fn.__name__ or fn is no_rule else 1.5)
    error = caught.value
    assert error.filename.endswith(HERE) and error.lineno == line
    assert str(error).startswith(f"{error.filename}:{line}: ")


def test_run_time_callee_without_a_rule():
    with pytest.raises(TransformError, match=r"no derivative rule for numpy\.unwrap") as caught:
        pullback.grad(lambda x: np.sum(apply(np.unwrap, x)))(np.ones(4))
    assert caught.value.filename.endswith(HERE)
    assert caught.value.lineno == apply.__code__.co_firstlineno + 1


def integrated(x):
    from_library = quad(lambda t: x * t, 0.0, 1.0)
    return from_library[0]


def call_with(fn, *args):
    return fn(*args)


def integrated_through_a_value(x):
    return call_with(quad, lambda t: x * t, 0.0, 1.0)[0]


@pytest.mark.parametrize("fn, offset, called", [
    (integrated, 1, "quad (scipy.integrate._quadpack_py.quad), called here,"),
    (integrated_through_a_value, None, "The function called here"),
])
def test_a_refusal_inside_a_library_names_the_users_call(fn, offset, called):
    pytest.importorskip("scipy")
    with pytest.raises(TransformError) as caught:
        pullback.grad(fn)(1.0)
    error = caught.value
    line = fn.__code__.co_firstlineno + offset if offset else call_with.__code__.co_firstlineno + 1
    assert (error.filename, error.lineno) == (__file__, line)
    assert str(error).startswith(f"{__file__}:{line}: {called} cannot be differentiated. "
                                 f"Inside it, at ")  # a line of SciPy's (or of what it calls)
    assert "@pullback.custom_vjp" in str(error)


def early_return_then_a_def_defined_twice(x):
    if x > 0.0:  # noqa: SIM102 (the def after it is copied into both branches)
        if x > 1.0:
            return x

    def g(t):
        return t * x

    def g(t):  # noqa: F811
        return t * x * 2.0

    return g(x)


def test_a_refusal_of_generated_code_names_the_users_line():
    with pytest.raises(TransformError, match="defining g again") as caught:
        pullback.grad(early_return_then_a_def_defined_twice)(0.5)
    first = early_return_then_a_def_defined_twice.__code__.co_firstlineno
    assert (caught.value.filename, caught.value.lineno) == (__file__, first + 8)


def defined_in(filename, text, name="f"):
    """The function `name` of `text` run as if it were the file `filename`."""
    namespace = {}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("filename", ["<stdin>", "<string>"])
def test_source_unavailable(filename):
    f = defined_in(filename, "def f(x):\n    return x * 2.0\n")
    with pytest.raises(TransformError, match=rf"cannot read the source of f \(defined in "
                       rf"{filename}\): .* so define the function in a file, a module or a "
                       "Jupyter cell rather than at a plain interactive prompt"):
        pullback.grad(f)(1.0)


CELL = "import numpy as np\n\n\ndef f(x):\n    return np.sin(x) * x\n"


@pytest.mark.parametrize("filename", ["<ipython-input-3-9f1c2ab4e7d0>",
                                      "/tmp/ipykernel_123/2961034721.py"])
def test_functions_defined_in_jupyter_cells(monkeypatch, filename):
    """IPython compiles a cell under a name of its own and puts its text in linecache."""
    monkeypatch.setitem(linecache.cache, filename,
                        (len(CELL), None, CELL.splitlines(keepends=True), filename))
    f = defined_in(filename, CELL)
    assert pullback.grad(f)(0.5) == pytest.approx(np.sin(0.5) + 0.5 * np.cos(0.5))
    cell = filename.rsplit("/", 1)[-1]
    assert f"{cell}:5: return np.sin(x) * x" in pullback.source(f, 0.5)


def test_source_edited_after_import(tmp_path, monkeypatch):
    module = tmp_path / "edited_module.py"
    module.write_text("def f(x):\n    return x * 2.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_module

    module.write_text("def f(x):\n    return x * 3.0\n")
    linecache.checkcache(str(module))
    with pytest.raises(TransformError, match="has changed since it was loaded"):
        pullback.grad(edited_module.f)(1.0)


def test_builtin_without_rule():
    with pytest.raises(TransformError, match="not a Python function"):
        pullback.grad(len)([1.0])


def test_decorator_refuses_at_definition():
    with pytest.raises(TransformError, match="a match statement"):
        @pullback.differentiable
        def forgets(x):
            match x:
                case _:
                    return x


def test_in_place_update_without_alias_is_fine():
    def accumulate(x):
        total = np.zeros(3)
        total += x * 2.0
        total *= x
        return np.sum(total)

    np.testing.assert_allclose(pullback.grad(accumulate)(np.ones(3)), 4.0)


def test_constants_are_not_refused():
    def fine(x):
        noise = np.fft.fft(np.ones(4)).real
        np.random.seed(0)
        print("x is", x)
        return x * np.sum(noise)

    assert pullback.grad(fine)(2.0) == 4.0
