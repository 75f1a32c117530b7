"""The `pullback` command: each flag, each error, colour on terminals."""

import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

import pullback
from pullback.cli import command, highlight

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICKSTART = "examples/quickstart.py:loss"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch):
    """Run from the repository's root; undo the command's additions to sys.path."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))


def run(capsys, *args):
    """Run the command in this process: `(status, stdout, stderr)`."""
    try:
        status = command.main(list(args))
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


SHOWN = [  # the arguments, and lines the output must contain
    ((QUICKSTART,), ["def loss_fwd(w, x, y):", "return (ZERO, dw, dx, dy)"]),
    ((QUICKSTART, "--wrt", "w"), ["def loss_fwd(w, x, y):", "return (ZERO, dw, ZERO, ZERO)"]),
    ((QUICKSTART, "--wrt", "0"), ["return (ZERO, dw, ZERO, ZERO)"]),
    ((QUICKSTART, "--wrt", "w, 2,w"), ["return (ZERO, dw, ZERO, dy)"]),
    ((QUICKSTART, "--stage", "raw"), ["def loss_fwd(w, x, y):", "return (ZERO, dw, dx, dy)"]),
    ((QUICKSTART, "--stage", "anf"), ["def loss(w, x, y):", "    return out"]),
    (("pullback.runtime.cotangents:unbroadcast", "--stage", "anf"), ["def unbroadcast(g, x):"]),
    ((QUICKSTART, "--order", "1"), ["def loss_pullback(dout):"]),
    ((QUICKSTART, "--order", "2", "--wrt", "w"),
     ["def loss_fwd_fwd(w, x, y):", "def loss_pullback_fwd(dout):"]),
    ((QUICKSTART, "--order", "2", "--stage", "anf"),
     ["def loss_fwd(w, x, y):", "def loss_pullback(dout):"]),
    (("examples/control_flow.py:horner", "--order", "3"),
     ["def horner_fwd_fwd_fwd(coeffs, x):", "def horner_pullback_pullback_fwd("]),
    ((QUICKSTART, "--order", "3"),
     ["def loss_fwd_fwd_fwd(w, x, y):", "def loss_pullback_pullback_fwd("]),
    ((QUICKSTART, "--color", "never"), ["def loss_fwd(w, x, y):"]),
]


@pytest.mark.parametrize("args, lines", SHOWN, ids=[" ".join(a) for a, _ in SHOWN])
def test_show(capsys, args, lines):
    status, out, err = run(capsys, "--show", *args)
    assert (status, err) == (0, "")
    assert not ANSI.search(out)
    shown = [line.strip() for line in out.splitlines()]
    for line in lines:
        assert any(x.startswith(line.strip()) for x in shown), line


def test_order_2_is_the_source_of_the_gradient(capsys):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import quickstart

    _, out, _ = run(capsys, "--show", QUICKSTART, "--order", "2", "--wrt", "w")
    expected = pullback.source(pullback.grad(quickstart.loss, (0,)))
    unnumbered = re.compile(r" #\d+>")  # generated files are numbered in creation order
    assert unnumbered.sub(">", out) == unnumbered.sub(">", expected)


REFUSED = """
def forgets(x):
    y = x
    del y
    return y
