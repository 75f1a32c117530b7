"""The table of derivative rules: one template per primitive, registered by decorator.

A template is a tiny Python function whose signature is the result followed by
the primitive's parameters, and whose body writes the cotangent of each
differentiable parameter in terms of `d[result]` (Tangent's convention)::

    @adjoint(np.sin)
    def sin(z, x):
        d[x] = d[z] * np.cos(x)

The reverse pass inlines the body where the primitive is called
(`compiler.templates`): parameters
become the call's arguments, `z` the result, `d[z]` its cotangent, and
`d[x] = e` an accumulation into the cotangent of the argument bound to `x`.
Names the body assigns are renamed apart; other names (np, unbroadcast) are
looked up in the template's module. A body may only read `d[z]`.

The same template gives the forward-mode (tangent) rule. Most are derived
(`compiler.tangent.rules`): a linear primitive's tangent is the primitive applied
to its argument's tangent, a multilinear one's the sum of such terms, and a
template whose every `d[x]` multiplies `d[z]` elementwise (`d[z] * np.cos(x)`) is
its own transpose, so its tangent is `t[x] * np.cos(x)`. Any other template writes
the tangent `t[z]` of the result in terms of the tangents `t[x]` of the arguments::

    @adjoint(np.linalg.inv, result="array")
    def inv(z, a):
        zt = matrix_transpose(z)
        d[a] = -(zt @ d[z] @ zt)
        t[z] = -(z @ t[a] @ z)

Each mode reads only the statements its rule needs.
"""

import dataclasses
import functools
import importlib
import inspect
import sys

_SPECS = {}
_UPDATING_METHODS = set()
_METHOD_VERSIONS = {}  # (class, method name) -> the Python version of the method
_OBJECT_METHODS = []  # (test, method name, version): see implements_method
_DEFERRED = []  # (library's module, module of its rules): see register_when_imported
_MODULES_SEEN = [0]  # how many modules were imported when `_DEFERRED` was last checked


class _Cotangents:
    """The `d` of templates: `d[x]` is the cotangent of `x`. Never evaluated."""

    def __getitem__(self, key):
        raise TypeError("d[...] only has meaning inside a derivative template")


d = _Cotangents()


class _Tangents:
    """The `t` of templates: `t[x]` is the tangent of `x`. Never evaluated."""

    def __getitem__(self, key):
        raise TypeError("t[...] only has meaning inside a derivative template")


t = _Tangents()

FACTS = ("linear", "multilinear", "absorbing", "view", "same", "copy", "items", "shift", "summed",
         "identity", "updates", "implementation", "lazy", "iterates", "refused",
         "refused_version", "structural", "indexed", "shaped")
"""The facts a spec may hold besides its template and result kind (see `Spec`)."""

SHIFTS = ("exponential", "logarithm", "sum", "reduction", "squeeze")
"""How a constant shift may pass through a primitive (`Spec.shift`)."""

IDENTITY_TESTS = ("shaped like the result", "scalar", "true")
"""When a helper's call is one of its arguments (`Spec.identity`)."""


