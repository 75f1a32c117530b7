"""scipy.special's rules, when SciPy is installed."""

import subprocess
import sys
import textwrap

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


POSITIVE = np.array([0.7, 1.3, 2.2])
MATRIX = np.array([[0.3, -0.5, 1.1], [0.8, 0.1, -0.9]])
SPECIAL_MORE = [
    ("betaln", lambda a, b: np.sum(special.betaln(a, b) * np.arange(1.0, 4.0)),
     (POSITIVE, np.array([[1.5], [0.6]]))),
    ("erfinv", lambda x: np.sum(special.erfinv(x) * np.arange(1.0, 4.0)),
     (np.array([-0.4, 0.1, 0.6]),)),
    ("xlog1py", lambda x, y: np.sum(np.sin(special.xlog1py(x, y))), (X, POSITIVE - 0.5)),
    ("logsumexp_b", lambda a, b: special.logsumexp(a, b=b), (X, POSITIVE)),
    ("logsumexp_b_axis",
     lambda a, b: np.sum(np.sin(special.logsumexp(a, axis=0, b=b)) * np.arange(1.0, 4.0)),
     (MATRIX, np.array([[0.5, 1.0, 2.0], [1.5, 0.2, 0.7]]))),
    ("logsumexp_b_broadcast",
     lambda a, b: np.sum(np.sin(special.logsumexp(a, axis=1, b=b, keepdims=True))),
     (MATRIX, POSITIVE)),
    ("logsumexp_sign_negative",
     lambda a, b: np.sin(special.logsumexp(a, b=b, return_sign=True)[0]),
     (X, np.array([1.0, -3.0, 0.5]))),
    ("logsumexp_sign_axis",
     lambda a, b: np.sum(special.logsumexp(a, 1, b, return_sign=True)[0] ** 2
                         * special.logsumexp(a, 1, b, return_sign=True)[1]),
     (MATRIX, np.array([[1.0, -3.0, 0.5], [0.4, 0.3, 0.2]]))),
    ("logsumexp_sign_unit_weights", lambda a: np.sin(special.logsumexp(a, return_sign=True)[0]),
     (X,)),
    ("softmax", lambda x: np.sum(np.sin(special.softmax(x)) * np.arange(1.0, 4.0)), (X,)),
    ("softmax_axis",
     lambda x: np.sum(np.sin(special.softmax(x, axis=1)) * np.arange(1.0, 4.0)), (MATRIX,)),
    ("softmax_all", lambda x: np.sum(special.softmax(x) ** 2 * np.arange(1.0, 4.0)), (MATRIX,)),
    ("log_softmax", lambda x: np.sum(np.sin(special.log_softmax(x)) * np.arange(1.0, 4.0)),
     (X,)),
    ("log_softmax_axis",
     lambda x: np.sum(np.sin(special.log_softmax(x, axis=0)) * np.arange(1.0, 4.0)), (MATRIX,)),
]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name, fn, args", SPECIAL_MORE, ids=[c[0] for c in SPECIAL_MORE])
def test_scipy_special_more(name, fn, args, order):
    check_grads(fn, args, order=order)


def test_logsumexp_sign_is_a_constant():
    import pullback

    def signed(a, b):
        value, sign = special.logsumexp(a, b=b, return_sign=True)
        return value * sign

    a, b = X, np.array([1.0, -3.0, 0.5])
    value, sign = special.logsumexp(a, b=b, return_sign=True)
    weights = b * np.exp(a - value) * sign
    assert np.allclose(pullback.grad(signed)(a, b), sign * weights)


LATE_IMPORT = textwrap.dedent("""
    import sys
    import numpy as np
    import pullback
    assert "scipy" not in sys.modules, "importing pullback imported SciPy"
    from scipy import special, stats

    def f(x, fn):
        return fn(x) + stats.norm.logpdf(x, 0.5, 2.0)

    x = 1.5
    first = pullback.grad(f)(x, special.gammaln)
    second = pullback.grad(pullback.grad(f))(x, special.gammaln)
    assert np.isclose(first, special.digamma(x) - (x - 0.5) / 4.0), first
    assert np.isclose(second, special.polygamma(1, x) - 0.25), second
    print("ok")
""")


def test_rules_of_scipy_imported_after_pullback(tmp_path):
    """Importing pullback does not import SciPy (it takes several times longer); SciPy's
    rules register when the program imports it, here after pullback and read through a
    value (`fn`) when the derivative runs."""
    script = tmp_path / "late_import.py"
    script.write_text(LATE_IMPORT)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
