"""The pipeline, run once per function and kinds of its parameters.

parse -> anf -> reverse -> optimize -> emit. `derivative(fn, kinds)` runs it and
caches the result per code object; `forward_function(fn, kinds)` binds that
code to a particular function's globals, cells and defaults. `forward(fn,
*args)` is what generated code calls when the callee is known only at run time:
a Python function, a bound method, or a primitive (whose forward is the
pipeline run on a one-line wrapper around it).
"""

import dataclasses
import inspect
import os
import re
import types
import weakref

from . import anf, cotangents, emit, kinds, nodes, optimize, parse, reverse, rules
from .bindings import Bindings
from .errors import TransformError
from .naming import Namer

_DERIVATIVES = {}
_IN_PROGRESS = set()
_FORWARDS = weakref.WeakKeyDictionary()
_WRAPPERS = {}


@dataclasses.dataclass
class Derivative:
    """The generated forward-and-pullback code of one function for one tuple of kinds.

    Attributes:
      origin: where the user function came from.
      anf: the function in A-normal form.
      raw: the forward function before `optimize`.
      tree: the forward function as compiled.
      text: its source (what `pullback.source` shows).
      code: its code object.
      cells: pullback's cells it reads (helpers, the forwards of callees).
      result_kind: the kind of its return value.
      filename: where the generated text is registered.
      source_map: for each line of that text, the user line it came from.
    """

    origin: parse.Origin
    anf: object
    raw: object
    tree: object
    text: str
    code: types.CodeType
    cells: dict
    result_kind: object
    filename: str
    source_map: list

    def build(self, fn):
        """The forward function, reading `fn`'s globals, cells and defaults."""
        cells = dict(self.cells)
        cells.update(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        return emit.bind(self.code, fn.__globals__, cells, fn.__defaults__, fn.__kwdefaults__)


def derivative(fn, param_kinds):
    """The `Derivative` of Python function `fn` for parameters of kinds `param_kinds`.

    Raises:
      TransformError: if `fn` cannot be differentiated.
    """
    key = _derivative_key(fn, param_kinds)
    found = _DERIVATIVES.get(key)
    if found is None:
        _IN_PROGRESS.add(key)
        try:
            found = _DERIVATIVES[key] = _run_pipeline(fn, param_kinds)
        finally:
            _IN_PROGRESS.discard(key)
    return found


def forward_function(fn, param_kinds):
    """`fn`'s forward function for parameters of kinds `param_kinds` (cached)."""
    return _forward_cell(parse.python_function(fn), param_kinds).cell_contents


def _forward_cell(fn, param_kinds):
    """The cell holding `fn`'s forward; empty while `fn` is being transformed."""
    cell = _empty_cell(fn, param_kinds)
    if _is_empty(cell) and _derivative_key(fn, param_kinds) not in _IN_PROGRESS:
        try:
            cell.cell_contents = derivative(fn, param_kinds).build(fn)
        except BaseException:
            del _FORWARDS[fn][_key(param_kinds)]
            raise
    return cell


def _empty_cell(fn, param_kinds):
    return _FORWARDS.setdefault(fn, {}).setdefault(_key(param_kinds), types.CellType())


def _is_empty(cell):
    try:
        _ = cell.cell_contents
    except ValueError:
        return True
    return False


def _derivative_key(fn, param_kinds):
    return (fn.__code__, id(fn.__globals__), _key(param_kinds))


def _resolve(fn, param_kinds):
    """The forward of a Python function called from generated code (see `reverse`)."""
    key = _derivative_key(fn, param_kinds)
    cell = _forward_cell(fn, param_kinds)
    found = _DERIVATIVES.get(key)
    result_kind = found.result_kind if found is not None and key not in _IN_PROGRESS else kinds.ANY
    return reverse.Callee(cell, f"{_simple_name(fn)}_fwd", result_kind)


def _run_pipeline(fn, param_kinds):
    tree, origin = parse.parse_function(fn)
    normal = anf.to_anf(tree, origin)
    namer = Namer.for_tree(normal)
    namer.reserve(tree.name)
    bindings = Bindings(namer, fn.__code__, fn.__globals__)
    name = bindings.cell(f"{_simple_name(fn)}_fwd", _empty_cell(fn, param_kinds))
    calls = types.SimpleNamespace(resolve=_resolve, forward=forward)
    result = reverse.reverse(nodes.clone(normal), origin, param_kinds, namer, bindings, calls,
                             name)
    raw = nodes.clone(result.tree)
    optimized = optimize.optimize(result.tree)
    free = (set(bindings.cells) | set(origin.cells)) - {name}
    filename = _filename(origin, optimized.name, param_kinds)
    header = (f"pullback: forward and pullback of {origin.name} "
              f"({os.path.basename(origin.filename)}:{origin.lineno}), kinds {param_kinds}")
    code, text, source_map = emit.compile_forward(optimized, origin, free, filename, header)
    return Derivative(origin, normal, raw, optimized, text, code, dict(bindings.cells),
                      result.result_kind, filename, source_map)


def _filename(origin, name, param_kinds):
    base = f"<pullback {os.path.basename(origin.filename)}:{origin.lineno} {name}"
    taken = sum(1 for d in _DERIVATIVES.values() if d.filename.startswith(base))
    return f"{base}{'' if not taken else f' #{taken + 1}'}>"


def _simple_name(fn):
    name = fn.__name__
    return "lambda" if name == "<lambda>" else name


def _key(param_kinds):
    return tuple(sorted(param_kinds.items()))


# -- kinds of actual arguments --------------------------------------------------


def param_kinds(fn, args, kwargs, active=None):
    """The kind of each parameter of `fn` when called with `args` and `kwargs`.

    Args:
      fn: a Python function.
      args, kwargs: the call's arguments.
      active: parameter names that may be active; others are constants. None
        means all.

    Raises:
      TypeError: when the arguments do not fit `fn`'s signature.
    """
    bound = inspect.signature(fn).bind(*args, **kwargs)
    result = {}
    for name, value in bound.arguments.items():
        kind = kinds.of_value(value)
        result[name] = kind if active is None or name in active else kinds.CONST
    return result


# -- calls resolved at run time ---------------------------------------------------


def forward(fn, *args, **kwargs):
    """Call `fn(*args, **kwargs)` and return `(value, pullback)`.

    `fn` may be any callable: a Python function, a bound method, a primitive
    with a derivative rule, or a non-differentiable function. `pullback(ct)`
    returns the cotangent of `fn` followed by one per parameter of `fn`.
    """
    if isinstance(fn, types.MethodType) or _is_builtin_method(fn):
        value, pullback = forward(_unbound(fn), fn.__self__, *args, **kwargs)
        return value, _method_pullback(pullback)
    if rules.rule_for(fn) is not None:
        fn = primitive_wrapper(fn)
    elif not isinstance(fn, types.FunctionType):
        if rules.is_nondifferentiable(fn):
            return fn(*args, **kwargs), _constant_pullback(1 + len(args) + len(kwargs))
        raise TransformError(
            f"no derivative rule for {rules.describe(fn)}; register one with "
            f"@pullback.adjoint({rules.describe(fn)}) (see docs/rules.md)",
            construct=rules.describe(fn),
        )
    fwd = forward_function(fn, param_kinds(fn, args, kwargs))
    return fwd(*args, **kwargs)


def _is_builtin_method(fn):
    """Whether `fn` is a C method bound to an object (`x.sum` for an array `x`)."""
    owner = getattr(fn, "__self__", None)
    return isinstance(fn, types.BuiltinMethodType) and owner is not None and not isinstance(
        owner, types.ModuleType)


def _unbound(method):
    if isinstance(method, types.MethodType):
        return method.__func__
    return getattr(type(method.__self__), method.__name__)


def _method_pullback(pullback):
    def method_pullback(ct):
        cts = pullback(ct)
        return (cts[1],) + tuple(cts[2:])

    return method_pullback


def _constant_pullback(count):
    def constant_pullback(ct):
        return (cotangents.ZERO,) * count

    return constant_pullback


def primitive_wrapper(primitive):
    """A one-line Python function calling `primitive`, for `forward` to transform.

    Its parameters are the primitive's as its derivative rule declares them,
    except `out` (results written into an argument are not supported);
    required and positional-only ones are passed by position, the others by
    keyword.
    """
    wrapper = _WRAPPERS.get(rules._key(primitive))
    if wrapper is None:
        wrapper = _WRAPPERS[rules._key(primitive)] = _make_wrapper(primitive)
    return wrapper


def _make_wrapper(primitive):
    params = [p for p in rules.rule_for(primitive).signature.parameters.values()
              if p.name != "out"]
    name = re.sub(r"\W", "_", getattr(primitive, "__name__", "primitive"))
    call = ", ".join(_wrapper_argument(p) for p in params)
    text = f"def {name}{inspect.Signature(params)}:\n    return primitive({call})\n"
    filename = f"<pullback rule {rules.describe(primitive)}>"
    emit.register(filename, text)
    namespace = {"primitive": primitive}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


def _wrapper_argument(param):
    if param.kind is param.VAR_POSITIONAL:
        return "*" + param.name
    if param.default is param.empty or param.kind is param.POSITIONAL_ONLY:
        return param.name
    return f"{param.name}={param.name}"
