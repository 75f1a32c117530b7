"""The objects generated code refers to, and the names it uses for them.

Generated code reads the user's globals live, through the user's own globals
dict, and the user's closure cells, through the user's cells. Everything
pullback adds (np and helpers that rules use, `ZERO`, `add`, the forwards of
called functions) reaches it through closure cells of its own, under names
that cannot be confused with the user's: `add` stays `add` unless the user's
function uses `add` for something else, in which case it becomes `add_1`.
"""

import builtins
import types
import weakref

from .syntax import nodes

# id of generated code -> (a weak reference to it, its free variables that are ours).
# Not a WeakKeyDictionary: code objects compare equal across compilations of the same
# text under other file names, and one dying would take the other's entry with it.
_HELPER_NAMES = {}


class Bindings:
    """Names and cells for the objects one generated function uses.

    Args:
      namer: the function's `naming.Namer` (it knows every user name).
      code: the user function's code object.
      user_globals: the user function's globals.
      nested_names: the names the user's nested functions use; a helper never
        takes one of them, so those functions keep exactly their own free
        variables inside the generated code.
    """

    def __init__(self, namer, code, user_globals, nested_names=()):
        self.namer = namer
        self.cells = {}
        self._by_identity = {}
        self._locals = set(code.co_varnames + code.co_cellvars + code.co_freevars)
        self._locals.update(nested_names)
        self._globals = user_globals

    def object(self, name, obj):
        """The name under which generated code reads `obj` (preferably `name`)."""
        return self.cell(name, types.CellType(obj), key=id(obj), obj=obj)

    def helper(self, name, obj):
        """The name under which generated code reads `obj`, which ANF already called
        `name` (a name it chose free in the function)."""
        return self.cell(name, types.CellType(obj), key=id(obj), obj=obj, free=True)

    def cell(self, name, cell, key=None, obj=None, free=False):
        """The name under which generated code reads the contents of `cell`."""
        key = id(cell) if key is None else key
        if key in self._by_identity:
            return self._by_identity[key][0]
        if name in self.namer.taken and not free and not self._means(name, obj):
            name = self.namer.fresh(name)
        else:
            self.namer.reserve(name)
        self._by_identity[key] = (name, obj, cell)
        self.cells[name] = cell
        return name

    def name_of(self, obj):
        """The name under which generated code reads `obj`, or None if it does not."""
        found = self._by_identity.get(id(obj))
        return found[0] if found is not None else None

    def calls(self, node, obj):
        """Whether the generated expression `node` calls `obj` by its name, with
        positional arguments only."""
        name = self.name_of(obj)
        return (name is not None and isinstance(node, nodes.Call)
                and nodes.is_name(node.func, name) and not node.keywords)

    def _means(self, name, obj):
        """Whether the user's code, reading `name`, gets exactly `obj`."""
        if obj is None or name in self._locals or name in self.cells:
            return False
        found = self._globals.get(name, getattr(builtins, name, _MISSING))
        return found is obj


def mark_helpers(code, names):
    """Record that the free variables `names` of generated `code`, and of the code
    nested in it, are pullback's cells (helpers, callees' forwards)."""
    own = names & set(code.co_freevars)
    if own:
        if id(code) not in _HELPER_NAMES:
            weakref.finalize(code, _HELPER_NAMES.pop, id(code), None)
        _HELPER_NAMES[id(code)] = (weakref.ref(code), frozenset(own))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            mark_helpers(const, names)


def helper_names(code):
    """The free variables of `code` that are pullback's cells: their contents are
    fixed for the generated code that reads them. Recorded by code object, not by
    cell: a cell's id may be a new cell's once generated code is dropped."""
    found = _HELPER_NAMES.get(id(code))
    return found[1] if found is not None and found[0]() is code else frozenset()


_MISSING = object()
