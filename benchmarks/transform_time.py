"""How long pullback takes to transform a 50-line function.

Writes two identical straight-line NumPy functions of 50 lines to a new
module, then times the first gradient of each (transformation and first call,
less a steady-state call). The first also pays for parsing the module (and, in
the first run, for parsing the templates of the rules it meets, done once per
process); the second is what transforming one more function costs.

    python benchmarks/transform_time.py
"""

import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pullback

STEPS = ["np.tanh(h @ w + b)", "h * 0.5 + np.sin(h)", "np.exp(-h * h) + h",
         "np.maximum(h, 0.1 * h)"]


def module_source(names):
    """A module defining one 50-line function per name."""
    lines = ["import numpy as np", ""]
    for name in names:
        lines += ["", f"def {name}(x, w, b):", "    h = x"]
        lines += [f"    h = {STEPS[i % len(STEPS)]}" for i in range(46)]
        lines += ["    total = np.sum(h ** 2)", "    return total", ""]
    return "\n".join(lines)


def first_gradient_ms(fn, args):
    """Milliseconds of the first gradient, less one steady-state gradient."""
    gradient = pullback.grad(fn, argnums=(0, 1, 2))
    start = time.perf_counter()
    gradient(*args)
    first = time.perf_counter() - start
    start = time.perf_counter()
    gradient(*args)
    return (first - (time.perf_counter() - start)) * 1e3


def main():
    """Print the transformation times of the first and second function of a module."""
    args = (np.full((4, 8), 0.1), np.eye(8) * 0.5, np.zeros(8))
    firsts, seconds = [], []
    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        for run in range(5):
            names = [f"first_{run}", f"second_{run}"]
            Path(folder, f"fifty_{run}.py").write_text(module_source(names))
            module = importlib.import_module(f"fifty_{run}")
            firsts.append(first_gradient_ms(getattr(module, names[0]), args))
            seconds.append(first_gradient_ms(getattr(module, names[1]), args))
    print(f"transforming a 50-line function: the first of a new module "
          f"{statistics.median(firsts):.0f} ms ({firsts[0]:.0f} ms the first time in the "
          f"process), another one {statistics.median(seconds):.0f} ms (medians of 5 modules)")


if __name__ == "__main__":
    main()
