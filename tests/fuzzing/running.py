"""Running a program: as the oracle (`grad` by finite differences) and as pullback's subject."""


import atexit
import contextlib
import functools
import importlib.util
import itertools
import os
import shutil
import signal
import sys
import tempfile
import types
import warnings

import numpy as np

from .values import Invalid, flatten

# -- running programs ----------------------------------------------------------

PLAIN_SECONDS = 2.0  # a generated program runs in milliseconds: longer is a runaway loop
LARGEST = 1e6  # larger values make finite differences too inaccurate to judge by
STEPS = (1e-3, 5e-4, 1e-4, 1e-5)  # finite-difference steps; the first two extrapolated


class Timeout(BaseException):
    """A program or its derivative ran out of time (a BaseException: nothing catches it)."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise `Timeout` in the block after `seconds` (on the main thread, with SIGALRM)."""
    def expire(signum, frame):
        raise Timeout(f"no result after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    # Again every half second: Python ignores an exception raised where nothing can
    # catch it (in a garbage collector's callback), and the program would run on.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def quiet():
    """Silence NumPy's warnings (overflow, division by zero) in the block."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


@functools.lru_cache(maxsize=1)
def program_directory():
    """A temporary directory for the programs' files, removed when the process exits."""
    directory = tempfile.mkdtemp(prefix="pullback-fuzz-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


_MODULES = itertools.count()


class NotSmooth(ValueError):
    """The oracle's `grad` met a function that is not smooth at its point."""


def kinked(center, values):
    """Whether a function is not differentiable at a point (a kink, where central differences
    agree on the mean of two slopes), from its value `center` there and its values
    `{step: (ahead, behind)}` a step away on either side (in a direction): the difference of
    the one-sided slopes shrinks with the step where it is smooth, not at a kink."""
    def gap(h):
        ahead, behind = values[h]
        return np.abs(ahead - 2 * center + behind) / h

    return bool(np.any(gap(STEPS[3]) > 0.5 * gap(STEPS[2]) + 1e-8 * max(1.0, abs(center))))


def fd_grad(g):
    """The derivative of a function of a float by Richardson-extrapolated central differences
    (the oracle's stand-in for `pullback.grad` called inside a program); NotSmooth, which
    discards the program, where a smaller step disagrees. Rounded to 10 significant digits, so
    that a derivative exact in pullback (the -1.0 of `1.0 - t`) is exact here too, and a program
    comparing it with a constant (`-1.0 < d`) takes the branch pullback takes."""
    def derivative(t):
        if not isinstance(t, (float, np.floating)):
            raise TypeError(f"grad of an argument of type {type(t).__name__}")

        center = g(t)
        values = {h: (g(t + h), g(t - h)) for h in STEPS}
        central = {h: (plus - minus) / (2 * h) for h, (plus, minus) in values.items()}
        extrapolated = (4 * central[STEPS[1]] - central[STEPS[0]]) / 3
        smooth = abs(extrapolated - central[STEPS[2]]) <= 1e-6 * max(1.0, abs(extrapolated))
        if not smooth or kinked(center, values):
            raise NotSmooth(f"grad: not smooth at {t}")
        return type(t)(float(f"{extrapolated:.10g}"))  # as pullback.grad: the type of the argument

    return derivative


def oracle_module(source):
    """The program executed from its text, with `grad` computed by finite differences."""
    name = f"fuzz_oracle_{os.getpid()}_{next(_MODULES)}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses looks its module up while it makes the class
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    module.grad = fd_grad
    return module


@contextlib.contextmanager
def subject_module(source):
    """The program imported from a file of its own, for pullback, which reads the source."""
    name = f"fuzz_{os.getpid()}_{next(_MODULES)}"
    path = os.path.join(program_directory(), name + ".py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)


def run_plain(module):
    """`module.f(*module.arguments())`, in a time limit; Invalid unless its value is finite floats
    and float arrays of moderate size."""
    with time_limit(PLAIN_SECONDS):
        value = module.f(*module.arguments())
    leaves = flatten(value, strict=True)
    if value is None or not (np.all(np.isfinite(leaves)) and np.all(np.abs(leaves) < LARGEST)):
        raise Invalid(f"f returns {value!r}")
    return value


def plain_value(program):
    """`f(*arguments())` run as plain Python, or None if it raises, takes too long, or returns
    anything but finite floats and float arrays of moderate size."""
    try:
        with quiet():
            return run_plain(oracle_module(program.source))
    except (Exception, Timeout):  # noqa: BLE001  (a program that fails is discarded)
        return None
