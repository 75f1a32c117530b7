"""From a line of generated code back to the user's: tracebacks and NaN checks.

`emit` records the source map of every generated file here (`record`): for
each generated line, the user's line it came from. An exception that leaves
generated code through one of pullback's entry points (`run_generated`) gets a
note per frame of generated code it passed through, naming the user's
file:line beside the generated one. With `pullback.config(check_nans=True)`
the emitter calls `check_nan` after each assignment; it raises at the first NaN.
"""

import dataclasses
import linecache
import math
import sys

import numpy as np

from ..errors import NaNError, TransformError, in_library, into_library
from . import collector, constants, contexts

_MAPS = {}
_NOTE_PREFIX = "pullback: "


@dataclasses.dataclass(frozen=True)
class SourceMap:
    """The user lines of one generated file.

    Attributes:
      origin: the `parse.Origin` of the function it was generated from.
      lines: for each line of the file (the first at index 0), the user's line
        number, or None.
    """

    origin: object
    lines: list

    def user_line(self, lineno):
        """The user line that line `lineno` of the generated file came from, or None."""
        return self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else None


def record(filename, origin, lines):
    """Remember the source map of generated file `filename` (see `SourceMap`)."""
    _MAPS[filename] = SourceMap(origin, list(lines))


def locate(filename, lineno):
    """`(origin, line)`: the user function and line that line `lineno` of generated
    file `filename` comes from, or None for a line of no user's. Code generated from
    generated code (a second derivative) is followed back to the user's line."""
    found, located = _MAPS.get(filename), None
    while found is not None and found.user_line(lineno) is not None:
        located = found.origin, found.user_line(lineno)
        found, lineno = _MAPS.get(located[0].filename), located[1]
    return located


def describe(code, lineno):
    """Line `lineno` of generated `code` and, below it, the user's line it comes from:

        <pullback f.py:3 f_fwd>, line 9, in f_pullback: dx = dy / (2.0 * y)
            from /home/me/f.py:4: y = np.sqrt(x)

    or None when it comes from no user's line.
    """
    located = locate(code.co_filename, lineno)
    if located is None:
        return None
    origin, line = located
    generated = linecache.getline(code.co_filename, lineno).strip()
    return (f"{code.co_filename}, line {lineno}, in {code.co_name}: {generated}\n"
            f"    from {origin.location(line)}: {origin.line_text(line)}").rstrip(": ")


def run_generated(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, for pullback's entry points calling generated `fn`: an
    exception leaving it gets the notes of `annotate`.

    Differentiated (an entry point called in code pullback transforms), a call
    of it is a call of `fn` (see `dispatch.forward`). The cycle collector is
    paused during the call (`collector.paused`), and the contexts of `with` blocks an
    exception leaves are exited (`contexts.closing`).
    """
    try:
        with collector.paused(), contexts.closing():
            return fn(*args, **kwargs)
    except TransformError as error:
        moved = in_user_code(error)
        annotate(moved)
        if moved is error:
            raise
        raise moved from None
    except Exception as error:
        annotate(error)
        raise


def run_holding_constant(held, fn, *args):
    """`run_generated(fn, *args)` with the arrays whose ids are in `held` taken as
    constants by the calls resolved at run time (`constants`).
    Differentiated, it is `run_generated` (see `dispatch.forward`)."""
    with constants.holding(held):
        return run_generated(fn, *args)


def in_user_code(error):
    """TransformError `error`, or one like it, naming a line of the user's code: a
    line of generated code is followed back to the user's line it came from, and an
    error met inside a library (or nowhere) is moved to the last line of the user's
    code its traceback passed through, the call that led into the library."""
    if error.filename is not None and error.filename in _MAPS:
        located = locate(error.filename, error.lineno)
        if located is not None:
            error.move(located[0].filename, located[1])
        return error
    if not in_library(error.filename):
        return error
    calls = [located for located in map(_located_frame, _frames(error.__traceback__))
             if located is not None and not in_library(located[0].filename)]
    if not calls:
        return error
    origin, line = calls[-1]
    if error.filename is None:  # the call itself is refused
        error.move(origin.filename, line)
        return error
    moved = into_library(error, None, origin.filename, line)
    moved.__traceback__ = error.__traceback__
    return moved


def _frames(traceback):
    while traceback is not None:
        yield traceback
        traceback = traceback.tb_next


def _located_frame(traceback):
    return locate(traceback.tb_frame.f_code.co_filename, traceback.tb_lineno)


def annotate(error):
    """Add to `error` a note for each frame of generated code in its traceback.

    A note already there (from an inner entry point), or naming the line the
    error names itself (a `NaNError`'s), is not repeated.
    """
    traceback = error.__traceback__
    while traceback is not None:
        code, lineno = traceback.tb_frame.f_code, traceback.tb_lineno
        located = locate(code.co_filename, lineno)
        if located is not None and not _names(error, *located):
            note = _NOTE_PREFIX + describe(code, lineno)
            if note not in getattr(error, "__notes__", ()):
                add_note(error, note)
        traceback = traceback.tb_next


def _names(error, origin, line):
    """Whether `error` names line `line` of `origin`'s file itself."""
    return (getattr(error, "filename", None), getattr(error, "lineno", None)) == (
        origin.filename, line)


def add_note(error, note):
    """`error.add_note(note)`; before Python 3.11, which shows no notes, the note is
    added to the message instead (the exception keeps its type)."""
    if hasattr(error, "add_note"):
        error.add_note(note)
        return
    error.__notes__ = [*getattr(error, "__notes__", []), note]
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]}\n{note}",) + error.args[1:]


def check_nan(value, names):
    """Raise `NaNError` if `value`, just assigned to `names` by the line of generated
    code before the caller's, holds a NaN; the message names the user's line."""
    if _has_nan(value):
        frame = sys._getframe(1)
        raise _nan_error(names, frame.f_code, frame.f_lineno - 1)


def _nan_error(names, code, lineno):
    message = f"nan in {names} (pullback.config(check_nans=True)) at "
    located = locate(code.co_filename, lineno)
    if located is None:
        return NaNError(f"{message}{code.co_filename}, line {lineno}", names)
    origin, line = located
    return NaNError(message + describe(code, lineno), names, origin.filename, line,
                    origin.line_text(line))


def _has_nan(value):
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (tuple, list)):
        return any(_has_nan(item) for item in value)
    if isinstance(value, dict):
        return any(_has_nan(item) for item in value.values())
    return False
