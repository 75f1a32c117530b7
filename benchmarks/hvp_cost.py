"""The cost of a Hessian-vector product relative to one evaluation of f.

Pearlmutter and Siskind's complexity claim: (H f x) v by double reverse mode
costs a constant factor of f(x), whatever the size of x. This times both for
n = 10, 10³ and 10⁵ inputs (median of repeats, single-threaded BLAS) and
prints a Markdown table.

    OMP_NUM_THREADS=1 python benchmarks/hvp_cost.py
"""

import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pullback  # noqa: E402


def f(x):
    return np.sum(np.sin(x) * x ** 2)


def median_seconds(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{platform.processor() or platform.machine()}, OMP_NUM_THREADS=1\n")
    print("| n | f(x) | hvp(f, x, v) | ratio |")
    print("|---:|---:|---:|---:|")
    for n in (10, 10 ** 3, 10 ** 5, 10 ** 6):
        x, v = rng.standard_normal(n), rng.standard_normal(n)
        pullback.hvp(f, x, v)
        repeats = 200 if n < 10 ** 5 else 10
        primal = median_seconds(lambda x=x: f(x), repeats)
        product = median_seconds(lambda x=x, v=v: pullback.hvp(f, x, v), repeats)
        print(f"| {n:,} | {primal * 1e6:,.1f} µs | {product * 1e6:,.1f} µs | "
              f"{product / primal:,.1f} |")


if __name__ == "__main__":
    main()
