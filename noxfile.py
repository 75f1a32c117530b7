"""The suite on every supported Python, and the built wheel tested as users install it.

    nox                      # every session below
    nox -s subset-3.13       # one of them

`.ci/run` runs the full suite (the README's test command) on its own interpreter,
then these sessions. An interpreter that is not installed is skipped with one line
saying so.

- `subset`: a fast subset of the suite on each supported Python: the API, ANF,
  the specs of every primitive, closures (orders 1-3) and control flow (orders
  1-2); on 3.10, whose NumPy is the oldest, also the table of one family of
  primitives (products and shapes).
- `wheel`: builds the sdist and the wheel, installs the wheel (not the checkout)
  into a fresh environment, and runs the command line and the quickstart from a
  folder outside the checkout, so that a module, template or data file missing from
  the wheel fails here rather than for a user.
"""

import glob
import os
import shutil

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
SUBSET = ["tests/test_api.py", "tests/test_anf.py", "tests/test_specs.py",
          "tests/test_closures.py", "tests/test_control_flow.py"]
OLDEST_NUMPY = ["tests/test_primitives.py", "-k", "not test_primitive or products_and_shapes"]
"""More of the subset on Python 3.10, whose NumPy is the oldest the suite runs on."""

nox.options.sessions = ["subset", "wheel"]
nox.options.error_on_missing_interpreters = False


@nox.session(python=PYTHONS)
def subset(session):
    """The subset of the suite on one interpreter."""
    session.install("-e", ".[test]")
    extra = OLDEST_NUMPY if session.python == PYTHONS[0] else []
    session.run("pytest", "-q", "-p", "no:cacheprovider", *SUBSET, *extra, *session.posargs)


@nox.session
def wheel(session):
    """Build, install the wheel alone, and run it from outside the checkout."""
    root = os.getcwd()
    dist = os.path.join(session.create_tmp(), "dist")
    shutil.rmtree(dist, ignore_errors=True)
    session.install("build")
    session.run("python", "-m", "build", "--outdir", dist, silent=True)
    wheels = glob.glob(os.path.join(dist, "pullback-*.whl"))
    if len(wheels) != 1 or not glob.glob(os.path.join(dist, "pullback-*.tar.gz")):
        session.error(f"expected one wheel and one sdist in {dist}")
    session.install(wheels[0])
    outside = os.path.join(session.create_tmp(), "outside")
    os.makedirs(outside, exist_ok=True)
    shutil.copy(os.path.join(root, "examples", "quickstart.py"), outside)
    session.chdir(outside)
    session.run("python", "-c", "import pullback; "
                "assert 'site-packages' in pullback.__file__, pullback.__file__; "
                "print('pullback', pullback.__version__, 'from', pullback.__file__)")
    session.run("pullback", "--version")
    session.run("pullback", "--show", "quickstart.py:loss", "--wrt", "w", "--color", "never")
    session.run("pullback", "--show", "quickstart.py:loss", "--mode", "forward", "--color", "never")
    session.run("python", "quickstart.py")
    session.run("python", "-c", _EVERY_RULE)


_EVERY_RULE = """
# every rule module and template the wheel carries is read: each spec's tangent rule
# is derived from its template's source
from pullback.compiler.tangent import rules
from pullback.rules import registry
specs = list(registry.specs())
missing = [s for s in specs if s.template is not None and rules.rule_of(s) is None]
assert len(specs) > 250 and not missing, (len(specs), missing[:5])
print(len(specs), 'primitive specs, each with its templates')
"""
