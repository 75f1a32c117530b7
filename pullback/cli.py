"""The `pullback` command: print the derivative code of a function.

    pullback --show examples/quickstart.py:loss
    pullback --show examples/quickstart.py:loss --wrt w
    pullback --show mypackage.model:loss --stage anf

Errors are one line on stderr, with exit status 2.
"""

import argparse
import importlib
import importlib.util
import os
import sys

from . import api, calls
from .errors import TransformError


def main(argv=None):
    """Run the command line; returns the exit status."""
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        fn = load(options.show)
        argnums = _positions(fn, options.wrt) if options.wrt else None
        text = api.source(fn, stage=options.stage, argnums=argnums)
    except (LookupError, ImportError, OSError, SyntaxError, TransformError) as error:
        print(f"pullback: error: {_one_line(error)}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


def _parser():
    parser = argparse.ArgumentParser(
        prog="pullback",
        description="Print the reverse-mode derivative code pullback generates for a function.",
    )
    parser.add_argument(
        "--show",
        required=True,
        metavar="TARGET",
        help="the function, as path/to/file.py:name or package.module:name",
    )
    parser.add_argument(
        "--stage",
        choices=("optimized", "raw", "anf"),
        default="optimized",
        help="optimized: the code that runs (default); raw: before optimisation; "
        "anf: the function in A-normal form",
    )
    parser.add_argument(
        "--wrt",
        metavar="ARGS",
        help="differentiate only with respect to these parameters: names or positions, "
        "comma-separated (default: all)",
    )
    return parser


def _positions(fn, wrt):
    """Parameter positions from "w,2,b"-style text."""
    params = list(calls.signature(fn).parameters)
    positions = []
    for item in wrt.split(","):
        item = item.strip()
        if item.isdigit() and int(item) < len(params):
            positions.append(int(item))
        elif item in params:
            positions.append(params.index(item))
        else:
            raise LookupError(f"{fn.__qualname__} has no parameter {item!r}")
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
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    path = os.path.abspath(path)
    name = "_pullback_target_" + os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _one_line(error):
    return " ".join(str(error).split())
