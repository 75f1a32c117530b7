"""The pipeline, run once per function and kinds of its parameters.

parse -> anf -> reverse -> optimize -> emit. `derivative(fn, kinds)` runs it and
caches the result per code object and per `config` settings (which change the
generated code and where it is written); `forward_function(fn, kinds)` binds that
code to a particular function's globals, cells and defaults. A primitive called
through a value is differentiated by running the pipeline on a one-line
wrapper around it (`primitive_wrapper`); see `dispatch` for calls resolved at
run time.
"""

import builtins
import contextlib
import dataclasses
import functools
import inspect
import os
import re
import types
import weakref

from ..config import current as current_settings
from ..errors import TransformError
from ..rules import registry
from ..runtime import calls, collector, constants, custom, debugging, dispatch, introspection
from ..runtime.cotangents import ZERO
from . import debug_files, emit, reverse, tangent
from .analysis import interpret, kinds
from .bindings import Bindings, helper_names, mark_helpers
from .frontend import anf, inline, invariant_reads, parse
from .optimize import simplify
from .syntax import nodes, scopes
from .syntax.naming import Namer

_DERIVATIVES = {}
_FRONTS = {}
_IN_PROGRESS = {}
_ROUNDS = 3
_FORWARDS = weakref.WeakKeyDictionary()
_UNFILLED = {}  # a derivative's key -> (function, `_Forward`) asked for while it was made
_WRAPPERS = {}
_EPOCH = [0]
_MISSING = object()


