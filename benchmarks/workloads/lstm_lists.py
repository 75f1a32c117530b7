"""The `lstm` workload as benchmark suites write a stacked LSTM: the layers' weights in a list
of dicts, the hidden states and cells in lists updated by index (`hs[i] = ...`) in a loop
over the layers, and the gates cut apart with `np.split`."""

import numpy as np

from workloads import lstm as base

BASE = "lstm"
SIZES = base.SIZES
WRT = (0, 1, 2)


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def lstm_cell(layer, x, h, c):
    gates = np.concatenate([x, h], axis=1) @ layer["w"] + layer["b"]
    i, f, o, u = np.split(gates, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(u)
    return sigmoid(o) * np.tanh(c), c


def objective(layers, w_out, b_out, sequence, steps):
    batch, hidden = sequence.shape[1], layers[0]["b"].shape[0] // 4
    hs = [np.zeros((batch, hidden)) for _ in layers]
    cs = [np.zeros((batch, hidden)) for _ in layers]
    loss = 0.0
    for t in range(steps):
        x = sequence[t]
        for i in range(len(layers)):
            hs[i], cs[i] = lstm_cell(layers[i], x, hs[i], cs[i])
            x = hs[i]
        prediction = x @ w_out + b_out
        loss = loss + np.mean((prediction - sequence[t + 1]) ** 2)
    return loss


def inputs(size, rng):
    w1, b1, w2, b2, w_out, b_out, sequence, steps = base.inputs(size, rng)
    return [{"w": w1, "b": b1}, {"w": w2, "b": b2}], w_out, b_out, sequence, steps


def base_arguments(layers, w_out, b_out, sequence, steps):
    """The base objective's arguments holding the same numbers as these."""
    (first, second) = layers
    return first["w"], first["b"], second["w"], second["b"], w_out, b_out, sequence, steps
