"""The min-max saddle point of Pearlmutter and Siskind's section 5.

A two-player zero-sum game with payoff s² + t² − u² − v²: the minimiser picks
x = [s, t], the maximiser y = [u, v]. Finding

    x* = argmin_x max_y payoff(x, y)

takes gradients of `lambda x: max_y payoff(x, y)`, whose value comes from a
maximiser that itself takes gradients of `lambda y: payoff(x, y)`, a closure
over the minimiser's variable: reverse mode applied to a function that applies
reverse mode. The optimal strategies are x* = y* = [0, 0].

    python examples/saddle_point.py
"""

import numpy as np

import pullback

GOLDEN = (1.0 + 5.0 ** 0.5) / 2.0


def payoff(x, y):
    return x[0] ** 2 + x[1] ** 2 - y[0] ** 2 - y[1] ** 2


def line_search(h, a, b, steps):
    """The minimum of `h` on [a, b] by golden-section search (the paper's UNIVARIATEARGMIN)."""
    if steps == 0:
        return (a + b) / 2.0
    c = b - (b - a) / GOLDEN
    d = a + (b - a) / GOLDEN
    if h(c) < h(d):
        return line_search(h, a, d, steps - 1)
    return line_search(h, c, b, steps - 1)


def argmin(f, x, tolerance, rounds):
    """Gradient descent with line search (the paper's ARGMIN), written recursively."""
    g = pullback.grad(f)(x)
    if rounds == 0 or np.sqrt(np.sum(g * g)) <= tolerance:
        return x
    step = line_search(lambda k: f(x - k * g), 0.0, 1.0, 24)
    return argmin(f, x - step * g, tolerance, rounds - 1)


def argmax(f, y, tolerance, rounds):
    return argmin(lambda y: -f(y), y, tolerance, rounds)


def max_of(f, y, tolerance, rounds):
    return f(argmax(f, y, tolerance, rounds))


def saddle_point(x0, y0, tolerance=1e-6, rounds=8):
    """The optimal strategies `(x*, y*)` from starting points `x0`, `y0`."""
    x_star = argmin(lambda x: max_of(lambda y: payoff(x, y), y0, tolerance, rounds),
                    x0, tolerance, rounds)
    y_star = argmax(lambda y: payoff(x_star, y), y0, tolerance, rounds)
    return x_star, y_star


if __name__ == "__main__":
    x_star, y_star = saddle_point(np.array([1.0, -2.0]), np.array([0.5, 1.5]))
    print("x* =", np.round(x_star, 6), " y* =", np.round(y_star, 6))
