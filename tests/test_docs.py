"""Every ```python block of docs/*.md runs, and every output the docs show is what runs prints.

The blocks of a page run in order in one namespace, as cells of a notebook do,
compiled under the page's own file name and line numbers, so the generated code
they print names the page's lines. A python block is one of:

- a *listing* of generated code: it starts with `def NAME_fwd(`, or it is
  indented (an excerpt). It is not run: it is compared with the output of the
  block before it, or, for docs/design.md and docs/rules.md, by test_source.py
  and test_rules.py.
- a *quote* of the project's code: definitions from a template or an example,
  word for word. It runs where it comes from.
- code, which runs. When it prints, and the next block is a listing or a
  ```text block, that block must be exactly what it printed.

`python tests/test_docs.py` rewrites each shown output with what its block
prints now (after a change to the generated code's format, say).
"""

import contextlib
import dataclasses
import functools
import glob
import inspect
import io
import linecache
import os
import re
import sys

import pytest

import pullback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


@dataclasses.dataclass(frozen=True)
class Block:
    """A fenced code block: its language, its text, and the page line its text starts on."""

    language: str
    text: str
    lineno: int
    start: int  # offsets of the text in the page
    end: int


def code_blocks(page):
    """The fenced code blocks of docs/`page`, in order."""
    with open(os.path.join(DOCS, page)) as file:
        markdown = file.read()
    return [Block(m.group(1), m.group(2), markdown.count("\n", 0, m.start(2)) + 1,
                  m.start(2), m.end(2)) for m in FENCE.finditer(markdown)]


def is_listing(block):
    """Whether `block` shows generated code (a whole function or an indented excerpt)."""
    return block.language == "python" and bool(re.match(r"def \w+_fwd\(|\s", block.text))


@functools.lru_cache(maxsize=1)
def _project_sources():
    sources = []
    for folder in ("pullback/rules", "examples"):
        for path in glob.glob(os.path.join(ROOT, folder, "*.py")):
            with open(path) as file:
                sources.append(file.read())
    return sources


def is_quote(block):
    """Whether `block` is a definition from a template or an example, word for word."""
    return "def " in block.text and any(block.text in source for source in _project_sources())


def is_code(block):
    """Whether `block` is python to run."""
    return block.language == "python" and not is_listing(block) and not is_quote(block)


def shown_in(output, block):
    """Whether `output` is what `block` shows: the same text, or for an excerpt, its lines in
    order ("..." standing for any lines)."""
    if not block.text[:1].isspace():
        return output.rstrip() == block.text.rstrip()
    lines = iter(line.strip() for line in output.splitlines())
    return all(shown == "..." or shown in lines for shown in
               (line.strip() for line in block.text.splitlines()))


def run_page(page):
    """Run the code of docs/`page`; returns `(block, output, shown)` for each block that
    printed, `shown` being the block after it when that is output (else None)."""
    path = os.path.join(DOCS, page)
    blocks = code_blocks(page)
    code = [block for block in blocks if is_code(block)]
    _register(path, code)
    namespace = {"__name__": "__docs__"}
    printed = []
    for block, after in zip(blocks, blocks[1:] + [None]):
        if block in code:
            output = _run(block, path, namespace)
            shows = after is not None and (after.language == "text" or is_listing(after))
            if output:
                printed.append((block, output, after if shows else None))
    return printed


def _register(path, code):
    """Give linecache the page with every line blank but those of `code`, as if it were a
    Python file, so that pullback reads the functions it defines."""
    with open(path) as file:
        lines = ["\n"] * len(file.read().splitlines())
    for block in code:
        for i, line in enumerate(block.text.splitlines(keepends=True)):
            lines[block.lineno - 1 + i] = line
    linecache.cache[path] = (sum(map(len, lines)), None, lines, path)


def _run(block, path, namespace):
    """Run one block; returns what it printed."""
    compiled = compile("\n" * (block.lineno - 1) + block.text, path, "exec")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compiled, namespace)
    return stdout.getvalue()


PAGES = sorted(os.path.basename(path) for path in glob.glob(os.path.join(DOCS, "*.md")))
LISTINGS_CHECKED_ELSEWHERE = {"design.md", "rules.md"}  # by test_source.py, test_rules.py


@pytest.mark.parametrize("page", PAGES)
def test_code_runs_and_prints_what_the_page_shows(page, monkeypatch):
    monkeypatch.setattr(linecache, "cache", dict(linecache.cache))
    printed = run_page(page)
    for block, output, shown in printed:
        assert shown is None or shown_in(output, shown), (
            f"docs/{page}:{block.lineno}: the block prints\n{output}\nbut the page shows\n"
            f"{shown.text}")
    shown_blocks = [shown for _, _, shown in printed]
    for block in code_blocks(page):
        output = block.language == "text" or (
            is_listing(block) and page not in LISTINGS_CHECKED_ELSEWHERE)
        assert not output or block in shown_blocks, (
            f"docs/{page}:{block.lineno}: output that no block above it prints")


def test_the_api_page_documents_every_export():
    with open(os.path.join(DOCS, "api.md")) as file:
        headings = dict(re.findall(r"^### `pullback\.([\w.]+)(\(.*\))?`$", file.read(), re.M))
    assert {name.split(".")[0] for name in headings} == set(pullback.__all__)
    for name, shown in headings.items():
        obj = functools.reduce(getattr, name.split("."), pullback)
        if shown:
            names = [p.split("=")[0].strip(" *") for p in shown[1:-1].split(",")]
            assert [n for n in names if n] == list(inspect.signature(obj).parameters), name


def update(page):
    """Rewrite the outputs docs/`page` shows with what its blocks print; returns whether
    anything changed."""
    path = os.path.join(DOCS, page)
    with open(path) as file:
        markdown = file.read()
    pieces, copied = [], 0
    for _, output, shown in run_page(page):
        if shown is not None and not shown.text[:1].isspace():
            pieces += [markdown[copied:shown.start], output.rstrip() + "\n"]
            copied = shown.end
    updated = "".join(pieces) + markdown[copied:]
    with open(path, "w") as file:
        file.write(updated)
    return updated != markdown


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    for name in PAGES:
        passes = 0
        while update(name):  # shown outputs name page lines, which move when outputs grow
            passes += 1
            if passes == 5:
                sys.exit(f"docs/{name}: what the blocks print changes from run to run")
        print(f"docs/{name}: {passes} updates")
