"""The errors pullback raises.

Every message says what went wrong, where (the user's file:line), and how to
fix it, so that the user never has to read pullback's own frames. An error met
inside a library the user called names the user's call, and the library's line
after it (`into_library`).
"""

import os
import sysconfig

_PULLBACK = os.path.dirname(os.path.abspath(__file__))
_LIBRARIES = tuple(sorted({os.path.join(os.path.abspath(path), "") for path in (
    *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    _PULLBACK)}))


class TransformError(Exception):
    """The transformer met a construct it cannot differentiate correctly.

    Attributes:
        filename: the user's source file, or None when unknown.
        lineno: the line in that file, or None when unknown.
        construct: a short name for what was refused ("for loop", "numpy.fft.fft").
    """

    def __init__(self, message, filename=None, lineno=None, construct=None):
        super().__init__()
        self.message = message
        self.construct = construct
        self.move(filename, lineno)

    def move(self, filename, lineno):
        """Name `filename:lineno` as where the error is."""
        self.filename = filename
        self.lineno = lineno
        where = f"{filename}:{lineno}: " if filename and lineno else ""
        self.args = (where + self.message,)


class NaNError(FloatingPointError):
    """Generated code assigned a value holding a NaN (`pullback.config(check_nans=True)`).

    Attributes:
        variable: the generated variable it was assigned to (`dx` for the
            cotangent of your `x`; `a, b` for a tuple assignment).
        filename: your source file, or None when unknown.
        lineno: the line of your code the assignment comes from, or None.
        line: the text of that line.
    """

    def __init__(self, message, variable, filename=None, lineno=None, line=""):
        self.variable = variable
        self.filename = filename
        self.lineno = lineno
        self.line = line
        super().__init__(message)


def unsupported(construct, node, origin, why=""):
    """A TransformError for an unsupported `construct` at `node` of `origin`."""
    reason = f": {why}" if why else ""
    return TransformError(
        f"{construct} is not supported{reason}",
        origin.filename,
        getattr(node, "lineno", None),
        construct,
    )


def in_library(filename):
    """Whether source file `filename` is a library's rather than the user's: the
    standard library's, an installed package's, or pullback's own."""
    return filename is None or os.path.abspath(filename).startswith(_LIBRARIES)


def into_library(error, called, filename, lineno):
    """The TransformError to raise for `error`, met inside library function `called`
    (its name as the user wrote it; None when unknown) that the user called at
    `filename:lineno`."""
    reason = error.message.split("; ")[0].rstrip(".")
    where = f", at {_library_path(error.filename)}:{error.lineno}" if error.lineno else ""
    what = f"{called}, called here," if called else "The function called here"
    return TransformError(
        f"{what} cannot be differentiated. Inside it{where}: {reason}. Give it a "
        f"derivative of its own with @pullback.adjoint or @pullback.custom_vjp "
        f"(see docs/rules.md)", filename, lineno, called or error.construct)


def _library_path(filename):
    """`filename` from its library's root: `scipy/integrate/_odepack_py.py`."""
    path = os.path.abspath(filename)
    roots = [root for root in _LIBRARIES if path.startswith(root)]
    return path[len(max(roots, key=len)):] if roots else filename
