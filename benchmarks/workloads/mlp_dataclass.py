"""The `mlp` workload with each layer a dataclass holding its weights and bias and applied by
calling it, the network a list of layers, and the labels as class indices picked out of the
log-probabilities."""

import dataclasses

import numpy as np

from workloads import mlp as base

BASE = "mlp"
SIZES = base.SIZES
WRT = (0,)


@dataclasses.dataclass
class Dense:
    """An affine layer, `x @ w + b`."""

    w: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return x @ self.w + self.b


def relu(z):
    return np.maximum(z, 0.0)


def log_softmax(z):
    shifted = z - np.max(z, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def objective(layers, images, classes):
    activations = images
    for layer in layers[:-1]:
        activations = relu(layer(activations))
    logp = log_softmax(layers[-1](activations))
    return -np.mean(logp[np.arange(len(classes)), classes])


def inputs(batch, rng):
    w1, b1, w2, b2, w3, b3, images, labels = base.inputs(batch, rng)
    layers = [Dense(w1, b1), Dense(w2, b2), Dense(w3, b3)]
    return layers, images, np.argmax(labels, axis=1)


def base_arguments(layers, images, classes):
    """The base objective's arguments holding the same numbers as these."""
    labels = np.eye(10)[classes]
    return (*[p for layer in layers for p in (layer.w, layer.b)], images, labels)
