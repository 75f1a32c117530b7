"""Hand-written adjoint of `workloads.mlp`: a ReLU perceptron with softmax cross-entropy.

The forward is the workload's three layers with the same expressions, keeping the hidden
activations; its log-softmax stops at the softmax its gradient is (`common.softmax`).
"""

import numpy as np

from .common import dense_gradients, softmax


def gradient(w1, b1, w2, b2, w3, b3, images, labels):
    """The gradient of `workloads.mlp.objective` with respect to the weights and biases."""
    h1 = np.maximum(images @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    # d(-mean_i sum_j y_ij log p_ij) / d logits = (p * sum_j y_ij - y) / batch
    d3 = softmax(h2 @ w3 + b3, axis=1)
    d3 *= labels.sum(axis=1, keepdims=True)
    d3 -= labels
    d3 *= 1.0 / labels.shape[0]
    d2 = d3 @ w3.T
    d2 *= h2 > 0.0
    d1 = d2 @ w2.T
    d1 *= h1 > 0.0
    return (*dense_gradients(images, d1), *dense_gradients(h1, d2), *dense_gradients(h2, d3))
