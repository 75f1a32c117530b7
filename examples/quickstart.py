"""Fit a one-layer tanh model by gradient descent, with pullback's gradients.

    python examples/quickstart.py                    # trains and prints the loss
    pullback --show examples/quickstart.py:loss      # prints the derivative code
"""

import numpy as np

import pullback


def loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def train(steps=200, learning_rate=0.5, seed=0):
    """Recover known weights from noisy data; returns the final weights and loss."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 3))
    y = np.tanh(x @ np.array([0.5, -1.0, 2.0])) + 0.01 * rng.standard_normal(64)
    w = np.zeros(3)
    loss_and_grad = pullback.value_and_grad(loss)
    for step in range(steps):
        value, dw = loss_and_grad(w, x, y)
        w = w - learning_rate * dw
        if step % 50 == 0:
            print(f"step {step:3d}  loss {value:.5f}")
    return w, loss(w, x, y)


if __name__ == "__main__":
    w, final = train()
    print(f"final loss {final:.5f}, weights {np.round(w, 3)}")
    print(pullback.source(loss, w, np.ones((2, 3)), np.ones(2), argnums=0))
