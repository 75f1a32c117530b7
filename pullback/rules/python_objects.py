"""Fields of objects: dataclasses, named tuples and objects with attributes."""

from pullback.compiler.analysis.kinds import ANY
from pullback.rules.registry import adjoint, d
from pullback.runtime import records
from pullback.runtime.records import unfield


@adjoint(records.field, result=lambda x, name: ANY)
def field(z, x, name):
    d[x] = unfield(d[z], x, name)
