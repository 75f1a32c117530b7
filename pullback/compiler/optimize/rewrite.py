"""Stage 4 (optimize): a pullback's IR rewritten by general rules, to a fixed point.

A pullback's body (`ir`) binds each name once on each path and writes each
cotangent as one `ir.Sum` of its contributions, so what a rule needs to know
about a name is a fact of the whole body: the expression it is bound to
(`Facts.definitions`) and how often it is read (`Facts.uses`). Each rule
(`RULES`) rewrites one expression, reading those facts: a term of a sum, a
product, a call of a helper. The driver applies them bottom-up to every
expression a statement binds, then propagates copies (`copies`) and drops what
nothing reads (`simplify.dead_code`), and repeats until no rule applies. A rule
that puts a name's definition in its one use (a product's factor, a sum's term)
leaves the definition to the dead-code pass.

The rules, each with its reason in its docstring and a unit test of input and
output IR (tests/test_rewrite.py): `sums` (one sum, a term twice, helpers summed
once over their terms, slices joined, item cotangents added at their items),
`products` (powers of two multiplied once, a reduction's cotangent multiplied
without a broadcast), `tuples` (the cotangents of tuples of known length as
displays) and `items` (an item of the cotangent of a list or dict read by subscript).
"""

import collections
import dataclasses
import functools

from ...rules import registry
from ...runtime.cotangents import ZERO
from ..syntax import nodes
from . import items, products, sums, tuples
from .copies import coalesce_copies, propagate_copies

RULES = (
    sums.zeros, sums.flatten, sums.twice, sums.summed_helpers, sums.joined_slices,
    sums.items_added,
    products.gather_scales, products.unreduced_factor,
    tuples.unindexed_tuple, tuples.sum_of_displays, tuples.item_of_display,
    items.item_read,
)
"""Every rewrite rule, in the order they are tried on each expression."""

_ROUNDS = 20


def rewrite(statements, context, dead_code):
    """A pullback's body `statements` rewritten by `RULES` until none applies; `context`
    is a `Context` and `dead_code(statements, live)` drops the unread statements."""
    for _ in range(_ROUNDS):
        statements = dead_code(coalesce_copies(propagate_copies(statements)), set())
        context.facts = Facts.of(statements)
        fired = []
        statements = _block(statements, context, fired)
        if not fired:
            return statements
    return statements


@dataclasses.dataclass
class Facts:
    """What a pullback's body says about its names: `definitions`, the expression bound
    to each name assigned once (`name = e`), and `uses`, how often each is read."""

    definitions: dict
    uses: collections.Counter

    @classmethod
    def of(cls, statements):
        """The facts of a pullback's body."""
        assigned = collections.Counter()
        definitions = {}
        for stmt in (s for top in statements for s in nodes.statements(top)):
            for name in nodes.stores(stmt) if isinstance(stmt, nodes.Assign) else ():
                assigned[name] += 1
            target = nodes.single_target(stmt)
            if target is not None:
                definitions[target] = stmt.value
        definitions = {n: v for n, v in definitions.items() if assigned[n] == 1}
        return cls(definitions, nodes.read_counts(statements))


@dataclasses.dataclass
class Context:
    """What the rules read besides the body: the generated code's `bindings` (names of
    helpers), the `kinds` and shape tokens (`shapes`) of the function's variables,
    and `values`, the names the forward function binds once (`slice_chains`)."""

    bindings: object
    kinds: dict
    shapes: dict
    values: dict
    facts: Facts = None

    @property
    def zero(self):
        """The name of `ZERO` in the generated code."""
        return self.bindings.object("ZERO", ZERO)

    def is_zero(self, node):
        return nodes.is_name(node, self.bindings.name_of(ZERO) or "")

    def calls(self, node, helper):
        """Whether `node` is a call of `helper` (with positional arguments only)."""
        return self.bindings.calls(node, helper)

    def read_once(self, node):
        """The expression `node` names when it is a name bound once and read only here
        (the rule may put it in place of the name), else None."""
        if not nodes.is_name(node) or self.facts.uses[node.id] != 1:
            return None
        return self.facts.definitions.get(node.id)

    def bound(self, node):
        """The expression `node` names when it is a name bound once, else None."""
        return self.facts.definitions.get(node.id) if nodes.is_name(node) else None

    @functools.cached_property
    def summed(self):
        """`{helper's name: (its sum over lists, positions of the arguments that change)}`
        for the helpers whose spec gives their sum (`Spec.summed`)."""
        return {self.bindings.name_of(spec.primitive): spec.summed for spec in registry.specs()
                if spec.summed and self.bindings.name_of(spec.primitive)}


def _block(statements, context, fired):
    """A block's statements rewritten; an `if` whose branches are the same statements is
    those statements (`same_branches`: a loop's exits, `break` or not, pass the state's
    cotangent on alike), so that the pullback no longer reads its test."""
    out = []
    for stmt in statements:
        if not isinstance(stmt, nodes.If):
            out.append(_statement(stmt, context, fired))
            continue
        body, orelse = _block(stmt.body, context, fired), _block(stmt.orelse, context, fired)
        if body and _same(body, orelse):
            fired.append("same_branches")
            out += body
        else:
            out.append(nodes.replaced(stmt, body=body, orelse=orelse))
    return out


def _same(statements, others):
    return len(statements) == len(others) and all(
        nodes.dump(a) == nodes.dump(b) for a, b in zip(statements, others))


def _statement(stmt, context, fired):
    if not isinstance(stmt, nodes.Assign):
        return stmt
    value = _rewritten(stmt.value, context, fired)
    return stmt if value is stmt.value else nodes.replaced(stmt, value=value)


def _rewritten(node, context, fired):
    """`node` with its parts rewritten, then the first rule that applies applied to it,
    again and again."""
    if not isinstance(node, nodes.AST) or not node._fields:
        return node
    fields = {}
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            new = [_rewritten(item, context, fired) for item in value]
            if any(a is not b for a, b in zip(new, value)):
                fields[field] = new
        elif isinstance(value, nodes.AST):
            new = _rewritten(value, context, fired)
            if new is not value:
                fields[field] = new
    if fields:
        node = nodes.replaced(node, **fields)
    for _ in range(_ROUNDS):
        for rule in RULES:
            new = rule(node, context)
            if new is not None:
                fired.append(rule.__name__)
                node = new
                break
        else:
            return node
    return node
