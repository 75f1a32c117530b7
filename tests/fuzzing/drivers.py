"""Hypothesis runs: the gate of the CI test, exploring a seed's programs, shrinking one."""


import concurrent.futures
import contextlib
import multiprocessing
import time
import warnings

import hypothesis

from .checking import FAILURES, Outcome, check_program
from .programs import programs
from .reducing import reduce_source

# -- hypothesis drivers --------------------------------------------------------


class Failure(AssertionError):
    """A program that pullback gets wrong or crashes on, with its report."""


class IsolatedChecker:
    """`check_program` in a child process, replaced after `per_child` programs.

    pullback keeps every function it transforms (about 1 MB each), so a long run in one
    process would grow without bound; in a child, no program's state can change another's
    outcome either, and a program that kills its process is a crash, not the end of the run.
    """

    def __init__(self, max_order, per_child=200):
        self.max_order, self.per_child = max_order, per_child
        self.pool, self.count = None, 0

    def __call__(self, program, max_order=None):
        """The outcome of `program`, checked up to `max_order` (ours by default)."""
        if self.pool is None or self.count >= self.per_child:
            self.close()
            self.pool = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn"))
        self.count += 1
        order = self.max_order if max_order is None else max_order
        try:
            return self.pool.submit(check_program, program, order).result()
        except concurrent.futures.process.BrokenProcessPool as error:
            self.close()
            return Outcome("crash", 0, "crash: the process checking it died", repr(error))

    def close(self):
        """Stop the child process."""
        if self.pool is not None:
            self.pool.shutdown()
        self.pool, self.count = None, 0


class FailureGate:
    """The body of a hypothesis test that fails on wrong or crashing programs and lets hypothesis
    shrink the first failure it finds without drifting to another kind of failure.

    Once a program fails, only programs failing with the same signature fail; `seconds` after
    that, programs not checked before pass unchecked, which ends shrinking. With `skip_until`
    (a program's source), programs before that one are not checked (they pass): hypothesis
    run again with the same seed then meets it and shrinks it. `check` is `check_program` or
    an `IsolatedChecker`.
    """

    def __init__(self, max_order=2, seconds=30.0, signature=None, skip_until=None,
                 check=check_program):
        self.check = check
        self.max_order, self.seconds = max_order, seconds
        self.signature, self.skip_until = signature, skip_until
        self.deadline = None
        self.outcomes = {}  # source: Outcome
        self.smallest = None  # (program, outcome) of the last failure raised

    def __call__(self, program):
        if self.skip_until is not None:
            if program.source != self.skip_until:
                return
            self.skip_until = None
        outcome = self.outcomes.get(program.source)
        if outcome is None:
            if self.deadline is not None and time.monotonic() > self.deadline:
                return
            outcome = self.outcomes[program.source] = self.check(program, self.max_order)
        if outcome.kind == "invalid":
            hypothesis.reject()
        if outcome.kind in FAILURES and self.signature in (None, outcome.signature):
            if self.deadline is None:
                self.signature = outcome.signature
                self.deadline = time.monotonic() + self.seconds
            self.smallest = (program, outcome)
            raise Failure(report(program, outcome))


def report(program, outcome):
    """A failure's description: what went wrong, and the (shrunk) program."""
    return f"\n{outcome.signature}\n{outcome.detail}\n\n{program.source}"


EXAMPLES_PER_PROGRAM = 5  # hypothesis repeats programs: examples to allow per distinct one


def hypothesis_settings(count, shrink):
    """Settings of a deterministic run of `count` programs, shrinking failures or not."""
    phases = [hypothesis.Phase.generate] + ([hypothesis.Phase.shrink] if shrink else [])
    return hypothesis.settings(
        max_examples=count, database=None, deadline=None, phases=phases,
        suppress_health_check=list(hypothesis.HealthCheck), report_multiple_bugs=False,
        print_blob=False, verbosity=hypothesis.Verbosity.quiet)


class _Enough(Exception):
    """Ends `explore`."""


def explore(count, seed, visit):
    """Call `visit(program)` on the first `count` distinct programs generated from `seed` (the
    same programs for the same seed); a `visit` returning "invalid" rejects its program."""
    seen = set()

    @hypothesis.seed(seed)
    @hypothesis_settings(EXAMPLES_PER_PROGRAM * count, shrink=False)
    @hypothesis.given(programs())
    def run(program):
        if len(seen) >= count:
            raise _Enough
        if program.source in seen:
            return
        seen.add(program.source)
        if visit(program) == "invalid":
            hypothesis.reject()

    with contextlib.suppress(_Enough):
        run()


def shrink(program, outcome, count, seed, max_order, seconds, check=check_program):
    """`(program, outcome)`: the smallest program hypothesis finds failing like `program`,
    found again by running `explore`'s programs of `seed` (whose first `count` include it),
    then reduced by `reduce_source`."""
    gate = FailureGate(max_order, seconds, outcome.signature, skip_until=program.source,
                       check=check)

    @hypothesis.seed(seed)
    @hypothesis_settings(EXAMPLES_PER_PROGRAM * count, shrink=True)
    @hypothesis.given(programs())
    def run(candidate):
        gate(candidate)

    with contextlib.suppress(Failure, hypothesis.errors.HypothesisException), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", hypothesis.errors.HypothesisDeprecationWarning)
        run()
    program, outcome = gate.smallest or (program, outcome)
    return reduce_source(program, outcome, max_order, seconds, check)
