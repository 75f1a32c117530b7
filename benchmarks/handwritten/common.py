"""Pieces shared by the hand-written adjoints: softmax, LSTM gates, dense layers, scatter-add."""

import numpy as np


def softmax(z, axis):
    """exp(z) normalised along `axis`, shifted by the maximum: the forward pieces of a
    logsumexp (the log dropped), divided as its gradient needs."""
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def output_backward(dh, dc, o, tanh_c):
    """Back through `h = o * tanh(c)`, `o` a sigmoid, given `dh` and the gradient `dc` of `c`
    from its later uses: the gradient of `o`'s pre-activation and the whole gradient of `c`."""
    return dh * tanh_c * o * (1.0 - o), dc + dh * o * (1.0 - tanh_c * tanh_c)


def input_backward(dc, i, u):
    """Back through the term `i * u` of a cell, `i` a sigmoid and `u` a tanh, given the cell's
    gradient `dc`: the gradients of their pre-activations."""
    return dc * u * i * (1.0 - i), dc * i * (1.0 - u * u)


def forget_backward(dc, f, c_prev):
    """Back through the term `f * c_prev` of a cell, `f` a sigmoid, given the cell's gradient
    `dc`: the gradient of `f`'s pre-activation."""
    return dc * c_prev * f * (1.0 - f)


def dense_gradients(inputs, output_grads):
    """The gradients of `w` and `b` in `inputs @ w + b` from the gradient of its output, the
    uses of a layer stacked as rows."""
    return inputs.T @ output_grads, output_grads.sum(axis=0)


def scatter_add(rows, index, size):
    """The rows of `rows` summed into `size` rows by `index`, the adjoint of `a[index]` (by
    `np.bincount`, column by column, several times faster than `np.add.at`)."""
    return np.stack([np.bincount(index, column, size) for column in rows.T], axis=1)
