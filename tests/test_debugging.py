"""Stepping through derivatives: debug files, tracebacks that name the user's lines, NaN checks."""

import io
import linecache
import os
import pdb
import subprocess
import sys
import traceback

import numpy as np
import pytest

import pullback
from pullback.compiler import transform
from pullback.compiler.analysis import kinds
from pullback.compiler.frontend import inline
from pullback.errors import NaNError
from pullback.runtime import debugging
from test_docs import run_page, shown_in

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def settings():
    """Restore pullback's settings after each test."""
    saved = pullback.config()
    yield
    pullback.config(**saved)


def cube(x):
    y = x * x * x
    return y


def norm(x):
    return np.sqrt(np.sum(x ** 2))


def root_sum(x):
    return np.sum(np.sqrt(x))


def calls_root_sum(x):
    return root_sum(x * 2.0)


def calls_root_sum_again(x):
    return root_sum(x * 2.0)


def logarithm(x):
    return np.log(x)


def line_of(fn, offset=1):
    """The line `offset` lines below the `def` of `fn`."""
    return fn.__code__.co_firstlineno + offset


# -- pullback.config -----------------------------------------------------------------


def test_config_returns_and_restores_the_settings(tmp_path):
    assert pullback.config() == {"debug_dir": None, "check_nans": False}
    changed = pullback.config(debug_dir=tmp_path, check_nans=True)
    assert changed == {"debug_dir": str(tmp_path), "check_nans": True} == pullback.config()
    assert pullback.config(debug_dir=None, check_nans=False) == {"debug_dir": None,
                                                                 "check_nans": False}
    with pytest.raises(TypeError, match="check_nans"):
        pullback.config(check_nans="yes")


def test_the_environment_variable_sets_the_debug_directory(tmp_path):
    env = dict(os.environ, PULLBACK_DEBUG_DIR=str(tmp_path), PYTHONPATH=ROOT)
    shown = subprocess.run([sys.executable, "-c", "import pullback; print(pullback.config())"],
                           env=env, capture_output=True, text=True, check=True).stdout
    assert shown.strip() == str({"debug_dir": str(tmp_path), "check_nans": False})


# -- IDE debugging: generated code in real files ----------------------------------------


def test_debug_dir_holds_the_generated_code(tmp_path):
    pullback.config(debug_dir=tmp_path)
    assert pullback.grad(cube)(2.0) == 12.0
    (path,) = tmp_path.iterdir()
    assert path.name.startswith("test_debugging.cube.fwd.") and path.suffix == ".py"
    text = path.read_text()
    assert "def cube_pullback(dy):" in text and "dx = " in text
    assert transform.forward_function(cube, {"x": kinds.SCALAR}).__code__.co_filename == (
        str(path))


def test_higher_orders_and_other_kinds_get_their_own_files(tmp_path):
    pullback.config(debug_dir=tmp_path)
    pullback.grad(cube)(2.0)
    pullback.vjp(cube, np.array([1.0, 2.0]))
    pullback.grad(pullback.grad(cube))(2.0)
    names = {path.name.rsplit(".", 2)[0] for path in tmp_path.iterdir()}
    assert {"test_debugging.cube.fwd", "test_debugging.cube.fwd.fwd",
            "test_debugging.cube.pullback.fwd"} <= names
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("test_debugging.cube.fwd.")
                and p.name.count(".") == 4]) == 2  # a scalar and an array


SCRIPT = """
import sys
import numpy as np
import pullback

def f(x):
    return np.sum(x * x)

arguments = {"scalar": 2.0, "array": np.ones(3)}
for name in sys.argv[1:]:
    pullback.grad(f)(arguments[name])
"""


def test_file_names_do_not_depend_on_what_was_differentiated_first(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    names = []
    for order in (["scalar", "array"], ["array", "scalar"]):
        directory = tmp_path / "_".join(order)
        env = dict(os.environ, PULLBACK_DEBUG_DIR=str(directory), PYTHONPATH=ROOT)
        subprocess.run([sys.executable, str(script), *order], env=env, check=True)
        names.append(sorted(os.listdir(directory)))
    assert names[0] == names[1] and len(names[0]) == 2


def test_code_made_again_gets_a_file_name_of_its_own(monkeypatch):
    """With the derivatives made again (their cache emptied), the first code must still
    read as its own text: it is what pdb shows and what grad of grad parses."""
    scalar = {"x": kinds.SCALAR}
    first = transform.derivative(cube, scalar)
    lines = linecache.getlines(first.filename)
    monkeypatch.setattr(transform, "_DERIVATIVES", {})
    again = transform.derivative(cube, scalar)
    assert again.filename != first.filename and linecache.getlines(first.filename) == lines
    assert pullback.grad(pullback.grad(cube))(2.0) == 12.0


def test_pdb_stops_in_the_pullback_and_prints_a_cotangent(tmp_path):
    pullback.config(debug_dir=tmp_path)
    gradient = pullback.grad(cube)
    gradient(1.0)
    (path,) = tmp_path.iterdir()
    lines = path.read_text().splitlines()
    line = lines.index("            return (ZERO, dx)") + 1
    commands = f"break {path}:{line}\ncontinue\np dx\ncontinue\n"
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO(commands), stdout=out, readrc=False, nosigint=True)
    assert debugger.runcall(gradient, 3.0) == 27.0
    shown = out.getvalue()
    assert f"{path}({line})cube_pullback()" in shown
    assert "(Pdb) 27.0\n" in shown


