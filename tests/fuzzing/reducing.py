"""Reproducers of failing programs, and their reduction to a smaller source failing alike."""


import ast
import re
import time

from .checking import check_program
from .programs import F, Program
from .running import oracle_module

# -- reproducers ---------------------------------------------------------------


def reproducer(program, outcome, origin=""):
    """A standalone script: the program, the outcome in comments, and the derivatives up to
    the failing order, printed when it runs."""
    comments = [f"pullback fuzzer: {outcome.kind} at order {outcome.order}: {outcome.signature}"]
    comments += [origin] if origin else []
    comments += outcome.detail.splitlines()[:40]
    comments.append("check again: python tests/fuzz.py --check THIS_FILE")
    lines = ["# " + line if line else "#" for line in comments]
    orders, previous = [], "f"
    for order, cotangent in enumerate(outcome.cotangents[: max(outcome.order, 1)], 1):
        if cotangent is None:
            call = f"pullback.grad({previous}, argnums=tuple(range({len(program.types)})))(*xs)"
        else:
            call = f"pullback.vjp({previous}, *xs)[1]({cotangent})"
        orders += ["", "", f"def order{order}(*xs):", f"    return {call}"]
        previous = f"order{order}"
    main = ["", "", 'if __name__ == "__main__":', "    print('f:', f(*arguments()))"]
    main += [f"    print('order {k}:', order{k}(*arguments()))"
             for k in range(1, len(orders) // 4 + 1)]
    text = "\n".join(lines) + "\n" + program.source.replace(
        "import numpy as np\n", "import numpy as np\n\nimport pullback\n", 1)
    return text.rstrip("\n") + "\n" + "\n".join(orders + main) + "\n"


def program_of_file(path):
    """The program in a reproducer (or any module defining `f` and `arguments`)."""
    with open(path) as file:
        source = file.read()
    module = oracle_module(source)
    types_ = tuple(F if isinstance(a, float) else "other" for a in module.arguments())
    return Program(source, types_)


# -- reducing a failing program's source ---------------------------------------


def _statement_lists(tree):
    """The lists of statements of a module: its body, and the bodies of what is in it."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def smaller_sources(source):
    """Sources with one statement of `source` deleted, or a compound statement replaced by its
    body; the last statements first (they tend to depend on the earlier ones)."""
    lines = source.splitlines(keepends=True)
    statements = [(s, body) for body in _statement_lists(ast.parse(source)) for s in body]
    statements.sort(key=lambda item: -item[0].lineno)
    for statement, body in statements:
        if isinstance(statement, ast.FunctionDef) and statement.name in ("f", "arguments"):
            continue
        start = min([statement.lineno] + [d.lineno for d in
                                          getattr(statement, "decorator_list", [])]) - 1
        end = statement.end_lineno
        margin = lines[statement.lineno - 1][: statement.col_offset]
        keep = [] if len(body) > 1 else [margin + "pass\n"]
        yield "".join(lines[:start] + keep + lines[end:])
        inner = getattr(statement, "body", None)
        if isinstance(statement, (ast.If, ast.For, ast.While)) and inner:
            unwrapped = [line[4:] if line.startswith(margin + "    ") else line
                         for line in lines[inner[0].lineno - 1: inner[-1].end_lineno]]
            yield "".join(lines[:start] + unwrapped + lines[end:])


def _reducible(tree):
    """The expressions of `tree` a reducer may replace: not in `arguments()` or a class, not
    annotations, not targets."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) or (
                isinstance(node, ast.FunctionDef) and node.name == "arguments"):
            skipped.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.AnnAssign):
            skipped.update(id(n) for n in ast.walk(node.annotation))
    return [n for n in ast.walk(tree) if isinstance(n, ast.expr) and id(n) not in skipped
            and not isinstance(getattr(n, "ctx", None), (ast.Store, ast.Del))]


def _parts(node):
    """What may replace expression `node`: the constant 1.0, and its sub-expressions."""
    parts = [] if isinstance(node, ast.Constant) else [ast.Constant(1.0)]
    return parts + [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)
                    and not isinstance(getattr(c, "ctx", None), ast.Store)]


def _replace(tree, node, part):
    """Put `part` where `node` is in `tree`."""
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, part)
            elif isinstance(value, list) and any(v is node for v in value):
                value[[id(v) for v in value].index(id(node))] = part


def simpler_sources(source):
    """Sources with one expression of `source` replaced by 1.0 or by one of its parts (`a * b`
    by `a`, `np.sin(e)` by `e`), the outermost first; written by `ast.unparse`."""
    count = len(_reducible(ast.parse(source)))
    for index in range(count):
        for position in range(len(_parts(_reducible(ast.parse(source))[index]))):
            tree = ast.parse(source)
            node = _reducible(tree)[index]
            _replace(tree, node, _parts(node)[position])
            yield ast.unparse(tree) + "\n"


def reduce_source(program, outcome, max_order, seconds, check=check_program):
    """`(program, outcome)`: `program` with statements removed and expressions replaced by
    their parts as long as the failure keeps its signature, within `seconds`."""
    deadline = time.monotonic() + seconds
    for candidates in (smaller_sources, simpler_sources, smaller_sources):
        program, outcome = _reduce(program, outcome, max_order, deadline, candidates, check)
    return program, outcome


def _reduce(program, outcome, max_order, deadline, candidates, check):
    """Replace `program` by the first of `candidates(source)` that fails the same way, again
    and again, until none does or the `deadline` passes."""
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for source in candidates(program.source):
            if time.monotonic() > deadline:
                break
            if len(source) >= len(program.source):
                continue
            candidate = Program(re.sub(r"\n{4,}", "\n\n\n", source), program.types)
            found = check(candidate, max_order)
            if found.signature == outcome.signature:
                program, outcome, progress = candidate, found, True
                break
    return program, outcome