@dataclasses.dataclass
class Spec:
    """Everything pullback knows about one primitive, in one record.

    Every table the stages consult is read from these records: the symbolic zero's
    (`absorbing`), the alias analysis's (`view`, `copy`), the cancelled shifts'
    (`shift`) and the loop sums' (`summed`).

    Attributes:
      primitive: the function.
      template: its derivative rule (a template, see the module's docstring), or
        None when it has none.
      result: how the result's kind follows from the arguments' kinds:
        "elementwise" (promoted like arithmetic), "scalar", "array", a
        function of the arguments' kinds, or None (unknown). For a
        non-differentiable primitive, the kind of its constant results.
      nondifferentiable: declared without derivative: its results are constants.
      linear: linear in its differentiable argument, so its transpose is its
        template and its tangent is itself applied to the tangent.
      multilinear: linear in each differentiable argument when the others are held
        (a product): its tangent is the sum, over those arguments, of itself with that
        argument replaced by its tangent. Implies `absorbing`.
      absorbing: a zero in any argument makes the result zero (True: linear and
        multilinear primitives, a product), or a zero in the arguments at these
        positions (a tuple: the numerator of a division). The symbolic zero
        passes through such a primitive unevaluated.
      view: its result may be a view of its first argument.
      same: its result may be its first argument itself, updated in place
        (`unappended_into`).
      copy: its result is a new container holding what its first argument holds (and
        what its other arguments are or hold: `appended(xs, v)`).
      items: its result is a new container of its first argument's items, which
        for an array are views of its rows (`list(x)`, `tuple(x)`).
      shift: how a constant shift `t` of its argument passes through it (one of
        `SHIFTS`, see `compiler.analysis.invariance`): "exponential" makes
        `base + t` into `base * exp(t)`, "logarithm" the reverse, a "sum" keeps
        `base * exp(t)` for a `t` shared by what it sums (and, as a "reduction",
        may make one), the result of a "reduction" (keepdims=True) may be the
        shift itself, and a "squeeze" drops the axis it was reduced along.
      summed: `(its sum over lists of terms, the positions of the arguments that
        change from term to term)`, for a linear helper: a loop's steps keeping its
        other arguments (`compiler.optimize.loop_sums`), or the terms of one
        cotangent (`compiler.optimize.sums.summed_helpers`).
      identity: `(position, test, tested)`: a call of this helper in a template is
        its argument at `position` when its argument at `tested` passes `test`
        (one of `IDENTITY_TESTS`): has the shape of the result of the primitive
        whose template it is in, is a scalar, or is the constant True. Applied
        as the template is inlined (`compiler.templates`).
      updates: it writes into one of its arguments (`np.copyto`, `list.sort`): a
        call of it whose value is dropped is refused, since pullback would not
        follow the update (`compiler.analysis.interpret.Interpreter.dropped_call`).
      implementation: its Python version, a function pullback differentiates in its
        place, as JAX reimplements SciPy in `jax.scipy` (`implemented_by`): a
        library's function or bound method (`scipy.stats.norm.logpdf`), or an object
        whose call is (`scipy.stats.norm(loc, scale)`). Read wherever a callee is
        resolved: `compiler.analysis.interpret.Interpreter.call` when the function is
        transformed, `runtime.dispatch.forward` and `.forward_method` when it runs.
      lazy: it gives an iterator, its `implementation` a list of every item, made at
        the call (`map`, `filter`): a call whose iterator may be taken twice is refused
        (`compiler.frontend.lazy_iterators`).
      iterates: it takes the items of the iterables it is given, and its template reads
        those arguments again (`dict(zip(keys, values))`, `sum(reversed(xs))`): an
        iterator of differentiable items given to it (a zip, an enumerate) is listed
        before the call, and the call and its template given the list
        (`compiler.forward_code.ForwardCode.listed_iterators`). `list`, `tuple`, `zip` and
        `enumerate` read such an argument again only for how many items they took.
      refused: `{parameter: reason}`, the parameters of a primitive whose derivative
        its template does not give (the incomplete gamma function's in its shape
        parameter is not elementary), or, of a non-differentiable one, those whose
        derivative is not zero: a differentiable argument there is refused when the
        call is transformed, for a primitive, a dropped call or a `custom_vjp` function
        (`compiler.analysis.interpret.Interpreter.check_refused`).
      refused_version: a Python version (`implemented_by(..., where_refused=True)`)
        differentiated in the primitive's place where the argument at a `refused`
        parameter is differentiable: another form of the call, as `np.einsum`'s sublist
        form puts an operand where the subscripts string is. The call is then resolved
        when it runs (`runtime.dispatch.forward`, `refused_version_for`).
      structural: the positions of the arguments it reads only for their type and
        length (a list's, or an array's shape): a loop's earlier versions of a list it
        updates by index in place (`compiler.optimize.in_place_lists`) give it what they
        gave before.
      indexed: the positions of the arguments it reads only at the index it is given
        (`written_item(g, index, ...)` reads `g[index]`).
      shaped: `(position, by_shape)`: it reads its argument at `position` only for its
        shape, and `by_shape`, given `cotangents.shape_of` of that argument in its
        place, computes the same (`unbroadcast(g, x)`, `unbroadcast_to(g,
        shape_of(x))`): a pullback then holds the shape, not the value
        (`compiler.optimize.shape_reads`).
    """

    primitive: object
    template: object = None
    result: object = None
    nondifferentiable: bool = False
    linear: bool = False
    multilinear: bool = False
    absorbing: object = False
    view: bool = False
    same: bool = False
    copy: bool = False
    items: bool = False
    shift: str = None
    summed: tuple = None
    identity: tuple = None
    updates: bool = False
    implementation: object = None
    lazy: bool = False
    iterates: bool = False
    refused: dict = None
    refused_version: object = None
    structural: tuple = ()
    indexed: tuple = ()
    shaped: tuple = None
    _layouts: dict = dataclasses.field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.shift not in (None, *SHIFTS):
            raise ValueError(f"shift must be one of {SHIFTS}, not {self.shift!r}")
        if self.identity is not None and self.identity[1] not in IDENTITY_TESTS:
            raise ValueError(f"an identity's test must be one of {IDENTITY_TESTS}")
        if (self.linear or self.multilinear) and not self.absorbing:
            self.absorbing = True

    @functools.cached_property
    def signature(self):
        """The primitive's parameters as the template declares them (as the primitive
        does, for one without a template)."""
        if self.template is None:
            return inspect.signature(self.primitive)
        params = list(inspect.signature(self.template).parameters.values())
        return inspect.Signature(params[1:])

    def layout(self, count, names):
        """How `count` positional arguments and keyword arguments `names` bind to the
        template's parameters (`signature.bind`, defaults applied), computed once per
        count and names: by parameter, the `Slot` of its argument, a tuple or dict of
        slots (`*args`, `**kwargs`), or its default value.

        Raises:
          TypeError: when such arguments do not fit the signature.
        """
        key = (count, names)
        if key not in self._layouts:
            bound = self.signature.bind(*map(Slot, range(count)),
                                        **{name: Slot(name) for name in names})
            bound.apply_defaults()
            self._layouts[key] = dict(bound.arguments)
        return self._layouts[key]

    def absorbs_zero_at(self, position):
        """Whether a zero argument at `position` makes the result zero."""
        return self.absorbing is True or position in (self.absorbing or ())


