"""Every script in examples/ runs as `python examples/NAME.py` and prints what it should."""

import math
import os
import re
import runpy

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def numbers(output, label):
    """The numbers printed after `label` (e.g. every loss), in order."""
    return [float(x) for x in re.findall(rf"{label} (-?[0-9.]+(?:e[-+]?[0-9]+)?)", output)]


def decreasing(values):
    """Whether `values` has at least two items and each is below the one before."""
    return len(values) > 1 and all(b < a for a, b in zip(values, values[1:]))


def plotted_or_said_why(output):
    """mlp_training.py saves its plot, or says that matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed: no plot" in output
    return os.path.getsize("mlp_training_loss.png") > 0


EXAMPLES = {  # each script, and checks of what it prints
    "quickstart.py": [lambda out: numbers(out, "final loss")[0] < 1e-3,
                      lambda out: "def loss_pullback(dout):" in out],
    "control_flow.py": [lambda out: "d/dx clip_square at 3, limit 2: 2.0" in out,
                        lambda out: "d/dcoeffs, d/dx horner at 2: ([4.0, 2.0, 1.0], 2.0)" in out],
    "custom_rules.py": [
        lambda out: "grad logsumexp at 1000: [0.09003057 0.24472847 0.66524096]" in out],
    "hessian_vector_product.py": [lambda out: out.count("[52. 85.]") == 2],
    "saddle_point.py": [lambda out: "x* = [0. 0.]  y* = [0. 0.]" in out],
    "newton.py": [lambda out: decreasing(numbers(out, "f")[:-1]),
                  lambda out: numbers(out, r"\|grad\|")[-1] < 1e-8,
                  lambda out: "minimum at [1. 1. 1. 1. 1. 1. 1. 1. 1. 1.]" in out],
    "mlp_training.py": [lambda out: decreasing(numbers(out, "loss")),
                        lambda out: "final loss" in out and "accuracy 100%" in out,
                        plotted_or_said_why],
    "treelstm.py": [lambda out: decreasing(numbers(out, "loss")),
                    lambda out: numbers(out, "accuracy on 200 new trees:")[0] >= 70],
    "projectile.py": [lambda out: 38 < numbers(out, "best angle")[0] < 44,
                      lambda out: numbers(out, "range")[-1] > numbers(out, "degrees:")[0]],
    "gaussian_process.py": [
        lambda out: decreasing(numbers(out, "nlml")),
        lambda out: numbers(out, "largest error of the posterior mean against sin\\(2x\\):")[0]
        < 0.2],
    "bayesian_logistic.py": [
        lambda out: numbers(out, "elbo")[-1] > numbers(out, "elbo")[0] + 50,
        lambda out: "posterior means    [ 1.09 -1.98  0.56]" in out],
}
NEEDS_SCIPY = ("gaussian_process.py", "bayesian_logistic.py")


def test_every_example_is_run():
    assert sorted(EXAMPLES) == sorted(n for n in os.listdir(os.path.join(ROOT, "examples"))
                                      if n.endswith(".py"))


def run_example(name):
    """Run examples/`name` as a script; returns the namespace it left."""
    return runpy.run_path(os.path.join(ROOT, "examples", name), run_name="__main__")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example(name, capsys, monkeypatch, tmp_path):
    if name in NEEDS_SCIPY:
        pytest.importorskip("scipy")
    monkeypatch.chdir(tmp_path)
    run_example(name)
    output = capsys.readouterr().out
    for check in EXAMPLES[name]:
        assert check(output), output


@pytest.mark.parametrize("angle", [0.3, 0.7, 1.3])
def test_projectile_gradient_matches_finite_differences(angle, capsys):
    flight_range = run_example("projectile.py")["flight_range"]
    args = (angle, 40.0, 0.005)
    gradient = pullback.grad(flight_range, argnums=(0, 1, 2))(*args)
    for i, step in enumerate([1e-6, 1e-5, 1e-8]):
        plus, minus = list(args), list(args)
        plus[i] += step
        minus[i] -= step
        estimate = (flight_range(*plus) - flight_range(*minus)) / (2 * step)
        assert gradient[i] == pytest.approx(estimate, rel=1e-6)
    capsys.readouterr()


def test_projectile_without_drag_flies_furthest_at_45_degrees():
    flight_range = run_example("projectile.py")["flight_range"]
    assert pullback.grad(flight_range)(math.pi / 4, 40.0, 0.0) == pytest.approx(0.0, abs=0.5)
    assert flight_range(math.pi / 4, 40.0, 0.0) == pytest.approx(40.0 ** 2 / 9.81, rel=1e-3)


def test_examples_import_nothing_from_the_repository_but_pullback():
    for name in EXAMPLES:
        with open(os.path.join(ROOT, "examples", name)) as file:
            imports = re.findall(r"^(?:from|import) (\w+)", file.read(), re.M)
        allowed = {"math", "numpy", "pullback"} | ({"scipy"} if name in NEEDS_SCIPY else set())
        assert set(imports) <= allowed, (name, imports)


def test_the_statisticians_objectives_match_finite_differences(capsys):
    """The GP's negative log marginal likelihood and the ELBO, at orders 1 and 2."""
    pytest.importorskip("scipy")
    gp = run_example("gaussian_process.py")
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-2.0, 2.0, 8))
    y = np.sin(x)
    check_grads(lambda p: gp["negative_log_marginal_likelihood"](p, x, y),
                (np.array([0.1, -0.2, -1.5]),), order=2, rtol=1e-4)
    vi = run_example("bayesian_logistic.py")
    xs = rng.standard_normal((12, 2))
    ys = (xs[:, 0] > 0).astype(float)
    draws = list(rng.standard_normal((2, 2)))
    check_grads(lambda m, s: vi["elbo"](m, s, xs, ys, draws),
                (np.array([0.3, -0.2]), np.array([-0.5, -0.8])), order=2, rtol=1e-4)
    capsys.readouterr()
