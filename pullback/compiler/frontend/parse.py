"""Stage 1: from a live Python function to its syntax tree.

`parse_function(fn)` reads the source file of `fn` (through `linecache`, so
files, Jupyter cells and pullback's own generated code all work), parses it
(once per text of the file), and returns the function's definition as a gast
tree with decorators and annotations stripped, every node keeping its line in
the user's file, plus an `Origin` recording where it came from: file, globals
and closure cells.
"""

import ast
import copy
import dataclasses
import dis
import inspect
import linecache
import types

from ...errors import TransformError
from .. import bindings, emit
from ..syntax import nodes

_DEFINITIONS = {}  # filename -> (source text, its `def` and `lambda` ast nodes)


@dataclasses.dataclass
class Origin:
    """Where a parsed function came from.

    Attributes:
        filename: its source file (a path, a Jupyter cell or a generated name).
        name: its `__qualname__`.
        lineno: the line of its `def` or `lambda`.
        globals: its module globals (read live by the generated code).
        cells: its closure cells by free-variable name.
        annotations: parameter annotations by name (used by `source()`).
        helpers: the names of its cells that hold pullback's helpers (only in
          generated code): calls of them can be resolved before running.
    """

    filename: str
    name: str
    lineno: int
    globals: dict
    cells: dict
    annotations: dict
    helpers: frozenset = frozenset()

    def line_text(self, lineno):
        """The stripped text of a line of the source file."""
        return linecache.getline(self.filename, lineno, self.globals).strip()

    def location(self, lineno=None):
        """`file:line` for messages."""
        return f"{self.filename}:{lineno or self.lineno}"


def parse_function(fn):
    """Parse a function's definition.

    Args:
      fn: a Python function (a `def` or a `lambda`).

    Returns:
      `(tree, origin)`: a gast FunctionDef (a lambda becomes `def` returning its
      body) and the function's `Origin`.

    Raises:
      TransformError: when `fn` is not a Python function or its source cannot
        be read.
    """
    code = python_function(fn).__code__
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        raise TransformError(f"{fn.__qualname__} is an async function, which is not supported",
                             code.co_filename, code.co_firstlineno, "async")
    lines = linecache.getlines(code.co_filename, fn.__globals__) or emit.source_lines(
        code.co_filename
    )
    if not lines:
        raise TransformError(
            f"cannot read the source of {fn.__qualname__} (defined in {code.co_filename}): "
            "pullback transforms source code, so define the function in a file, "
            "a module or a Jupyter cell rather than at a plain interactive prompt",
            construct="source",
        )
    node = _with_passed_variables(_find_definition(_definitions(code.co_filename, lines), code),
                                  code)
    _check_unchanged(node, code)
    origin = Origin(
        filename=code.co_filename,
        name=fn.__qualname__,
        lineno=node.lineno,
        globals=fn.__globals__,
        cells=dict(zip(code.co_freevars, fn.__closure__ or ())),
        annotations={},
        helpers=bindings.helper_names(code),
    )
    return _as_function_def(node, origin), origin


def read_around(origin, name):
    """Whether the function around nested function `origin` (in its source) reads its
    variable `name` outside `origin`'s definition; True when that cannot be read."""
    lines = linecache.getlines(origin.filename)
    if not lines:
        return True
    around = [n for n in _definitions(origin.filename, lines) if isinstance(n, ast.FunctionDef)
              and n.lineno < origin.lineno <= (n.end_lineno or n.lineno)]
    if not around:
        return True
    inner = max(around, key=lambda n: n.lineno)
    own = [n for n in ast.walk(inner) if isinstance(n, (ast.FunctionDef, ast.Lambda))
           and n.lineno == origin.lineno]
    inside = {id(m) for n in own for m in ast.walk(n)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and id(n) not in inside for n in ast.walk(inner))


def python_function(fn):
    """`fn` if it is a Python function, else a TransformError saying what to do."""
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"cannot differentiate {fn!r}: it is not a Python function with source code "
            "(builtins and C functions need a derivative rule: see pullback.adjoint)",
            construct=type(fn).__name__,
        )
    return fn


def _definitions(filename, lines):
    """The `def` and `lambda` nodes (standard-library ast) of the file's text `lines`.

    Only the definition differentiated is converted to gast (`_as_function_def`).
    """
    source = "".join(lines)
    cached = _DEFINITIONS.get(filename)
    if cached is None or cached[0] != source:
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            raise TransformError(
                f"cannot parse {filename}: {error.msg}", filename, error.lineno, "syntax"
            ) from None
        cached = (source, [n for n in ast.walk(tree) if isinstance(n, _DEFINITION_NODES)])
        _DEFINITIONS[filename] = cached
    return cached[1]


_DEFINITION_NODES = (ast.FunctionDef, ast.Lambda)


def _find_definition(definitions, code):
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    candidates = [n for n in definitions if _defines(n, code, params)]
    if len(candidates) > 1:
        candidates = _by_column(candidates, code)
    if len(candidates) > 1:
        candidates = [n for n in candidates if _same_bytecode(n, code)]
    if len(candidates) != 1:
        what = "several definitions match" if candidates else "no definition matches"
        raise TransformError(
            f"cannot locate the source of {code.co_name}: {what} this line; "
            "give the function its own `def`",
            code.co_filename,
            code.co_firstlineno,
            "source",
        )
    return candidates[0]


