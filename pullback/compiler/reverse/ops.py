"""The operations the forward pass (φ, `forward`) records, one per statement it
differentiates, for the backward pass (ρ, `backward`) to read in reverse order."""

import dataclasses


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