class Slot:
    """Where an argument of a call is: its position, or its keyword."""

    def __init__(self, key):
        self.key = key


def adjoint(*primitives, result=None, **facts):
    """Register the decorated template as the derivative rule of `primitives`.

    Args:
      *primitives: the functions (numpy.sin, math.sin, operator.add, ...) the
        template differentiates; they share its signature.
      result: "elementwise", "scalar" or "array" when the result's kind is
        known from the arguments' kinds, or a function from the arguments'
        kinds to the result's (see `Spec`).
      **facts: what else holds of the primitives (`linear=True`, `view=True`,
        ...; see `Spec`), which optimisations and analyses use.

    Returns:
      A decorator that registers a template and returns it unchanged.

    Example:
      >>> import pullback
      >>> def cube(x):
      ...     return x ** 3
      >>> @pullback.adjoint(cube)
      ... def cube_rule(z, x):
      ...     d[x] = 3 * d[z] * x ** 2
      >>> pullback.grad(cube)(2.0)
      12.0
    """

    def register(template):
        for primitive in primitives:
            _register(primitive, template=template, result=result, **facts)
        return template

    return register


def nondifferentiable(*primitives, result=None):
    """Declare that `primitives` have no derivative: their results are constants.

    `result` is the kind of their results when more is known than that they
    are constants (`len` gives a scalar, `range` items that are scalars).
    """
    for primitive in primitives:
        _register(primitive, result=result, nondifferentiable=True)


