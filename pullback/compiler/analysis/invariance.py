"""Shifts a computation cancels: values whose cotangent is zero.

`np.log(np.sum(np.exp(x - top))) + top` is the same number for every `top`;
`top = np.max(x)` is only there to keep `exp` from overflowing. Its cotangent,
`dlse - np.sum(dlse * softmax)`, is zero up to rounding, and computing it costs a
sum, and the max's share of it an array comparison, a count and a product. A
person writing the adjoint leaves the shift out, as JAX's `logsumexp` stops the
gradient of its max.

`cancelled` finds such shifts before the reverse rules run: a call's result `t`
each of whose reads, and each read of a value computed from it, is one of the
operations below, ending in values that no longer depend on `t`. Then `t` is a
constant for differentiation: its cotangent, and every cotangent the shift would
pass on, are never computed. This is exact at every order: a value that does not
depend on `t` has all its derivatives in `t` zero.

Each value computed from `t` is `base + k t` (additive) or `base * exp(k t)`
(exponential), `base` independent of `t` and `k` a nonzero integer:

    t                              additive, k = 1
    a + b, a - b, -a               additive from additive (or independent); exponential
                                   from exponential of the same k
    a * b, a / b                   exponential from exponential (or independent)
    np.exp(a), math.exp(a)         exponential from additive
    np.log(a), math.log(a)         additive from exponential
    np.sum(a, ...), np.mean(a, ...)  exponential, summed where `t` is the same
    np.squeeze(a, axis)            `t` with the axis it was reduced along dropped

Each primitive's part in this is a fact of its spec (`rules.registry.Spec.shift`).

`k` reaching 0 makes the value independent. Where `t` sits in a value's elements
(its layout) decides which sums keep the form: a scalar `t` is the same in every
element, so every sum does; `t = reduction(z, axis=a, keepdims=True)` is the same
along axis `a` of `z`-shaped values (log-softmax by rows), so only sums along `a`
do, giving `t`'s shape (`keepdims=True`) or that shape without axis `a`.
"""

import dataclasses
import heapq

from ...rules import registry
from ..syntax import nodes

# Layouts of a value computed from `t`: a scalar t in every element (ONE); t reduced
# from z along axis a, broadcast to z's shape (SOURCE), in its own shape (KEPT), or
# with axis a dropped (SQUEEZED).
ONE, SOURCE, KEPT, SQUEEZED = "one", "source", "kept", "squeezed"



@dataclasses.dataclass(frozen=True)
class _Form:
    """`base + k t` (or `base * exp(k t)` when `exponential`), laid out as `layout`."""

    exponential: bool
    k: int
    layout: str


_INDEPENDENT = "independent"


@dataclasses.dataclass
class Block:
    """A block of statements with, for each name, the positions of the statements
    that read it (reads in nested blocks and functions count for the statement
    holding them), and how often each statement reads each name."""

    statements: list
    reads: list = dataclasses.field(init=False)
    readers: dict = dataclasses.field(init=False)

    def __post_init__(self):
        self.reads = [nodes.read_counts(stmt) for stmt in self.statements]
        self.readers = {}
        for position, counts in enumerate(self.reads):
            for name in counts:
                self.readers.setdefault(name, []).append(position)


@dataclasses.dataclass(frozen=True)
class _Shift:
    """What is known of the shift `t`: its layout, and for a kept reduction the
    reduced array `source` and the `axis` (a constant's value)."""

    layout: str
    source: str = None
    axis: object = None

    def join(self, a, b):
        """The layout of an elementwise operation on values laid out as `a` and `b`."""
        if a == b:
            return a
        return SOURCE if {a, b} == {SOURCE, KEPT} else None

    def beside(self, layout, atom, is_scalar):
        """The layout of an elementwise operation on a value laid out as `layout` and
        the independent `atom`, or None when `atom` may broadcast it otherwise."""
        if layout == ONE or is_scalar(atom):
            return layout
        if nodes.is_name(atom, self.source) and layout in (SOURCE, KEPT):
            return SOURCE
        return None

    def summed(self, layout, axis, keepdims):
        """The layout of the sum of a value laid out as `layout`, or None when it
        sums elements of different shifts."""
        if layout == ONE:
            return ONE
        if layout == SOURCE and nodes.is_constant(axis, self.axis):
            return KEPT if keepdims else SQUEEZED
        return None

    def squeezed(self, layout, axis):
        """The layout of `np.squeeze` of a value laid out as `layout`, or None."""
        if layout == ONE:
            return ONE
        return SQUEEZED if layout == KEPT and nodes.is_constant(axis, self.axis) else None


