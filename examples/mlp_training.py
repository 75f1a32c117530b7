"""Train a small MLP on two interleaving half-moons with plain gradient descent.

The parameters are a list of (weights, bias) pairs; `pullback.grad` returns a
list of pairs of the same shapes. The loss curve is saved to
`mlp_training_loss.png` in the current directory when matplotlib is installed.

    python examples/mlp_training.py
    pullback --show examples/mlp_training.py:loss --wrt params
"""

import numpy as np

import pullback


def two_moons(rng, n, noise=0.1):
    """`n` points of two interleaving half circles, and their labels -1 and +1."""
    t = rng.uniform(0.0, np.pi, n)
    upper = rng.integers(0, 2, n) == 1
    x = np.where(upper, np.cos(t), 1.0 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    points = np.stack([x, y], axis=1) + noise * rng.standard_normal((n, 2))
    return points, np.where(upper, 1.0, -1.0)


def init(rng, sizes):
    """Weights scaled by 1/sqrt(fan-in), zero biases."""
    return [(rng.standard_normal((m, n)) / np.sqrt(m), np.zeros(n))
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    """The score of each row of `x`: positive for class +1."""
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[:, 0]


def loss(params, x, labels):
    """The logistic loss: mean log(1 + exp(-label * score))."""
    return np.mean(np.logaddexp(0.0, -labels * predict(params, x)))


def accuracy(params, x, labels):
    """The fraction of points on the side of their label."""
    return np.mean(np.sign(predict(params, x)) == labels)


def train(steps=600, learning_rate=0.5, seed=0):
    """Gradient descent; returns the parameters and the loss at every step."""
    rng = np.random.default_rng(seed)
    x, labels = two_moons(rng, 200)
    params = init(rng, [2, 16, 16, 1])
    loss_and_grad = pullback.value_and_grad(loss)
    losses = []
    for step in range(steps):
        value, grads = loss_and_grad(params, x, labels)
        losses.append(value)
        if step % 100 == 0:
            print(f"step {step:3d}  loss {value:.4f}  accuracy {accuracy(params, x, labels):.0%}")
        params = [(w - learning_rate * dw, b - learning_rate * db)
                  for (w, b), (dw, db) in zip(params, grads)]
    print(f"final loss {loss(params, x, labels):.4f}  accuracy {accuracy(params, x, labels):.0%}")
    return params, losses


def plot(losses, path="mlp_training_loss.png"):
    """Save the loss curve to `path`, if matplotlib is installed."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(5, 3))
    axes.plot(losses)
    axes.set(xlabel="step", ylabel="loss", yscale="log", title="MLP on two moons")
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    print(f"loss curve saved to {path}")


if __name__ == "__main__":
    plot(train()[1])
