"""Checking a program against finite differences, order by order, into an `Outcome`."""


import ast
import dataclasses
import os
import re
import traceback

import numpy as np

import pullback

from .running import (
    STEPS,
    Timeout,
    kinked,
    oracle_module,
    quiet,
    run_plain,
    subject_module,
    time_limit,
)
from .values import describe, flatten, is_scalar, literal, random_like, unflatten

# -- outcomes ------------------------------------------------------------------

FAILURES = ("wrong", "crash")
KINDS = ("ok", "wrong", "crash", "refused", "skipped")
FD_RTOL = 1e-4  # estimates at different steps must agree to this, relative to their size
WRONG_RTOL = 1e-3  # pullback must differ from every estimate by more than this to be wrong
VALUE_RTOL = 1e-6
ENGLISH = frozenset(
    "a an and as at b be by d for if in is it ll m no not of on or re s t the to ve"  # noqa: SIM905
    .split()
)
PACKAGE_DIRECTORY = os.path.dirname(pullback.__file__) + os.sep


@dataclasses.dataclass
class Outcome:
    """The result of checking a program.

    kind: ok, wrong, crash, refused, skipped (or invalid: the program itself fails).
    order: the order of derivative at which it was decided (the highest checked for ok).
    signature: a normalised description grouping outcomes of one cause.
    detail: what was expected and what pullback gave, or the traceback.
    cotangents: the source of the cotangents of orders 1, 2, ... (None where a gradient was
      taken): text, since an outcome may come from another process.
    """

    kind: str
    order: int = 0
    signature: str = ""
    detail: str = ""
    cotangents: list = dataclasses.field(default_factory=list)


def defined_names(source):
    """The names a program defines (variables, parameters, functions, classes), which
    normalisation removes from messages."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names - ENGLISH


def normalise(message, names):
    """`message` without what is particular to one program: file names, line numbers, the
    program's own names, numbers; so that messages of one cause compare equal."""
    message = re.sub(r"<pullback [^>]*>", "<generated>", message)
    message = re.sub(r"(?:/[\w.\-]+)+\.py", "FILE", message)
    message = re.sub(r"\bfuzz_\w+", "MODULE", message)
    if names:
        pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        message = re.sub(rf"\b(?:{pattern})\b", "NAME", message)
    message = re.sub(r"\d+(?:\.\d+)?", "N", message)
    return " ".join(message.split())[:300]


