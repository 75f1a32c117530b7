"""Fields of objects: dataclasses, named tuples and objects with attributes."""

from pullback import records
from pullback.kinds import ANY
from pullback.records import unfield
from pullback.rules import adjoint, d


@adjoint(records.field, result=lambda x, name: ANY)
def field(z, x, name):
    d[x] = unfield(d[z], x, name)
