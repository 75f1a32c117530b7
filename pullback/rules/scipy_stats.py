"""scipy.stats's distributions, as Python versions pullback differentiates in their place
(`registry.implemented_by`), registered when the program imports scipy.stats
(`pullback/rules/__init__.py`, `SCIPY_FAMILIES`).

A distribution's methods (`scipy.stats.norm.logpdf`) are bound methods of one object;
each has a version here written with NumPy and `scipy.special`, taking SciPy's
arguments (`loc` and `scale` too, positional or by keyword, broadcast like SciPy's)
and returning SciPy's values. A frozen distribution (`scipy.stats.norm(loc, scale)`)
is a `Frozen` record whose methods call these versions.

Not differentiated: a cdf in the parameters of an incomplete gamma or beta function
(`t`'s `df`, `gamma`'s `a`, `beta`'s `a` and `b`), whose derivatives there are not
elementary, are refused (`Spec.refused` of the rules in `scipy_special`); methods
without a version here (`ppf`, `rvs`, `entropy`, a discrete distribution's cdf) and
frozen distributions made outside the differentiated function have no derivative.
"""

import dataclasses

import numpy as np
from scipy import special, stats

from pullback.compiler.analysis.kinds import ANY
from pullback.rules.registry import adjoint, d, implemented_by
from pullback.runtime.records import refield, unfield

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


# -- frozen distributions --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Frozen:
    """A frozen distribution (`scipy.stats.norm(loc, scale)`) as pullback differentiates
    it: the family's methods at fixed parameters, which run their Python versions.

    Attributes:
      family: the distribution (`scipy.stats.norm`).
      parameters: its parameters, in the order its methods take them after `x`.
    """

    family: object
    parameters: tuple

    def logpdf(self, x):
        """`family.logpdf(x, *parameters)`."""
        return self.family.logpdf(x, *self.parameters)

    def pdf(self, x):
        """`family.pdf(x, *parameters)`."""
        return self.family.pdf(x, *self.parameters)

    def cdf(self, x):
        """`family.cdf(x, *parameters)`."""
        return self.family.cdf(x, *self.parameters)

    def logcdf(self, x):
        """`family.logcdf(x, *parameters)`."""
        return self.family.logcdf(x, *self.parameters)

    def sf(self, x):
        """`family.sf(x, *parameters)`."""
        return self.family.sf(x, *self.parameters)

    def logsf(self, x):
        """`family.logsf(x, *parameters)`."""
        return self.family.logsf(x, *self.parameters)

    def logpmf(self, k):
        """`family.logpmf(k, *parameters)`."""
        return self.family.logpmf(k, *self.parameters)

    def pmf(self, k):
        """`family.pmf(k, *parameters)`."""
        return self.family.pmf(k, *self.parameters)


@adjoint(Frozen, result=lambda family, parameters: ANY)
def frozen(z, family, parameters):
    d[parameters] = refield(d[z], z, "parameters")
    t[z] = unfield(t[parameters], z, "parameters")


# -- what the families share ------------------------------------------------------------


def standardized(x, loc, scale):
    """`x` in the units of the standard distribution."""
    return (x - loc) / scale


def within(z, lower, upper, inner):
    """Whether `z` is in the support `[lower, upper]`, and `z` there, `inner` (a point
    inside) elsewhere, so that nothing flows back from outside the support."""
    inside = (z >= lower) & (z <= upper)
    return inside, np.where(inside, z, inner)


def density(log_density, inside):
    """A log-density, `-inf` outside the support."""
    return np.where(inside, log_density, -np.inf)


# -- norm ----------------------------------------------------------------------------


@implemented_by(stats.norm)
def norm(loc=0.0, scale=1.0):
    """`scipy.stats.norm(loc, scale)`."""
    return Frozen(stats.norm, (loc, scale))


@implemented_by(stats.norm.logpdf)
def norm_logpdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.logpdf`."""
    z = standardized(x, loc, scale)
    return -z ** 2 / 2.0 - _LOG_SQRT_2PI - np.log(scale)


@implemented_by(stats.norm.pdf)
def norm_pdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.pdf`."""
    return np.exp(norm_logpdf(x, loc, scale))


@implemented_by(stats.norm.cdf)
def norm_cdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.cdf`."""
    return special.ndtr(standardized(x, loc, scale))


