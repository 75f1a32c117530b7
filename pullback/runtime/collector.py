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

import gc


class paused:
    """A context manager running its body with the cycle collector off, and turning
    it back on after if it was on (an inner pause, or a program that turned it off,
    leaves it off). A class rather than a generator: it is entered once per gradient."""

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info):
        if self.was_enabled:
            gc.enable()
