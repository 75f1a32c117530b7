"""The `mlp` workload with its parameters as a tuple of weights shaped (outputs, inputs),
applied one example at a time by `np.dot` on vectors in a Python loop over the batch, the
loss accumulated per example."""

import numpy as np

from workloads import mlp as base

BASE = "mlp"
SIZES = base.SIZES
WRT = (0,)


def objective(params, images, labels):
    w1, b1, w2, b2, w3, b3 = params
    total = 0.0
    for image, label in zip(images, labels):
        h1 = np.maximum(np.dot(w1, image) + b1, 0.0)
        h2 = np.maximum(np.dot(w2, h1) + b2, 0.0)
        logits = np.dot(w3, h2) + b3
        top = np.max(logits)
        log_normalizer = np.log(np.sum(np.exp(logits - top))) + top
        total = total + log_normalizer - np.dot(logits, label)
    return total / len(images)


def inputs(batch, rng):
    w1, b1, w2, b2, w3, b3, images, labels = base.inputs(batch, rng)
    return (w1.T.copy(), b1, w2.T.copy(), b2, w3.T.copy(), b3), images, labels


def base_arguments(params, images, labels):
    """The base objective's arguments holding the same numbers as these."""
    w1, b1, w2, b2, w3, b3 = params
    return w1.T, b1, w2.T, b2, w3.T, b3, images, labels