def declare(*primitives, **facts):
    """Record `facts` (see `Spec`) of `primitives` that have no template of their
    own: helpers transformed as Python for derivatives of derivatives."""
    _check_fields(facts)
    for primitive in primitives:
        spec = _SPECS.get(key(primitive))
        _SPECS[key(primitive)] = (Spec(primitive, **facts) if spec is None
                                  else dataclasses.replace(spec, **facts))


def implemented_by(*library_functions, lazy=False, where_refused=False):
    """Register the decorated function as the Python version of `library_functions`
    (see `Spec.implementation`): pullback differentiates it in their place, like
    user code, so that it has derivatives of every order.

    The version takes the arguments the library function takes (its keywords too)
    and returns the same values, computed from primitives that have rules::

        @implemented_by(scipy.stats.norm.logpdf)
        def norm_logpdf(x, loc=0.0, scale=1.0):
            ...

    A bound method (`scipy.stats.norm.logpdf`) is found again when the user's code
    reads it, since bound methods are equal when their objects and functions are; when
    the code runs, the version also stands for that method of any object of its class.
    `lazy`: the library functions give iterators, the version a list (`Spec.lazy`).
    `where_refused`: the version stands for the calls with a differentiable argument at a
    parameter the primitive's rule refuses, only (`Spec.refused_version`).
    """

    def register(version):
        for fn in library_functions:
            if where_refused:
                declare(fn, refused_version=version)
                continue
            declare(fn, implementation=version, lazy=lazy)
            _METHOD_VERSIONS.update(dict.fromkeys(_methods_implemented(fn), version))
        return version

    return register


def _methods_implemented(fn):
    """`(class, method name)` for the methods whose calls `fn`'s Python version stands
    for on any object of that class: a bound method's, or an object's `__call__`."""
    owner = getattr(fn, "__self__", None)
    if owner is not None and not inspect.ismodule(owner):
        return [(type(owner), fn.__name__)]
    if not (inspect.isroutine(fn) or inspect.isclass(fn)):
        return [(type(fn), "__call__")]
    return []


def implementation_of(fn):
    """The Python version registered for callable `fn` (`implemented_by`), or None."""
    spec = spec_of(fn)
    return spec.implementation if spec is not None else None


def refused_version_for(fn, args, kwargs, differentiable):
    """The `Spec.refused_version` of `fn` when a call with `args`, `kwargs` has an argument
    for which `differentiable` is true at a parameter its rule refuses; else None."""
    spec = spec_of(fn)
    if spec is None or spec.refused_version is None:
        return None
    try:
        layout = spec.layout(len(args), tuple(kwargs))
    except TypeError:
        return None
    for param in spec.refused:
        slot = layout.get(param)
        if isinstance(slot, Slot) and differentiable(
                args[slot.key] if isinstance(slot.key, int) else kwargs[slot.key]):
            return spec.refused_version
    return None


def method_implementation(obj, name):
    """The Python version of method `name` of `obj`, registered for that method of an
    object of its class (SciPy's frozen distributions hold copies of the distribution
    objects whose methods have versions), or None."""
    version = _METHOD_VERSIONS.get((type(obj), name))
    if version is None and _registered_imported():
        version = _METHOD_VERSIONS.get((type(obj), name))
    return version


def implements_method(name, test):
    """Register the decorated function as the Python version of method `name` of every
    object passing `test` (named tuples' `_replace`, which each class defines anew),
    taking the object as its first argument, as the method's function does."""

    def register(version):
        _OBJECT_METHODS.append((test, name, version))
        return version

    return register


def object_method(obj, name):
    """The Python version of method `name` of `obj` registered with `implements_method`,
    taking the object first, or None."""
    for test, method, version in _OBJECT_METHODS:
        if method == name and test(obj):
            return version
    return None


def _register(primitive, **fields):
    """A new spec of `primitive`, in place of the one it had."""
    _check_fields(fields)
    _SPECS[key(primitive)] = Spec(primitive, **fields)


