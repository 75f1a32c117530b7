"""What one gradient of a tiny function costs: pullback against its eager peers.

Where a function does almost nothing, a gradient costs what the library does
around it: pullback checks the arguments, finds their kinds and the cached
code; autograd and PyTorch record a tape; JAX eager traces. Each peer
differentiates the same two functions, `x * x` at a float and
`sum(sin(x) * x ** 2)` at ten numbers, and the median of repeated calls is
printed as a Markdown table (single-threaded, in one process).

    python benchmarks/call_overhead.py
"""

import os
import platform
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pullback  # noqa: E402


def square(x):
    return x * x


def sine_sum(x):
    return np.sum(np.sin(x) * x ** 2)


def median_microseconds(run, seconds=1.0):
    """The median time of `run()` in µs, over repeats filling about `seconds`."""
    run()
    times = []
    while len(times) < 5 or (sum(times) < seconds and len(times) < 20_000):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def gradients(x):
    """For each library available, its gradients of `square` at 3.0 and of `sine_sum`
    at `x`, as functions of no arguments."""
    found = {"pullback": _calls(pullback.grad, sine_sum, x)}
    try:
        import autograd
        import autograd.numpy as anp
        found["autograd"] = _calls(autograd.grad, lambda y: anp.sum(anp.sin(y) * y ** 2), x)
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(1)
        found["PyTorch"] = (lambda: _torch_gradient(torch, square, torch.tensor(3.0)),
                            lambda: _torch_gradient(torch, _torch_sine_sum, torch.tensor(x)))
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        found["JAX eager"] = _calls(jax.grad, lambda y: jnp.sum(jnp.sin(y) * y ** 2), x,
                                    lambda result: result.block_until_ready())
    except ImportError:
        pass
    return found


def _calls(grad, sine_sum_here, x, finish=lambda result: result):
    """The two gradients of a library whose `grad` works like pullback's."""
    scalar, array = grad(square), grad(sine_sum_here)
    return lambda: finish(scalar(3.0)), lambda: finish(array(x))


def _torch_sine_sum(y):
    import torch
    return torch.sum(torch.sin(y) * y ** 2)


def _torch_gradient(torch, fn, value):
    leaf = value.to(torch.float64).requires_grad_()
    fn(leaf).backward()
    return leaf.grad


def main():
    """Print the table."""
    x = np.linspace(0.1, 1.0, 10)
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.machine()}, one thread\n")
    print("| library | grad of `x * x` | grad of `sum(sin(x) * x ** 2)`, 10 numbers |")
    print("|---|---:|---:|")
    for name, (scalar, array) in gradients(x).items():
        print(f"| {name} | {median_microseconds(scalar):,.1f} µs | "
              f"{median_microseconds(array):,.1f} µs |")


if __name__ == "__main__":
    main()
