"""The pullback IR's rewrite rules, one by one: input IR, expected IR, and the same values.

IR is written as Python in which `SUM(a, b)` is the sum of the cotangents of a number
or an array and `ANY_SUM(a, b)` that of any other value (`ir.parse`). Each case
rewrites a body ending in a `return` (what it returns keeps the rest alive) and
checks the text of the result; where the IR is plain Python once lowered, it runs
both and compares the numbers.
"""

import numpy as np
import pytest

from pullback.compiler import ir
from pullback.compiler.analysis import kinds
from pullback.compiler.bindings import Bindings
from pullback.compiler.optimize import loop_sums, rewrite, simplify
from pullback.compiler.syntax import nodes
from pullback.compiler.syntax.naming import Namer
from pullback.runtime import cotangents, mutation, structures
from pullback.runtime.cotangents import ZERO

HELPERS = (ZERO, structures.unindex, structures.unindex_all, cotangents.unreduce,
           cotangents.unbroadcast, cotangents.matmul_right, cotangents.extremum_share, slice,
           cotangents.add, cotangents.add_all, structures.add_at, mutation.written_item,
           mutation.last_item)


def _bindings():
    bindings = Bindings(Namer(), _bindings.__code__, {})
    for helper in HELPERS:
        bindings.object(getattr(helper, "__name__", "ZERO"), helper)
    return bindings


def rewritten(text, kinds_of=None, shapes=None, values=None):
    """The IR `text` rewritten, as IR text."""
    context = rewrite.Context(_bindings(), kinds_of or {}, shapes or {}, values or {})
    return ir.show(rewrite.rewrite(ir.parse(text), context, simplify.dead_code))


def same(text):
    return ir.show(ir.parse(text))


TUPLE_3 = kinds.Container(tuple, (0, 1, 2), (kinds.ARRAY, kinds.ARRAY, kinds.SCALAR))


