"""The `scalar_loop` workload with the trajectory kept in a NumPy array made up front and
filled by index (`xs[t + 1] = ...`), and the loss summed by NumPy over the array."""

import math

import numpy as np

from workloads import scalar_loop as base

BASE = "scalar_loop"
SIZES = base.SIZES
WRT = (0, 1, 2)


def objective(a, b, c, steps):
    xs = np.zeros(steps + 1)
    xs[0] = 0.5
    for t in range(steps):
        x = xs[t]
        xs[t + 1] = math.sin(a * x + b) + c * math.exp(-x * x)
    return np.sum(np.log(1.0 + xs[1:] ** 2)) / steps


def inputs(size, rng):
    return base.inputs(size, rng)


def base_arguments(a, b, c, steps):
    """The base objective's arguments holding the same numbers as these."""
    return a, b, c, steps
