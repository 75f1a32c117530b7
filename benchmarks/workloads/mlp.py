"""A 784-256-128-10 multilayer perceptron with ReLU, softmax cross-entropy on a batch."""

import numpy as np

SIZES = {"small": 128, "medium": 1024}
WRT = (0, 1, 2, 3, 4, 5)


def log_softmax(z):
    shifted = z - np.max(z, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def objective(w1, b1, w2, b2, w3, b3, images, labels):
    h1 = np.maximum(images @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    logp = log_softmax(h2 @ w3 + b3)
    return -np.mean(np.sum(logp * labels, axis=1))


def inputs(batch, rng):
    sizes = [784, 256, 128, 10]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params += [rng.standard_normal((fan_in, fan_out)) / fan_in ** 0.5, np.zeros(fan_out)]
    images = rng.uniform(0.0, 1.0, (batch, 784))
    labels = np.eye(10)[rng.integers(0, 10, batch)]
    return (*params, images, labels)