def _defines(node, code, params):
    if isinstance(node, ast.FunctionDef):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return node.name == code.co_name and code.co_firstlineno in (first, node.lineno)
    if isinstance(node, ast.Lambda):
        names = [a.arg for a in node.args.args + node.args.kwonlyargs]
        return (
            code.co_name == "<lambda>"
            and node.lineno == code.co_firstlineno
            and tuple(names) == params[: len(names)]
            and len(node.args.args) == code.co_argcount
        )
    return False


def _with_passed_variables(node, code):
    """Definition `node` with the keyword-only parameters its running `code` has last
    and the source does not: variables the function around it passes at each call
    (`late_binding`), which the source reads as free variables."""
    args = node.args
    have = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    kwonly = code.co_varnames[code.co_argcount: code.co_argcount + code.co_kwonlyargcount]
    passed = [name for name in kwonly if name not in have]
    if not passed:
        return node
    node = copy.deepcopy(node)
    node.args.kwonlyargs += [ast.arg(arg=name, annotation=None) for name in passed]
    node.args.kw_defaults += [None] * len(passed)
    return node


def _check_unchanged(node, code):
    """Refuse source text that is not what `code` was compiled from.

    A file edited after it was imported still runs the old code, while
    `linecache` returns the new text; differentiating the new text would give
    the derivative of another function. The definition found is compiled again:
    its constants and global names must all occur in the running code (tools
    such as pytest's assertion rewriting may add more there, never remove).
    """
    fresh = _compiled(node, code)
    running = _constants(code)
    same = (
        fresh is not None
        and all(c in running for c in _constants(fresh))
        and set(fresh.co_names) - set(code.co_freevars) <= set(code.co_names)
    )
    if not same:
        raise TransformError(
            f"the source of {code.co_name} in {code.co_filename} has changed since it was "
            "loaded; reload its module (importlib.reload) or run its definition again",
            code.co_filename,
            node.lineno,
            "source",
        )


def _compiled(node, code):
    """The code object of definition `node` (an ast node) compiled on its own, or None."""
    if isinstance(node, ast.Lambda):
        tree = ast.Expression(body=node)
        mode = "eval"
    else:
        node = copy.copy(node)
        node.decorator_list = []
        tree = ast.Module(body=[_enclosed(node, code.co_freevars)], type_ignores=[])
        mode = "exec"
    try:
        compiled = compile(ast.fix_missing_locations(tree), code.co_filename, mode)
    except (SyntaxError, ValueError):
        return None
    if code.co_freevars and not isinstance(node, ast.Lambda):
        compiled = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    found = [c for c in compiled.co_consts
             if isinstance(c, types.CodeType) and c.co_name == code.co_name]
    return found[-1] if found else None  # after the code of its defaults' lambdas


def _enclosed(node, freevars):
    """`node` in a function binding its free variables `freevars`, as it was written (a
    `nonlocal` compiles only there), or `node` itself when it has none."""
    if not freevars:
        return node
    bindings = [ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())],
                           value=ast.Constant(value=None)) for v in freevars]
    enclosing = ast.FunctionDef(name="_enclosing", args=ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=bindings, decorator_list=[], returns=None, type_params=[])
    for made in [enclosing, *bindings, *(n for b in bindings for n in ast.walk(b))]:
        ast.copy_location(made, node)
    enclosing.body.append(node)
    return enclosing


def _constants(code):
    """The constants of `code`, but nested code and (Python 3.10) their qualified names."""
    return [c for c in code.co_consts
            if not isinstance(c, types.CodeType) and not (isinstance(c, str) and "<locals>" in c)]


def _same_bytecode(node, code):
    """Whether `node` compiles to `code` (for same-line lambdas without column data).

    Compiled alone, a free variable is read as a global: loads and stores of
    any kind count as the same instruction.
    """
    fresh = _compiled(node, code)
    return fresh is not None and _instructions(fresh) == _instructions(code)


def _instructions(code):
    return [("LOAD" if i.opname.startswith("LOAD_") else i.opname, i.argval)
            for i in dis.get_instructions(code)]


def _by_column(candidates, code):
    """Pick among same-line lambdas: the smallest one spanning the code's columns."""
    positions = getattr(code, "co_positions", None)
    if positions is None:  # Python 3.10
        return candidates
    spans = [(line, col, end) for line, _, col, end in positions()
             if col is not None and end and end > col and line == code.co_firstlineno]
    inside = [n for n in candidates
              if all(n.col_offset <= col and end <= n.end_col_offset for _, col, end in spans)]
    return [min(inside, key=lambda n: n.end_col_offset - n.col_offset)] if inside else []


def _as_function_def(node, origin):
    node = nodes.from_ast(node)
    if isinstance(node, nodes.Lambda):
        body = [nodes.return_(node.body, node.lineno)]
        node = nodes.function_def("lambda_", node.args, body, node.lineno)
    node.decorator_list = []
    node.returns = None
    args = node.args
    for param in nodes.parameters(args):
        if param.annotation is not None:
            origin.annotations[param.id] = param.annotation
            param.annotation = None
    return node