@pytest.mark.parametrize("rule, before, after, kinds_of", [
    ("zeros", "d = SUM(a, ZERO, b)\nreturn d", "d = SUM(a, b)\nreturn d", {}),
    ("zeros", "d = SUM(ZERO, b)\nreturn d", "d = b\nreturn d", {}),
    ("flatten", "s = SUM(a, b)\nd = SUM(s, c)\nreturn d", "d = SUM(a, b, c)\nreturn d", {}),
    ("flatten", "s = SUM(a, b)\nd = SUM(s, c)\nreturn (d, s)",
     "s = SUM(a, b)\nd = SUM(s, c)\nreturn (d, s)", {}),
    ("twice", "d = SUM(g * x, a, g * x)\nreturn d", "d = SUM(g * x * 2, a)\nreturn d", {}),
    ("same_branches", "if c:\n    d = g * a\nelse:\n    d = g * a\nreturn d",
     "d = g * a\nreturn d", {}),
    ("same_branches", "if c:\n    d = g * a\nelse:\n    d = g * b\nreturn d",
     "if c:\n    d = g * a\nelse:\n    d = g * b\nreturn d", {}),
    ("twice", "d = ANY_SUM(g, g)\nreturn d", "d = ANY_SUM(g, g)\nreturn d", {}),
    ("summed_helpers", "d = SUM(unbroadcast(g1, b), unbroadcast(g2, b))\nreturn d",
     "d = unbroadcast_all((g1, g2), b)\nreturn d", {}),
    ("summed_helpers",
     "m = matmul_right(g2, x2, w)\nd = SUM(matmul_right(g1, x1, w), e, m)\nreturn d",
     "d = SUM(matmul_right_all((g1, g2), (x1, x2), w), e)\nreturn d", {}),
    ("summed_helpers", "d = SUM(unbroadcast(g1, b), unbroadcast(g2, c))\nreturn d",
     "d = SUM(unbroadcast(g1, b), unbroadcast(g2, c))\nreturn d", {}),
    ("joined_slices",
     "d = SUM(unindex(g2, x, slice(n, None)), unindex(g1, x, slice(None, n)))\nreturn d",
     "d = unindex_tiles((g1, g2), x, (slice(None, n), slice(n, None)), 0)\nreturn d", {}),
    ("items_added", "d = ANY_SUM(t, unindex_all((g1, g2), xs, (i, j)))\nreturn d",
     "d = add_at(t, (g1, g2), xs, (i, j))\nreturn d", {}),
    ("items_added", "u = unindex(g, xs, i)\nd = ANY_SUM(a, b, u)\nreturn d",
     "d = add_at(ANY_SUM(a, b), (g,), xs, (i,))\nreturn d", {}),
    ("items_added", "d = SUM(t, unindex(g, x, i))\nreturn d",
     "d = add_at(t, (g,), x, (i,))\nreturn d", {}),
    ("items_added", "d = SUM(t, unindex_tiles((g1, g2), x, (a, b), 0))\nreturn d",
     "d = SUM(t, unindex_tiles((g1, g2), x, (a, b), 0))\nreturn d", {}),
    ("gather_scales", "t = g * 0.5\nu = t * s\nd = u * 0.5\nreturn d",
     "d = g * s * 0.25\nreturn d", {}),
    ("gather_scales", "t = g * 3.0\nd = t * s\nreturn d", "t = g * 3.0\nd = t * s\nreturn d", {}),
    ("unreduced_factor", "de = unreduce(ds, e)\ndv = de * e\nreturn dv",
     "dv = ds * e\nreturn dv", {"e": kinds.ARRAY}),
    ("unreduced_factor", "de = unreduce(ds, e, 1)\ndv = de * e\nreturn dv",
     "de = unreduce(ds, e, 1)\ndv = de * e\nreturn dv", {"e": kinds.ARRAY}),
    ("unindexed_tuple, sum_of_displays",
     "d = ANY_SUM(unindex(a, p, 0), unindex((b, c), p, slice(1, None)))\nreturn d",
     "d = (a, b, c)\nreturn d", {"p": TUPLE_3}),
    ("item_of_display", "t = (a, b)\nu = t[1] * 2\nreturn u", "u = b * 2\nreturn u", {}),
    ("copies", "a = b\nc = a * 2\nreturn (c, a)", "a = b\nc = b * 2\nreturn (c, a)", {}),
    ("item_read", "d = written_item(g, i, v, xs)\nreturn d", "d = g[i]\nreturn d",
     {"xs": kinds.Items(kinds.SCALAR, list), "i": kinds.CONST_SCALAR}),
    ("item_read", "d = written_item(g, 'k', v, p)\nreturn d", "d = g['k']\nreturn d",
     {"p": kinds.container(dict, ["k"], [kinds.SCALAR])}),
    ("item_read", "d = written_item(g, i, v, x)\nreturn d",
     "d = written_item(g, i, v, x)\nreturn d", {"x": kinds.ARRAY, "i": kinds.CONST_SCALAR}),
    ("item_read", "d = written_item(g, s, v, xs)\nreturn d",
     "d = written_item(g, s, v, xs)\nreturn d", {"xs": kinds.Items(kinds.SCALAR, list)}),
    ("item_read", "d = last_item(g)\nreturn d", "d = g[-1]\nreturn d", {}),
])
def test_a_rule_rewrites_its_ir(rule, before, after, kinds_of):
    assert rewritten(before, kinds_of, values={"n": None}) == same(after), rule


@pytest.mark.parametrize("before, after", [
    ("if c:\n    if e:\n        u = g * a\n    else:\n        u = g * b\n    d = u\nelse:\n"
     "    d = g\nreturn d",
     "if c:\n    if e:\n        d = g * a\n    else:\n        d = g * b\nelse:\n    d = g\n"
     "return d"),
    ("u = g * a\nd = u\nreturn (d, u)", "u = g * a\nd = u\nreturn (d, u)"),
])
def test_a_copy_of_a_value_read_once_is_made_where_the_value_is(before, after):
    """`copies.coalesce_copies`: the branch computes the value under the name the
    branches join in; a value read again keeps its name (and the copy is propagated)."""
    assert rewritten(before) == same(after)


def test_every_rule_has_a_case_above():
    cases = {name.strip() for case in test_a_rule_rewrites_its_ir.pytestmark[0].args[1]
             for name in case[0].split(",")}
    assert {rule.__name__ for rule in rewrite.RULES} <= cases