# -- tracebacks: the user's line beside the generated one -----------------------------


def test_a_block_comment_names_the_users_line():
    text = pullback.source(cube, 2.0)
    assert f"# from test_debugging.py:{line_of(cube)}: y = x * x * x" in text


def test_an_exception_in_inlined_code_notes_the_callees_line():
    _, back = pullback.vjp(calls_root_sum, np.array([0.0, 2.0]))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as caught:
        back(1.0)
    (note,) = caught.value.__notes__  # root_sum is inlined into calls_root_sum
    assert ", in calls_root_sum_pullback: " in note
    assert note.endswith(f"from {__file__}:{line_of(root_sum)}: return np.sum(np.sqrt(x))")


def test_an_exception_in_a_pullback_notes_the_users_line(monkeypatch):
    monkeypatch.setattr(inline, "LIMIT", 0)
    _, back = pullback.vjp(calls_root_sum_again, np.array([0.0, 2.0]))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as caught:
        back(1.0)
    notes = caught.value.__notes__
    assert len(notes) == 2  # the pullbacks of calls_root_sum_again and of root_sum
    assert notes[0].endswith(f"from {__file__}:{line_of(calls_root_sum_again)}: "
                             "return root_sum(x * 2.0)")
    assert ", in calls_root_sum_again_pullback: _, dx_times_2_0 = out_pb(dout)\n" in notes[0]
    assert notes[1].endswith(f"from {__file__}:{line_of(root_sum)}: return np.sum(np.sqrt(x))")
    shown = "".join(traceback.format_exception(caught.value))
    assert "in root_sum_pullback" in shown and notes[1] in shown


def test_an_exception_in_a_forward_notes_the_users_line():
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as caught:
        pullback.grad(logarithm)(0.0)
    (note,) = caught.value.__notes__
    assert f"{__file__}:{line_of(logarithm)}: return np.log(x)" in note


def test_notes_without_add_note_go_into_the_message():
    """Python 3.10 has no `add_note`: the note joins the message, the type stays."""

    class Before311:
        args = ("division by zero",)

    error = Before311()
    debugging.add_note(error, "pullback: from f.py:3")
    assert error.args == ("division by zero\npullback: from f.py:3",)
    assert error.__notes__ == ["pullback: from f.py:3"]


# -- NaN tracing -------------------------------------------------------------------


def test_check_nans_raises_at_the_first_nan_naming_the_users_line():
    pullback.config(check_nans=True)
    with pytest.raises(FloatingPointError) as caught, np.errstate(all="ignore"):
        pullback.grad(norm)(np.zeros(3))
    error = caught.value
    assert isinstance(error, NaNError) and error.variable == "dx"
    assert (error.filename, error.lineno) == (__file__, line_of(norm))
    assert error.line == "return np.sqrt(np.sum(x ** 2))"
    assert str(error).startswith("nan in dx (pullback.config(check_nans=True)) at <pullback")
    assert ", in norm_pullback: dx = dsum_x_pow_2 * 2 * x\n" in str(error)
    assert str(error).endswith(f"from {__file__}:{line_of(norm)}: {error.line}")


def test_check_nans_checks_forward_values():
    pullback.config(check_nans=True)
    with pytest.raises(NaNError) as caught, np.errstate(all="ignore"):
        pullback.grad(logarithm)(-1.0)
    assert caught.value.lineno == line_of(logarithm) and caught.value.variable == "out"


def test_without_check_nans_the_nan_is_returned_and_the_code_unchanged():
    with np.errstate(all="ignore"):
        assert np.isnan(pullback.grad(norm)(np.zeros(3))).all()
    assert "check_nan" not in pullback.source(norm, np.zeros(3))
    pullback.config(check_nans=True)
    assert "check_nan(dx, 'dx')" in pullback.source(norm, np.zeros(3))
    pullback.config(check_nans=False)
    with np.errstate(all="ignore"):
        assert np.isnan(pullback.grad(norm)(np.zeros(3))).all()


def test_check_nans_in_second_order_code_names_the_users_line():
    pullback.config(check_nans=True)
    with pytest.raises(NaNError) as caught, np.errstate(all="ignore"):
        pullback.grad(pullback.grad(norm))(np.zeros(3))
    assert (caught.value.filename, caught.value.lineno) == (__file__, line_of(norm))


def test_check_nans_passes_finite_values():
    pullback.config(check_nans=True)
    assert pullback.grad(norm)(np.array([3.0, 4.0])) == pytest.approx([0.6, 0.8])
    assert pullback.grad(pullback.grad(cube))(2.0) == 12.0


# -- docs/debugging.md --------------------------------------------------------------


def test_the_debugging_page_runs_and_leaves_the_settings_as_they_were(monkeypatch):
    monkeypatch.setattr(linecache, "cache", dict(linecache.cache))
    before = pullback.config()
    printed = run_page("debugging.md")
    assert printed and all(shown is None or shown_in(output, shown)
                           for _, output, shown in printed)
    assert pullback.config() == before
