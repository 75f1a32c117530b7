"""Hand-written adjoint of `workloads.lstm`: a two-layer LSTM over a Python loop in time.

The forward is the workload's loop: per step the bottom cell, the top cell and the readout,
each cell concatenating its input and hidden state and activating its gates slice by slice
(input, forget, output, candidate) as `lstm_cell` does. The backward runs the steps in
reverse, cell by cell; the weight and bias gradients are formed once at the end, as
`X.T @ G` over the steps' stacked inputs and output gradients.
"""

import numpy as np
from workloads.lstm import sigmoid

from .common import dense_gradients, forget_backward, input_backward, output_backward


def cell_forward(w, b, x, h, c):
    """The workload's `lstm_cell`: the new hidden state and cell, and the tape of the step,
    `(concat(x, h), c, i, f, o, u, tanh(new c))`, `u` the candidate."""
    n = h.shape[1]
    inputs = np.concatenate([x, h], axis=1)
    gates = inputs @ w + b
    f = sigmoid(gates[:, n:2 * n])
    i = sigmoid(gates[:, :n])
    u = np.tanh(gates[:, 3 * n:])
    c_next = f * c + i * u
    o = sigmoid(gates[:, 2 * n:3 * n])
    tanh_c = np.tanh(c_next)
    return o * tanh_c, c_next, (inputs, c, i, f, o, u, tanh_c)


def cell_backward(tape, dh, dc):
    """Back through a cell given the gradients of its new hidden state and cell: the gradients
    of its gates' pre-activations and of its old cell."""
    _, c, i, f, o, u, tanh_c = tape
    d_o, dc = output_backward(dh, dc, o, tanh_c)
    d_i, d_u = input_backward(dc, i, u)
    d_gates = np.concatenate([d_i, forget_backward(dc, f, c), d_o, d_u], axis=1)
    return d_gates, dc * f


def forward(w1, b1, w2, b2, w_out, b_out, sequence, steps):
    """The workload's loop, keeping per step both cells' tapes, the top hidden state and the
    prediction's error."""
    batch, hidden = sequence.shape[1], b1.shape[0] // 4
    h1 = c1 = h2 = c2 = np.zeros((batch, hidden))
    tapes1, tapes2, tops, errors = [], [], [], []
    for t in range(steps):
        h1, c1, tape1 = cell_forward(w1, b1, sequence[t], h1, c1)
        h2, c2, tape2 = cell_forward(w2, b2, h1, h2, c2)
        prediction = h2 @ w_out + b_out
        tapes1.append(tape1)
        tapes2.append(tape2)
        tops.append(h2)
        errors.append(prediction - sequence[t + 1])
    return tapes1, tapes2, tops, errors


def backward(w1, w2, w_out, tapes1, tapes2, errors):
    """Back through the steps in reverse: the gradients of each step's prediction and of its
    cells' gates, listed from the last step to the first."""
    hidden = w2.shape[0] // 2
    w1_hidden_t, w2_t, w_out_t = w1[w1.shape[0] - hidden:].T, w2.T, w_out.T
    dh1 = dc1 = dh2 = dc2 = np.zeros((errors[0].shape[0], hidden))
    d_predictions, d_gates1, d_gates2 = [], [], []
    for tape1, tape2, error in zip(reversed(tapes1), reversed(tapes2), reversed(errors)):
        d_prediction = error * (2.0 / error.size)
        dg2, dc2 = cell_backward(tape2, dh2 + d_prediction @ w_out_t, dc2)
        d_inputs2 = dg2 @ w2_t
        dh2 = d_inputs2[:, hidden:]
        dg1, dc1 = cell_backward(tape1, dh1 + d_inputs2[:, :hidden], dc1)
        dh1 = dg1 @ w1_hidden_t
        d_predictions.append(d_prediction)
        d_gates1.append(dg1)
        d_gates2.append(dg2)
    return d_predictions, d_gates1, d_gates2


def stacked(arrays):
    """The per-step arrays of a list, in reverse order, stacked as rows."""
    return np.concatenate(arrays[::-1])


def gradient(w1, b1, w2, b2, w_out, b_out, sequence, steps):
    """The gradient of `workloads.lstm.objective` with respect to the weights and biases."""
    tapes1, tapes2, tops, errors = forward(w1, b1, w2, b2, w_out, b_out, sequence, steps)
    d_predictions, d_gates1, d_gates2 = backward(w1, w2, w_out, tapes1, tapes2, errors)
    inputs1 = np.concatenate([tape[0] for tape in tapes1])
    inputs2 = np.concatenate([tape[0] for tape in tapes2])
    return (*dense_gradients(inputs1, stacked(d_gates1)),
            *dense_gradients(inputs2, stacked(d_gates2)),
            *dense_gradients(np.concatenate(tops), stacked(d_predictions)))
