"""The `pullback` command: print the derivative code of a function.

    pullback --show examples/quickstart.py:loss
    pullback --show mypackage.model:loss --stage anf

Errors are one line on stderr, with exit status 2.
"""

import argparse
import importlib
import importlib.util
import os
import sys

from . import api
from .errors import TransformError


def main(argv=None):
    """Run the command line; returns the exit status."""
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        fn = load(options.show)
        text = api.source(fn, stage=options.stage)
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
    return parser


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
    text = str(error) if not isinstance(error, FileNotFoundError) else str(error)
    return " ".join(text.split())
