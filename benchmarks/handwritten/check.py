"""Check the hand-written adjoints against pullback and finite differences, and time them.

    python benchmarks/handwritten/check.py [--only NAME[,NAME...]] [--rounds N]

For every workload and size: the hand-written gradient against pullback's
(np.allclose, rtol 1e-8, atol 1e-10 times the largest component of pullback's
gradient of that argument, at least 1e-10), and, at the small size, against
central finite differences of the objective in a random direction (step 1e-6, or
1e-7 if 1e-6 disagrees, as a step may cross a kink of a piecewise smooth objective
such as mlp's ReLUs; both errors are printed). Then the CPU
time (`time.process_time`, single-threaded BLAS) of the primal, the hand-written
gradient and pullback's: each is called once, then timed in rounds, interleaved,
of repeated calls; a round gives the median of its calls and the result is the
smallest round median. Exits with 1 if any gradient disagrees.
"""

import os

os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})

import argparse  # noqa: E402
import importlib  # noqa: E402
import pathlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

# Import `workloads` and `handwritten` as packages of benchmarks/, not from this folder.
sys.path[0] = str(pathlib.Path(__file__).resolve().parent.parent)

import numpy as np  # noqa: E402
from workloads import NAMES  # noqa: E402

import pullback  # noqa: E402

RTOL = 1e-8
ATOL_SCALE = 1e-10
FD_STEPS = (1e-6, 1e-7)
FD_RTOL = 1e-5
ROUND_SECONDS = 0.2
MIN_CALLS = 3


def relative_errors(gradient, reference):
    """Per argument: whether `gradient` agrees with `reference` (the check above) and its
    largest error relative to |reference| + atol; a wrong type or shape counts as inf."""
    results = []
    for got, want in zip(gradient, reference):
        if type(got) is not type(want) or np.shape(got) != np.shape(want):
            results.append((False, np.inf))
            continue
        atol = ATOL_SCALE * max(1.0, float(np.max(np.abs(want))))
        error = float(np.max(np.abs(got - want) / (np.abs(want) + atol)))
        results.append((bool(np.allclose(got, want, rtol=RTOL, atol=atol)), error))
    return results


def moved(args, wrt, direction, step):
    """`args` with each argument at a position of `wrt` moved by `step` along `direction`."""
    args = list(args)
    for position, delta in zip(wrt, direction):
        args[position] = args[position] + step * delta
    return args


def finite_difference_error(module, args, gradient, direction, step):
    """The relative difference between the directional derivative of `module.objective`
    along `direction` by central differences of `step` and the one `gradient` gives."""
    ahead = module.objective(*moved(args, module.WRT, direction, step))
    behind = module.objective(*moved(args, module.WRT, direction, -step))
    numeric = (ahead - behind) / (2.0 * step)
    analytic = sum(float(np.sum(g * d)) for g, d in zip(gradient, direction))
    return abs(numeric - analytic) / max(abs(numeric), abs(analytic))


def finite_difference_check(module, args, gradient, rng):
    """Compare `gradient` with central differences in a random direction, at the steps of
    `FD_STEPS` until one agrees; return whether one did, and a report of the errors."""
    direction = [rng.standard_normal(np.shape(args[p])) for p in module.WRT]
    direction = [float(d) if isinstance(args[p], float) else d
                 for p, d in zip(module.WRT, direction)]
    report = []
    for step in FD_STEPS:
        error = finite_difference_error(module, args, gradient, direction, step)
        report.append(f"{error:.1e} (step {step:.0e})")
        if error <= FD_RTOL:
            return True, ", ".join(report) + " ok"
    return False, ", ".join(report) + " MISMATCH"


def round_median(run):
    """The median CPU time of `run()` over one round of at least `MIN_CALLS` calls."""
    times = []
    while len(times) < MIN_CALLS or sum(times) < ROUND_SECONDS:
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times)


def best_times(runs, rounds):
    """For each function of `runs` (a dict), called once first: the smallest of `rounds`
    round medians, the rounds of the functions interleaved."""
    for run in runs.values():
        run()
    best = dict.fromkeys(runs, np.inf)
    for _ in range(rounds):
        for label, run in runs.items():
            best[label] = min(best[label], round_median(run))
    return best


def check_case(name, size, rounds):
    """Check and time workload `name` at `size`; return (agrees, timing row)."""
    module = importlib.import_module(f"workloads.{name}")
    handwritten = importlib.import_module(f"handwritten.{name}")
    args = module.inputs(module.SIZES[size], np.random.default_rng(0))
    pullback_gradient = pullback.grad(module.objective, argnums=module.WRT)
    gradient = handwritten.gradient(*args)
    results = relative_errors(gradient, pullback_gradient(*args))
    agrees = len(results) == len(module.WRT) and all(ok for ok, _ in results)
    line = (f"{name:12} {size:7} vs pullback: max relative error "
            f"{max(error for _, error in results):.1e} {'ok' if agrees else 'MISMATCH'}")
    if size == "small":
        fd_agrees, report = finite_difference_check(module, args, gradient,
                                                    np.random.default_rng(1))
        agrees = agrees and fd_agrees
        line += f"; vs finite differences: {report}"
    print(line, flush=True)
    times = best_times({"primal": lambda: module.objective(*args),
                        "handwritten": lambda: handwritten.gradient(*args),
                        "pullback": lambda: pullback_gradient(*args)}, rounds)
    return agrees, (name, size, times)


def milliseconds(seconds):
    """A time in milliseconds, to three significant digits."""
    return f"{seconds * 1e3:.3g}"


def print_table(rows):
    """The timings as a Markdown table, with the ratios."""
    print("\n| workload | size | primal ms | hand-written ms | pullback ms "
          "| hand-written / primal | pullback / primal | pullback / hand-written |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, size, t in rows:
        primal, hand, ours = t["primal"], t["handwritten"], t["pullback"]
        print(f"| {name} | {size} | {milliseconds(primal)} | {milliseconds(hand)} "
              f"| {milliseconds(ours)} | {hand / primal:.2f} | {ours / primal:.2f} "
              f"| {ours / hand:.2f} |")


def main():
    """Check and time every case; exit with 1 on any disagreement."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds (default 5)")
    options = parser.parse_args()
    names = options.only.split(",") if options.only else NAMES
    results = [check_case(name, size, options.rounds)
               for name in names for size in ("small", "medium")]
    print_table([row for _, row in results])
    failed = sum(not agrees for agrees, _ in results)
    print(f"\n{failed} of {len(results)} cases disagree" if failed
          else f"\nall {len(results)} cases agree")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