def _check_fields(fields):
    unknown = set(fields) - {"template", "result", "nondifferentiable", *FACTS}
    if unknown:
        raise TypeError(f"unknown facts of a primitive: {sorted(unknown)}; "
                        f"a spec holds {', '.join(FACTS)}")


def register_when_imported(library, rules_module):
    """Import `rules_module`, which registers the rules of the functions of module
    `library` (`"scipy.special"`), at the first look-up of a rule after `library` is
    imported: a library's rules cost its import only to the programs that import it."""
    _DEFERRED.append((library, rules_module))


def _registered_imported():
    """Register the deferred rules of the libraries imported since the last look-up;
    whether there were any."""
    registered = False
    while _DEFERRED and len(sys.modules) != _MODULES_SEEN[0]:  # rules may import libraries
        _MODULES_SEEN[0] = len(sys.modules)
        for entry in [entry for entry in _DEFERRED if entry[0] in sys.modules]:
            _DEFERRED.remove(entry)
            importlib.import_module(entry[1])
            registered = True
    return registered


def spec_of(fn):
    """The Spec registered for callable `fn`, or None (after registering the deferred
    rules of the libraries imported since the last look-up)."""
    spec = _SPECS.get(key(fn))
    if spec is None and _registered_imported():
        spec = _SPECS.get(key(fn))
    return spec


def specs():
    """Every registered Spec (of the libraries imported so far)."""
    _registered_imported()
    return list(_SPECS.values())


def rule_for(fn):
    """The Spec registered for callable `fn` if it has a template, else None."""
    spec = spec_of(fn)
    return spec if spec is not None and spec.template is not None else None


def updating_methods(*names):
    """Declare that methods with these names update their object (`xs.sort()`), for
    calls of a method of a value whose type is known only when it runs."""
    _UPDATING_METHODS.update(names)


def updates_in_place(fn, method, keywords):
    """Whether a call updates an argument in place: a call of `fn` (None when unknown),
    of a method named `method` (None for a function), or one passing `out=` (the
    names of its keyword arguments are `keywords`)."""
    spec = spec_of(fn) if fn is not None else None
    return ("out" in keywords or method in _UPDATING_METHODS
            or spec is not None and spec.updates)


def is_nondifferentiable(fn):
    """Whether `fn` was declared non-differentiable."""
    spec = spec_of(fn)
    return spec is not None and spec.nondifferentiable


def constant_result(fn):
    """The kind declared for the results of non-differentiable `fn`, or None."""
    spec = spec_of(fn)
    return spec.result if spec is not None and spec.nondifferentiable else None


def holds(fn, fact):
    """The value of `fact` (one of `FACTS`) for `fn`, or None when `fn` has no spec."""
    spec = spec_of(fn)
    return getattr(spec, fact) if spec is not None else None


def key(fn):
    """The key `fn`'s rule is registered under: `fn` itself, or its id if unhashable."""
    try:
        hash(fn)
    except TypeError:
        return id(fn)
    return fn


def no_rule_message(fn):
    """Why a call of `fn` with a differentiable argument is refused, and what to do."""
    name = describe(fn)
    if fn is complex or name.startswith("numpy.fft."):
        return (f"{name} returns complex numbers, which pullback does not differentiate: "
                "its derivative rules are written for real values; compute the real and "
                "imaginary parts as real values")
    if isinstance(fn, type):
        return (f"calling class {name} with a differentiable argument: pullback builds "
                "dataclasses, named tuples, and objects whose __init__ only stores its "
                "parameters (self.w = w); make it a dataclass, or compute the values before "
                "the call")
    return (f"no derivative rule for {name}, called here with a differentiable argument; "
            f"register one with @pullback.adjoint({name}) (see docs/rules.md)")


def describe(fn):
    """A callable's dotted name for messages: `numpy.sin`, `math.exp`, `len`."""
    owner = getattr(fn, "__objclass__", None)
    module = getattr(fn, "__module__", None) or getattr(owner, "__module__", "")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    return f"{module}.{name}" if module and module != "builtins" else name
