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

The user's nested functions appear in the forward as written. Their code
objects in the compiled forward are replaced by code compiled from the user's
own lines and file, so a closure the forward creates is the user's closure:
tracebacks, pdb and pullback itself read its source where the user wrote it.
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
      `(lines, source_map, closures)`: the text's lines (without newlines);
      for each of them, the user line it came from (or None); and, by line
      index, the user's nested functions (`def` or `lambda` ast nodes).
    """
    verbatim = {n.name for n in nodes.walk(tree) if isinstance(n, nodes.FunctionDef)
                and hasattr(n, "captured") and not getattr(n, "loop", False)}
    out = _Renderer(origin, verbatim)
    out.statement(nodes.to_ast(tree), 0)
    return out.lines, out.source_map, out.closures


class _Renderer:
    def __init__(self, origin, verbatim):
        self.origin = origin
        self.verbatim = verbatim
        self.lines = []
        self.source_map = []
        self.closures = {}
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
        if lineno is None:
            stmt.lineno = 0  # ast.unparse reads it; no user line, so no comment
        if isinstance(stmt, ast.FunctionDef) and stmt.name in self.verbatim:
            self.closures[len(self.lines)] = stmt
            for line in ast.unparse(stmt).splitlines():
                self.add(line, indent, lineno)
        elif isinstance(stmt, ast.FunctionDef):
            self.add(f"def {stmt.name}({ast.unparse(stmt.args)}):", indent, lineno)
            self.block(stmt.body, indent + 1)
        elif isinstance(stmt, ast.If):
            self.add(f"if {ast.unparse(stmt.test)}:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
            if stmt.orelse:
                self.add("else:", indent, lineno)
                self.block(stmt.orelse, indent + 1, lineno)
        elif isinstance(stmt, ast.For):
            target = ast.unparse(stmt.target).removeprefix("(").removesuffix(")")
            self.add(f"for {target} in {ast.unparse(stmt.iter)}:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
        elif isinstance(stmt, ast.While):
            self.add(f"while {ast.unparse(stmt.test)}:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple):
            elts = stmt.targets[0].elts
            targets = ", ".join(ast.unparse(t) for t in elts) + ("," if len(elts) == 1 else "")
            self.add(f"{targets} = {ast.unparse(stmt.value)}", indent, lineno)
        else:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Lambda):
                self.closures[len(self.lines)] = stmt.value
            self.add(ast.unparse(stmt), indent, lineno)


def unparse(node):
    """The source text of a gast node (a statement or an expression)."""
    tree = nodes.to_ast(node)
    for part in ast.walk(tree):
        if isinstance(part, ast.stmt) and not hasattr(part, "lineno"):
            part.lineno = 0  # ast.unparse reads it
    return ast.unparse(tree)


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
    lines, source_map, closures = render(tree, origin)
    factory = f"def {tree.name}_factory({', '.join(sorted(free_names))}):"
    body = [_INDENT + line for line in lines] + [f"{_INDENT}return {tree.name}"]
    text = "\n".join([f"# {header}", factory] + body) + "\n"
    register(filename, text)
    module = compile(text, filename, "exec")
    code = _constant_code(_constant_code(module, f"{tree.name}_factory"), tree.name)
    by_line = {index + _FIRST_LINE: node for index, node in closures.items()}
    code = _with_user_closures(code, by_line, origin.filename)
    return code, "\n".join(lines) + "\n", [None, None] + source_map


def _with_user_closures(code, by_line, filename):
    """`code` with the code of each user closure in it (at any depth) replaced by
    `_user_code`; `by_line` maps generated line numbers to their nodes."""
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_firstlineno in by_line:
            const = _user_code(by_line[const.co_firstlineno], const, filename)
        elif isinstance(const, types.CodeType):
            const = _with_user_closures(const, by_line, filename)
        consts.append(const)
    return code.replace(co_consts=tuple(consts))


_FIRST_LINE = 3  # the header comment and the factory come first


def _user_code(node, generated, filename):
    """The code of a user's nested function, compiled from its own lines and file.

    `generated` is the code compiled from the generated text; both read the
    same closure cells.
    """
    factory = ast.parse(f"def closure_factory({', '.join(generated.co_freevars)}):\n    pass")
    inner = node if isinstance(node, ast.FunctionDef) else ast.copy_location(
        ast.Return(value=node), node)
    factory.body[0].body = [inner]
    code = _constant_code(_constant_code(compile(factory, filename, "exec"), "closure_factory"),
                          generated.co_name)
    if code.co_freevars != generated.co_freevars:
        raise AssertionError(f"{generated.co_name}: closure variables {code.co_freevars} "
                             f"differ from {generated.co_freevars}")
    return code


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
