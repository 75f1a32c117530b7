"""Your own derivative rules: a template for a primitive, a hand-written derivative.

Run `python examples/custom_rules.py`, or `pullback --show examples/custom_rules.py:loss`
to see the template inlined into the derivative.
"""

import numpy as np

import pullback
from pullback import d


# A primitive as far as pullback is concerned (think: compiled code).
def softplus(x):
    return np.logaddexp(0.0, x)


@pullback.adjoint(softplus, result="elementwise")
def softplus_rule(z, x):
    d[x] = d[z] / (1.0 + np.exp(-x))


@pullback.custom_vjp
def logsumexp(x):
    return np.log(np.sum(np.exp(x)))


def logsumexp_fwd(x):
    shift = np.max(x)
    weights = np.exp(x - shift)
    total = np.sum(weights)
    return shift + np.log(total), weights / total


def logsumexp_bwd(softmax, g):
    return (g * softmax,)


logsumexp.defvjp(logsumexp_fwd, logsumexp_bwd)


def loss(w, x):
    return np.sum(softplus(w * x)) + logsumexp(w * x)


def main():
    w, x = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    print("grad loss:", pullback.grad(loss)(w, x))
    big = np.array([1000.0, 1001.0, 1002.0])
    print("grad logsumexp at 1000:", pullback.grad(logsumexp)(big))


if __name__ == "__main__":
    main()
