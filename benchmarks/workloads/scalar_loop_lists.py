"""The `scalar_loop` workload with the trajectory kept in a list made up front and updated by
index (`xs[t + 1] = ...`), and the loss taken by NumPy over the array of the states."""

import math

import numpy as np

from workloads import scalar_loop as base

BASE = "scalar_loop"
SIZES = base.SIZES
WRT = (0, 1, 2)


def objective(a, b, c, steps):
    xs = [0.0] * (steps + 1)
    xs[0] = 0.5
    for t in range(steps):
        xs[t + 1] = math.sin(a * xs[t] + b) + c * math.exp(-xs[t] ** 2)
    states = np.array(xs[1:])
    return np.mean(np.log(1.0 + states ** 2))


def inputs(size, rng):
    return base.inputs(size, rng)


def base_arguments(a, b, c, steps):
    """The base objective's arguments holding the same numbers as these."""
    return a, b, c, steps
