"""The fast tree helpers in pullback.nodes give what their slow originals give."""

import ast
import inspect
from pathlib import Path

import gast
import pytest

from pullback.compiler.syntax import nodes

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("pullback/**/*.py"),
                  *ROOT.glob("examples/*.py"), Path(inspect.getfile(ast))])
EXTRA = [
    "def f(a, /, b: int = 1, *args, c, d=2, **kw) -> float:\n    return lambda x, *y: x\n",
    "try:\n    pass\nexcept ValueError as e:\n    raise\nexcept KeyError:\n    pass\n",
    "class C(B, metaclass=M):\n    x: int = 1\n",
    "async def g():\n    async with a as b:\n        await b\n",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v}:\n        pass\n",
]


TEXTS = {**{f"{path.parent.name}/{path.name}": path.read_text() for path in SOURCES},
         **{f"extra{i}": text for i, text in enumerate(EXTRA)}}


@pytest.mark.parametrize("name", TEXTS)
def test_conversions_match_gast(name):
    text = TEXTS[name]
    tree = ast.parse(text)
    expected = gast.ast_to_gast(tree)
    converted = nodes.from_ast(tree)
    assert gast.dump(converted, include_attributes=True) == gast.dump(
        expected, include_attributes=True)
    assert ast.dump(nodes.to_ast(converted), include_attributes=True) == ast.dump(
        gast.gast_to_ast(expected), include_attributes=True)
    assert [type(n) for n in nodes.walk(converted)] == [type(n) for n in ast.walk(converted)]
    loads = {n.id for n in ast.walk(converted)
             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    assert nodes.reads(converted) == loads
