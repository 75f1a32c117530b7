"""scipy.stats's distributions, differentiated through their Python versions
(`pullback/rules/scipy_stats.py`): values equal to SciPy's, derivatives matching finite
differences at orders 1 and 2, called on the distribution and on a frozen one."""

import numpy as np
import pytest

import pullback
from pullback.testing import check_grads

stats = pytest.importorskip("scipy.stats")

REAL = np.array([-1.3, 0.2, 0.9])
POSITIVE = np.array([0.4, 1.1, 2.6])
UNIT = np.array([0.15, 0.4, 0.8])
LOC_SCALE = (REAL, 0.3, 1.7)

# (name, a user's function calling a method of the distribution, one calling it on a frozen
# distribution, their arguments); called as they are, they run SciPy
CASES = [
    ("norm.logpdf", lambda x, m, s: stats.norm.logpdf(x, m, s),
     lambda x, m, s: stats.norm(m, s).logpdf(x), LOC_SCALE),
    ("norm.logpdf_broadcast", lambda x, m, s: stats.norm.logpdf(x[:, None], m, s),
     lambda x, m, s: stats.norm(m, s).logpdf(x[:, None]), (REAL, np.array([0.1, -0.4]), 1.7)),
    ("norm.pdf", lambda x, m, s: stats.norm.pdf(x, loc=m, scale=s),
     lambda x, m, s: stats.norm(loc=m, scale=s).pdf(x), LOC_SCALE),
    ("norm.cdf", lambda x, m, s: stats.norm.cdf(x, m, s),
     lambda x, m, s: stats.norm(m, s).cdf(x), LOC_SCALE),
    ("norm.logcdf", lambda x, m, s: stats.norm.logcdf(x, m, s),
     lambda x, m, s: stats.norm(m, s).logcdf(x), LOC_SCALE),
    ("norm.sf", lambda x, m, s: stats.norm.sf(x, m, s),
     lambda x, m, s: stats.norm(m, s).sf(x), LOC_SCALE),
    ("norm.logsf", lambda x, m, s: stats.norm.logsf(x, m, s),
     lambda x, m, s: stats.norm(m, s).logsf(x), LOC_SCALE),
    ("t.logpdf", lambda x, df, m, s: stats.t.logpdf(x, df, m, s),
     lambda x, df, m, s: stats.t(df, m, s).logpdf(x), (REAL, 3.5, 0.3, 1.7)),
    ("t.pdf", lambda x, df, m, s: stats.t.pdf(x, df, loc=m, scale=s),
     lambda x, df, m, s: stats.t(df, loc=m, scale=s).pdf(x), (REAL, 3.5, 0.3, 1.7)),
    ("t.cdf", lambda x, m, s: stats.t.cdf(x, 4, m, s),
     lambda x, m, s: stats.t(4, m, s).cdf(x), (REAL, 0.3, 1.7)),
    ("t.logcdf", lambda x, m, s: stats.t.logcdf(x, 4, m, s),
     lambda x, m, s: stats.t(4, m, s).logcdf(x), (REAL, 0.3, 1.7)),
    ("t.sf", lambda x, m, s: stats.t.sf(x, 4, m, s),
     lambda x, m, s: stats.t(4, m, s).sf(x), (REAL, 0.3, 1.7)),
    ("t.logsf", lambda x, m, s: stats.t.logsf(x, 4, m, s),
     lambda x, m, s: stats.t(4, m, s).logsf(x), (REAL, 0.3, 1.7)),
    ("gamma.logpdf", lambda x, a, s: stats.gamma.logpdf(x, a, scale=s),
     lambda x, a, s: stats.gamma(a, scale=s).logpdf(x), (POSITIVE, 2.5, 1.3)),
    ("gamma.pdf", lambda x, a, m, s: stats.gamma.pdf(x, a, m, s),
     lambda x, a, m, s: stats.gamma(a, m, s).pdf(x), (POSITIVE, 2.5, -0.2, 1.3)),
    ("gamma.cdf", lambda x, m, s: stats.gamma.cdf(x, 3, m, s),
     lambda x, m, s: stats.gamma(3, m, s).cdf(x), (POSITIVE, -0.2, 1.3)),
    ("gamma.logcdf", lambda x, s: stats.gamma.logcdf(x, 3, scale=s),
     lambda x, s: stats.gamma(3, scale=s).logcdf(x), (POSITIVE, 1.3)),
    ("gamma.sf", lambda x, m, s: stats.gamma.sf(x, 3, m, s),
     lambda x, m, s: stats.gamma(3, m, s).sf(x), (POSITIVE, -0.2, 1.3)),
    ("gamma.logsf", lambda x, s: stats.gamma.logsf(x, 3, scale=s),
     lambda x, s: stats.gamma(3, scale=s).logsf(x), (POSITIVE, 1.3)),
    ("beta.logpdf", lambda x, a, b: stats.beta.logpdf(x, a, b),
     lambda x, a, b: stats.beta(a, b).logpdf(x), (UNIT, 2.5, 1.5)),
    ("beta.pdf", lambda x, a, b, s: stats.beta.pdf(x, a, b, scale=s),
     lambda x, a, b, s: stats.beta(a, b, scale=s).pdf(x), (UNIT, 2.5, 1.5, 1.2)),
    ("beta.cdf", lambda x: stats.beta.cdf(x, 3, 2),
     lambda x: stats.beta(3, 2).cdf(x), (UNIT,)),
    ("beta.logcdf", lambda x: stats.beta.logcdf(x, 3, 2),
     lambda x: stats.beta(3, 2).logcdf(x), (UNIT,)),
    ("beta.sf", lambda x: stats.beta.sf(x, 3, 2),
     lambda x: stats.beta(3, 2).sf(x), (UNIT,)),
    ("beta.logsf", lambda x: stats.beta.logsf(x, 3, 2),
     lambda x: stats.beta(3, 2).logsf(x), (UNIT,)),
    ("expon.logpdf", lambda x, m, s: stats.expon.logpdf(x, m, s),
     lambda x, m, s: stats.expon(m, s).logpdf(x), (POSITIVE, -0.2, 1.3)),
    ("expon.pdf", lambda x, s: stats.expon.pdf(x, scale=s),
     lambda x, s: stats.expon(scale=s).pdf(x), (POSITIVE, 1.3)),
    ("expon.cdf", lambda x, m, s: stats.expon.cdf(x, m, s),
     lambda x, m, s: stats.expon(m, s).cdf(x), (POSITIVE, -0.2, 1.3)),
    ("expon.logcdf", lambda x, m, s: stats.expon.logcdf(x, m, s),
     lambda x, m, s: stats.expon(m, s).logcdf(x), (POSITIVE, -0.2, 1.3)),
    ("expon.sf", lambda x, m, s: stats.expon.sf(x, m, s),
     lambda x, m, s: stats.expon(m, s).sf(x), (POSITIVE, -0.2, 1.3)),
    ("expon.logsf", lambda x, m, s: stats.expon.logsf(x, m, s),
     lambda x, m, s: stats.expon(m, s).logsf(x), (POSITIVE, -0.2, 1.3)),
    ("laplace.logpdf", lambda x, m, s: stats.laplace.logpdf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).logpdf(x), LOC_SCALE),
    ("laplace.pdf", lambda x, m, s: stats.laplace.pdf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).pdf(x), LOC_SCALE),
    ("laplace.cdf", lambda x, m, s: stats.laplace.cdf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).cdf(x), LOC_SCALE),
    ("laplace.logcdf", lambda x, m, s: stats.laplace.logcdf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).logcdf(x), LOC_SCALE),
    ("laplace.sf", lambda x, m, s: stats.laplace.sf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).sf(x), LOC_SCALE),
    ("laplace.logsf", lambda x, m, s: stats.laplace.logsf(x, m, s),
     lambda x, m, s: stats.laplace(m, s).logsf(x), LOC_SCALE),
    ("logistic.logpdf", lambda x, m, s: stats.logistic.logpdf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).logpdf(x), LOC_SCALE),
    ("logistic.pdf", lambda x, m, s: stats.logistic.pdf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).pdf(x), LOC_SCALE),
    ("logistic.cdf", lambda x, m, s: stats.logistic.cdf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).cdf(x), LOC_SCALE),
    ("logistic.logcdf", lambda x, m, s: stats.logistic.logcdf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).logcdf(x), LOC_SCALE),
    ("logistic.sf", lambda x, m, s: stats.logistic.sf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).sf(x), LOC_SCALE),
    ("logistic.logsf", lambda x, m, s: stats.logistic.logsf(x, m, s),
     lambda x, m, s: stats.logistic(m, s).logsf(x), LOC_SCALE),
    ("poisson.logpmf", lambda mu: stats.poisson.logpmf(np.arange(4), mu),
     lambda mu: stats.poisson(mu).logpmf(np.arange(4)), (np.array([0.7, 2.5, 1.1, 3.0]),)),
    ("poisson.pmf", lambda mu: stats.poisson.pmf(3, mu, loc=1),
     lambda mu: stats.poisson(mu, loc=1).pmf(3), (2.5,)),
    ("binom.logpmf", lambda p: stats.binom.logpmf(np.arange(5), 6, p),
     lambda p: stats.binom(6, p).logpmf(np.arange(5)), (0.35,)),
    ("binom.pmf", lambda p: stats.binom.pmf(2, 6, p),
     lambda p: stats.binom(6, p).pmf(2), (np.array([0.2, 0.6]),)),
]

