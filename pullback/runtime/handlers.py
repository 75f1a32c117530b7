"""The flag of a `try` statement in generated code (`compiler.frontend.try_blocks`).

`failed, error = try_started()` comes before the try block; its handler begins
with `failed, error = try_failed(caught)`. The pullback reads `failed` to tell
which path the forward took: the handler's, or the block's.
"""


def try_started():
    """`(False, None)`: no exception yet, none caught."""
    return False, None


def caught_types(*types):
    """One tuple of the exception classes several handlers catch: each of `types` is a
    class or a tuple of them (Python's `except` reads no tuple inside a tuple)."""
    flat = []
    for t in types:
        flat.extend(t if isinstance(t, tuple) else (t,))
    return tuple(flat)


def try_failed(caught):
    """`(True, caught)`: the try block raised `caught`, which a handler caught."""
    return True, caught
