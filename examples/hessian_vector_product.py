"""The Hessian-vector product of Pearlmutter and Siskind's section 5, by double reverse mode.

For f(x, y) = 2x² + 3xy + 4y², (H f [3, 4]) × [7, 8] = [52, 85]. The
product is the gradient of `lambda p: grad(f)(p) · v`, a function whose
gradient calls `grad` and whose inner function reads `v` as a free variable:
reverse mode over reverse mode, at a constant factor of the cost of f.
`pullback.hvp` computes the same by forward mode over reverse mode, faster.

    python examples/hessian_vector_product.py
"""

import numpy as np

import pullback


def f(p):
    x, y = p
    return 2.0 * x * x + 3.0 * x * y + 4.0 * y * y


def hessian_times(p, v):
    """(H f p) v, written as in the paper: the gradient of ∇f(p) · v."""
    return pullback.grad(lambda q: np.dot(pullback.grad(f)(q), v))(p)


if __name__ == "__main__":
    p, v = np.array([3.0, 4.0]), np.array([7.0, 8.0])
    print("(H f [3, 4]) x [7, 8] =", hessian_times(p, v))
    print("pullback.hvp gives      ", pullback.hvp(f, p, v))
    print("the full Hessian:\n", pullback.hessian(f)(p))