@implemented_by(stats.norm.logcdf)
def norm_logcdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.logcdf`."""
    return special.log_ndtr(standardized(x, loc, scale))


@implemented_by(stats.norm.sf)
def norm_sf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.sf`."""
    return special.ndtr(-standardized(x, loc, scale))


@implemented_by(stats.norm.logsf)
def norm_logsf(x, loc=0.0, scale=1.0):
    """`scipy.stats.norm.logsf`."""
    return special.log_ndtr(-standardized(x, loc, scale))


# -- t -------------------------------------------------------------------------------


@implemented_by(stats.t)
def t(df, loc=0.0, scale=1.0):
    """`scipy.stats.t(df, loc, scale)`."""
    return Frozen(stats.t, (df, loc, scale))


@implemented_by(stats.t.logpdf)
def t_logpdf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.logpdf` (for a finite `df`)."""
    z = standardized(x, loc, scale)
    return (np.log(special.poch(0.5 * df, 0.5)) - 0.5 * (np.log(df) + np.log(np.pi))
            - (df + 1.0) / 2.0 * np.log1p(z * z / df) - np.log(scale))


@implemented_by(stats.t.pdf)
def t_pdf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.pdf`."""
    return np.exp(t_logpdf(x, df, loc, scale))


@implemented_by(stats.t.cdf)
def t_cdf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.cdf`: differentiable in `x`, `loc` and `scale`."""
    return special.stdtr(df, standardized(x, loc, scale))


@implemented_by(stats.t.logcdf)
def t_logcdf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.logcdf`."""
    return np.log(t_cdf(x, df, loc, scale))


@implemented_by(stats.t.sf)
def t_sf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.sf`."""
    return special.stdtr(df, -standardized(x, loc, scale))


@implemented_by(stats.t.logsf)
def t_logsf(x, df, loc=0.0, scale=1.0):
    """`scipy.stats.t.logsf`."""
    return np.log(t_sf(x, df, loc, scale))


# -- gamma ---------------------------------------------------------------------------


@implemented_by(stats.gamma)
def gamma(a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma(a, loc, scale)`."""
    return Frozen(stats.gamma, (a, loc, scale))


@implemented_by(stats.gamma.logpdf)
def gamma_logpdf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.logpdf`."""
    inside, z = within(standardized(x, loc, scale), 0.0, np.inf, 1.0)
    return density(special.xlogy(a - 1.0, z) - z - special.gammaln(a) - np.log(scale), inside)


@implemented_by(stats.gamma.pdf)
def gamma_pdf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.pdf`."""
    return np.exp(gamma_logpdf(x, a, loc, scale))


@implemented_by(stats.gamma.cdf)
def gamma_cdf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.cdf`: differentiable in `x`, `loc` and `scale`."""
    return special.gammainc(a, np.maximum(standardized(x, loc, scale), 0.0))


@implemented_by(stats.gamma.logcdf)
def gamma_logcdf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.logcdf`."""
    return np.log(gamma_cdf(x, a, loc, scale))


@implemented_by(stats.gamma.sf)
def gamma_sf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.sf`: differentiable in `x`, `loc` and `scale`."""
    return special.gammaincc(a, np.maximum(standardized(x, loc, scale), 0.0))


@implemented_by(stats.gamma.logsf)
def gamma_logsf(x, a, loc=0.0, scale=1.0):
    """`scipy.stats.gamma.logsf`."""
    return np.log(gamma_sf(x, a, loc, scale))


# -- beta ----------------------------------------------------------------------------


@implemented_by(stats.beta)
def beta(a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta(a, b, loc, scale)`."""
    return Frozen(stats.beta, (a, b, loc, scale))


@implemented_by(stats.beta.logpdf)
def beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.logpdf`."""
    inside, z = within(standardized(x, loc, scale), 0.0, 1.0, 0.5)
    return density(special.xlog1py(b - 1.0, -z) + special.xlogy(a - 1.0, z)
                   - special.betaln(a, b) - np.log(scale), inside)


@implemented_by(stats.beta.pdf)
def beta_pdf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.pdf`."""
    return np.exp(beta_logpdf(x, a, b, loc, scale))


@implemented_by(stats.beta.cdf)
def beta_cdf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.cdf`: differentiable in `x`, `loc` and `scale`."""
    return special.betainc(a, b, np.clip(standardized(x, loc, scale), 0.0, 1.0))


@implemented_by(stats.beta.logcdf)
def beta_logcdf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.logcdf`."""
    return np.log(beta_cdf(x, a, b, loc, scale))