FACTOR = np.array([[1.2, 0.0, 0.0], [0.3, 0.9, 0.0], [0.1, -0.2, 0.8]])  # cov = f @ f.T:
# SciPy reads one triangle of a covariance, so it is differentiated as a symmetric matrix
POINTS = np.array([[0.2, -0.5, 1.0], [1.1, 0.3, -0.4]])
MEAN = np.array([0.1, -0.2, 0.3])
ALPHA = np.array([1.5, 2.5, 3.0])
SIMPLEX = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])  # two points, components along rows
CASES += [
    ("multivariate_normal.logpdf",
     lambda x, m, f: stats.multivariate_normal.logpdf(x, m, f @ f.T),
     lambda x, m, f: stats.multivariate_normal(m, f @ f.T).logpdf(x), (POINTS, MEAN, FACTOR)),
    ("multivariate_normal.logpdf_one_point",
     lambda x, m, c: stats.multivariate_normal.logpdf(x, mean=m, cov=c),
     lambda x, m, c: stats.multivariate_normal(mean=m, cov=c).logpdf(x),
     (POINTS[0], MEAN, np.array([1.5, 1.0, 0.8]))),
    ("multivariate_normal.pdf", lambda x, f: stats.multivariate_normal.pdf(x, cov=f @ f.T),
     lambda x, f: stats.multivariate_normal(cov=f @ f.T).pdf(x), (POINTS, FACTOR)),
    ("dirichlet.logpdf", lambda a: stats.dirichlet.logpdf(SIMPLEX, a),
     lambda a: stats.dirichlet(a).logpdf(SIMPLEX), (ALPHA,)),
    ("dirichlet.pdf", lambda a: stats.dirichlet.pdf(SIMPLEX[:, 0], a),
     lambda a: stats.dirichlet(a).pdf(SIMPLEX[:, 0]), (ALPHA,)),
    ("dirichlet.logpdf_implied_last", lambda x, a: stats.dirichlet.logpdf(x, a),
     lambda x, a: stats.dirichlet(a).logpdf(x), (SIMPLEX[:2], ALPHA)),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name, on_family, on_frozen, args", CASES, ids=IDS)
def test_values_are_scipys(name, on_family, on_frozen, args):
    """What the Python versions give, in the forward pass, is what SciPy gives."""
    expected = on_family(*args)
    np.testing.assert_allclose(on_frozen(*args), expected, rtol=1e-15)
    for fn in (on_family, on_frozen):
        value, _ = pullback.vjp(fn, *args)
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("frozen", [False, True], ids=["family", "frozen"])
@pytest.mark.parametrize("name, on_family, on_frozen, args", CASES, ids=IDS)
def test_derivatives_at_orders_one_and_two(name, on_family, on_frozen, args, frozen):
    check_grads(on_frozen if frozen else on_family, args, order=2)


def likelihood(mu, sigma, data):
    return np.sum(stats.norm.logpdf(data, mu, sigma)) + stats.gamma.logpdf(sigma, 2.0)


def test_a_distributions_method_is_resolved_when_the_function_is_transformed():
    """`norm.logpdf` is compiled with its caller, and generated code calls its forward."""
    code = pullback.source(likelihood, 0.2, 1.3, REAL)
    assert "forward(" not in code
    assert "norm_logpdf_fwd(" in code and "gamma_logpdf_fwd(" in code


def test_a_distribution_read_from_a_variable_is_resolved_when_it_runs():
    def through_a_variable(x, s):
        family = stats.norm
        return np.sum(family.logpdf(x, scale=s)) + np.sum(family(0.0, s).cdf(x))

    check_grads(through_a_variable, (REAL, 1.3), order=2)


def student_cdf_in_df(x, df):
    return stats.t.cdf(x, df)


def gamma_cdf_in_a(x, a):
    return stats.gamma(a).cdf(x)


def beta_sf_in_b(x, b):
    return stats.beta.sf(x, 2.0, b)


def normal_cdf(x):
    return stats.multivariate_normal.cdf(x, np.zeros(2))


@pytest.mark.parametrize("fn, args, message", [
    (student_cdf_in_df, (0.3, 4.0), "stdtr is not differentiable in its argument df: its "
                                     "derivative in its parameters is not elementary"),
    (gamma_cdf_in_a, (0.3, 2.0), "gammainc is not differentiable in its argument a"),
    (beta_sf_in_b, (0.3, 2.0), "betaincc is not differentiable in its argument b"),
    (normal_cdf, (np.array([0.1, 0.2]),), "The function called here cannot be "
                                          "differentiated. Inside it, at scipy/stats/"),
], ids=["t.cdf", "gamma.cdf", "beta.sf", "multivariate_normal.cdf"])
def test_what_has_no_derivative_is_refused_at_the_users_line(fn, args, message):
    with pytest.raises(pullback.TransformError) as caught:
        pullback.grad(fn, argnums=len(args) - 1)(*args)
    error = caught.value
    assert (error.filename, error.lineno) == (__file__, fn.__code__.co_firstlineno + 1)
    assert message in str(error)


def test_the_python_version_is_found_for_a_fresh_bound_method():
    """Bound methods are equal when their objects and functions are: the version
    registered for `stats.norm.logpdf` is found for the method read again."""
    from pullback.rules import registry, scipy_stats

    method = stats.norm.logpdf
    assert method is not stats.norm.logpdf
    assert registry.implementation_of(method) is scipy_stats.norm_logpdf
    assert registry.method_implementation(stats.norm, "cdf") is scipy_stats.norm_cdf
    assert registry.method_implementation(np.zeros(2), "sum") is None


PRIOR = stats.norm(0.5, 2.0)


def under_a_prior_made_by_scipy(x, s):
    return np.sum(PRIOR.logpdf(x) + stats.gamma(3, scale=s).cdf(x + 2.0))


def test_a_frozen_distribution_made_by_scipy_runs_its_python_versions():
    """SciPy's frozen distribution calls the methods of a copy of its distribution
    object, whose versions are found by its class."""
    check_grads(under_a_prior_made_by_scipy, (REAL, 1.3), order=2)