"""

FILES = {
    "refused.py": REFUSED,
    "broken.py": "def f(x:\n",
    "raises.py": "raise RuntimeError('boom')\n",
}

ERRORS = [  # the arguments, and a part of the one-line message
    (("--show", "examples/missing.py:loss"), "no such file: examples/missing.py"),
    (("--show", "examples/quickstart.py:nothing"), "has no function 'nothing'"),
    (("--show", "examples/quickstart.py"), "expected FILE.py:NAME or MODULE:NAME"),
    (("--show", "examples/quickstart.py:np"), "examples/quickstart.py:np is not a function"),
    (("--show", "no_such_module_here:f"), "No module named 'no_such_module_here'"),
    (("--show", "os:getcwd"), "getcwd>: it is not a Python function with source code"),
    (("--show", "{tmp}/refused.py:forgets"), "refused.py:5: y is read after del y at line 4"),
    (("--show", "{tmp}/broken.py:f"), "'(' was never closed (broken.py, line 1)"),
    (("--show", "{tmp}/raises.py:f"), "raises.py raised RuntimeError: boom"),
    ((), "the following arguments are required: --show"),
    (("--show", QUICKSTART, "--wrt", "z"), "loss has no parameter 'z' (its parameters: w, x, y)"),
    (("--show", QUICKSTART, "--wrt", "3"), "loss has 3 parameters: position 3 is out of range"),
    (("--show", QUICKSTART, "--order", "0"), "--order: expected a whole number 1 or more, got '0'"),
    (("--show", QUICKSTART, "--order", "-1"), "expected a whole number 1 or more, got '-1'"),
    (("--show", QUICKSTART, "--order", "two"), "expected a whole number 1 or more, got 'two'"),
    (("--show", QUICKSTART, "--stage", "bytecode"), "--stage: invalid choice: 'bytecode'"),
    (("--show", QUICKSTART, "--color", "sometimes"), "--color: invalid choice: 'sometimes'"),
    (("--show", QUICKSTART, "--frobnicate"), "unrecognized arguments: --frobnicate"),
]


@pytest.mark.parametrize("args, message", ERRORS, ids=[m for _, m in ERRORS])
def test_errors_are_one_line_with_status_2(capsys, tmp_path, args, message):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    status, out, err = run(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert (status, out) == (2, "")
    assert err.startswith("pullback: error: ") and err.count("\n") == 1
    assert message in err


def test_help_documents_every_flag_with_an_example(capsys):
    status, out, _ = run(capsys, "--help")
    text = " ".join(out.split())
    assert status == 0 and "examples: pullback --show examples/quickstart.py:loss" in text
    for flag in ("--show", "--order", "--stage", "--wrt", "--color"):
        assert f"e.g. {flag} " in text


class Terminal(io.StringIO):
    """Standard output that says it is a terminal."""

    def isatty(self):
        return True


COLOURS = [  # --color, whether stdout is a terminal, the environment, whether colour is used
    ("auto", True, {}, True),
    ("auto", False, {}, False),
    ("auto", True, {"NO_COLOR": "1"}, False),
    ("auto", True, {"NO_COLOR": ""}, True),
    ("auto", True, {"TERM": "dumb"}, False),
    ("always", False, {"NO_COLOR": "1"}, True),
    ("never", True, {}, False),
]


@pytest.mark.parametrize("choice, terminal, environ, coloured", COLOURS)
def test_colour(monkeypatch, choice, terminal, environ, coloured):
    for name in ("NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    stdout = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    assert command.main(["--show", QUICKSTART, "--color", choice]) == 0
    out = stdout.getvalue()
    assert bool(ANSI.search(out)) == coloured
    assert ANSI.sub("", out) == pullback.source(command.load(QUICKSTART))


def test_highlight_colours_tokens_and_keeps_the_text():
    keyword, definition, comment, string, number = (highlight.STYLES[x] for x in (
        "keyword", "definition", "comment", "string", "number"))
    end = highlight.RESET
    text = "def f(x):\n    return x + 1.0  # f.py:2: 'x'\ny = 'a'\n"
    assert highlight.highlight(text) == (
        f"{keyword}def{end} {definition}f{end}(x):\n"
        f"    {keyword}return{end} x + {number}1.0{end}  {comment}# f.py:2: 'x'{end}\n"
        f"y = {string}'a'{end}\n")
    assert highlight.highlight("def f(:\n") == "def f(:\n"


def installed_command():
    """The `pullback` script installed for the running interpreter, found where it
    installs scripts rather than on PATH: an environment need not be activated."""
    folders = os.pathsep.join([sysconfig.get_path("scripts"), os.path.dirname(sys.executable)])
    found = shutil.which("pullback", path=folders)
    assert found is not None, f"no pullback script in {folders}: pip install -e ."
    return found


def test_the_installed_command():
    result = subprocess.run([installed_command(), "--show", QUICKSTART, "--order", "0"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    result = subprocess.run([sys.executable, "-m", "pullback", "--show", QUICKSTART], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "def loss_pullback(dout):" in result.stdout


def test_the_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out == f"pullback {pullback.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", pullback.__version__)