@implemented_by(stats.beta.sf)
def beta_sf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.sf`: differentiable in `x`, `loc` and `scale`."""
    return special.betaincc(a, b, np.clip(standardized(x, loc, scale), 0.0, 1.0))


@implemented_by(stats.beta.logsf)
def beta_logsf(x, a, b, loc=0.0, scale=1.0):
    """`scipy.stats.beta.logsf`."""
    return np.log(beta_sf(x, a, b, loc, scale))


# -- expon ---------------------------------------------------------------------------


@implemented_by(stats.expon)
def expon(loc=0.0, scale=1.0):
    """`scipy.stats.expon(loc, scale)`."""
    return Frozen(stats.expon, (loc, scale))


@implemented_by(stats.expon.logpdf)
def expon_logpdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.logpdf`."""
    inside, z = within(standardized(x, loc, scale), 0.0, np.inf, 1.0)
    return density(-z - np.log(scale), inside)


@implemented_by(stats.expon.pdf)
def expon_pdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.pdf`."""
    return np.exp(expon_logpdf(x, loc, scale))


@implemented_by(stats.expon.cdf)
def expon_cdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.cdf`."""
    return -np.expm1(-np.maximum(standardized(x, loc, scale), 0.0))


@implemented_by(stats.expon.logcdf)
def expon_logcdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.logcdf`."""
    return np.log(expon_cdf(x, loc, scale))


@implemented_by(stats.expon.sf)
def expon_sf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.sf`."""
    return np.exp(expon_logsf(x, loc, scale))


@implemented_by(stats.expon.logsf)
def expon_logsf(x, loc=0.0, scale=1.0):
    """`scipy.stats.expon.logsf`."""
    return -np.maximum(standardized(x, loc, scale), 0.0)


# -- laplace -------------------------------------------------------------------------


@implemented_by(stats.laplace)
def laplace(loc=0.0, scale=1.0):
    """`scipy.stats.laplace(loc, scale)`."""
    return Frozen(stats.laplace, (loc, scale))


@implemented_by(stats.laplace.logpdf)
def laplace_logpdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.logpdf`."""
    return -np.abs(standardized(x, loc, scale)) - np.log(2.0) - np.log(scale)


@implemented_by(stats.laplace.pdf)
def laplace_pdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.pdf`."""
    return np.exp(laplace_logpdf(x, loc, scale))


def laplace_standard_cdf(z):
    """The standard Laplace distribution's cdf, from its smaller tail `exp(-|z|) / 2`."""
    tail = 0.5 * np.exp(-np.abs(z))
    return np.where(z > 0.0, 1.0 - tail, tail)


@implemented_by(stats.laplace.cdf)
def laplace_cdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.cdf`."""
    return laplace_standard_cdf(standardized(x, loc, scale))


@implemented_by(stats.laplace.logcdf)
def laplace_logcdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.logcdf`."""
    return np.log(laplace_cdf(x, loc, scale))


@implemented_by(stats.laplace.sf)
def laplace_sf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.sf`."""
    return laplace_standard_cdf(-standardized(x, loc, scale))


@implemented_by(stats.laplace.logsf)
def laplace_logsf(x, loc=0.0, scale=1.0):
    """`scipy.stats.laplace.logsf`."""
    return np.log(laplace_sf(x, loc, scale))


# -- logistic ------------------------------------------------------------------------


@implemented_by(stats.logistic)
def logistic(loc=0.0, scale=1.0):
    """`scipy.stats.logistic(loc, scale)`."""
    return Frozen(stats.logistic, (loc, scale))


@implemented_by(stats.logistic.logpdf)
def logistic_logpdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.logpdf`."""
    y = -np.abs(standardized(x, loc, scale))
    return y - 2.0 * np.log1p(np.exp(y)) - np.log(scale)


@implemented_by(stats.logistic.pdf)
def logistic_pdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.pdf`."""
    return np.exp(logistic_logpdf(x, loc, scale))


@implemented_by(stats.logistic.cdf)
def logistic_cdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.cdf`."""
    return special.expit(standardized(x, loc, scale))


