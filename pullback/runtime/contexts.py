"""The `with` statement, for generated code that has none (`compiler.frontend.with_blocks`).

`enter_context` and `exit_context` call a context manager's `__enter__` and
`__exit__` as the statement does, and keep the contexts generated code has entered
and not yet exited, per thread. When an exception ends the generated code, the
entry point that ran it (`debugging.run_generated`) exits those contexts with the
exception (`closing`), as the `with` statements would have; so does the handler of a
`try` statement around them (`handlers.try_failed`). A context manager that
suppresses it (`contextlib.suppress`) would resume the function after a block that
stopped part way, whose derivative pullback did not compute: that is refused.
"""

import sys
import threading

from ..errors import TransformError

_OPEN = threading.local()


def _entered():
    """The contexts this thread's generated code has entered and not exited, each with
    the line of generated code that entered it."""
    entered = getattr(_OPEN, "entered", None)
    if entered is None:
        entered = _OPEN.entered = []
    return entered


def enter_context(context):
    """`context.__enter__()`, as `with context:` calls it."""
    value = type(context).__enter__(context)
    caller = sys._getframe(1)
    _entered().append((context, caller.f_code.co_filename, caller.f_lineno))
    return value


def exit_context(context):
    """`context.__exit__(None, None, None)`, as a `with` block run to its end calls it."""
    _entered().pop()
    type(context).__exit__(context, None, None, None)


def depth():
    """How many contexts this thread's generated code has entered and not exited."""
    return len(_entered())


def unwind(depth, error):
    """Exit, with exception `error`, the contexts entered beyond the first `depth`,
    innermost first, as the `with` statements `error` left would have; raise the
    TransformError of one that suppressed it, or an exception an `__exit__` raised."""
    entered = _entered()
    raised = error
    while len(entered) > depth:
        context, filename, lineno = entered.pop()
        if type(context).__exit__(context, type(raised), raised, raised.__traceback__) and (
                raised is error):
            raised = _suppressed(context, error, filename, lineno)
    if raised is not error:
        raise raised from error


class closing:
    """Around a call of generated code: the contexts it entered and, ended by an
    exception, did not exit are exited with that exception (`unwind`)."""

    def __enter__(self):
        self.depth = depth()

    def __exit__(self, kind, error, trace):
        if error is not None:
            unwind(self.depth, error)


def _suppressed(context, error, filename, lineno):
    """The TransformError for `context` suppressing `error`, at the line entering it."""
    return TransformError(
        f"the context manager {type(context).__qualname__} suppressed the "
        f"{type(error).__name__} raised in its with block: pullback differentiates a with "
        "block that runs to its end; catch the exception with try/except instead, or "
        "test for the case before the block",
        filename, lineno, "with")
