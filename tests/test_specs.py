"""Each primitive's spec (`rules.registry.Spec`) checked against what the primitive does.

The facts are what the alias analysis, the symbolic zero and the loop sums rely on,
so a missing or wrong fact is a wrong gradient: these tests call every primitive
with a spec on sample arguments and compare.
"""

import importlib
import importlib.util
import inspect
import warnings

import numpy as np
import pytest

import pullback
from pullback.compiler.tangent import rules as tangent_rules
from pullback.rules import SCIPY_FAMILIES, registry
from pullback.runtime import cotangents, structures
from pullback.runtime.cotangents import ZERO

rng = np.random.default_rng(3)

if importlib.util.find_spec("scipy") is not None:  # SciPy's rules register once it is imported
    for library in SCIPY_FAMILIES.values():
        importlib.import_module(library)


def sample_calls(x):
    """Argument tuples to try, in order, for a primitive of one array `x` and options."""
    return [(x,), (x, 0), (x, 1), (x, (4, 3)), (x, 0, 1), (x, slice(0, 2))]


def first_call(fn, x):
    """`(args, result)` of the first sample call `fn` accepts, or None."""
    for args in sample_calls(x):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return args, fn(*args)
        except Exception:  # noqa: BLE001 (any refusal of these arguments: try the next)
            continue
    return None


def with_templates():
    return [spec for spec in registry.specs()
            if spec.template is not None and callable(spec.primitive)]


def shares(result, x):
    if isinstance(result, np.ndarray):
        return np.shares_memory(result, x)
    if isinstance(result, (list, tuple)):
        return any(shares(item, x) for item in result)
    return False


@pytest.mark.parametrize("spec", with_templates(), ids=lambda s: registry.describe(s.primitive))
def test_a_result_sharing_memory_is_declared_a_view(spec):
    """The alias analysis takes a result whose kind is named ("array", "elementwise")
    for a new value unless the spec says `view`: then an update of one would be
    missed by the other."""
    x = np.arange(12.0).reshape(3, 4)
    called = first_call(spec.primitive, x)
    if called is None or not isinstance(spec.result, str):
        return
    assert spec.view or not shares(called[1], x), "it returns a view: declare view=True"


_CONTAINER_MAPS = ("structures", "mutation", "records", "iteration", "calls", "loops", "tangents")
LINEAR = [spec for spec in with_templates() if spec.linear and getattr(
    spec.primitive, "__module__", "").removeprefix("pullback.runtime.") not in _CONTAINER_MAPS]
"""Linear primitives of arrays; the maps between containers (`repack`, `unappended`...),
linear too, are checked with their transposes (`tests/test_helpers.py`)."""


@pytest.mark.parametrize("spec", LINEAR, ids=lambda s: registry.describe(s.primitive))
def test_a_linear_primitive_is_linear(spec):
    x, y = rng.standard_normal((2, 3, 4))
    called = first_call(spec.primitive, x)
    if called is None:
        return
    options = called[0][1:]
    fn = spec.primitive
    combined = fn(2.0 * x - 3.0 * y, *options)
    assert np.allclose(combined, 2.0 * np.asarray(fn(x, *options))
                       - 3.0 * np.asarray(fn(y, *options)))


ABSORBING = [spec for spec in with_templates()
             if spec.absorbing is True and isinstance(spec.primitive, np.ufunc | type(np.sum))]


@pytest.mark.parametrize("spec", ABSORBING, ids=lambda s: registry.describe(s.primitive))
def test_the_zero_passes_through_an_absorbing_primitive(spec):
    x = rng.standard_normal((3, 4))
    calls = [(ZERO,), (ZERO, x), (x, ZERO), (ZERO, 0), (ZERO, 0, 1), ("ij->ji", ZERO)]
    for args in calls:
        try:
            result = spec.primitive(*args)
        except TypeError:
            continue
        assert result is ZERO
        return
    pytest.fail("no sample call took the zero")


def test_a_division_absorbs_the_zero_in_its_numerator_only():
    x = np.ones(3)
    assert np.divide(ZERO, x) is ZERO
    with pytest.raises(TypeError, match="not linear"):
        np.divide(x, ZERO)


def _steps(make, count=3):
    return [make() for _ in range(count)]


SUMMED_SAMPLES = {
    cotangents.matmul_left: lambda: (rng.standard_normal((2, 3)), rng.standard_normal((2, 4)),
                                     rng.standard_normal((4, 3))),
    cotangents.matmul_right: lambda: (rng.standard_normal((2, 3)), rng.standard_normal((2, 4)),
                                      rng.standard_normal((4, 3))),
    cotangents.dot_left: lambda: (rng.standard_normal(3), rng.standard_normal(4),
                                  rng.standard_normal((4, 3))),
    cotangents.dot_right: lambda: (rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 4)),
                                   rng.standard_normal((3, 4, 5))),
    cotangents.unbroadcast: lambda: (rng.standard_normal((2, 3)), rng.standard_normal(3)),
    structures.unindex: lambda: (rng.standard_normal(3), rng.standard_normal((4, 3)),
                                 int(rng.integers(4))),
}


