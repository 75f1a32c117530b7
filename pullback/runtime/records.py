"""Objects read by attribute: dataclasses, named tuples and objects with attributes.

Their cotangent mirrors their fields, the way Zygote treats structs. Inside
generated code the cotangent of a named tuple is a tuple and that of any other
object a dict from field names to cotangents (so `add` sums them); what `grad`
returns is an object of the same class whose differentiable fields hold
cotangents (see `cotangents.materialize`). Reading `p.w` is a primitive with
a derivative rule, whose maps are here with their transposes.
"""

import ast
import copy
import dataclasses
import functools
import inspect
import textwrap
import types
import weakref

import numpy as np

from ..errors import TransformError
from ..rules import registry
from . import cotangents, introspection


def is_record(x):
    """Whether `x` is an object pullback reads by attribute (not a container, array,
    number, function, class or module)."""
    return _style(type(x), x) is not None


def _style(kind, x):
    """How records of class `kind` (`x` one of them) hold their fields: `_NAMED_TUPLE`,
    `_DATACLASS` or `_ATTRIBUTES` (in the instance's `__dict__`); None for a class whose
    instances are not records. The answer depends on the class alone, so it is kept."""
    style = _STYLES.get(kind, _UNKNOWN)
    if style is _UNKNOWN:
        if len(_STYLES) > _CLASSES_KEPT:  # classes made at run time, one per call
            _STYLES.clear()
        style = _STYLES[kind] = _style_of(x)
    return style


def _style_of(x):
    if type(x) in _PLAIN:
        return None
    if isinstance(x, tuple):
        return _NAMED_TUPLE if is_named_tuple(x) else None
    if isinstance(x, (list, dict)):  # a subclass, as `collections.Counter`: a container
        return None
    if dataclasses.is_dataclass(x):
        return None if isinstance(x, type) else _DATACLASS
    if hasattr(x, "__dict__") and bool(type(x).__flags__ & _HEAP_TYPE) and not isinstance(
            x, _NOT_RECORDS) and not inspect.isroutine(x):  # a Cython function has a __dict__
        return _ATTRIBUTES
    return None


_NAMED_TUPLE, _DATACLASS, _ATTRIBUTES = "named tuple", "dataclass", "attributes"
_STYLES = {}  # class -> `_style`
_UNKNOWN = object()
_CLASSES_KEPT = 1000

_PLAIN = {float, int, bool, str, tuple, list, dict, np.ndarray, type(None)}
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined by a class statement
_NOT_RECORDS = (type, types.ModuleType, types.FunctionType, types.MethodType,
                types.BuiltinFunctionType, np.ndarray, np.generic)


def leaves(value, into_closures=False):
    """The values inside `value` that are not tuples, lists, dicts, a dict's values or
    items, or objects with attributes (records), searched without recursion, each
    once (numbers and strings, which cannot hold others, maybe more than once); with
    `into_closures`, also those in functions' closure cells and bound methods'
    objects."""
    pending, seen = [value], set()
    while pending:
        value = pending.pop()
        if type(value) in _ATOMIC:
            yield value
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        kind = type(value)
        if kind is tuple or kind is list:  # the common containers first: no record test
            pending.extend(value)
        elif kind is dict:
            pending.extend(value.values())
        elif kind in _OPAQUE:
            yield value
        elif is_record(value):
            pending.extend(fields(value).values())
        elif isinstance(value, (tuple, list)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif type(value) in DICT_VIEWS:
            pending.extend(value)
        elif into_closures and isinstance(value, types.FunctionType):
            pending.extend(introspection.cell_values(value))
            pending.extend(value.__defaults__ or ())
            pending.extend((value.__kwdefaults__ or {}).values())
        elif into_closures and introspection.is_bound_method(value):
            pending.append(value.__self__)
        else:
            yield value


_ATOMIC = {int, float, bool, str, type(None)}
_OPAQUE = {slice, range, np.ndarray}  # leaves holding no other value pullback looks into


DICT_VIEWS = (type({}.values()), type({}.items()))  # walked as their items


def init_fields(cls):
    """`{parameter: field}`: the field a call of class `cls` sets from each parameter of
    its `__init__`, in order: a dataclass's (those with `init`) or a named tuple's, or a
    class whose `__init__` only stores parameters as attributes (`self.w = w`; a
    parameter it does not store sets no field, None); None for any other class."""
    if not isinstance(cls, type):
        return None
    if dataclasses.is_dataclass(cls):
        return {f.name: f.name for f in dataclasses.fields(cls) if f.init}
    if issubclass(cls, tuple):
        return {name: name for name in cls._fields} if hasattr(cls, "_fields") else None
    if cls not in _STORING:
        _STORING[cls] = _stored_parameters(cls)
    return _STORING[cls]


_STORING = weakref.WeakKeyDictionary()  # class -> its `init_fields`, for plain classes


def _stored_parameters(cls):
    """`init_fields` of a plain class: read from its `__init__`'s source, whose every
    statement is `self.attribute = parameter` (or a docstring)."""
    init = next(k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__)
    if not isinstance(init, types.FunctionType) or not introspection.is_user_function(init) or (
            cls.__new__ is not object.__new__ or cls.__setattr__ is not object.__setattr__):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init))).body[0]
    except (OSError, TypeError, SyntaxError):
        return None
    args = tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or not args.args:
        return None
    this, *params = [a.arg for a in args.args]
    fields = dict.fromkeys(params)
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        pairs = _stores(stmt)
        if pairs is None:
            return None
        for target, value in pairs:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == this and isinstance(value, ast.Name)
                    and value.id in fields and fields[value.id] is None):
                return None
            fields[value.id] = target.attr
    return fields