@implemented_by(stats.logistic.logcdf)
def logistic_logcdf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.logcdf`."""
    return special.log_expit(standardized(x, loc, scale))


@implemented_by(stats.logistic.sf)
def logistic_sf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.sf`."""
    return special.expit(-standardized(x, loc, scale))


@implemented_by(stats.logistic.logsf)
def logistic_logsf(x, loc=0.0, scale=1.0):
    """`scipy.stats.logistic.logsf`."""
    return special.log_expit(-standardized(x, loc, scale))


# -- poisson and binom: differentiable in their rate and probability ------------------


def integers_within(k, upper):
    """Whether `k` is an integer in `[0, upper]`: the support of a count."""
    return (k >= 0) & (k <= upper) & (k == np.floor(k))


@implemented_by(stats.poisson)
def poisson(mu, loc=0):
    """`scipy.stats.poisson(mu, loc)`."""
    return Frozen(stats.poisson, (mu, loc))


@implemented_by(stats.poisson.logpmf)
def poisson_logpmf(k, mu, loc=0):
    """`scipy.stats.poisson.logpmf`."""
    k = k - loc
    return density(special.xlogy(k, mu) - special.gammaln(k + 1) - mu,
                   integers_within(k, np.inf))


@implemented_by(stats.poisson.pmf)
def poisson_pmf(k, mu, loc=0):
    """`scipy.stats.poisson.pmf`."""
    return np.exp(poisson_logpmf(k, mu, loc))


@implemented_by(stats.binom)
def binom(n, p, loc=0):
    """`scipy.stats.binom(n, p, loc)`."""
    return Frozen(stats.binom, (n, p, loc))


@implemented_by(stats.binom.logpmf)
def binom_logpmf(k, n, p, loc=0):
    """`scipy.stats.binom.logpmf`."""
    k = k - loc
    ways = special.gammaln(n + 1) - (special.gammaln(k + 1) + special.gammaln(n - k + 1))
    return density(ways + special.xlogy(k, p) + special.xlog1py(n - k, -p),
                   integers_within(k, n))


@implemented_by(stats.binom.pmf)
def binom_pmf(k, n, p, loc=0):
    """`scipy.stats.binom.pmf`."""
    return np.exp(binom_logpmf(k, n, p, loc))


# -- multivariate_normal and dirichlet ------------------------------------------------


@implemented_by(stats.multivariate_normal)
def multivariate_normal(mean=None, cov=1, allow_singular=False, seed=None):
    """`scipy.stats.multivariate_normal(mean, cov)` (a singular `cov` is not supported)."""
    return Frozen(stats.multivariate_normal, (mean, cov, allow_singular))


def mean_and_covariance(mean, cov):
    """`mean` as an array, and `cov` as a matrix (from a scalar, or a diagonal)."""
    if mean is None:
        mean = np.zeros(1 if np.ndim(cov) == 0 else np.shape(cov)[0])
    mean = np.reshape(mean, (-1,))
    if np.ndim(cov) == 0:
        return mean, cov * np.eye(np.shape(mean)[0])
    if np.ndim(cov) == 1:
        return mean, np.diag(cov)
    return mean, cov


@implemented_by(stats.multivariate_normal.logpdf)
def multivariate_normal_logpdf(x, mean=None, cov=1, allow_singular=False):
    """`scipy.stats.multivariate_normal.logpdf`, for one point (`x` of shape `(d,)`) or a
    row of points each (`(n, d)`); a one-dimensional distribution also takes points
    of shape `()` and `(n,)`."""
    mean, cov = mean_and_covariance(mean, cov)
    points = np.reshape(x, (-1, 1)) if np.shape(mean)[0] == 1 else x
    deviation = points - mean
    log_det = np.linalg.slogdet(cov)[1]
    distance = np.sum(deviation * np.linalg.solve(cov, deviation.T).T, axis=-1)
    log_density = -0.5 * (np.shape(mean)[0] * 2.0 * _LOG_SQRT_2PI + log_det + distance)
    return log_density[0] if np.shape(mean)[0] == 1 and np.ndim(x) == 0 else log_density


@implemented_by(stats.multivariate_normal.pdf)
def multivariate_normal_pdf(x, mean=None, cov=1, allow_singular=False):
    """`scipy.stats.multivariate_normal.pdf`."""
    return np.exp(multivariate_normal_logpdf(x, mean, cov, allow_singular))


@implemented_by(stats.dirichlet)
def dirichlet(alpha, seed=None):
    """`scipy.stats.dirichlet(alpha)`."""
    return Frozen(stats.dirichlet, (alpha,))


def with_last_component(x, alpha):
    """The points `x` (components along the first axis) with their last component, which
    sums them to one, when `x` leaves it out."""
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return x
    last = 1.0 - np.sum(x, 0)
    return np.concatenate([x, np.reshape(last, (1,) + np.shape(last))])


@implemented_by(stats.dirichlet.logpdf)
def dirichlet_logpdf(x, alpha):
    """`scipy.stats.dirichlet.logpdf`."""
    x = with_last_component(x, alpha)
    log_normalizer = np.sum(special.gammaln(alpha)) - special.gammaln(np.sum(alpha))
    return -log_normalizer + np.sum(special.xlogy(alpha - 1.0, x.T).T, 0)


@implemented_by(stats.dirichlet.pdf)
def dirichlet_pdf(x, alpha):
    """`scipy.stats.dirichlet.pdf`."""
    return np.exp(dirichlet_logpdf(x, alpha))

