"""Settings that change the code pullback generates: `pullback.config(...)`.

`debug_dir` writes every generated function to a real `.py` file in that
directory and compiles it from there, so that debuggers stop at breakpoints
set in it; the environment variable `PULLBACK_DEBUG_DIR`, read when pullback
is imported, sets it too. `check_nans` makes generated code raise at the first
assignment that produces a NaN. Derivatives are cached per `current()`
settings, so code generated under others is never reused.
"""

import collections
import os

ENVIRONMENT_VARIABLE = "PULLBACK_DEBUG_DIR"

Settings = collections.namedtuple("Settings", ["debug_dir", "check_nans"])

_KEEP = object()
_CURRENT = [Settings(debug_dir=None, check_nans=False)]


def config(*, debug_dir=_KEEP, check_nans=_KEEP):
    """Change pullback's settings; return them all.

    Args:
      debug_dir: a directory (created when needed) where every generated
        function is written to a `.py` file and compiled from, so that
        breakpoints set in VS Code, PyCharm or pdb stop in derivative code;
        None keeps generated code in memory (the default, unless the
        environment variable `PULLBACK_DEBUG_DIR` names a directory).
      check_nans: True makes generated code raise `FloatingPointError` at the
        first assignment of a value holding a NaN, naming the line of your code
        it comes from.

    Returns:
      The settings, a dict with keys "debug_dir" and "check_nans": after
      `saved = pullback.config()`, `pullback.config(**saved)` restores them.

    Example:
      >>> import pullback
      >>> pullback.config()["check_nans"]
      False
    """
    settings = _CURRENT[0]
    if debug_dir is not _KEEP:
        path = None if debug_dir is None else os.path.abspath(os.fspath(debug_dir))
        settings = settings._replace(debug_dir=path)
    if check_nans is not _KEEP:
        if not isinstance(check_nans, bool):
            raise TypeError(f"check_nans must be True or False, not {check_nans!r}")
        settings = settings._replace(check_nans=check_nans)
    _CURRENT[0] = settings
    return settings._asdict()


def current():
    """The current `Settings` (a named tuple, usable in cache keys)."""
    return _CURRENT[0]


config(debug_dir=os.environ.get(ENVIRONMENT_VARIABLE) or None)
