"""Hand-written adjoint of `workloads.scalar_loop`: a scalar recurrence over `math` functions.

The forward runs the workload's loop step by step with the same `math` calls, dropping the
logarithm the gradient does not need and keeping each step's `x`, `cos(a x + b)` and
`exp(-x²)`; the backward runs the steps in reverse, accumulating the sums in floats.
"""

from math import cos, exp, sin


def forward(a, b, c, steps):
    """Run the recurrence: per step `(x, cos(a x + b), exp(-x²))`, and the last `x`."""
    tape = []
    x = 0.5
    for _ in range(steps):
        z = a * x + b
        e = exp(-x * x)
        tape.append((x, cos(z), e))
        x = sin(z) + c * e
    return tape, x


def gradient(a, b, c, steps):
    """The gradient of `workloads.scalar_loop.objective` with respect to `a`, `b` and `c`."""
    tape, x_next = forward(a, b, c, steps)
    ga = gb = gc = gx = 0.0
    for x, cos_z, e in reversed(tape):
        gx += 2.0 * x_next / (1.0 + x_next * x_next)
        gz = gx * cos_z
        ga += gz * x
        gb += gz
        gc += gx * e
        gx = gz * a - 2.0 * c * x * e * gx
        x_next = x
    # the mean's 1 / steps is applied once, to the sums
    return ga / steps, gb / steps, gc / steps
