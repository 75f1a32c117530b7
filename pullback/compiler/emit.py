"""Stage 5: from the generated tree to a live function.

`render` prints a generated function with `ast.unparse`, one statement at a
time, and puts a comment naming the user's file:line (and the text of that
line) above every block of statements that came from it: `# from f.py:12: ...`.
Given the name of a NaN checker (`pullback.config(check_nans=True)`), it
calls it after every assignment. `compile_forward` compiles the text under its
own file name, registered in `linecache` (and written there when it is a real
path: `pullback.config(debug_dir=...)`), so that tracebacks, `inspect.getsource`
and debuggers show the generated code; it records the source map in
`debugging` and returns the code object of the forward function.

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

from ..runtime import debugging
from .syntax import annotations, nodes

_SOURCES = {}
_INDENT = "    "


def render(tree, origin, checker=None):
    """The source text of FunctionDef `tree`, with origin comments.

    Args:
      tree: a gast FunctionDef.
      origin: the `parse.Origin` of the user function it comes from.
      checker: the name under which the code reads `debugging.check_nan`, to
        call after each assignment; None for none.

    Returns:
      `(lines, source_map, closures)`: the text's lines (without newlines);
      for each of them, the user line it came from (or None); and, by line
      index, the user's nested functions (`def` or `lambda` ast nodes).
    """
    annotations.check(tree)
    verbatim = {n.name for n in nodes.statements(tree) if isinstance(n, nodes.FunctionDef)
                and hasattr(n, "captured") and not getattr(n, "loop", False)}
    out = _Renderer(origin, verbatim, checker)
    out.statement(nodes.to_ast(tree), 0)
    return out.lines, out.source_map, out.closures


class _Renderer:
    def __init__(self, origin, verbatim, checker):
        self.origin = origin
        self.verbatim = verbatim
        self.checker = checker
        self.lines = []
        self.source_map = []
        self.closures = {}
        self.last_comment = None

    def add(self, text, indent, lineno):
        self.lines.append(_INDENT * indent + text)
        self.source_map.append(lineno)

    def block(self, statements, indent, current=None):
        """Print `statements` at `indent`; an empty block is `pass`, so the text always
        compiles, whatever the passes before emptied."""
        if not statements:
            self.add("pass", indent, current)
        for stmt in statements:
            lineno = getattr(stmt, "lineno", None)
            if lineno is not None and lineno != current and not isinstance(stmt,
                                                                          ast.FunctionDef):
                comment = self.comment(lineno)
                if comment != self.last_comment:
                    self.add(comment, indent, lineno)
                self.last_comment = comment
            current = lineno
            self.statement(stmt, indent)
            if self.checker is not None and isinstance(stmt, ast.Assign):
                self.check(_assigned_names(stmt.targets[0]), indent, lineno)

    def comment(self, lineno):
        """`# from file.py:12: the line's text`, naming the user's line also for code
        generated from generated code (a second derivative: `debugging.locate`)."""
        origin, line = debugging.locate(self.origin.filename, lineno) or (self.origin, lineno)
        text = origin.line_text(line)
        return f"# from {os.path.basename(origin.filename)}:{line}: {text}".rstrip(": ")

    def check(self, names, indent, lineno):
        """Call the NaN checker on the values just assigned to `names` (the line
        before is the assignment: `debugging.check_nan` relies on it)."""
        if names:
            value = names[0] if len(names) == 1 else f"({', '.join(names)})"
            self.add(f"{self.checker}({value}, {', '.join(names)!r})", indent, lineno)

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
            self.last_comment = None  # a function's code says where it starts from
            self.block(stmt.body, indent + 1)
            self.last_comment = None
        elif isinstance(stmt, ast.If):
            self.add(f"if {ast.unparse(stmt.test)}:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
            if stmt.orelse:
                self.add("else:", indent, lineno)
                self.block(stmt.orelse, indent + 1, lineno)
        elif isinstance(stmt, ast.Try):
            self.add("try:", indent, lineno)
            self.block(stmt.body, indent + 1, lineno)
            for handler in stmt.handlers:
                caught = "" if handler.type is None else f" {ast.unparse(handler.type)}"
                named = "" if handler.name is None else f" as {handler.name}"
                self.add(f"except{caught}{named}:", indent, lineno)
                self.block(handler.body, indent + 1, lineno)
            for word, block in (("else", stmt.orelse), ("finally", stmt.finalbody)):
                if block:
                    self.add(f"{word}:", indent, lineno)
                    self.block(block, indent + 1, lineno)
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
            for line in ast.unparse(stmt).splitlines():  # a compound one (`with`): several
                self.add(line, indent, lineno)


def _assigned_names(target):
    """The names an assignment to `target` binds (a name or nested tuples of names)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for item in target.elts for name in _assigned_names(item)]
    return []


