"""The files generated code is written to with `pullback.config(debug_dir=...)`.

A derivative is written to `<debug_dir>/<stem>.<function>.<chain>fwd.<digest>.py`:

- `stem` is the user's file name without its extension, `function` the function's
  qualified name (`loss`, `Model.loss`, `outer.inner`, `lambda_12` for a lambda
  on line 12);
- `chain` is empty for the first derivative of the function, and names the
  generated function differentiated for higher ones: `fwd.` for the forward,
  `pullback.` for the pullback (so `quickstart.loss.pullback.fwd.<digest>.py`
  holds the derivative of `loss_pullback`);
- `digest` is six hex digits of the kinds of the parameters and of the
  settings that change the code, so that the same function and kinds always
  get the same file name, whatever else was differentiated first.

Two functions that would share a name (lambdas on one line) get `.2`, `.3`...
"""

import hashlib
import os
import re

_ROOTS = {}  # a written file -> (the label of the user function, its simple name)
_OWNERS = {}  # a written file -> the function written there


def path_for(directory, origin, code, param_kinds, check_nans, suffix="fwd"):
    """The file to write the derivative of a function to.

    Args:
      directory: the debug directory (absolute).
      origin: the function's `parse.Origin`.
      code: its code object.
      param_kinds: the kinds of its parameters, as a sorted tuple of pairs.
      check_nans: whether the code checks for NaNs.
      suffix: what the derivative is: "fwd" (a forward with its pullback) or "jvp"
        (forward mode).
    """
    root_label, root_name = _root(origin, code)
    label = root_label if origin.filename not in _ROOTS else (
        f"{root_label}.{_chain(code.co_name, root_name)}")
    digest = hashlib.sha1(repr((param_kinds, check_nans)).encode()).hexdigest()[:6]
    base = os.path.join(directory, f"{label}.{suffix}.{digest}")
    path, count = f"{base}.py", 1
    owner = (origin.filename, origin.lineno, origin.name)
    while _OWNERS.setdefault(path, owner) != owner:
        count += 1
        path = f"{base}.{count}.py"
    _ROOTS[path] = (root_label, root_name)
    return path


def _root(origin, code):
    """The label and name of the user function `code` (or the code it was generated
    from) came from; a lambda's name is `lambda`."""
    if origin.filename in _ROOTS:
        return _ROOTS[origin.filename]
    stem = os.path.basename(origin.filename)
    stem = stem if stem.startswith("<") else os.path.splitext(stem)[0]
    qualname = getattr(code, "co_qualname", origin.name)  # Python 3.11 and later
    name = qualname.replace(".<locals>", "").replace("<lambda>", f"lambda_{origin.lineno}")
    return _clean(f"{stem}.{name}"), code.co_name.replace("<lambda>", "lambda")


def _chain(generated_name, root_name):
    """`pullback.fwd` for `loss_pullback_fwd` generated from `loss`."""
    prefix = f"{root_name}_"
    if not generated_name.startswith(prefix):
        return _clean(generated_name)
    return generated_name.removeprefix(prefix).replace("_", ".")


def _clean(text):
    """`text` with only letters, digits, `_`, `.` and `-`."""
    return re.sub(r"[^\w.-]+", "_", text).strip("._")
