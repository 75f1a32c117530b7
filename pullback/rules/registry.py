"""The table of derivative rules: one template per primitive, registered by decorator.

A template is a tiny Python function whose signature is the result followed by
the primitive's parameters, and whose body writes the cotangent of each
differentiable parameter in terms of `d[result]` (Tangent's convention)::

    @adjoint(np.sin)
    def sin(z, x):
        d[x] = d[z] * np.cos(x)

The reverse pass inlines the body where the primitive is called
(`compiler.instantiate`): parameters
become the call's arguments, `z` the result, `d[z]` its cotangent, and
`d[x] = e` an accumulation into the cotangent of the argument bound to `x`.
Names the body assigns are renamed apart; other names (np, unbroadcast) are
looked up in the template's module. A body may only read `d[z]`.
"""

import dataclasses
import functools
import inspect

_ADJOINTS = {}
_NONDIFFERENTIABLE = {}


class _Cotangents:
    """The `d` of templates: `d[x]` is the cotangent of `x`. Never evaluated."""

    def __getitem__(self, key):
        raise TypeError("d[...] only has meaning inside a derivative template")


d = _Cotangents()


@dataclasses.dataclass
class Rule:
    """A registered template.

    Attributes:
      primitive: the function it differentiates.
      template: the template function.
      result: how the result's kind follows from the arguments' kinds:
        "elementwise" (promoted like arithmetic), "scalar", "array", a
        function of the arguments' kinds, or None (unknown).
    """

    primitive: object
    template: object
    result: str = None
    _layouts: dict = dataclasses.field(default_factory=dict)

    @functools.cached_property
    def signature(self):
        """The primitive's parameters as the template declares them."""
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


class Slot:
    """Where an argument of a call is: its position, or its keyword."""

    def __init__(self, key):
        self.key = key


def adjoint(*primitives, result=None):
    """Register the decorated template as the derivative rule of `primitives`.

    Args:
      *primitives: the functions (numpy.sin, math.sin, operator.add, ...) the
        template differentiates; they share its signature.
      result: "elementwise", "scalar" or "array" when the result's kind is
        known from the arguments' kinds, or a function from the arguments'
        kinds to the result's (see `Rule`).

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
            _ADJOINTS[key(primitive)] = Rule(primitive, template, result)
        return template

    return register


def nondifferentiable(*primitives, result=None):
    """Declare that `primitives` have no derivative: their results are constants.

    `result` is the kind of their results when more is known than that they
    are constants (`len` gives a scalar, `range` items that are scalars).
    """
    for primitive in primitives:
        _NONDIFFERENTIABLE[key(primitive)] = result


def rule_for(fn):
    """The Rule registered for callable `fn`, or None."""
    return _ADJOINTS.get(key(fn))


def is_nondifferentiable(fn):
    """Whether `fn` was declared non-differentiable."""
    return key(fn) in _NONDIFFERENTIABLE


def constant_result(fn):
    """The kind declared for the results of non-differentiable `fn`, or None."""
    return _NONDIFFERENTIABLE.get(key(fn))


def key(fn):
    """The key `fn`'s rule is registered under: `fn` itself, or its id if unhashable."""
    try:
        hash(fn)
    except TypeError:
        return id(fn)
    return fn


def describe(fn):
    """A callable's dotted name for messages: `numpy.sin`, `math.exp`, `len`."""
    owner = getattr(fn, "__objclass__", None)
    module = getattr(fn, "__module__", None) or getattr(owner, "__module__", "")
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    return f"{module}.{name}" if module and module != "builtins" else name