def test_a_reduction_factor_needs_a_factor_of_the_arrays_shape():
    text = "de = unreduce(ds, e)\ndv = de * f\nreturn dv"
    assert rewritten(text, {"e": kinds.ARRAY}, {"e": "s1", "f": "s2"}) == same(text)
    assert rewritten(text, {"e": kinds.ARRAY}, {"e": "s1", "f": "s1"}) == same(
        "dv = ds * f\nreturn dv")


@pytest.mark.parametrize("before, after", [
    ("d = SUM(a, -b, c)", "d = a - b + c"),
    ("d = ANY_SUM(a, b)", "d = add(a, b)"),
    ("d = ANY_SUM(a, b, c)", "d = add_all((a, b, c))"),
    ("dx_1 = SUM(dx, e)\ndx_2 = SUM(dx_1, f)", "dx = dx + e\ndx = dx + f"),
    ("dx_1 = SUM(dx, e)\ny = dx * 2", "dx_1 = dx + e\ny = dx * 2"),
])
def test_lowering_writes_sums_as_python(before, after):
    lowered = ir.lower(ir.parse(before), _bindings())
    assert nodes.unparse(nodes.module(lowered)) == same(after)


@pytest.mark.parametrize("text", [
    "t = g * 0.5\nu = t * s\nd = SUM(u * 0.5, u * 0.5, g)\nresult = d",
    "de = unreduce(ds, e)\ndv = de * e\nresult = dv",
    "d = SUM(unindex(g2, x, slice(n, None)), unindex(g1, x, slice(None, n)))\nresult = d",
    "d = SUM(unbroadcast(g1, x), unbroadcast(g2, x))\nresult = d",
])
def test_a_rewritten_block_computes_the_same_numbers(text):
    rng = np.random.default_rng(0)
    values = {"g": rng.standard_normal(6), "s": rng.standard_normal(6), "ds": 1.7,
              "e": rng.standard_normal(6), "x": rng.standard_normal(6), "n": 2,
              "g1": rng.standard_normal(2), "g2": rng.standard_normal(4)}
    bindings = _bindings()
    context = rewrite.Context(bindings, {"e": kinds.ARRAY}, {}, {"n": None})
    block = ir.parse(text + "\nreturn result")
    before = ir.lower(block, bindings)[:-1]
    after = ir.lower(rewrite.rewrite(block, context, simplify.dead_code), bindings)[:-1]
    if "unbroadcast(" in text:
        values["g1"], values["g2"] = rng.standard_normal((3, 6)), rng.standard_normal(6)
    results = []
    for statements in (before, after):
        namespace = {name: cell.cell_contents for name, cell in bindings.cells.items()}
        namespace.update(values)
        exec(nodes.unparse(nodes.module(statements)), namespace)
        results.append(namespace["result"])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-15)


@pytest.mark.parametrize("step, varying, made, kept", [
    ("dz = g * x\ndw = matmul_right(dz, x, w)\ndx = dz * 2.0",
     {"g", "x"}, "dz = g * x\ndz_all.append(dz)\nx_all.append(x)\ndx = dz * 2.0\n"
                 "dz_all = []\nx_all = []\ndw_sum = matmul_right_all(dz_all, x_all, w)", []),
    ("dz = g * x\ndw = matmul_right(dz, x, w)\ndx = dz * 2.0",  # the weight changes
     {"g", "x", "w"}, "dz = g * x\ndw = matmul_right(dz, x, w)\ndx = dz * 2.0", ["dw"]),
    ("dz = g * x\ndw = matmul_right(dz, x, w)\ndx = dw * 2.0",  # the term is read
     {"g", "x"}, "dz = g * x\ndw = matmul_right(dz, x, w)\ndx = dw * 2.0", ["dw"]),
])
def test_loop_sums_made_after_the_loop(step, varying, made, kept):
    """`loop_sums.collect_sums`, the rule over a loop's step: a term of the environment's
    sum made by a helper whose spec gives its sum over lists, its other argument the
    same at every step and read nowhere else, is collected (the arguments that change
    appended to lists) and made once after the loop; otherwise it stays in the step."""
    bindings = _bindings()
    sums = [(kinds.ARRAY, "dw_sum", nodes.name("dw"))]
    statements, lists, after, in_loop = loop_sums.collect_sums(
        ir.parse(step), sums, varying, bindings, Namer())
    assert ir.show(statements + lists + after) == same(made)
    assert [value.id for _, _, value in in_loop] == kept
