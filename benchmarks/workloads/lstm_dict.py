"""The `lstm` workload with all its parameters in one nested dict, one input matrix, one
recurrent matrix and one bias per gate (`params["cell1"]["wx_i"]`, ...), each gate computed
as `x @ wx + h @ wh + b`, and the two layers' states rebound at every step."""

import numpy as np

from workloads import lstm as base

BASE = "lstm"
SIZES = base.SIZES
WRT = (0,)
GATES = "ifou"


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def gate(p, name, x, h):
    return x @ p["wx_" + name] + h @ p["wh_" + name] + p["b_" + name]


def lstm_cell(p, x, h, c):
    input_gate = sigmoid(gate(p, "i", x, h))
    forget_gate = sigmoid(gate(p, "f", x, h))
    output_gate = sigmoid(gate(p, "o", x, h))
    candidate = np.tanh(gate(p, "u", x, h))
    c = forget_gate * c + input_gate * candidate
    h = output_gate * np.tanh(c)
    return h, c


def objective(params, sequence, steps):
    batch, hidden = sequence.shape[1], params["cell1"]["b_i"].shape[0]
    h1 = c1 = h2 = c2 = np.zeros((batch, hidden))
    loss = 0.0
    for t in range(steps):
        h1, c1 = lstm_cell(params["cell1"], sequence[t], h1, c1)
        h2, c2 = lstm_cell(params["cell2"], h1, h2, c2)
        prediction = h2 @ params["readout"]["w"] + params["readout"]["b"]
        loss = loss + np.mean((prediction - sequence[t + 1]) ** 2)
    return loss


def split_cell(w, b, inputs_size):
    """One layer's stacked weights `w`, `b` as a dict of per-gate matrices and biases."""
    n = b.shape[0] // 4
    cell = {}
    for g, name in enumerate(GATES):
        cell["wx_" + name] = w[:inputs_size, g * n:(g + 1) * n].copy()
        cell["wh_" + name] = w[inputs_size:, g * n:(g + 1) * n].copy()
        cell["b_" + name] = b[g * n:(g + 1) * n].copy()
    return cell


def inputs(size, rng):
    w1, b1, w2, b2, w_out, b_out, sequence, steps = base.inputs(size, rng)
    features, hidden = sequence.shape[2], b1.shape[0] // 4
    params = {"cell1": split_cell(w1, b1, features), "cell2": split_cell(w2, b2, hidden),
              "readout": {"w": w_out, "b": b_out}}
    return params, sequence, steps


def stacked(cell):
    """A layer's per-gate dict back as the stacked `w`, `b`."""
    w = np.concatenate([np.concatenate([cell["wx_" + name], cell["wh_" + name]])
                        for name in GATES], axis=1)
    return w, np.concatenate([cell["b_" + name] for name in GATES])


def base_arguments(params, sequence, steps):
    """The base objective's arguments holding the same numbers as these."""
    w1, b1 = stacked(params["cell1"])
    w2, b2 = stacked(params["cell2"])
    return w1, b1, w2, b2, params["readout"]["w"], params["readout"]["b"], sequence, steps
