"""Fields of objects: dataclasses, named tuples and objects with attributes."""

import dataclasses

from pullback.compiler.analysis.kinds import ANY
from pullback.rules.registry import adjoint, d, implemented_by, implements_method, t
from pullback.runtime import records
from pullback.runtime.records import refield, unfield


@adjoint(records.field, result=lambda x, name: ANY)
def field(z, x, name):
    d[x] = unfield(d[z], x, name)
    t[z] = refield(t[x], x, name)


@implemented_by(dataclasses.replace)
@implements_method("_replace", records.is_named_tuple)
def replace(obj, /, **changes):
    """`dataclasses.replace(obj, **changes)`, and `obj._replace(**changes)` of a named
    tuple: a record of `obj`'s class, with `changes` in place of its fields."""
    values = {name: changes[name] if name in changes else getattr(obj, name)
              for name in records.init_fields(type(obj))}
    return type(obj)(**values)
