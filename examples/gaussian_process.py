"""A Gaussian process fitted by its marginal likelihood's gradient.

Noisy samples of a smooth function; an RBF kernel whose log length-scale, log
signal variance and log noise variance are fitted by gradient descent on the
negative log marginal likelihood, written as a statistician writes it, with
`scipy.linalg`'s Cholesky factor and solve.

    python examples/gaussian_process.py
"""

import numpy as np
from scipy import linalg

import pullback


def kernel(xa, xb, log_length, log_signal):
    """The RBF kernel matrix between the points `xa` and `xb`."""
    d = (xa[:, None] - xb[None, :]) / np.exp(log_length)
    return np.exp(log_signal) * np.exp(-0.5 * d * d)


def negative_log_marginal_likelihood(params, x, y):
    """-log p(y | x, params) of a zero-mean GP with Gaussian noise."""
    log_length, log_signal, log_noise = params[0], params[1], params[2]
    n = x.shape[0]
    k = kernel(x, x, log_length, log_signal) + np.exp(log_noise) * np.eye(n)
    factor = linalg.cholesky(k, lower=True)
    alpha = linalg.cho_solve((factor, True), y)
    return (0.5 * y @ alpha + np.sum(np.log(np.diag(factor)))
            + 0.5 * n * np.log(2.0 * np.pi))


def predict(params, x, y, x_new):
    """The posterior mean at `x_new`."""
    log_length, log_signal, log_noise = params
    k = kernel(x, x, log_length, log_signal) + np.exp(log_noise) * np.eye(x.shape[0])
    return kernel(x_new, x, log_length, log_signal) @ linalg.solve(k, y)


def fit(x, y, params, steps=150, rate=0.02):
    """Gradient descent on the negative log marginal likelihood."""
    value_and_grad = pullback.value_and_grad(negative_log_marginal_likelihood)
    for step in range(steps):
        value, gradient = value_and_grad(params, x, y)
        params = params - rate * gradient
        if step % 30 == 0 or step == steps - 1:
            print(f"step {step:3d} nlml {value:.4f}")
    return params


def main():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-3.0, 3.0, 30))
    y = np.sin(2.0 * x) + 0.1 * rng.standard_normal(30)
    params = fit(x, y, np.array([0.0, 0.0, -1.0]))
    length, signal, noise = np.exp(params)
    print(f"length-scale {length:.3f}, signal variance {signal:.3f}, noise variance {noise:.4f}")
    grid = np.linspace(-2.5, 2.5, 6)
    error = np.max(np.abs(predict(params, x, y, grid) - np.sin(2.0 * grid)))
    print(f"largest error of the posterior mean against sin(2x): {error:.3f}")


if __name__ == "__main__":
    main()
