"""The package's layout: which part of pullback may import which (docs/design.md, section 1).

The compiler turns a function into generated code; the runtime is what that code
calls; the rules are data both read. The runtime never imports the compiler but
through `runtime.dispatch`, which transforms a callee met at run time.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pullback"

# Each part of the package (the longest prefix that matches a module) and what it may
# import besides itself: those modules and packages, and everything in them.
ALLOWED = {
    "pullback.errors": set(),
    "pullback.config": set(),
    "pullback.version": set(),
    "pullback.rules.registry": {"pullback.errors"},
    "pullback.compiler.syntax": {"pullback.errors"},
    "pullback.runtime": {"pullback.errors", "pullback.config", "pullback.rules.registry"},
    "pullback.compiler": {"pullback.errors", "pullback.config", "pullback.runtime",
                          "pullback.rules.registry"},
    "pullback.rules": {"pullback.errors", "pullback.config", "pullback.runtime",
                       "pullback.compiler", "pullback.api"},
    "pullback.api": {"pullback.errors", "pullback.config", "pullback.runtime",
                     "pullback.compiler", "pullback.rules"},
    "pullback.testing": {"pullback.api", "pullback.runtime"},
    "pullback.cli": {"pullback.errors", "pullback.api", "pullback.compiler", "pullback.runtime",
                     "pullback.version"},
    "pullback": {"pullback"},
}
# The one way from the runtime into the compiler: a callee known only at run time.
ENTRY_POINTS = {("pullback.runtime.dispatch", "pullback.compiler.transform")}


def module_name(path):
    """`pullback.x.y` for the file `pullback/x/y.py` (or `pullback/x/y/__init__.py`)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module):
    """The part of the package `module` belongs to: the longest prefix in ALLOWED."""
    return max((part for part in ALLOWED if within(module, part)), key=len)


def within(module, prefix):
    """Whether `module` is `prefix` or inside it."""
    return module == prefix or module.startswith(prefix + ".")


def may_import(part, module, imported):
    """Whether `module`, in `part`, may import module `imported`."""
    return any(within(imported, allowed) for allowed in ALLOWED[part] | {part}) or (
        module, imported) in ENTRY_POINTS


def imported_modules(path):
    """The pullback modules a file imports, at its top or inside functions."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "pullback")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                stem = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(stem + ([node.module] if node.module else []))
            if base.split(".")[0] != "pullback":
                continue
            for alias in node.names:
                name = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / (name.replace(".", "/") + ".py")).exists() or (
                    PACKAGE.parent / name.replace(".", "/")).is_dir()
                yield name if is_module else base


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_imports_go_the_allowed_way(path):
    module = module_name(path)
    part = part_of(module)
    wrong = sorted(imported for imported in set(imported_modules(path))
                   if not may_import(part, module, imported))
    assert not wrong, f"{module} ({part}) may not import {wrong}"


def test_the_checker_finds_a_wrong_import(tmp_path, monkeypatch):
    runtime = tmp_path / "pullback" / "runtime"
    runtime.mkdir(parents=True)
    (tmp_path / "pullback" / "compiler").mkdir()
    (tmp_path / "pullback" / "compiler" / "anf.py").write_text("")
    (runtime / "helper.py").write_text("from ..compiler import anf\n")
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path / "pullback")
    with pytest.raises(AssertionError, match="may not import"):
        test_imports_go_the_allowed_way(runtime / "helper.py")


def test_every_module_has_a_part():
    assert all(part_of(module_name(path)) for path in SOURCES)
