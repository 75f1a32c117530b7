"""The `pullback` command, run as a subprocess."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args):
    return subprocess.run([sys.executable, "-m", "pullback", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)


def test_show_a_file_function():
    result = run("--show", "examples/quickstart.py:loss", "--wrt", "w")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def loss_fwd(w, x, y):")
    assert "return (ZERO, dw, ZERO, ZERO)" in result.stdout


def test_show_all_parameters_by_default():
    result = run("--show", "examples/quickstart.py:loss")
    assert "return (ZERO, dw, dx, dy)" in result.stdout


def test_show_a_module_function_in_anf():
    result = run("--show", "pullback.cotangents:unbroadcast", "--stage", "anf")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def unbroadcast(g, x):")


@pytest.mark.parametrize("args, message", [
    (("--show", "examples/missing.py:loss"), "no such file: examples/missing.py"),
    (("--show", "examples/quickstart.py:nothing"), "has no function 'nothing'"),
    (("--show", "examples/quickstart.py"), "expected FILE.py:NAME or MODULE:NAME"),
    (("--show", "no_such_module_here:f"), "No module named 'no_such_module_here'"),
    (("--show", "examples/quickstart.py:loss", "--wrt", "z"), "has no parameter 'z'"),
])
def test_errors_are_one_line_with_status_2(args, message):
    result = run(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stderr.startswith("pullback: error: ")


def test_help_documents_every_flag():
    result = run("--help")
    assert result.returncode == 0
    for flag in ("--show", "--stage", "--wrt"):
        assert flag in result.stdout


def test_the_installed_command():
    result = subprocess.run(["pullback", "--show", "examples/quickstart.py:loss"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "def loss_pullback(dout):" in result.stdout
