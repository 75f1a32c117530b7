"""scipy.special's rules, when SciPy is installed."""

import numpy as np
import pytest

from pullback.testing import check_grads

special = pytest.importorskip("scipy.special")
X = np.array([0.3, -0.5, 1.1])
SPECIAL = [
    ("gammaln", lambda x: np.sum(special.gammaln(x) * np.arange(1.0, 4.0)), (X + 1.5,)),
    ("digamma", lambda x: np.sum(special.digamma(x) ** 2), (X + 1.5,)),
    ("polygamma", lambda x: np.sum(special.polygamma(1, x)), (X + 1.5,)),
    ("erf", lambda x: np.sum(special.erf(x) * np.arange(1.0, 4.0)), (X,)),
    ("erfc", lambda x: special.erfc(x) ** 2, (0.4,)),
    ("expit", lambda x: np.sum(special.expit(x) ** 2), (X,)),
    ("logit", lambda x: np.sum(special.logit(x) ** 2), (np.array([0.2, 0.5, 0.7]),)),
    ("xlogy", lambda x, y: np.sum(special.xlogy(x, y)), (X, np.array([[0.5], [1.5]]))),
    ("logsumexp", lambda x: special.logsumexp(x * 3.0), (X,)),
    ("logsumexp_axis", lambda x: np.sum(np.sin(special.logsumexp(x, axis=1, keepdims=True))),
     (np.arange(6.0).reshape(2, 3) * 0.3,)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_scipy_special(name, fn, args, order):
    check_grads(fn, args, order=order)
