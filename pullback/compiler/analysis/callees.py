"""What a call's callee is, when it is known before the function runs.

The reverse pass asks, for each call, whether its `func` names an object known
now (a global or builtin, a module's attribute, a method of a value whose kind
is known, a helper pullback bound): then the call is a primitive's or a static
call of a Python function, and otherwise a call resolved at run time
(`runtime.dispatch`). It records the globals it read, so that a derivative is
made again when they change.
"""

import builtins

import numpy as np

from ...errors import TransformError
from ..analysis import kinds
from ..syntax import nodes

_MISSING = object()


class Callees:
    """Callee resolution for one function.

    Args:
      origin: the function's `parse.Origin` (globals, cells, helpers).
      tree: its ANF `FunctionDef`.
      variables: `variables()`, the kinds of its variables so far, by name (the
        reverse pass fills them in as it reads, and replaces them at branches).
      kind_of: the kind of an atom.
      error: `error(message, construct)`, a TransformError at the line being read.
      imports: the objects the function's import statements bound, by name.

    Attributes:
      globals_used: the global objects resolved, by name.
    """

    def __init__(self, origin, tree, variables, kind_of, error, imports):
        self.origin = origin
        self.imports = imports
        self.tree = tree
        self.variables = variables
        self.kind_of = kind_of
        self.error = error
        self.globals_used = {}
        self.locals = None  # the names the function assigns or binds, once asked

    def callee(self, func):
        """The object a call's `func` refers to, when known before running, else None."""
        if self.is_method(func):
            receiver = self.kind_of(func.value)
            if receiver.shape == "array":  # differentiable or not, an array
                method = getattr(np.ndarray, func.attr, None)
                if method is None:
                    raise self.error(f"NumPy arrays have no method .{func.attr}",
                                     f"method .{func.attr}")
                return method
            if isinstance(receiver, kinds.Container) and receiver.type in (tuple, list, dict):
                return getattr(receiver.type, func.attr, None)
            return None
        path = nodes.dotted_path(func)
        if path is None:
            return None
        root, *attrs = path.split(".")
        if root in self.origin.helpers:
            obj = self.origin.cells[root].cell_contents
        elif root in self.imports:
            obj = self.imports[root]
        elif root in self.variables() or root in self.origin.cells:
            return None
        else:
            obj = self.global_object(root)
        for attr in attrs:
            if not hasattr(obj, attr):
                raise self.error(f"{path}: {obj!r} has no attribute {attr!r}", path)
            obj = getattr(obj, attr)
        return obj

    def is_method(self, func):
        """Whether `func` is `atom.method` on a local value or a constant, not `np.sin`.

        In generated code, pullback's helpers read from cells (np, math) are
        references too.
        """
        if not isinstance(func, nodes.Attribute):
            return False
        path = nodes.dotted_path(func)
        if path is None:
            return True
        root = path.split(".")[0]
        return root in self.variables() and root not in self.origin.helpers

    def is_reference(self, node):
        """Whether `node` is a dotted name rooted outside the function (np.pi)."""
        path = nodes.dotted_path(node)
        return path is not None and path.split(".")[0] not in self.variables()

    def global_object(self, name):
        """The global (or builtin) `name` refers to, recorded in `globals_used`."""
        obj = self.origin.globals.get(name, _MISSING)
        if obj is _MISSING:
            obj = getattr(builtins, name, _MISSING)
        if obj is _MISSING:
            raise self.error(f"name {name!r} is not defined", name)
        self.globals_used[name] = obj
        return obj

    def global_callee(self, func):
        """The global object (`np.exp`) a call's `func` refers to, or None: also for a
        name the function assigns, which may not be assigned yet."""
        path = nodes.dotted_path(func)
        if path is None or path.split(".")[0] in self.local_names():
            return None
        try:
            return self.callee(func)
        except TransformError:
            return None

    def local_names(self):
        """The names the function assigns, its parameters and its free variables."""
        if self.locals is None:
            self.locals = nodes.stores(self.tree) | set(self.variables())
        return self.locals