def _stores(stmt):
    """`[(target, value), ...]` for an assignment of one target (`self.w = w`, with an
    annotation too) or of a tuple of targets from a tuple of values of its length
    (`self.w, self.b = w, b`); None for any other statement."""
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [(stmt.target, stmt.value)]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return list(zip(target.elts, value.elts))
        return None
    return [(target, value)]


def unrecord(g, values, names):
    """The cotangents of the `values` a record was built from, given as its fields `names`,
    from the cotangent `g` of the record (a dict of its fields' cotangents)."""
    if g is cotangents.ZERO:
        return tuple(cotangents.ZERO for _ in names)
    return tuple(g.get(name, cotangents.ZERO) for name in names)


def rerecord(h, values, names):
    """The transpose of `unrecord`: the record's cotangent from those of its fields."""
    if h is cotangents.ZERO:
        return cotangents.ZERO
    return {name: ct for name, ct in zip(names, h)
            if ct is not cotangents.ZERO and name is not None}


def is_named_tuple(x):
    """Whether `x` is an instance of a named tuple class."""
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def operator_method(name, reflected, operand, *others):
    """`operand <op> other` (or `<op> operand`, `operand[key]`) on an object whose class
    defines the operator in Python, as Python runs it: the class's method `name`, else,
    when that gives `NotImplemented` (or there is none), the other operand's `reflected`
    method. A method written in C (a number's, an array's) is not tried: the object's
    class is then the one to handle it. Called through `dispatch.forward`, so the
    methods are differentiated."""
    result = NotImplemented
    if defines(type(operand), name):
        result = getattr(type(operand), name)(operand, *others)
    if result is NotImplemented and reflected is not None and defines(type(others[0]),
                                                                      reflected):
        result = getattr(type(others[0]), reflected)(others[0], operand)
    if result is NotImplemented:
        raise TypeError(f"unsupported operand types for {name}: {type(operand).__name__}")
    return result


def operator_refusal(obj):
    """The error for an operator's derivative meeting object `obj` of a class defining the
    operator where pullback took it for a number or an array (it came from a call
    resolved when it ran, whose result could be anything)."""
    cls = type(obj).__name__
    return TransformError(
        f"an operator on an object of class {cls}, which pullback did not know would be "
        f"one here (a value from a call resolved when it ran): the derivative would be "
        f"NumPy's, not that of {cls}'s method; call the method by name (a.__add__(b), "
        f"a.__getitem__(k)), or build the object where it is used", construct=cls)


def refuse_if_overloaded(*operands):
    """Refuse, at the line of `where` (the last of `operands`), an operand that is an
    object whose class defines the operator `where.construct` (`__add__`) or its
    reflection (`__radd__`) in Python: generated code differentiates the operator as
    NumPy's there, its kinds having said "anything"."""
    *operands, where = operands
    for x in operands:
        key = (type(x), where.construct)
        found = _OVERLOADING.get(key)
        if found is None:
            found = _OVERLOADING[key] = _overloads(*key)
        if found:
            error = operator_refusal(x)
            error.move(where.filename, where.lineno)
            raise error


def is_indexed(value):
    """Whether `value[i]` only picks an item of `value` at position or key `i`: a list, a
    tuple, a dict, a string or an array."""
    return isinstance(value, _INDEXED)


_INDEXED = (list, tuple, dict, str, bytes, range, np.ndarray)


