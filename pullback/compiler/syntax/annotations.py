"""The attributes the stages set on gast nodes beyond gast's own fields, declared once.

A stage that needs to tell a later one something about a node (that a function
is a loop's body, that an assignment is an update in place) sets an attribute
on it. Each such attribute is listed in `ANNOTATIONS`: the nodes that carry
it, who sets it and who reads it. `check` raises on any other, and runs on every
tree in A-normal form (`anf.check_anf`) and on every tree emitted (`emit.render`).
"""

from . import nodes

ANNOTATIONS = {
    "flag": (("For", "While"), "flow: the variable holding how the loop's body exited, "
                               "when it may return or has an else; read by anf"),
    "carried": (("For", "While"), "flow: the variables an iteration reads from the one "
                                  "before, or that are read after the loop; read by anf"),
    "exit": (("Return",), "flow: the flag a loop body's return stands for ('break', "
                          "'next', 'return'); read by anf"),
    "attempt": (("If",), "try_blocks: the if is a try statement's, on whether its block "
                         "raised: (what it catches, the name of what it caught); read by "
                         "anf and the reverse pass, which writes the try"),
    "loop": (("FunctionDef",), "anf: the function is a loop's body, not the user's; read by "
                               "inline, scopes, the reverse pass and emit"),
    "captured": (("FunctionDef", "Lambda"), "anf: the free variables of a nested function, "
                                            "in co_freevars order; read by the reverse pass"),
    "parameter_versions": (("FunctionDef",), "anf: a parameter assigned again, which a "
                                             "closure reads, -> its first version; read by "
                                             "the reverse pass"),
    "helper": (("Call",), "anf: the runtime helper a call stands for (with_item, iterate); "
                          "read by inline, the reverse pass and the alias analysis"),
    "updates": (("Assign",), "anf: (variable, its version before) of an update in place "
                             "ANF made a new value; read by the alias analysis"),
    "written_back": (("Assign",), "anf: the update is of an item of an item (x[i][j] = v); "
                                  "read by the alias analysis"),
    "inlined": (("FunctionDef",), "inline: the globals the functions inlined into it read; "
                                  "read by inline"),
    "size": (("FunctionDef",), "inline: how many statements an inlinable callee has; read by "
                               "inline"),
    "pullback": (("FunctionDef",), "reverse: the function is a pullback; read by optimize"),
    "states": (("FunctionDef",), "loop_caches: in a loop's pullback, the cotangent of each "
                                 "state it carries -> the loop's name for that state; read "
                                 "by inline_items"),
}
"""name -> (the node classes that may carry it, who sets it and who reads it)."""


def rename_version(node, old, new):
    """Rename version `old` to `new` in the annotations of `node` that name versions
    (`updates`, `written_back`, `attempt`), as a rename of its Name nodes does in its
    code."""
    updates = getattr(node, "updates", None)
    if updates is not None and updates[1] == old:
        node.updates = (updates[0], new)
    for atom in getattr(node, "attempt", None) or ():
        for name in nodes.walk(atom):
            if isinstance(name, nodes.Name) and name.id == old:
                name.id = new
    written = getattr(node, "written_back", None)
    if written is not None:
        node.written_back = [new if name == old else name for name in written]


def extra_attributes(node):
    """The attributes of gast `node` that are neither its fields nor its positions."""
    return set(vars(node)) - set(node._fields) - set(getattr(node, "_attributes", ()))


def check(tree):
    """Raise AssertionError if a node of `tree` carries an attribute `ANNOTATIONS`
    does not declare for its class."""
    for node in nodes.walk(tree):
        allowed = _ALLOWED.get(type(node))
        if allowed is None:
            allowed = _allowed(type(node))
        if allowed.issuperset(node.__dict__):
            continue
        for name in extra_attributes(node) - allowed:
            raise AssertionError(
                f"{type(node).__name__}.{name} is not a declared annotation "
                "(compiler/syntax/annotations.py)")


_ALLOWED = {}
"""gast class -> the attributes its nodes may carry (`_allowed`)."""


def _allowed(cls):
    """The attributes a node of `cls` may carry: its fields, its positions and the
    annotations declared for it."""
    _ALLOWED[cls] = frozenset(cls._fields) | frozenset(getattr(cls, "_attributes", ())) | {
        name for name, (carriers, _) in ANNOTATIONS.items() if cls.__name__ in carriers}
    return _ALLOWED[cls]