def where(error):
    """The innermost frame of pullback (or of the code it generated) that `error` passed."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if frame.filename.startswith(PACKAGE_DIRECTORY):
            return f"{os.path.basename(frame.filename)[:-3]}.{frame.name}"
        if frame.filename.startswith("<pullback"):
            return "generated code"
    return "?"


def raised(error, order, names, context=""):
    """The outcome of pullback raising `error` at `order`: refused or crash."""
    message = str(error) if not isinstance(error, pullback.TransformError) else error.message
    if isinstance(error, pullback.TransformError):
        return Outcome("refused", order, normalise(message, names), message)
    kind = "timeout" if isinstance(error, Timeout) else type(error).__name__
    signature = f"crash at order {order}: {kind}: {normalise(message, names)} [{where(error)}]"
    frames = "".join(traceback.format_exception(error)[-6:])
    return Outcome("crash", order, signature, f"{context}{kind}: {message}\n{frames}")


def wrong(order, aspect, expected, got):
    """A wrong outcome: `aspect` (value, gradient, ...) should be `expected` but is `got`."""
    detail = f"expected: {expected}\ngot:      {got}"
    return Outcome("wrong", order, f"wrong {aspect} at order {order}", detail)


def wrong_argument(args, estimate, got):
    """The structure of the first argument whose gradient `got` differs from `estimate`."""
    position = 0
    for arg in args:
        size = flatten(arg).size
        scale = max(1.0, np.max(np.abs(estimate), initial=0.0))
        part = slice(position, position + size)
        if np.max(np.abs(got[part] - estimate[part]), initial=0.0) > WRONG_RTOL * scale:
            return re.sub(r"\w+:float64", "", describe(arg))
        position += size
    return "?"


# -- the checker ---------------------------------------------------------------


def check_program(program, max_order=2, seconds=30.0):
    """Check pullback's derivatives of `program.f` up to `max_order` (orders above 2 only when
    `f` takes one float) against finite differences, and at each order its derivative in
    forward mode (`jvp`) in a random direction against them; an `Outcome`. `seconds` bounds
    the whole check: a program taking longer is a crash (a hang)."""
    with quiet():
        try:
            oracle = oracle_module(program.source)
            expected = run_plain(oracle)
        except (Exception, Timeout) as error:  # noqa: BLE001  (the program itself fails)
            return Outcome("invalid", 0, type(error).__name__, str(error))
        top = max_order if program.one_scalar else min(max_order, 2)
        names = defined_names(program.source) | {"f"}
        with subject_module(program.source) as subject:
            checker = Checker(oracle, subject, names)
            try:
                with time_limit(seconds):
                    return checker.run(expected, top)
            except Timeout as error:
                return raised(error, checker.order, names)


class Checker:
    """Checks one program order by order; order k against finite differences of order k - 1."""

    def __init__(self, oracle, subject, names):
        self.oracle, self.subject, self.names = oracle, subject, names
        self.rng = np.random.default_rng(0)
        self.cotangents = []
        self.order = 1  # the order being checked

    def run(self, expected, top):
        """The outcome of orders 1 to `top`: the first that is not ok, else ok."""
        args = self.subject.arguments()
        target, reference, reference_args = self.subject.f, self.oracle.f, self.oracle.arguments()
        cotangent = None if is_scalar(expected) else random_like(expected, self.rng)
        for order in range(1, top + 1):
            self.order = order
            self.cotangents.append(None if cotangent is None else literal(cotangent))
            outcome, gradient = self.check_order(order, target, args, cotangent, expected,
                                                 reference, reference_args)
            if outcome is not None:
                outcome.cotangents = self.cotangents
                return outcome
            target = reference = level(target, cotangent, len(args))
            reference_args, expected = args, gradient
            cotangent = random_like(gradient, self.rng)
        return Outcome("ok", top, cotangents=self.cotangents)

    def check_order(self, order, target, args, cotangent, expected, reference, reference_args):
        """`(outcome, gradient)`: outcome None when order `order` is right."""
        given = unflatten(args, flatten(args))  # a copy, which pullback must not change
        try:
            value, gradient = differentiate(target, given, cotangent)
        except Exception as error:  # noqa: BLE001  (whatever pullback raises is an outcome)
            return raised(error, order, self.names), None
        problem = self.compare(order, args, given, value, expected, gradient)
        if problem is not None:
            return problem, None
        estimates = self.estimates(order, reference, reference_args, cotangent)
        if isinstance(estimates, Outcome):
            return estimates, None
        got = flatten(gradient)
        scale = max(1.0, np.max(np.abs(got), initial=0.0), np.max(np.abs(estimates)))
        if all(np.max(np.abs(got - e), initial=0.0) > WRONG_RTOL * scale for e in estimates):
            aspect = f"gradient of {wrong_argument(args, estimates[-1], got)}"
            expected = _show(unflatten(gradient, estimates[-1]))
            return wrong(order, aspect, expected, _show(gradient)), None
        return (self.check_tangent(order, target, args, cotangent, gradient)
                or self.check_fewer(order, target, args, cotangent, gradient)), gradient

    def check_tangent(self, order, target, args, cotangent, gradient):
        """None when the derivative in forward mode of `target` (at order 2, forward over
        reverse) in a random direction is the gradient, checked already, in that
        direction; else the outcome."""
        direction = random_like(args, self.rng)
        given = unflatten(args, flatten(args))
        try:
            _, tangent = pullback.jvp(target, given, direction)
        except Exception as error:  # noqa: BLE001  (whatever pullback raises is an outcome)
            outcome = raised(error, order, self.names)
            outcome.signature = f"jvp: {outcome.signature}"
            return outcome
        got = float(flatten(tangent) @ flatten(cotangent)) if cotangent is not None else float(
            flatten(tangent).sum())
        want = float(flatten(gradient) @ flatten(direction))
        if abs(got - want) > WRONG_RTOL * max(1.0, abs(want)):
            return wrong(order, "jvp", _show(want), _show(got))
        return None

    def check_fewer(self, order, target, args, cotangent, gradient):
        """None when `grad` with respect to all the arguments but one, chosen at random,
        gives the gradient, checked already, of those: the other is then held constant
        (`api.held_constant`), also in the calls resolved at run time. Else the outcome."""
        if cotangent is not None or len(args) < 2:
            return None
        left_out = int(self.rng.integers(len(args)))
        positions = tuple(i for i in range(len(args)) if i != left_out)
        given = unflatten(args, flatten(args))
        try:
            fewer = pullback.grad(target, argnums=positions)(*given)
        except Exception as error:  # noqa: BLE001  (whatever pullback raises is an outcome)
            outcome = raised(error, order, self.names)
            outcome.signature = f"grad of fewer arguments: {outcome.signature}"
            return outcome
        got = flatten(tuple(fewer))
        want = flatten(tuple(gradient[i] for i in positions))
        if got.shape != want.shape or np.max(np.abs(got - want), initial=0.0) > WRONG_RTOL * max(
                1.0, np.max(np.abs(want), initial=0.0)):
            return wrong(order, f"gradient without argument {left_out}", _show(want), _show(got))
        return None

    def compare(self, order, args, given, value, expected, gradient):
        """A wrong outcome if the value, the arguments or the gradient's structure are wrong."""
        if describe(value) != describe(expected):
            return wrong(order, "value type", describe(expected), describe(value))
        got, want = flatten(value), flatten(expected)
        if np.max(np.abs(got - want), initial=0.0) > VALUE_RTOL * max(
                1.0, np.max(np.abs(want), initial=0.0)):
            return wrong(order, "value", _show(expected), _show(value))
        if describe(given) != describe(args) or np.any(flatten(given) != flatten(args)):
            return wrong(order, "argument changed by pullback", literal(args), literal(given))
        if describe(gradient) != describe(args):
            return wrong(order, "gradient type", describe(args), describe(gradient))
        return None

    def estimates(self, order, reference, reference_args, cotangent):
        """Finite-difference gradients of `<cotangent, reference(x)>` at several steps, and
        their Richardson extrapolation; an Outcome (skipped, or what order - 1 raised at a
        nearby point) when they cannot be had or disagree."""
        theta = flatten(reference_args)

        def objective(point):
            out = reference(*unflatten(reference_args, point))
            return float(flatten(out) @ flatten(cotangent)) if cotangent is not None \
                else float(out)

        try:
            center = objective(theta)
            values = {h: np.array([(objective(theta + h * e), objective(theta - h * e))
                                   for e in np.eye(theta.size)]).reshape(-1, 2) for h in STEPS}
        except Exception as error:  # noqa: BLE001
            if order == 1:
                return Outcome("skipped", order, "raises near the point", str(error))
            return raised(error, order - 1, self.names, "at a nearby point: ")
        if kinked(center, {h: (v[:, 0], v[:, 1]) for h, v in values.items()}):
            return Outcome("skipped", order, "a kink at the point")
        columns = {h: (v[:, 0] - v[:, 1]) / (2 * h) for h, v in values.items()}
        estimates = [np.array(columns[h]) for h in (STEPS[0], STEPS[2], STEPS[3])]
        estimates.append((4 * np.array(columns[STEPS[1]]) - np.array(columns[STEPS[0]])) / 3)
        if not all(np.all(np.isfinite(e)) for e in estimates):
            return Outcome("skipped", order, "not finite near the point")
        scale = max(1.0, max(np.max(np.abs(e), initial=0.0) for e in estimates))
        spread = max(np.max(np.abs(a - b), initial=0.0) for a in estimates for b in estimates)
        if spread > FD_RTOL * scale:
            return Outcome("skipped", order, "not smooth at the point",
                           f"finite differences: {[_show(e) for e in estimates]}")
        return estimates


def _show(x):
    """`x` printed with 8 significant digits, on one line."""
    return literal(x, digits=8).replace("np.array(", "array(")


def differentiate(target, args, cotangent):
    """`(value, gradient)` by pullback: `grad` w.r.t. every argument when `cotangent` is None,
    else `vjp` with `cotangent`."""
    if cotangent is None:
        positions = tuple(range(len(args)))
        value, gradient = pullback.value_and_grad(target, argnums=positions)(*args)
        return value, tuple(gradient)
    value, back = pullback.vjp(target, *args)
    return value, tuple(back(cotangent))


def level(function, cotangent, count):
    """The function `x -> derivative of function at x` (its gradient when `cotangent` is None,
    else its vjp with `cotangent`), whose derivative is `function`'s next order."""
    if cotangent is None:
        positions = tuple(range(count))

        def gradient(*xs):
            return pullback.grad(function, argnums=positions)(*xs)

        return gradient

    def pulled_back(*xs):
        return pullback.vjp(function, *xs)[1](cotangent)

    return pulled_back