def test_every_summed_helper_has_a_sample():
    assert {spec.primitive for spec in registry.specs() if spec.summed} == set(SUMMED_SAMPLES)


@pytest.mark.parametrize("helper", SUMMED_SAMPLES, ids=lambda f: f.__name__)
def test_a_loops_sum_is_the_sum_of_its_steps(helper):
    summed, varying = registry.spec_of(helper).summed
    fixed = SUMMED_SAMPLES[helper]()
    steps = [[value if i in varying else fixed[i] for i, value in enumerate(args)]
             for args in _steps(SUMMED_SAMPLES[helper])]
    by_step = sum(np.asarray(helper(*args)) for args in steps)
    lists = [[step[i] for step in steps] if i in varying else fixed[i]
             for i in range(len(fixed))]
    assert np.allclose(np.asarray(summed(*lists)), by_step)


IDENTITY_SAMPLES = {  # a call the identity applies to, and the argument it equals
    cotangents.unbroadcast: ((rng.standard_normal((2, 3)), rng.standard_normal((2, 3))), 0),
    cotangents.unreduce: ((1.5, 2.5), 0),
    cotangents.select: ((True, rng.standard_normal(3)), 1),
}


def test_every_identity_has_a_sample():
    assert {spec.primitive for spec in registry.specs() if spec.identity} == set(
        IDENTITY_SAMPLES)


@pytest.mark.parametrize("helper", IDENTITY_SAMPLES, ids=lambda f: f.__name__)
def test_an_identity_is_one(helper):
    args, position = IDENTITY_SAMPLES[helper]
    assert registry.spec_of(helper).identity[0] == position
    assert np.array_equal(helper(*args), args[position])


def test_an_unknown_fact_is_refused():
    with pytest.raises(TypeError, match="unknown facts of a primitive: \\['linearr'\\]"):
        pullback.adjoint(np.sinc, linearr=True)(lambda z, x: None)
    with pytest.raises(ValueError, match="shift must be one of"):
        registry.declare(np.sinc, shift="sideways")
    assert registry.spec_of(np.sinc) is None or registry.spec_of(np.sinc).shift is None


def test_declare_adds_to_a_spec():
    spec = registry.spec_of(np.asarray)
    assert spec.template is not None and spec.view and not spec.copy
    assert registry.spec_of(np.array).copy and not registry.spec_of(np.array).view


@pytest.mark.parametrize("spec", with_templates(), ids=lambda s: registry.describe(s.primitive))
def test_every_primitive_with_a_reverse_rule_has_a_tangent_rule(spec):
    """Forward mode reads its rule from the same spec: derived from the facts or the
    reverse rule, or written in the template (`t[z] = ...`)."""
    assert tangent_rules.rule_of(spec) is not None, (
        f"{registry.describe(spec.primitive)}: write its tangent rule, t[z] = ..., in "
        f"{spec.template.__module__}.{spec.template.__name__}")


def _positional_only_with_defaults(spec):
    """The template's parameters with a default that the primitive takes positionally
    only but the template would pass by keyword; None when the primitive's signature is
    not known."""
    try:
        primitive = list(inspect.signature(spec.primitive).parameters.values())
    except (TypeError, ValueError):
        return None
    template = list(inspect.signature(spec.template).parameters.values())[1:]
    return [q.name for p, q in zip(primitive, template)
            if p.kind is p.POSITIONAL_ONLY and q.kind is not q.POSITIONAL_ONLY
            and q.default is not q.empty]


@pytest.mark.parametrize("spec", with_templates(), ids=lambda s: registry.describe(s.primitive))
def test_a_template_passes_positional_only_parameters_by_position(spec):
    """A call through a value (`map(float, xs)`, `f = dict.get`) runs the primitive
    with the parameters its template has defaults for passed by keyword: `float(x=...)`
    raised a TypeError. A parameter the primitive takes by position only is so in the
    template too (`def to_float(z, x=0.0, /)`)."""
    assert not _positional_only_with_defaults(spec)


def test_a_linear_primitives_tangent_is_itself():
    """np.flip is linear: its tangent applies it to the tangent, with the call's own
    options, and no template line says so."""
    rule = tangent_rules.rule_of(registry.spec_of(np.flip))
    assert rule.how == "applied" and rule.params == ("m",)
