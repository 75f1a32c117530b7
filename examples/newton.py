"""Newton's method without forming the Hessian: conjugate gradient on Hessian-vector products.

Each Newton step solves H p = -g for the step p by conjugate gradient, which
needs the Hessian H only through products H v: `pullback.hvp(f, x, v)`, reverse
mode over reverse mode, costs a few evaluations of f whatever the dimension.
On the 10-dimensional Rosenbrock function, from 0, this follows the curved
valley to the minimum [1, 1, ..., 1] and converges quadratically at the end.

    python examples/newton.py
"""

import numpy as np

import pullback


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def conjugate_gradient(product, b, iterations, tolerance):
    """Approximately solve A p = b, given `product(v) = A v`; stops at negative curvature."""
    p, r = np.zeros_like(b), b.copy()
    d = r.copy()
    for _ in range(iterations):
        ad = product(d)
        curvature = d @ ad
        if curvature <= 0.0:
            return p if p.any() else b
        alpha = (r @ r) / curvature
        p, r_next = p + alpha * d, r - alpha * ad
        if np.linalg.norm(r_next) < tolerance:
            return p
        d = r_next + (r_next @ r_next) / (r @ r) * d
        r = r_next
    return p


def newton(f, x, steps=50, tolerance=1e-10):
    """Minimise `f` from `x` by Newton-CG with a backtracking line search."""
    value_and_grad = pullback.value_and_grad(f)
    for step in range(steps):
        value, g = value_and_grad(x)
        norm = np.linalg.norm(g)
        print(f"step {step:2d}  f {value:.3e}  |grad| {norm:.3e}")
        if norm < tolerance:
            break
        direction = conjugate_gradient(lambda v, x=x: pullback.hvp(f, x, v), -g,
                                       iterations=2 * x.size, tolerance=1e-6 * norm)
        size = 1.0
        while f(x + size * direction) > value + 1e-4 * size * (g @ direction) and size > 1e-8:
            size /= 2.0
        x = x + size * direction
    return x


def main():
    x = newton(rosenbrock, np.zeros(10))
    print("minimum at", np.round(x, 6))


if __name__ == "__main__":
    main()
