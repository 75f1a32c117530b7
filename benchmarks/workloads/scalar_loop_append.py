"""The `scalar_loop` workload as a trajectory: each state appended to a list from the last
one (`xs.append(f(xs[-1]))`), the loss summed over the list after the loop."""

import math

from workloads import scalar_loop as base

BASE = "scalar_loop"
SIZES = base.SIZES
WRT = (0, 1, 2)


def objective(a, b, c, steps):
    xs = [0.5]
    for _ in range(steps):
        x = xs[-1]
        xs.append(math.sin(a * x + b) + c * math.exp(-x * x))
    return sum(math.log(1.0 + x * x) for x in xs[1:]) / steps


def inputs(size, rng):
    return base.inputs(size, rng)


def base_arguments(a, b, c, steps):
    """The base objective's arguments holding the same numbers as these."""
    return a, b, c, steps
