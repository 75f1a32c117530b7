"""The README's examples print exactly the code the README shows."""

import os
import re
import sys

import numpy as np

import pullback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown_after(words):
    """The code block of README.md that follows `words`."""
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    return re.search(re.escape(words) + r"\n\n```python\n(.*?)```", readme, re.S).group(1)


def quickstart_loss():
    """`loss` of examples/quickstart.py."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import quickstart
    finally:
        sys.path.pop(0)
    return quickstart.loss


def test_readme_shows_the_generated_code():
    x, y = np.ones((64, 3)), np.ones(64)
    assert (pullback.source(quickstart_loss(), np.zeros(3), x, y, argnums=0)
            == shown_after("prints the forward function and its pullback:"))


def test_readme_shows_the_tangent_code():
    loss = quickstart_loss()
    x, y = np.ones((64, 3)), np.linspace(-1.0, 1.0, 64)
    w, v = np.zeros(3), np.array([1.0, -2.0, 0.5])
    assert (pullback.source(loss, w, x, y, argnums=0, mode="forward")
            == shown_after("prints the tangent code, each statement followed by its tangent:"))
    out, out_dot = pullback.jvp(loss, (w, x, y), (v, None, None))
    eps = 1e-6
    numeric = (loss(w + eps * v, x, y) - loss(w - eps * v, x, y)) / (2 * eps)
    assert np.isclose(out, loss(w, x, y)) and np.isclose(out_dot, numeric, rtol=1e-6)
