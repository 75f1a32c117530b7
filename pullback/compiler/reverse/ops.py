"""The operations the forward pass (φ, `forward`) records, one per statement it
differentiates, for the backward pass (ρ, `backward`) to read in reverse order."""

import dataclasses

from ..syntax import nodes


@dataclasses.dataclass
class Copy:
    target: str
    source: object
    lineno: int


@dataclasses.dataclass
class Primitive:
    target: str
    rule: object
    args: list
    keywords: list
    lineno: int


@dataclasses.dataclass
class Call:
    target: str
    pullback: str
    bound: list  # the atom receiving each cotangent the pullback returns (a method's: its object)
    lineno: int
    split: bool = False  # a call f(*args, **kwargs): bound is [f, args, kwargs]


@dataclasses.dataclass
class Unpack:
    targets: list
    source: str
    container: object
    lineno: int


@dataclasses.dataclass
class Build:
    target: str
    keys: list  # the key of each value; if it unpacks parts, the helper's layout argument
    values: list
    lineno: int
    unpacks: object = None  # structures.unstar or .undict when parts are unpacked (*x, **d)


@dataclasses.dataclass
class Closure:
    target: str
    captured: list  # the free variables of the closure, in `co_freevars` order
    lineno: int
    group: list = None  # closures that read one another: all of them on the first, [] on others
    defaults: list = dataclasses.field(default_factory=list)  # atoms, in the cotangent's order
    later: list = dataclasses.field(default_factory=list)  # functions it reads, defined after it
    label: str = None  # how messages name it, when not by its name (a loop's body)


@dataclasses.dataclass
class Branch:
    test: object
    body: list
    orelse: list
    lineno: int


def reads(op):
    """The variables the operations `op` (one, or a list) read, at any depth."""
    found = set()
    for one in op if isinstance(op, list) else [op]:
        if isinstance(one, Branch):
            found |= reads(one.body) | reads(one.orelse)
        else:
            found |= {name for atom in _ATOMS[type(one)](one) for name in _names(atom)}
    return found


def defines(op):
    """The variables the operations `op` (one, or a list) define, at any depth."""
    found = set()
    for one in op if isinstance(op, list) else [op]:
        if isinstance(one, Branch):
            found |= defines(one.body) | defines(one.orelse)
        elif isinstance(one, Unpack):
            found.update(t for t in one.targets if t is not None)
        else:
            found.add(one.target)
    return found


_ATOMS = {
    Copy: lambda op: [op.source],
    Primitive: lambda op: op.args + [value for _, value in op.keywords],
    Call: lambda op: op.bound,
    Unpack: lambda op: [op.source],
    Build: lambda op: op.values,
    Closure: lambda op: op.captured + op.defaults,
}
"""What each kind of operation reads: names, and atoms (name or tuple nodes)."""


def _names(atom):
    if isinstance(atom, str):
        return {atom}
    return nodes.reads(atom) if isinstance(atom, nodes.AST) else set()