def refuse_if_computing(container, refusal):
    """Raise `refusal` (a TransformError made where the function was transformed) for
    `container[i]` with a differentiable `i` when `container` is not a list, tuple, dict,
    string or array (`is_indexed`): its `__getitem__` may compute with the index, whose
    derivative generated code takes to be zero."""
    if not is_indexed(container):
        raise TransformError(refusal.message, refusal.filename, refusal.lineno,
                             refusal.construct)


def _overloads(cls, name):
    """Whether class `cls` defines operator `name` or its reflection in Python, and is not
    one of pullback's own (ZERO, deferred sums: arrays to the operators)."""
    return cls not in _PLAIN and not cls.__module__.startswith(_OWN) and (
        defines(cls, name) or defines(cls, f"__r{name[2:]}"))


_OVERLOADING = {}  # (class, operator's method) -> `_overloads`
_OWN = __name__.split(".")[0] + "."


def defines(cls, name):
    """Whether class `cls` defines method `name` in Python (an operator of its own)."""
    return isinstance(cls, type) and isinstance(getattr(cls, name, None), types.FunctionType)


def holds_field(obj, name):
    """Whether `obj.name` is a field of record `obj` (a function it holds, called as
    `obj.name(...)`), not a method of its class."""
    return is_record(obj) and name in fields(obj)


def fields(x):
    """The fields of record `x`, by name."""
    style = _style(type(x), x)
    if style is _ATTRIBUTES:
        return dict(vars(x))
    if style is _NAMED_TUPLE:
        return x._asdict()
    if style is _DATACLASS:
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
    return dict(vars(x))


def rebuild(x, values):
    """A copy of record `x` with the fields in `values` replaced."""
    if is_named_tuple(x):
        return x._replace(**values)
    result = copy.copy(x)
    for name, value in values.items():
        object.__setattr__(result, name, value)
    return result


def field(x, name):
    """`x.name`: the primitive behind attribute reads of records."""
    return getattr(x, name)


def computed(cls, name):
    """The descriptor by which class `cls` computes attribute `name` when it is read (a
    `property`, a `functools.cached_property`), or None: a field (a named tuple's too),
    a method, a class variable."""
    found = inspect.getattr_static(cls, name, None)
    return found if isinstance(found, (property, functools.cached_property)) else None


def computed_refusal(cls, name):
    """`(message, construct)` refusing a read of attribute `name` that `cls` computes."""
    kind = type(computed(cls, name)).__name__
    return (f"{cls.__name__}.{name} is computed when it is read (a {kind}), which pullback "
            f"does not differentiate: make it a method and call it ({name}())", f"{kind} read")


def _check_stored(x, name):
    """Refuse the derivative of `x.name` where `x`'s class computes `name`: its cotangent
    would go to no field, its tangent come from none (a derivative silently zero)."""
    if not isinstance(x, np.ndarray) and computed(type(x), name) is not None:
        message, construct = computed_refusal(type(x), name)
        raise TransformError(message, construct=construct)


def unfield(g, x, name):
    """The cotangent of record `x` from the cotangent `g` of `x.name` (`x` may also
    turn out to be an array, whose `.T` is its transpose)."""
    if g is cotangents.ZERO:
        return cotangents.ZERO
    _check_stored(x, name)
    if isinstance(x, np.ndarray):
        return _array_attribute(g, name)
    if is_named_tuple(x):
        items = [cotangents.ZERO] * len(x)
        items[x._fields.index(name)] = g
        return tuple(items)
    return {name: g}


def refield(h, x, name):
    """The transpose of `unfield`: the part of cotangent `h` of `x` for field `name`."""
    if h is cotangents.ZERO:
        return cotangents.ZERO
    _check_stored(x, name)
    if isinstance(x, np.ndarray):
        return _array_attribute(h, name)
    if is_named_tuple(x):
        return h[x._fields.index(name)]
    return h.get(name, cotangents.ZERO)


def _array_attribute(g, name):
    """The part of `g`, the derivative of an array, for attribute `name` of the array:
    its transpose for `.T`, none for a shape (`.ndim`, a constant)."""
    if registry.is_nondifferentiable(getattr(np.ndarray, name, None)):
        return cotangents.ZERO
    if name != "T":
        raise TypeError(f"no derivative rule for the array attribute .{name}")
    return np.transpose(g)


def internal(ct):
    """A cotangent given by a user, with records as generated code holds them."""
    if is_record(ct):
        items = {k: internal(v) for k, v in fields(ct).items()}
        return tuple(items.values()) if is_named_tuple(ct) else items
    if isinstance(ct, (tuple, list)):
        return type(ct)(internal(c) for c in ct)
    if isinstance(ct, dict):
        return {k: internal(v) for k, v in ct.items()}
    return ct
