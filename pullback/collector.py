"""Python's cycle collector paused while generated code runs.

A gradient's forward makes a closure, its cells and a few tuples per call it
differentiates, all alive until the pullback has run; they are freed by
reference counting, never by the cycle collector. But the collector, triggered
by allocations, walks them again and again while they pile up: on a recursion
over trees (`benchmarks/workloads/treelstm.py`, medium) that walk was 15% of
the gradient. Pausing it for the call of generated code costs two calls and
delays nothing but the collection of cycles made during the call, which the
next collection after it finds.
"""

import contextlib
import gc


@contextlib.contextmanager
def paused():
    """Run the body with the cycle collector off, and turn it back on after if it
    was on (an inner pause, or a program that turned it off, leaves it off)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
