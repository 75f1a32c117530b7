"""The command for long runs (`python tests/fuzz.py --help`)."""


import argparse
import collections
import concurrent.futures
import dataclasses
import itertools
import os
import sys
import time

from .checking import FAILURES, KINDS, check_program
from .drivers import IsolatedChecker, explore, shrink
from .reducing import program_of_file, reproducer

# -- the command line ----------------------------------------------------------


@dataclasses.dataclass
class Summary:
    """What a run found."""

    counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    refusals: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    failures: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    files: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0  # checking
    shrinking: float = 0.0

    def merge(self, other):
        """Add `other`'s findings to ours."""
        self.counts += other.counts
        self.refusals += other.refusals
        self.failures += other.failures
        self.files += other.files
        self.seconds = max(self.seconds, other.seconds)
        self.shrinking = max(self.shrinking, other.shrinking)


def run_job(count, seed, max_order, out, shrink_count, shrink_seconds, memory):
    """Check `count` programs of `seed`; write reproducers of failures into `out`; a Summary."""
    if memory:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory << 30, resource.RLIM_INFINITY))
    summary, seen, found = Summary(), set(), collections.defaultdict(list)
    start = time.monotonic()
    check = IsolatedChecker(max_order)

    def visit(program):
        seen.add(program.source)
        outcome = check(program)
        summary.counts[outcome.kind] += 1
        if outcome.kind == "skipped":
            summary.counts[f"skipped at order {outcome.order}"] += 1
        if outcome.kind == "refused":
            summary.refusals[outcome.signature] += 1
        if outcome.kind in FAILURES:
            summary.failures[outcome.signature] += 1
            index = len(seen)
            name = f"{outcome.kind}-seed{seed}-{index:05d}.py"
            origin = f"program {index} of seed {seed}"
            summary.files.append(write(out, name, reproducer(program, outcome, origin)))
            found[outcome.signature].append((program, outcome, name))
        return outcome.kind

    explore(count, seed, visit)
    summary.seconds = time.monotonic() - start
    for program, outcome, name in _round_robin(found)[:shrink_count]:
        small, small_outcome = shrink(program, outcome, count, seed, max_order, shrink_seconds,
                                      check)
        text = reproducer(small, small_outcome, f"shrunk from {name}")
        summary.files.append(write(out, name.replace(".py", "-shrunk.py"), text))
    check.close()
    summary.shrinking = time.monotonic() - start - summary.seconds
    return summary


def _round_robin(groups):
    """The first item of each group, then the second of each, and so on."""
    columns = itertools.zip_longest(*groups.values())
    return [item for column in columns for item in column if item is not None]


def write(directory, name, text):
    """Write `text` to `directory/name`; the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as file:
        file.write(text)
    return path


def print_summary(summary, top=10):
    """Print the counts of outcomes, the commonest refusals and the failures found."""
    total = sum(summary.counts[k] for k in KINDS)
    print(f"{total} programs checked in {summary.seconds:.0f} s "
          f"(and {summary.shrinking:.0f} s shrinking failures)")
    for kind in KINDS:
        print(f"  {kind:10} {summary.counts[kind]:6}")
    for key in sorted(k for k in summary.counts if k.startswith("skipped at")):
        print(f"    {key}: {summary.counts[key]}")
    print(f"\nthe {top} commonest refusals:")
    for message, n in summary.refusals.most_common(top):
        print(f"  {n:6}  {message}")
    print("\nfailures:")
    for signature, n in summary.failures.most_common():
        print(f"  {n:6}  {signature}")
    shrunk = [f for f in summary.files if f.endswith("-shrunk.py")]
    print(f"\n{len(summary.files) - len(shrunk)} reproducers written, {len(shrunk)} shrunk:")
    for path in shrunk:
        print(f"  {path}")


def check_file(path, max_order):
    """Check the program of a reproducer again and print the outcome."""
    outcome = check_program(program_of_file(path), max_order)
    print(f"{outcome.kind} at order {outcome.order}: {outcome.signature}\n{outcome.detail}")
    return outcome


def main(argv=None):
    """The command line: a long run, or `--check FILE`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="programs to check")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="fuzz-failures", help="directory for reproducers")
    parser.add_argument("--orders", type=int, default=2,
                        help="highest order checked (above 2 only for f of one float)")
    parser.add_argument("--jobs", type=int, default=1, help="processes, each with its own seed")
    parser.add_argument("--shrink", type=int, default=10,
                        help="failures to shrink per job: the first of each signature, then "
                             "the second of each...")
    parser.add_argument("--shrink-seconds", type=float, default=30.0,
                        help="for hypothesis's shrinking of one failure, and as much again "
                             "for deleting its statements and simplifying its expressions")
    parser.add_argument("--memory", type=int, default=4, help="GiB per process (0: no limit)")
    parser.add_argument("--check", metavar="FILE", help="check a reproducer again")
    options = parser.parse_args(argv)
    if options.check:
        return 1 if check_file(options.check, options.orders).kind in FAILURES else 0
    jobs = max(1, options.jobs)
    counts = [options.n // jobs + (j < options.n % jobs) for j in range(jobs)]
    seeds = [options.seed * 1000 + j if jobs > 1 else options.seed for j in range(jobs)]
    arguments = [(c, s, options.orders, options.out, options.shrink, options.shrink_seconds,
                  options.memory) for c, s in zip(counts, seeds)]
    summary = Summary()
    if jobs == 1:
        summary.merge(run_job(*arguments[0]))
    else:
        with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
            for result in pool.map(run_job, *zip(*arguments)):
                summary.merge(result)
    print_summary(summary)
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
