"""A two-layer LSTM predicting the next element of a sequence, over 50 time steps.

Each layer's gates are `concat(x, h) @ w + b`, in the order input, forget,
output, candidate. The loss is the mean squared error of a linear readout of
the top layer's state against the next input, summed over the steps.
"""

import numpy as np

SIZES = {"small": (16, 16, 1), "medium": (128, 64, 32)}
WRT = (0, 1, 2, 3, 4, 5)
STEPS = 50


def sigmoid(z):
    """The logistic function."""
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def lstm_cell(w, b, x, h, c):
    """One LSTM step: the new hidden state and cell from input `x` and state `(h, c)`."""
    n = h.shape[1]
    gates = np.concatenate([x, h], axis=1) @ w + b
    c = sigmoid(gates[:, n:2 * n]) * c + sigmoid(gates[:, :n]) * np.tanh(gates[:, 3 * n:])
    return sigmoid(gates[:, 2 * n:3 * n]) * np.tanh(c), c


def objective(w1, b1, w2, b2, w_out, b_out, sequence, steps):
    """Summed over `steps` steps: the mean squared error of predicting `sequence[t + 1]`."""
    batch, hidden = sequence.shape[1], b1.shape[0] // 4
    h1 = c1 = h2 = c2 = np.zeros((batch, hidden))
    loss = 0.0
    for t in range(steps):
        h1, c1 = lstm_cell(w1, b1, sequence[t], h1, c1)
        h2, c2 = lstm_cell(w2, b2, h1, h2, c2)
        prediction = h2 @ w_out + b_out
        loss = loss + np.mean((prediction - sequence[t + 1]) ** 2)
    return loss


def inputs(size, rng):
    """Random weights scaled by 1/sqrt(fan-in) and a random sequence of `STEPS + 1` inputs."""
    hidden, features, batch = size
    params = []
    for fan_in, fan_out in [(features + hidden, 4 * hidden), (2 * hidden, 4 * hidden),
                            (hidden, features)]:
        params += [rng.standard_normal((fan_in, fan_out)) / fan_in ** 0.5,
                   rng.standard_normal(fan_out) * 0.1]
    sequence = rng.standard_normal((STEPS + 1, batch, features))
    return (*params, sequence, STEPS)
