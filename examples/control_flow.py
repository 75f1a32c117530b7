"""Control flow, loops and updates: the derivative replays what the function did.

Run `python examples/control_flow.py` to print gradients, or
`pullback --show examples/control_flow.py:horner` to read a loop's derivative.
"""

import numpy as np

import pullback


def clip_square(x, limit):
    if x > limit:
        y = limit * x
    else:
        y = x * x
    return y


def horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def rnn_loss(W, U, xs):
    steps, width = len(xs), W.shape[0]
    h = np.zeros((steps + 1, width))
    for t in range(steps):
        h[t + 1] = np.tanh(W @ h[t] + U @ xs[t])
    return np.sum(h[steps] ** 2)


def main():
    print("d/dx clip_square at 3, limit 2:", pullback.grad(clip_square)(3.0, 2.0))
    print("d/dx clip_square at 1, limit 2:", pullback.grad(clip_square)(1.0, 2.0))
    coeffs = [1.0, -2.0, 3.0]
    print("d/dcoeffs, d/dx horner at 2:", pullback.grad(horner, argnums=(0, 1))(coeffs, 2.0))
    rng = np.random.default_rng(0)
    W, U, xs = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 3)), rng.normal(size=(10, 3))
    dW, dU = pullback.grad(rnn_loss, argnums=(0, 1))(W, U, xs)
    print("|d rnn_loss / dW|:", np.linalg.norm(dW), " |d/dU|:", np.linalg.norm(dU))


if __name__ == "__main__":
    main()
