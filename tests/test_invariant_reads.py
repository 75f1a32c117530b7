"""A loop's reads of items of containers nothing changes, made once before the loop
(`compiler.frontend.invariant_reads`), with inlined calls' operations on constants
folded (`inline._folded`): where reads move and where they stay, the generated text,
and values against finite differences at orders 1 and 2."""

import ast
import dataclasses

import numpy as np
import pytest

import pullback
from pullback.compiler.analysis import kinds
from pullback.compiler.frontend import anf, inline, invariant_reads, parse
from pullback.compiler.syntax import nodes
from pullback.compiler.syntax.naming import Namer
from pullback.testing import check_grads


def rnn(p, xs):
    h = np.zeros(3)
    for x in xs:
        h = np.tanh(h @ p["w"] + x * p["b"])
    return np.sum(h ** 2)


def gate(p, name, x, h):
    return x * p["wx_" + name] + h @ p["wh_" + name]


def cells(params, xs):
    h = np.zeros(3)
    for x in xs:
        i = np.tanh(gate(params["cell"], "i", x, h))
        h = i * np.tanh(gate(params["cell"], "u", x, h))
    return np.sum(h)


def nested(ws, xs):
    total = 0.0
    for x in xs:
        for k in range(2):
            total = total + np.sum(np.sin(ws[0] * x + ws[1] * k))
    return total


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray


def with_record(layer, xs):
    h = np.ones(3)
    for x in xs:
        h = np.tanh(layer.w @ h + x * layer.b)
    return np.sum(h)


def in_branches(p, xs):
    total = 0.0
    for x in xs:
        if x > 0.0:
            total = total + np.sum(p["w"] * x)
        else:
            try:
                total = total - np.sum(np.sin(p["w"] * x)) * p["c"]
            except ZeroDivisionError:
                total = total + 1.0
    return total


def read_after(p, xs):
    total = 0.0
    for x in xs:
        w = p["w"]
        total = total + np.sum(w * x)
    return total + np.sum(w)


