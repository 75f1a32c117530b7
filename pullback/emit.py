"""Stage 5: from the generated tree to a live function.

`render` prints a generated function with `ast.unparse`, one statement at a
time, and puts a comment naming the user's file:line (and the text of that
line) above every block of statements that came from it. `compile_forward`
compiles the text under its own file name, registered in `linecache`, so that
tracebacks, `inspect.getsource` and pdb show the generated code, and returns
the code object of the forward function.

The compiled text wraps the forward function in a factory whose parameters are
the names it reads from closure cells (pullback's helpers and the user's own
free variables); the factory is never called: `bind` builds the forward
function from the code object directly, with the user's live globals and cells.
"""

import ast
import linecache
import os
import types

from . import nodes

_SOURCES = {}
_INDENT = "    "


def render(tree, origin):
    """The source text of FunctionDef `tree`, with origin comments.

    Returns:
      `(lines, source_map)`: the text's lines (without newlines) and, for each
      of them, the user line it came from (or None).
    """
    out = _Renderer(origin)
    out.statement(nodes.to_ast(tree), 0)
    return out.lines, out.source_map


class _Renderer:
    def __init__(self, origin):
        self.origin = origin
        self.lines = []
        self.source_map = []
        self.basename = os.path.basename(origin.filename)

    def add(self, text, indent, lineno):
        self.lines.append(_INDENT * indent + text)
        self.source_map.append(lineno)

    def block(self, statements, indent, current=None):
        for stmt in statements:
            lineno = getattr(stmt, "lineno", None)
            if lineno is not None and lineno != current and not isinstance(stmt,
                                                                          ast.FunctionDef):
                text = self.origin.line_text(lineno)
                self.add(f"# {self.basename}:{lineno}: {text}".rstrip(": "), indent, lineno)
            current = lineno
            self.statement(stmt, indent)

    def statement(self, stmt, indent):
        """Print one statement (a standard-library ast node) and its body."""
        lineno = getattr(stmt, "lineno", None)
        if isinstance(stmt, ast.FunctionDef):
            self.add(f"def {stmt.name}({ast.unparse(stmt.args)}):", indent, lineno)
            self.block(stmt.body, indent + 1)
        elif isinstance(stmt, ast.If):
            self.add(f"if {ast.unparse(stmt.test)}:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
            if stmt.orelse:
                self.add("else:", indent, lineno)
                self.block(stmt.orelse, indent + 1, lineno)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple):
            targets = ", ".join(ast.unparse(t) for t in stmt.targets[0].elts)
            self.add(f"{targets} = {ast.unparse(stmt.value)}", indent, lineno)
        else:
            self.add(ast.unparse(stmt), indent, lineno)


def unparse(node):
    """The source text of a gast node (a statement or an expression)."""
    return ast.unparse(nodes.to_ast(node))


def compile_forward(tree, origin, free_names, filename, header):
    """Compile generated FunctionDef `tree`.

    Args:
      tree: the forward function.
      origin: the user function's `parse.Origin` (for comments).
      free_names: names the forward reads from closure cells.
      filename: the name to compile under and register in `linecache`.
      header: a one-line comment for the top of the text.

    Returns:
      `(code, text, source_map)`: the forward's code object, the text of the
      forward alone (for display) and its source map.
    """
    lines, source_map = render(tree, origin)
    factory = f"def {tree.name}_factory({', '.join(sorted(free_names))}):"
    body = [_INDENT + line for line in lines] + [f"{_INDENT}return {tree.name}"]
    text = "\n".join([f"# {header}", factory] + body) + "\n"
    register(filename, text)
    module = compile(text, filename, "exec")
    factory_code = _constant_code(module, f"{tree.name}_factory")
    code = _constant_code(factory_code, tree.name)
    return code, "\n".join(lines) + "\n", [None, None] + source_map


def _constant_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise LookupError(name)


def register(filename, text):
    """Make `text` the contents of `filename` for linecache (and so for inspect, pdb)."""
    lines = text.splitlines(keepends=True)
    _SOURCES[filename] = text
    linecache.cache[filename] = (len(text), None, lines, filename)


def source_lines(filename):
    """The lines of a generated file, re-registering it if linecache was cleared."""
    text = _SOURCES.get(filename)
    if text is None:
        return []
    register(filename, text)
    return linecache.cache[filename][2]


def bind(code, globals_, cells, defaults=None, kwdefaults=None):
    """A function from generated `code`, reading `globals_` and the `cells` it names."""
    closure = tuple(cells[name] for name in code.co_freevars)
    fn = types.FunctionType(code, globals_, code.co_name, defaults, closure)
    fn.__kwdefaults__ = kwdefaults
    return fn
