"""A pure-Python scalar recurrence with `math` functions."""

import math

SIZES = {"small": 1000, "medium": 10000}
WRT = (0, 1, 2)


def objective(a, b, c, steps):
    x = 0.5
    total = 0.0
    for _ in range(steps):
        x = math.sin(a * x + b) + c * math.exp(-x * x)
        total = total + math.log(1.0 + x * x)
    return total / steps


def inputs(size, rng):
    a, b, c = rng.uniform(0.5, 1.5, 3)
    return (float(a), float(b), float(c), size)