def updating(p, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(p["w"] * x)
        p["n"] = total
    return total


def helper(v):
    for _ in range(1):
        v = v * 2.0
    return v


def calling(p, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(helper(p["w"] * x))
    return total


def counting(p, xs):
    """A counter, a running sum, a list appended to and an array filled by index: the
    function updates in place only values it made."""
    h = np.zeros(3)
    outs, hs, i, total = [], np.zeros((len(xs), 3)), 0, 0.0
    for x in xs:
        h = np.tanh(p["w"] @ h + x * p["b"])
        outs.append(h)
        hs[i] = h
        i += 1  # noqa: SIM113 (the counter is what the test is about)
        total += np.sum(h)
    return total + np.sum(np.stack(outs) ** 2) + np.sum(hs * hs)


def counting_while(p, xs):
    h, i = np.ones(3), 0
    while i < len(xs):
        h = np.sin(p["w"] @ h) * xs[i]
        i += 1
    return np.sum(h)


def copied_then_updated(p, xs):
    h = p["b"].copy()
    q = dict(p)
    for x in xs:
        h += p["w"] @ h * x
        q["b"] = q["b"] * 2.0
    return np.sum(h) + np.sum(q["b"])


def state_from_an_item(p, xs):
    h = p["b"]
    for x in xs:
        h += p["w"] @ h * x
    return np.sum(h)


def item_updated(p, xs):
    total = 0.0
    for x in xs:
        w = p["w"]
        w += x
        total = total + np.sum(w)
    return total


def item_of_a_list_updated(p, xs):
    ws = [p["b"]]
    total = 0.0
    for x in xs:
        ws[0] += x
        total = total + np.sum(p["b"] * ws[0])
    return total


def _before_loop(text):
    """The generated forward's text before its first loop statement."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines)
                 if line.strip().startswith(("for ", "while ")) and line.endswith(":"))
    return "\n".join(lines[:first])


def _params(rng):
    return {"w": rng.standard_normal((3, 3)) * 0.5, "b": rng.standard_normal(3)}


def _cell_params(rng):
    names = ("wx_i", "wh_i", "wx_u", "wh_u")
    return {"cell": {n: rng.standard_normal((3, 3) if n.startswith("wh") else 3) * 0.5
                     for n in names}}


def test_a_weight_read_from_a_dict_in_a_loop_is_read_before_it_and_summed_once():
    rng = np.random.default_rng(0)
    p, xs = _params(rng), list(rng.standard_normal(4))
    text = pullback.source(rnn, p, xs, argnums=(0,))
    before_loop = _before_loop(text)
    assert "p_w = p['w']" in before_loop and "p_b = p['b']" in before_loop
    assert "matmul_right_all(" in text and "unbroadcast_all(" not in text.split("def ")[1]
    assert "add_at_into" not in text
    check_grads(rnn, (p, xs), order=2, argnums=0)


def test_the_loop_running_no_step_and_a_key_the_dict_lacks():
    """Read before a loop that runs no step, the item is there (the kinds say so); a
    key the dict lacks is read in the loop, as written, so no step raises nothing."""
    rng = np.random.default_rng(1)
    p = _params(rng)
    assert pullback.grad(rnn)(p, [])["w"].tolist() == np.zeros((3, 3)).tolist()
    lacking = {"w": p["w"]}
    assert np.all(pullback.grad(rnn)(lacking, [])["w"] == 0.0)
    with pytest.raises(KeyError):
        pullback.grad(rnn)(lacking, [1.0])


def test_an_inlined_call_reads_its_items_by_the_keys_its_constants_make():
    rng = np.random.default_rng(2)
    params, xs = _cell_params(rng), list(rng.standard_normal(3))
    text = pullback.source(cells, params, xs, argnums=(0,))
    assert "['wx_i']" in _before_loop(text) and "'wx_' + " not in text
    check_grads(cells, (params, xs), order=2, argnums=0)


def test_reads_in_nested_loops_and_of_records():
    rng = np.random.default_rng(3)
    ws, xs = (rng.standard_normal(3), rng.standard_normal(3)), list(rng.standard_normal(3))
    assert "ws0 = ws[0]" in _before_loop(pullback.source(nested, ws, xs, argnums=(0,)))
    check_grads(nested, (ws, xs), order=2, argnums=0)
    layer = Layer(rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3))
    text = pullback.source(with_record, layer, xs, argnums=(0,))
    assert "layer_w = layer.w" in _before_loop(text)
    check_grads(with_record, (layer, xs), order=2, argnums=0)


def test_reads_in_a_loops_branches_and_try_move():
    rng = np.random.default_rng(6)
    p, xs = {"w": rng.standard_normal(3), "c": 0.7}, [0.3, -0.2, 0.5, -0.4]
    before = _before_loop(pullback.source(in_branches, p, xs, argnums=(0,)))
    assert "p['w']" in before and "p['c']" in before
    check_grads(in_branches, (p, xs), order=2, argnums=0)


def test_a_read_whose_value_the_loop_passes_on_moves():
    """`w = p["w"]` read after the loop is the loop's state: the same value at every
    step, or the value before the loop when it runs no step."""
    rng = np.random.default_rng(5)
    p, xs = _params(rng), list(rng.standard_normal(3))
    assert "w_1 = p['w']" in _before_loop(pullback.source(read_after, p, xs, argnums=(0,)))
    check_grads(read_after, (p, xs), order=2, argnums=0)


@pytest.mark.parametrize("fn", [updating, calling])
def test_reads_stay_in_the_loop(fn):
    """A read in a function that updates a dict in place, or that calls a Python
    function that is not inlined, stays where it is."""
    rng = np.random.default_rng(4)
    p, xs = _params(rng), list(rng.standard_normal(3))
    text = pullback.source(fn, dict(p), xs, argnums=(0,))
    assert "['w']" not in _before_loop(text) and "['w']" in text
    got = pullback.grad(fn)(dict(p), xs)["w"]
    eps, want = 1e-6, np.zeros((3, 3))
    for i in np.ndindex(3, 3):
        up, down = dict(p, w=p["w"].copy()), dict(p, w=p["w"].copy())
        up["w"][i] += eps
        down["w"][i] -= eps
        want[i] = (fn(up, xs) - fn(down, xs)) / (2 * eps)
    assert np.allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("fn", [counting, counting_while, copied_then_updated])
def test_updates_in_place_of_values_the_function_made_leave_reads_free_to_move(fn):
    """`i += 1`, `outs.append(h)`, `hs[i] = h` on an array made by `np.zeros`, `h += ...`
    on a copy and a dict made by `dict(p)` change nothing `p` holds."""
    rng = np.random.default_rng(7)
    p, xs = _params(rng), list(rng.standard_normal(4))
    assert "p['w']" in _before_loop(pullback.source(fn, p, xs, argnums=(0,)))
    check_grads(fn, (p, xs), order=2, argnums=0)


@pytest.mark.parametrize("fn", [state_from_an_item, item_updated, item_of_a_list_updated])
def test_updates_in_place_of_what_a_parameter_holds_keep_reads_in_the_loop(fn):
    """A loop's state starting as an item of `p`, an item read into a name and updated,
    an item of a list holding one: each update changes what `p` holds, so the stage
    moves nothing, and the alias analysis refuses the function, as Python would see
    the change."""
    rng = np.random.default_rng(8)
    p, xs = _params(rng), list(rng.standard_normal(3))
    tree, origin = parse.parse_function(fn)
    normal = anf.to_anf(tree, origin)
    assert invariant_reads.hoisted(normal, origin, {"p": kinds.of_value(p),
                                                    "xs": kinds.CONST}) is normal
    with pytest.raises(pullback.TransformError, match="in place"):
        pullback.grad(fn)(p, xs)


def _folded_text(statements):
    tree = nodes.from_ast(ast.parse(statements))
    body, _ = inline._folded(tree.body, nodes.constant(None), {"key", "n", "v"},
                             Namer.for_tree(tree))
    return [nodes.unparse(stmt).strip() for stmt in body]


def test_operations_on_constants_folded_where_a_callee_is_inlined():
    assert _folded_text("key = 'w_' + 'i'\nv = p[key]\nu = v * 2") == [
        "p_w_i = p['w_i']", "u = p_w_i * 2"]
    assert _folded_text("n = 2 * 3\nv = x * n") == ["v = x * 6"]
    assert _folded_text("key = 'w' * 3\nv = p[key]") == ["key = 'w' * 3", "v = p[key]"]
    assert _folded_text("n = 1 / 0\nv = n") == ["n = 1 / 0", "v = n"]
    assert _folded_text("n = 2 ** 4\nv = n") == ["n = 2 ** 4", "v = n"]


@dataclasses.dataclass
class Holder:
    w: np.ndarray


def read_of_a_moved_array(x, y):
    return [x.w[0] * y for _ in x.w]


def test_an_item_of_an_array_moved_before_the_loop_stays_in_it():
    """`x.w` moves before the comprehension's loop; `x.w[0]`, an item of that array (not
    of a container the kinds describe), stays (a transformer crash, found by the
    fuzzer: the stage took the array's kind for a container's)."""
    x = Holder(np.array([-0.9, -0.6]))
    check_grads(read_of_a_moved_array, (x, 0.3), order=2, argnums=(0, 1))