def shift_of(fn, args, keywords, scalar):
    """What is known of the shift that `fn(*args, **keywords)` gives (a scalar when
    `scalar`), or None when it is not a shift `cancelled` can follow."""
    if scalar:
        return _Shift(ONE)
    options = dict(keywords)
    if (registry.holds(fn, "shift") in ("reduction", "sum") and len(args) == 1
            and isinstance(args[0], nodes.Name)
            and set(options) == {"axis", "keepdims"}
            and nodes.is_constant(options["keepdims"], True)
            and isinstance(options["axis"], nodes.Constant)):
        return _Shift(KEPT, args[0].id, options["axis"].value)
    return None


def cancelled(target, shift, block, position, function_reads, callee, is_scalar):
    """Whether every value computed from `target` (the shift, assigned by statement
    `position` of `block`) ends in one that does not depend on it.

    Args:
      target: the shift's name.
      shift: `shift_of` the call that assigns it.
      block: the `Block` of statements holding that call.
      position: the call's position in it.
      function_reads: `function_reads()`, how often the function reads each name
        (`nodes.read_counts`), asked only when the block's reads are all followed.
      callee: `callee(func)`, the object a call's function refers to, or None.
      is_scalar: `is_scalar(atom)`, whether an atom is known to be a scalar.
    """
    forms = {target: _Form(False, 1, shift.layout)}
    pending = [p for p in block.readers.get(target, []) if p > position]
    heapq.heapify(pending)
    handled = set()
    while pending:
        at = heapq.heappop(pending)
        if at in handled:
            continue
        handled.add(at)
        stmt = block.statements[at]
        target_name = nodes.single_target(stmt)
        if target_name is None or hasattr(stmt, "updates"):
            return False
        form = _form(stmt.value, forms, shift, callee, is_scalar)
        if form is None:
            return False
        if form is not _INDEPENDENT:
            forms[target_name] = form
            for p in block.readers.get(target_name, []):
                heapq.heappush(pending, p)
    if not handled:
        return False
    reads = function_reads()
    return all(sum(block.reads[p][name] for p in handled) == reads[name] for name in forms)


def _form(value, forms, shift, callee, is_scalar):
    """The form of `value` from those of the names it reads, `_INDEPENDENT`, or None
    when it is not one this module follows."""
    if isinstance(value, nodes.UnaryOp) and isinstance(value.op, (nodes.USub, nodes.UAdd)):
        form = forms.get(_name_of(value.operand))
        if form is None or form.exponential:
            return None
        return _Form(False, -form.k if isinstance(value.op, nodes.USub) else form.k,
                     form.layout)
    if isinstance(value, nodes.BinOp):
        return _binary(value, forms, shift, is_scalar)
    if isinstance(value, nodes.Call) and not any(
            _name_of(a) in forms for a in value.args[1:] + [k.value for k in value.keywords]):
        return _call(value, forms, shift, callee)
    return None


_SIGNS = {nodes.Add: 1, nodes.Sub: -1, nodes.Mult: 1, nodes.Div: -1}


def _binary(value, forms, shift, is_scalar):
    sign = _SIGNS.get(type(value.op))
    if sign is None:
        return None
    exponential = isinstance(value.op, (nodes.Mult, nodes.Div))
    left, right = forms.get(_name_of(value.left)), forms.get(_name_of(value.right))
    if left is not None and right is not None:
        if left.exponential != right.exponential:
            return None
        if left.exponential and not exponential:  # a sum of exponentials of one k
            k = left.k if left.k == right.k else None
        else:
            k = left.k + sign * right.k if left.exponential == exponential else None
        return _made(left.exponential, k, shift.join(left.layout, right.layout))
    form, other = (left, value.right) if left is not None else (right, value.left)
    if form.exponential != exponential:
        return None
    layout = shift.beside(form.layout, other, is_scalar)
    return _made(exponential, form.k if left is not None else sign * form.k, layout)


def _made(exponential, k, layout):
    if k is None or layout is None:
        return None
    return _INDEPENDENT if k == 0 else _Form(exponential, k, layout)


def _call(value, forms, shift, callee):
    fn = callee(value.func)
    form = forms.get(_name_of(value.args[0])) if value.args else None
    if form is None or fn is None:
        return None
    options = {k.arg: k.value for k in value.keywords}
    passes = registry.holds(fn, "shift")
    if passes in ("exponential", "logarithm"):
        if len(value.args) > 1 or options or form.exponential != (passes == "logarithm"):
            return None
        return _Form(passes == "exponential", form.k, form.layout)
    if passes == "sum" and form.exponential and len(value.args) <= 2 and set(options) <= {
            "axis", "keepdims"}:
        axis = value.args[1] if len(value.args) == 2 else options.get("axis")
        keepdims = options.get("keepdims", nodes.constant(False))
        if not isinstance(keepdims, nodes.Constant):
            return None
        return _made(True, form.k, shift.summed(form.layout, axis, bool(keepdims.value)))
    if passes == "squeeze" and len(value.args) == 1 and set(options) == {"axis"}:
        return _made(form.exponential, form.k, shift.squeezed(form.layout, options["axis"]))
    return None


def _name_of(atom):
    return atom.id if isinstance(atom, nodes.Name) else None