def compile_forward(tree, origin, free_names, filename, header, checker=None):
    """Compile generated FunctionDef `tree`.

    Args:
      tree: the forward function.
      origin: the user function's `parse.Origin` (for comments).
      free_names: names the forward reads from closure cells.
      filename: the name to compile under and register in `linecache`; a
        path (not a `<pseudo name>`) is also written to.
      header: a one-line comment for the top of the text.
      checker: see `render`.

    Returns:
      `(code, text, source_map)`: the forward's code object, the text of the
      forward alone (for display) and its source map.
    """
    lines, source_map, closures = render(tree, origin, checker)
    factory = f"def {tree.name}_factory({', '.join(sorted(free_names))}):"
    body = [_INDENT + line for line in lines] + [f"{_INDENT}return {tree.name}"]
    text = "\n".join([f"# {header}", factory] + body) + "\n"
    register(filename, text)
    module = compile(text, filename, "exec")
    code = _constant_code(_constant_code(module, f"{tree.name}_factory"), tree.name)
    by_line = {index + _FIRST_LINE: node for index, node in closures.items()}
    code = _with_user_closures(code, by_line, origin)
    source_map = [None, None] + source_map
    debugging.record(filename, origin, source_map)
    return code, "\n".join(lines) + "\n", source_map


def _with_user_closures(code, by_line, origin):
    """`code` with the code of each user closure in it (at any depth) replaced by
    `_user_code`; `by_line` maps generated line numbers to their nodes."""
    consts = list(code.co_consts)
    for i, const in enumerate(consts):
        if isinstance(const, types.CodeType) and const.co_firstlineno in by_line:
            qualname = f"{origin.name}.<locals>.{const.co_name}"
            consts[i] = _user_code(by_line[const.co_firstlineno], const, origin.filename,
                                   qualname)
            after = consts[i + 1] if i + 1 < len(consts) else None
            if isinstance(after, str) and after.endswith(f".<locals>.{const.co_name}"):
                consts[i + 1] = qualname  # the name MAKE_FUNCTION gives it (Python 3.10)
        elif isinstance(const, types.CodeType):
            consts[i] = _with_user_closures(const, by_line, origin)
    return code.replace(co_consts=tuple(consts))


_FIRST_LINE = 3  # the header comment and the factory come first


def _user_code(node, generated, filename, qualname):
    """The code of a user's nested function, compiled from its own lines and file,
    named `qualname` as Python names it (`f.<locals>.g`).

    `generated` is the code compiled from the generated text; both read the
    same closure cells.
    """
    factory = ast.parse(f"def closure_factory({', '.join(generated.co_freevars)}):\n    pass")
    inner = node if isinstance(node, ast.FunctionDef) else ast.copy_location(
        ast.Return(value=node), node)
    factory.body[0].body = [inner]
    ast.fix_missing_locations(factory)  # the expressions ANF wrote (defaults) have none
    code = _constant_code(_constant_code(compile(factory, filename, "exec"), "closure_factory"),
                          generated.co_name)
    if code.co_freevars != generated.co_freevars:
        raise AssertionError(f"{generated.co_name}: closure variables {code.co_freevars} "
                             f"differ from {generated.co_freevars}")
    return _requalified(code, f"closure_factory.<locals>.{generated.co_name}", qualname)


def _requalified(code, old, new):
    """`code` with the qualified names `old...` of it and of the functions nested in it
    written `new...`: `co_qualname` from Python 3.11, before it the constants that
    `MAKE_FUNCTION` reads."""
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const = _requalified(const, old, new)
        elif isinstance(const, str) and (const == old or const.startswith(old + ".")):
            const = new + const[len(old):]
        consts.append(const)
    code = code.replace(co_consts=tuple(consts))
    qualname = getattr(code, "co_qualname", None)
    if qualname is not None and (qualname == old or qualname.startswith(old + ".")):
        code = code.replace(co_qualname=new + qualname[len(old):])
    return code


def _constant_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise LookupError(name)


def unregistered_name(base):
    """`base + ">"`, or `base + " #n>"` with the least n ≥ 2 that makes a pseudo file
    name no generated code is registered under yet (two texts under one name would
    make the older code read as the newer text, by pdb and when it is transformed)."""
    filename, n = f"{base}>", 1
    while filename in _SOURCES:
        n += 1
        filename = f"{base} #{n}>"
    return filename


def register(filename, text):
    """Make `text` the contents of `filename` for linecache (and so for inspect, pdb);
    when `filename` is a path rather than a `<pseudo name>`, write `text` there."""
    lines = text.splitlines(keepends=True)
    _SOURCES[filename] = text
    linecache.cache[filename] = (len(text), None, lines, filename)
    if not filename.startswith("<"):
        _write(filename, text)


def _write(path, text):
    """Write `text` to file `path` (making its directory), unless it holds it already."""
    try:
        with open(path, encoding="utf-8") as file:
            if file.read() == text:
                return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


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
