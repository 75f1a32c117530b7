"""Bayesian logistic regression by variational inference, with scipy.stats.

A mean-field Gaussian posterior over the weights, fitted by gradient ascent on the
evidence lower bound (ELBO), estimated with fixed standard-normal draws (the
reparameterisation trick): the log likelihood through `scipy.special.log_expit`,
the prior and the entropy through `scipy.stats.norm`.

    python examples/bayesian_logistic.py
"""

import numpy as np
from scipy import special, stats

import pullback


def elbo(mean, log_std, x, y, draws):
    """The evidence lower bound of q(w) = N(mean, exp(log_std)^2), averaged over `draws`."""
    std = np.exp(log_std)
    total = 0.0
    for eps in draws:
        w = mean + std * eps
        logits = x @ w
        likelihood = np.sum(y * special.log_expit(logits) + (1.0 - y) * special.log_expit(-logits))
        prior = np.sum(stats.norm.logpdf(w, 0.0, 2.0))
        posterior = np.sum(stats.norm(mean, std).logpdf(w))
        total = total + likelihood + prior - posterior
    return total / len(draws)


def fit(x, y, steps=300, rate=0.01, samples=8, seed=1):
    """Gradient ascent on the ELBO, over the posterior's means and log deviations."""
    rng = np.random.default_rng(seed)
    mean, log_std = np.zeros(x.shape[1]), np.full(x.shape[1], -1.0)
    step_fn = pullback.value_and_grad(elbo, argnums=(0, 1))
    for step in range(steps):
        draws = list(rng.standard_normal((samples, x.shape[1])))
        value, (d_mean, d_log_std) = step_fn(mean, log_std, x, y, draws)
        mean, log_std = mean + rate * d_mean, log_std + rate * d_log_std
        if step % 60 == 0 or step == steps - 1:
            print(f"step {step:3d} elbo {value:.3f}")
    return mean, np.exp(log_std)


def main():
    rng = np.random.default_rng(0)
    true_w = np.array([1.5, -2.0, 0.5])
    x = rng.standard_normal((200, 3))
    y = (rng.uniform(size=200) < special.expit(x @ true_w)).astype(float)
    mean, std = fit(x, y)
    print("true weights      ", np.round(true_w, 2))
    print("posterior means   ", np.round(mean, 2))
    print("posterior std devs", np.round(std, 2))


if __name__ == "__main__":
    main()
