"""The flag of a `try` statement in generated code (`compiler.frontend.try_blocks`).

`failed, error = try_started()` comes before the try block; its handler begins
with `failed, error = try_failed(caught, error)`. The pullback reads `failed` to
tell which path the forward took: the handler's, or the block's.
"""

from . import contexts


def try_started():
    """`(False, depth)`: no exception yet; `depth` counts the contexts of `with` blocks
    entered so far, which the handler leaves entered (`try_failed`)."""
    return False, contexts.depth()


def caught_types(*types):
    """One tuple of the exception classes several handlers catch: each of `types` is a
    class or a tuple of them (Python's `except` reads no tuple inside a tuple)."""
    flat = []
    for t in types:
        flat.extend(t if isinstance(t, tuple) else (t,))
    return tuple(flat)


def try_failed(caught, depth):
    """`(True, caught)`: the try block raised `caught`, which a handler caught. The
    contexts the block entered beyond the first `depth` and did not exit are exited
    with `caught` first, as its `with` statements would have."""
    contexts.unwind(depth, caught)
    return True, caught
