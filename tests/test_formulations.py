"""Every formulation of a benchmark workload (a module of benchmarks/workloads with a `BASE`)
computes its base's objective, and pullback's gradient of it is the base's gradient.

A formulation's `base_arguments(*args)` gives the base objective's arguments holding the same
numbers as its own. It only moves numbers around (slices, transposes, concatenates), so applied
to the formulation's arguments with the gradients in the places of its `WRT` arguments it gives
the base's arguments with the base's gradients in the places of the base's `WRT`.
"""

import functools
import importlib
import os
import pkgutil
import sys

import numpy as np
import pytest

import pullback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import workloads  # noqa: E402

FORMULATIONS = {}
for info in pkgutil.iter_modules(workloads.__path__):
    module = importlib.import_module(f"workloads.{info.name}")
    if hasattr(module, "BASE"):
        FORMULATIONS[info.name] = module
BASES = {name: importlib.import_module(f"workloads.{name}") for name in workloads.NAMES}
sys.path.pop(0)

TINY = {  # shaped like each base's SIZES entries, small enough for a quick test
    "scalar_loop": 50,
    "gmm": (3, 4, 20),
    "ba": (3, 12, 40),
    "lstm": (4, 3, 2),
    "mlp": 4,
    "treelstm": (4, 1, 4, 4),  # one of its trees is a single leaf
}
SEED = 0


def arguments(name):
    """The formulation's arguments and its base's, from the same seed."""
    module = FORMULATIONS[name]
    size = TINY[module.BASE]
    return (module.inputs(size, np.random.default_rng(SEED)),
            BASES[module.BASE].inputs(size, np.random.default_rng(SEED)))


@functools.cache
def base_gradient(base_name):
    base = BASES[base_name]
    args = base.inputs(TINY[base_name], np.random.default_rng(SEED))
    return pullback.grad(base.objective, argnums=base.WRT)(*args)


def assert_same(value, expected, path="arguments"):
    """`value` holds the numbers of `expected`: the same nesting of tuples and lists, arrays
    equal to ~1e-10 of their largest entry."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(value, (tuple, list)) and len(value) == len(expected), path
        for i, (v, e) in enumerate(zip(value, expected)):
            assert_same(v, e, f"{path}[{i}]")
    elif isinstance(expected, (int, np.integer)) or (
            isinstance(expected, np.ndarray) and expected.dtype.kind in "iub"):
        np.testing.assert_array_equal(value, expected, err_msg=path)
    else:
        expected = np.asarray(expected, dtype=float)
        scale = np.max(np.abs(expected), initial=0.0)
        np.testing.assert_allclose(np.asarray(value, dtype=float), expected, rtol=1e-9,
                                   atol=1e-10 * scale, err_msg=path)


def test_discovered():
    assert len(FORMULATIONS) >= 2 * len(workloads.NAMES)
    for name, module in FORMULATIONS.items():
        assert module.BASE in BASES, name
        assert module.SIZES is BASES[module.BASE].SIZES, name
        assert module.__doc__, name


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_same_numbers(name):
    """The formulation's arguments hold the base's numbers, and its objective is the base's."""
    module = FORMULATIONS[name]
    args, base_args = arguments(name)
    assert_same(module.base_arguments(*args), base_args)
    value = module.objective(*args)
    expected = BASES[module.BASE].objective(*base_args)
    assert abs(value - expected) <= 1e-10 * abs(expected)


@pytest.mark.parametrize("name", sorted(FORMULATIONS))
def test_gradient(name):
    """pullback's gradient of the formulation, moved into the base's arguments, is the
    base's gradient."""
    module = FORMULATIONS[name]
    base = BASES[module.BASE]
    args, _ = arguments(name)
    gradient = pullback.grad(module.objective, argnums=module.WRT)(*args)
    with_gradients = list(args)
    for position, g in zip(module.WRT, gradient):
        with_gradients[position] = g
    moved = module.base_arguments(*with_gradients)
    assert_same([moved[position] for position in base.WRT], list(base_gradient(module.BASE)),
                "gradient")