@dataclasses.dataclass
class Derivative:
    """The generated forward-and-pullback code of one function for one tuple of kinds.

    Attributes:
      origin: where the user function came from.
      anf: the function in A-normal form.
      raw: the forward function before optimisation (inlining and `optimize`), or a
        function making it (see `unoptimized`).
      tree: the forward function as compiled.
      text: its source (what `pullback.source` shows).
      code: its code object.
      cells: pullback's cells it reads (helpers, the forwards of callees).
      result_kind: the kind of its return value.
      filename: where the generated text is registered.
      source_map: for each line of that text, the user line it came from.
      globals_used: the global objects its calls were compiled for, by name.
      callees: the `(function, kinds, kinds' cache key, result kind)` of the Python
        functions it calls, the result kind being the one its code was compiled for.
      kinds: the kind of every variable of the function.
      updated: the parameters and free variables it updates in place (as Python runs
        it), which are updates of the arguments of a call (and of its caller's variables).
      shares: what its return value may share of its parameters (`Summary.shares`).
      checked: the epoch in which `refresh` last found it current.
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
    globals_used: dict
    callees: list
    kinds: dict
    updated: tuple = ()
    shares: object = None
    checked: int = -1

    def build(self, fn):
        """The forward function, reading `fn`'s globals, cells and defaults."""
        cells = dict(self.cells)
        cells.update(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        return emit.bind(self.code, fn.__globals__, cells, fn.__defaults__, fn.__kwdefaults__)

    def unoptimized(self):
        """The forward function before optimisation (made when first asked for, if
        small callees were inlined)."""
        if callable(self.raw):
            self.raw = self.raw()
        return self.raw

    def is_current(self, fn_globals):
        """Whether every global it was compiled for is still the same object."""
        return all(fn_globals.get(name, getattr(builtins, name, _MISSING)) is obj
                   for name, obj in self.globals_used.items())


class _Forward:
    """The cell holding a function's forward for one tuple of kinds, and its source."""

    def __init__(self):
        self.cell = types.CellType()
        self.derivative = None


REVERSE, FORWARD = "reverse", "forward"
"""The modes: a forward function with its pullback (`reverse.reverse`), or a
derivative in forward mode computing tangents (`tangent.tangent`)."""


def derivative(fn, param_kinds, mode=REVERSE):
    """The `Derivative` of Python function `fn` for parameters of kinds `param_kinds`
    in `mode`.

    Raises:
      TransformError: if `fn` cannot be differentiated.
    """
    return _derivative(fn, param_kinds, _key(param_kinds, mode))


def _derivative(fn, param_kinds, kinds_key):
    key = _derivative_key(fn, kinds_key)
    found = _DERIVATIVES.get(key)
    if found is None:
        with collector.paused():
            try:
                found = _DERIVATIVES[key] = _recursion_fixed_point(fn, param_kinds, key)
            except TransformError as error:  # met in generated code: at the user's line
                raise debugging.in_user_code(error) from None
    return found


def _recursion_fixed_point(fn, param_kinds, key):
    """The derivative of `fn`, its calls of itself (with the same kinds) compiled for
    the kind of result it returns and the parameters they update in place.

    `interpret.recursion_fixed_point` finds these by interpreting `fn` alone, its
    calls of itself assumed (in `_IN_PROGRESS`) to return what the last attempt
    returned; the pipeline then runs once, under the assumption that held. If none
    held, whatever was compiled meanwhile for an assumption that did not is
    forgotten. A function that does not name itself is not interpreted first: its
    pipeline runs assuming nothing, and only if it called itself after all (through
    another name) is the fixed point sought.
    """
    front = _front(fn)
    _, _, _, inlined, _ = front
    mode = _mode(key[2])
    if fn.__name__ not in nodes.names_in(inlined):
        with _assuming(key, (kinds.ANY, ())):
            found = _run_pipeline(fn, param_kinds, front, mode)
        if not _calls_itself(found.callees, key):
            return found
    last = []

    def attempt(assumed):
        last[:] = [_Calls(mode)]
        with _assuming(key, assumed):
            return _interpret(front, param_kinds, last[0])

    assumed, settled = interpret.recursion_fixed_point(
        attempt, lambda: _calls_itself(last[0].callees, key), _ROUNDS)
    if not settled:
        _forget_assumptions(key, kinds.ANY)
    with _assuming(key, assumed):
        return _run_pipeline(fn, param_kinds, front, mode)


@contextlib.contextmanager
def _assuming(key, assumed):
    """While transforming the function of `key`, its calls of itself are assumed to
    return a value of a kind and to update parameters in place: `assumed`, the pair."""
    _IN_PROGRESS[key] = assumed
    try:
        yield
    finally:
        del _IN_PROGRESS[key]


def _interpret(front, param_kinds, calls):
    """The `interpret.Summary` of the function whose `_front` is `front`."""
    _, origin, _, inlined, _ = front
    hoisted = invariant_reads.hoisted(inlined, origin, param_kinds)
    return interpret.Interpreter(nodes.clone(hoisted), origin, param_kinds, calls,
                                 cut_at_never=True).run()


def _calls_itself(callees, key):
    return any(_derivative_key(callee, kinds_key) == key
               for callee, _, kinds_key, _ in callees)


def _forget_assumptions(key, result_kind):
    """Drop the derivatives compiled for a result of `key` other than `result_kind`."""
    for found_key, found in list(_DERIVATIVES.items()):
        if any(_derivative_key(callee, kinds_key) == key and result not in (kinds.ANY,
                                                                           result_kind)
               for callee, _, kinds_key, result in found.callees):
            del _DERIVATIVES[found_key]


def forward_function(fn, param_kinds, through_value=False):
    """`fn`'s forward function for parameters of kinds `param_kinds` (cached); for a
    function with a hand-written derivative, the forward that runs it.

    With `through_value`, `fn` is called through a value (`dispatch.forward`), and a
    function updating a parameter in place is refused: its caller was transformed
    without knowing that the argument changes (see `refuse_updates`)."""
    if custom.is_custom(fn):
        return dispatch.custom_forward_function(fn)
    return _function(fn, param_kinds, through_value, REVERSE)


def jvp_function(fn, param_kinds, through_value=False):
    """`fn`'s derivative in forward mode for parameters of kinds `param_kinds` (cached):
    `jvp(tangents, *args, **kwargs) -> (value, tangent)`, `tangents` holding the tangent
    of `fn` (its environment) and of each parameter (see `tangent`). For a function
    with a hand-written derivative, the one that runs it; `through_value` as for
    `forward_function`."""
    if custom.is_custom(fn):
        return dispatch.custom_jvp_function(fn)
    return _function(fn, param_kinds, through_value, FORWARD)


def _function(fn, param_kinds, through_value, mode):
    """`forward_function` or `jvp_function`, by `mode`, of a function transformed."""
    kinds_key = _key(param_kinds, mode)
    entry = _FORWARDS.get(fn, {}).get(kinds_key) if isinstance(
        fn, types.FunctionType) else None
    if entry is None or entry.derivative is None or entry.derivative.checked != _EPOCH[0]:
        fn = parse.python_function(fn)
        current = _refresh(fn, param_kinds, kinds_key, set())
        entry = _FORWARDS.get(fn, {}).get(kinds_key)
        if entry is None or current is None or entry.derivative is not current:
            _forward_cell(fn, param_kinds, kinds_key)
            entry = _FORWARDS[fn][kinds_key]
    if through_value and entry.derivative is not None and entry.derivative.updated:
        refuse_updates(fn, entry.derivative.updated)
    return entry.cell.cell_contents


def refuse_updates(fn, updated):
    """Raise for function `fn`, called through a value, which updates its parameters
    `updated` in place: whether the caller reads the argument afterwards, and would
    see the change, is not known where the call is transformed."""
    var = updated[0]
    what = "its parameter" if var in calls.signature(fn).parameters else "the variable"
    raise TransformError(
        f"{fn.__qualname__} updates {what} {var} in place, and it is called through a "
        f"value, so pullback cannot tell whether its caller reads {var} again: make "
        f"{fn.__qualname__} update a copy of it ({var}.copy())",
        fn.__code__.co_filename, fn.__code__.co_firstlineno, "update in place")


def new_epoch():
    """Mark the start of a differentiation requested by the user (see `refresh`); the
    arrays an enclosing one held constant are released (`runtime.constants`)."""
    _EPOCH[0] += 1
    constants.release()


def refresh(fn, param_kinds, mode=REVERSE):
    """Forget derivatives in `fn`'s call graph compiled for globals since rebound.

    A function redefined after its callers were transformed (say, in a notebook)
    makes their cached code stale; it is transformed again. Each derivative is
    checked once per epoch.
    """
    _refresh(fn, param_kinds, _key(param_kinds, mode), set())


def _refresh(fn, param_kinds, kinds_key, seen):
    """`refresh`, given the kinds' cache key; `seen` holds the derivatives already
    visited in this walk of the call graph. Returns the derivative, or None."""
    key = _derivative_key(fn, kinds_key)
    found = _DERIVATIVES.get(key)
    if found is None or key in seen or found.checked == _EPOCH[0]:
        return found
    seen.add(key)
    if found.is_current(fn.__globals__) and all(
        result in (kinds.ANY, _refreshed_result(callee, callee_kinds, callee_key, seen))
        for callee, callee_kinds, callee_key, result in found.callees
    ):
        found.checked = _EPOCH[0]
        entry = _FORWARDS.get(fn, {}).get(kinds_key)
        if entry is not None and entry.derivative is found:  # its cell holds it already
            return found
    else:
        del _DERIVATIVES[key]
    _forward_cell(fn, param_kinds, kinds_key)
    return _DERIVATIVES.get(key)


def _refreshed_result(fn, param_kinds, kinds_key, seen):
    """The result kind of `fn`'s derivative after `refresh` (ANY while unknown)."""
    found = _refresh(fn, param_kinds, kinds_key, seen)
    return found.result_kind if found is not None else kinds.ANY


def _forward_cell(fn, param_kinds, kinds_key):
    """The cell holding `fn`'s forward; empty while `fn` is being transformed. Another
    function of the same code (a generated function built again, whose code its
    first build calls) asked for meanwhile gets its cell filled when the
    transformation ends (`_UNFILLED`)."""
    by_kinds = _FORWARDS.get(fn)
    if by_kinds is None:
        by_kinds = _FORWARDS[fn] = {}
    entry = by_kinds.get(kinds_key)
    if entry is None:
        entry = by_kinds[kinds_key] = _Forward()
    key = _derivative_key(fn, kinds_key)
    if key in _IN_PROGRESS:
        waiting = _UNFILLED.setdefault(key, [])
        if all(other is not entry for _, other in waiting):  # a recursion asks again
            waiting.append((weakref.ref(fn), entry))
        return entry.cell
    current = _derivative(fn, param_kinds, kinds_key)
    for owner, waiting in [(weakref.ref(fn), entry), *_UNFILLED.pop(key, ())]:
        function = owner()
        if function is not None and waiting.derivative is not current:
            waiting.cell.cell_contents = current.build(function)
            waiting.derivative = current
    return entry.cell


def _derivative_key(fn, kinds_key):
    return (fn.__code__, id(fn.__globals__), kinds_key)


class _Calls:
    """How the reverse pass (or, in forward `mode`, the tangent pass) compiles calls (see
    `reverse.reverse`); records the callees."""

    def __init__(self, mode=REVERSE):
        self.mode = mode
        self.callees = []
        self.forward = dispatch.forward
        self.forward_method = dispatch.forward_method
        self.effect = dispatch.effect
        self.effect_method = dispatch.effect_method

    def resolve(self, fn, param_kinds):
        """The forward of a Python function called from the function being transformed."""
        kinds_key = _key(param_kinds, self.mode)
        key = _derivative_key(fn, kinds_key)
        cell = _forward_cell(fn, param_kinds, kinds_key)
        found = _DERIVATIVES.get(key)
        assumed = _IN_PROGRESS.get(key)
        result_kind, updated = (found.result_kind, found.updated) if assumed is None else (
            assumed)
        shares = found.shares if assumed is None and found is not None else None
        self.callees.append((fn, param_kinds, kinds_key, result_kind))
        suffix = "_fwd" if self.mode == REVERSE else "_jvp"
        return interpret.Callee(cell, _simple_name(fn) + suffix, result_kind, updated, shares)


def _front(fn):
    """The stages before the reverse rules, which do not depend on kinds: `fn` parsed,
    in ANF and with its small callees inlined, as `(tree, origin, normal, inlined,
    inlined_globals)`. Made once per code object and globals, while the functions
    inlined are the ones its globals name (later stages copy the trees they change)."""
    key = (id(fn.__code__), id(fn.__globals__))  # not the code: equal code objects of
    cached = _FRONTS.get(key)                     # generated functions read other cells
    if cached is not None and cached[0] is fn.__code__ and all(
            fn.__globals__.get(name) is obj for name, obj in cached[1][4].items()):
        return cached[1]
    tree, origin = parse.parse_function(fn)
    normal = anf.to_anf(tree, origin)
    found = (tree, origin, normal, *inline.inline_calls(normal, origin))
    _FRONTS[key] = (fn.__code__, found)
    return found


def _run_pipeline(fn, param_kinds, front, mode):
    tree, origin, normal, inlined, inlined_globals = front
    own = _FORWARDS.setdefault(fn, {}).setdefault(_key(param_kinds, mode), _Forward())
    calls = _Calls(mode)
    inlined = invariant_reads.hoisted(inlined, origin, param_kinds)
    result, namer, bindings, name = _stage(fn, tree.name, inlined, origin, param_kinds,
                                           own.cell, calls, mode)
    if mode == FORWARD:
        raw = optimized = result.tree
        if inlined is not normal:
            raw = functools.partial(_unoptimized_tree, fn, tree.name, normal, origin,
                                    param_kinds, own.cell, mode)
    else:
        raw = functools.partial(simplify.lowered, result.tree, bindings, Namer(namer.taken))
        if inlined is not normal:
            raw = functools.partial(_unoptimized_tree, fn, tree.name, normal, origin,
                                    param_kinds, own.cell, mode)
        optimized = simplify.optimize(result.tree, bindings, namer, result.kinds,
                                      result.shapes)
    settings = current_settings()
    checker = bindings.object("check_nan", debugging.check_nan) if settings.check_nans else None
    used = nodes.names_in(optimized)
    cells = {helper: cell for helper, cell in bindings.cells.items()
             if helper in used or helper == checker}
    free = (set(cells) | set(origin.cells)) - {name}
    filename = _filename(origin, fn, optimized.name, param_kinds, settings, mode)
    what = "forward and pullback" if mode == REVERSE else "derivative in forward mode"
    header = (f"pullback: {what} of {origin.name} "
              f"({os.path.basename(origin.filename)}:{origin.lineno}), kinds {param_kinds}")
    code, text, source_map = emit.compile_forward(optimized, origin, free, filename, header,
                                                  checker)
    mark_helpers(code, set(bindings.cells) | origin.helpers)
    return Derivative(origin, normal, raw, optimized, text, code, cells,
                      result.result_kind, filename, source_map,
                      {**result.globals_used, **inlined_globals}, calls.callees, result.kinds,
                      tuple(result.updated), result.shares)


def _unoptimized_tree(fn, name, normal, origin, param_kinds, cell, mode):
    """The derivative of `fn` from its ANF `normal`, without inlining or `optimize`
    (what `pullback.source(f, optimize=False)` shows)."""
    result, namer, bindings, _ = _stage(fn, name, normal, origin, param_kinds, cell,
                                        _Calls(mode), mode)
    return result.tree if mode == FORWARD else simplify.lowered(result.tree, bindings, namer)


def _stage(fn, name, normal, origin, param_kinds, cell, calls, mode):
    """The reverse stage (or, in forward `mode`, the tangent stage) on `normal`: its
    result, and the namer, bindings and name of the generated function it used."""
    namer = Namer.for_tree(normal)
    namer.reserve(name)
    nested_names = {name for closure in scopes.user_functions(normal)
                    for name in nodes.names_in(closure)}
    bindings = Bindings(namer, fn.__code__, fn.__globals__, nested_names)
    suffix = "_fwd" if mode == REVERSE else "_jvp"
    own_name = bindings.cell(_simple_name(fn) + suffix, cell)
    stage = reverse.reverse if mode == REVERSE else tangent.tangent
    result = stage(nodes.clone(normal), origin, param_kinds, namer, bindings, calls, own_name)
    return result, namer, bindings, own_name


def _filename(origin, fn, name, param_kinds, settings, mode):
    """The file to compile the generated function `name` of `fn` under: a pseudo name in
    `linecache`, or a file in the debug directory."""
    if settings.debug_dir is not None:
        return debug_files.path_for(settings.debug_dir, origin, fn.__code__,
                                    _key(param_kinds)[0], settings.check_nans,
                                    "fwd" if mode == REVERSE else "jvp")
    return emit.unregistered_name(
        f"<pullback {os.path.basename(origin.filename)}:{origin.lineno} {name}")


def _simple_name(fn):
    name = fn.__code__.co_name
    return "lambda" if name == "<lambda>" else name


def _key(param_kinds, mode=REVERSE):
    """The cache key of a derivative for `param_kinds` in `mode` under the current
    settings."""
    return tuple(sorted(param_kinds.items())), current_settings(), mode


def _mode(kinds_key):
    """The mode a cache key (`_key`) is for."""
    return kinds_key[2]


# -- kinds of actual arguments --------------------------------------------------


def param_kinds(fn, args, kwargs, active=None, held=False):
    """The kind of each parameter and free variable of `fn` called with `args`, `kwargs`
    (of a parameter left to its default, the default's).

    Args:
      fn: a Python function.
      args, kwargs: the call's arguments.
      active: parameter names that may be active; the other parameters and the
        free variables are constants (of the shape of their values). None means all
        may be.
      held: whether the arrays the running gradient holds constant are constants
        (`runtime.constants`): for a call resolved at run time.

    Raises:
      TypeError: when the arguments do not fit `fn`'s signature.
    """
    values = _bound_values(fn, args, kwargs)
    result = {}
    for name, value in values.items():
        if active is not None and name not in active:
            result[name] = kinds.of_constant(value)  # a constant tree is not walked
            continue
        if held and constants.is_held(value):
            result[name] = kinds.of_constant(value)
            continue
        result[name] = kinds.of_value(value)
    return result


def _bound_values(fn, args, kwargs):
    """The value of each parameter of `fn` called with `args`, `kwargs`, by name, of each
    free variable, and of each parameter left to its default."""
    code = fn.__code__
    if not kwargs and len(args) == code.co_argcount and not code.co_kwonlyargcount and (
            introspection.has_fixed_parameters(fn)):
        values = dict(zip(code.co_varnames, args))
    else:
        values = dict(calls.signature(fn).bind(*args, **kwargs).arguments)
    values.update(zip(fn.__code__.co_freevars, introspection.cell_values(fn)))
    for name, default in calls.defaults(fn).items():
        values.setdefault(name, default)
    return values


def tangent_kinds(fn, args, kwargs, tangents):
    """The kind of each parameter and free variable of `fn` called with `args`, `kwargs`
    in forward mode: active where its tangent is not `ZERO`. `tangents` holds the
    tangent of `fn`'s environment (a tuple by free variable, or `ZERO`), then one per
    parameter in signature order."""
    env = tangents[0]
    zero = {name for i, name in enumerate(fn.__code__.co_freevars)
            if env is ZERO or env[i] is ZERO}
    zero.update(name for name, tangent in zip(calls.signature(fn).parameters, tangents[1:])
                if tangent is ZERO)
    return {name: kinds.of_constant(value) if name in zero else kinds.of_value(value)
            for name, value in _bound_values(fn, args, kwargs).items()}


# -- the generated functions, as functions to transform again --------------------------


def generated_functions(fn, param_kinds):
    """`fn`'s forward and pullback, each with the kinds of its variables.

    Differentiating `grad(fn)` transforms these: `pullback.source` shows that
    second-order code without running it. The pullback's cells hold no values.
    """
    found = derivative(fn, param_kinds)
    forward = found.build(fn)
    code = next(c for c in found.code.co_consts
                if isinstance(c, types.CodeType) and c.co_name.endswith("_pullback"))
    cells = dict(zip(forward.__code__.co_freevars, forward.__closure__ or ()))
    closure = tuple(cells.get(name) or types.CellType() for name in code.co_freevars)
    pullback = types.FunctionType(code, fn.__globals__, code.co_name, None, closure)
    pullback_kinds = {name: found.kinds.get(name, kinds.CONST)
                      for name in code.co_freevars if name not in helper_names(code)}
    pullback_kinds[code.co_varnames[0]] = found.result_kind
    return [(forward, dict(param_kinds)), (pullback, pullback_kinds)]


# -- primitives called through values ------------------------------------------------


def primitive_wrapper(primitive, count=None):
    """A one-line Python function calling `primitive`, for `forward` to transform.

    Its parameters are the primitive's as its derivative rule declares them,
    except `out` (results written into an argument are not supported);
    required and positional-only ones are passed by position, the others by
    keyword. Given `count`, the number of positional arguments of a call, a
    `*args` parameter becomes that many parameters, so that the wrapper calls
    the primitive with a fixed number of arguments.
    """
    key = (registry.key(primitive), count)
    wrapper = _WRAPPERS.get(key)
    if wrapper is None:
        wrapper = _WRAPPERS[key] = _make_wrapper(primitive, count)
    return wrapper


def _make_wrapper(primitive, count):
    params = [p for p in registry.rule_for(primitive).signature.parameters.values()
              if p.name != "out" and _accepts(primitive, p)]
    if count is not None:
        params = _expand_varargs(params, count)
    name = re.sub(r"\W", "_", getattr(primitive, "__name__", "primitive"))
    call = ", ".join(_wrapper_argument(p) for p in params)
    text = f"def {name}{inspect.Signature(params)}:\n    return primitive({call})\n"
    arity = "" if count is None else f", {count} positional arguments"
    filename = f"<pullback rule {registry.describe(primitive)}{arity}>"  # one text per wrapper
    emit.register(filename, text)
    namespace = {"primitive": primitive}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


def record_wrapper(cls, count, keywords):
    """A one-line Python function building record class `cls` (a dataclass or a named
    tuple) from `count` positional arguments and the keyword arguments `keywords`, for
    `forward` to transform where the class is reached through a value (`type(p)(...)`):
    the wrapper calls it by name, a build of the record (`Interpreter.record_call`)."""
    key = (id(cls), count, keywords)
    wrapper = _WRAPPERS.get(key)
    if wrapper is None or wrapper.__globals__["record"] is not cls:
        params = [f"a{i}" for i in range(count)] + list(keywords)
        call = ", ".join(params[:count] + [f"{k}={k}" for k in keywords])
        name = re.sub(r"\W", "_", cls.__name__)
        text = f"def {name}({', '.join(params)}):\n    return record({call})\n"
        filename = f"<pullback record {cls.__qualname__}, {count} positional arguments>"
        emit.register(filename, text)
        namespace = {"record": cls}
        exec(compile(text, filename, "exec"), namespace)
        wrapper = _WRAPPERS[key] = namespace[name]
    return wrapper


def _accepts(primitive, param):
    """Whether `primitive` takes parameter `param` of its rule: one rule may serve
    primitives of other signatures (`np.copy` takes `subok`, `ndarray.copy` does not).
    A required parameter is always passed, an optional one only when `primitive`'s own
    signature, if it can be read, has it."""
    if param.default is param.empty and param.kind is not param.VAR_KEYWORD:
        return True
    try:
        own = inspect.signature(primitive).parameters
    except (TypeError, ValueError):
        return False
    return param.name in own or any(p.kind is p.VAR_KEYWORD for p in own.values())


def _expand_varargs(params, count):
    """`params` with `*name` replaced by positional-only `name0, name1, ...` for a
    call with `count` positional arguments (unless earlier parameters have defaults)."""
    kinds = [p.kind for p in params]
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        return params
    star = kinds.index(inspect.Parameter.VAR_POSITIONAL)
    if any(p.default is not p.empty for p in params[:star]):
        return params
    head = [p.replace(kind=p.POSITIONAL_ONLY) for p in params[:star]]
    items = [inspect.Parameter(f"{params[star].name}{i}", inspect.Parameter.POSITIONAL_ONLY)
             for i in range(max(count - star, 0))]
    return head + items + params[star + 1:]


def _wrapper_argument(param):
    if param.kind is param.VAR_POSITIONAL:
        return "*" + param.name
    if param.default is param.empty or param.kind is param.POSITIONAL_ONLY:
        return param.name
    return f"{param.name}={param.name}"
