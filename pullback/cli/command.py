"""The `pullback` command: print the derivative code of a function.

    pullback --show examples/quickstart.py:loss
    pullback --show examples/quickstart.py:loss --wrt w --order 2
    pullback --show mypackage.model:loss --stage anf

Errors are one line on stderr, with exit status 2.
"""

import argparse
import importlib
import importlib.util
import os
import sys

from .. import api
from ..errors import TransformError
from ..runtime import calls
from ..version import __version__
from . import highlight

_ERRORS = (LookupError, ImportError, OSError, SyntaxError, ValueError, TransformError)

_EXAMPLES = """\
examples:
  pullback --show examples/quickstart.py:loss               loss's derivative code
  pullback --show examples/quickstart.py:loss --wrt w,2     only for w and y
  pullback --show examples/quickstart.py:loss --order 2     second order: the code
                                                            differentiating grad(loss) runs
  pullback --show examples/quickstart.py:loss --stage anf   loss in A-normal form
  pullback --show examples/quickstart.py:loss --mode forward
                                                            its tangent code (forward mode)
  pullback --show pullback.runtime.cotangents:unbroadcast           a function of a module
  pullback --show examples/quickstart.py:loss --color always | less -R

Functions without example arguments: parameters annotated float, int or np.ndarray
get those kinds, the others are taken to be arrays. Errors are one line on stderr,
with exit status 2.
"""


def main(argv=None):
    """Run the command line; returns the exit status."""
    options = _Parser().parse_args(argv)
    try:
        text = derivative_text(options.show, options.order, options.stage, options.wrt,
                               options.mode)
    except _ERRORS as error:
        print(f"pullback: error: {_one_line(error)}", file=sys.stderr)
        return 2
    if wants_color(options.color, sys.stdout, os.environ):
        text = highlight.highlight(text)
    sys.stdout.write(text)
    return 0


def derivative_text(target, order=1, stage="optimized", wrt=None, mode="reverse"):
    """The code `pullback --show target` prints.

    Args:
      target: `path/to/file.py:name` or `package.module:name`.
      order: 1 for the derivative's code, 2 for the code differentiating it
        (that of `grad(f)`), and so on.
      stage: "optimized", "raw" or "anf", as for `pullback.source`.
      wrt: comma-separated parameter names or positions, or None for all.
      mode: "reverse" or "forward" (the derivative in forward mode; at order 2,
        forward over reverse), as for `pullback.source`.
    """
    fn = load(target)
    positions = positions_of(fn, wrt) if wrt else None
    for _ in range(order - 1):
        fn = api.grad(fn, positions or tuple(range(len(calls.signature(fn).parameters))))
    return api.source(fn, stage=stage, argnums=positions, mode=mode)


class _Parser(argparse.ArgumentParser):
    """The command's arguments; a usage error is one line, with status 2."""

    def __init__(self):
        super().__init__(
            prog="pullback",
            description="Print the derivative code pullback generates for a function, in "
            "reverse mode (a forward function and its pullback) or forward mode.",
            epilog=_EXAMPLES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        for flag, (settings, text) in _OPTIONS.items():
            self.add_argument(flag, help=text, **settings)

    def error(self, message):
        """Print `message` as one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {_one_line(message)}\n")


def _order(text):
    """The value of --order: a whole number, at least 1."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number 1 or more, got {text!r}")
    return int(text)


_OPTIONS = {  # each flag: its argparse settings, and its help
    "--version": ({"action": "version", "version": f"pullback {__version__}"},
                  "print pullback's version and exit"),
    "--show": ({"required": True, "metavar": "TARGET"},
               "the function, as path/to/file.py:name or package.module:name "
               "(e.g. --show examples/quickstart.py:loss)"),
    "--order": ({"type": _order, "default": 1, "metavar": "N"},
                "the derivative's order, at least 1 (default 1); 2 shows the code that "
                "differentiating the derivative runs, that of grad(f) (e.g. --order 2)"),
    "--stage": ({"choices": ("optimized", "raw", "anf"), "default": "optimized"},
                "optimized: the code that runs (default); raw: before optimisation; "
                "anf: the function in A-normal form (e.g. --stage raw)"),
    "--mode": ({"choices": ("reverse", "forward"), "default": "reverse"},
               "reverse: the forward function and its pullback (default); forward: the "
               "tangent code of forward mode, jvp's (e.g. --mode forward)"),
    "--wrt": ({"metavar": "ARGS"},
              "differentiate only with respect to these parameters: names or positions, "
              "comma-separated (default: all; e.g. --wrt w,1)"),
    "--color": ({"choices": ("auto", "always", "never"), "default": "auto"},
                "syntax colour: auto colours when the output is a terminal and the "
                "environment variable NO_COLOR is not set (default auto; e.g. --color never)"),
}


def wants_color(choice, stream, environ):
    """Whether to colour: `always`, `never`, or `auto` (a terminal, without NO_COLOR)."""
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def positions_of(fn, wrt):
    """Parameter positions from "w,2,b"-style text, without repeats."""
    params = list(calls.signature(fn).parameters)
    positions = []
    for item in (item.strip() for item in wrt.split(",")):
        if item.isdigit() and int(item) >= len(params):
            raise LookupError(f"{fn.__qualname__} has {len(params)} parameters: "
                              f"position {item} is out of range")
        if not item.isdigit() and item not in params:
            raise LookupError(f"{fn.__qualname__} has no parameter {item!r} "
                              f"(its parameters: {', '.join(params)})")
        position = int(item) if item.isdigit() else params.index(item)
        if position not in positions:
            positions.append(position)
    return tuple(positions)


def load(target):
    """The function named by `file.py:name` or `package.module:name`.

    Raises:
      LookupError: when the target is malformed or names no function.
      OSError, ImportError, SyntaxError: when the module cannot be loaded.
    """
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise LookupError(f"expected FILE.py:NAME or MODULE:NAME, got {target!r}")
    module = _load_file(where) if where.endswith(".py") else importlib.import_module(where)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise LookupError(f"{where} has no function {name!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise LookupError(f"{where}:{name} is not a function")
    return obj


def _load_file(path):
    """Import the file at `path` as a module (not as `__main__`)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    full = os.path.abspath(path)
    name = "_pullback_target_" + os.path.splitext(os.path.basename(full))[0]
    sys.path.insert(0, os.path.dirname(full))
    spec = importlib.util.spec_from_file_location(name, full)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except _ERRORS:
        raise
    except Exception as error:
        raise ImportError(f"importing {path} raised {type(error).__name__}: {error}") from error
    return module


def _one_line(error):
    return " ".join(str(error).split())
