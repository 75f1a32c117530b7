"""The `scalar_loop` workload with its three coefficients in one tuple, a `while` loop
counting the steps and the sum kept with `+=`."""

import math

from workloads import scalar_loop as base

BASE = "scalar_loop"
SIZES = base.SIZES
WRT = (0,)


def objective(coefficients, steps):
    a, b, c = coefficients
    x, total, step = 0.5, 0.0, 0
    while step < steps:
        x = math.sin(a * x + b) + c * math.exp(-x * x)
        total += math.log(1.0 + x * x)
        step += 1
    return total / steps


def inputs(size, rng):
    a, b, c, steps = base.inputs(size, rng)
    return (a, b, c), steps


def base_arguments(coefficients, steps):
    """The base objective's arguments holding the same numbers as these."""
    return (*coefficients, steps)
