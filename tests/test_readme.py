"""The README's example prints exactly the code the README shows."""

import os
import re
import sys

import numpy as np

import pullback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_shows_the_generated_code():
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    shown = re.search(r"prints the forward function and its pullback:\n\n```python\n(.*?)```",
                      readme, re.S).group(1)
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import quickstart
    finally:
        sys.path.pop(0)
    x, y = np.ones((64, 3)), np.ones(64)
    assert pullback.source(quickstart.loss, np.zeros(3), x, y, argnums=0) == shown
