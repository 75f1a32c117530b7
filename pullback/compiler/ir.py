"""The pullback as an IR: linear maps applied to names bound once, and n-ary sums.

The reverse rules (`reverse.backward`) write a pullback's body as gast statements
of three forms, with one node of their own:

- `name = e` and `a, b = e`: each name is assigned once on each path through the
  body (an `if` assigns the names it joins in both of its branches), and `e` applies
  linear maps (a template's expressions, helpers of `runtime.cotangents`) to names;
- `if test: ... else: ...`, with a test of primal values;
- `return (denv, dx, ...)`, last.

`Sum(terms, kind)` is the cotangent of one variable: the sum (the paper's ⊕) of
the contributions of every place that reads it, collected while the rules walk
back and written once, where the variable is defined. The rewrite rules
(`rewrite.RULES`) read and rewrite these sums and the expressions in them; `lower`
then writes each as Python: `a + b - c` for numbers and arrays (kind `NUMBER`),
`add(a, b)` or `add_all((a, b, c))` for cotangents of any other value (`ANY`).
"""

import ast
import collections
import re

from ..runtime.cotangents import add, add_all
from .syntax import nodes

NUMBER = "number"
ANY = "any"


class Sum(nodes.AST):
    """The sum of the cotangents `terms` (a list of expressions); `kind` is `NUMBER`
    when they are numbers or arrays (summed by `+`), else `ANY`."""

    _fields = ("terms", "kind")

    def __init__(self, terms, kind):
        super().__init__()
        self.terms = list(terms)
        self.kind = kind


class CachedLoop(nodes.AST):
    """A loop whose iterations keep the values their pullback reads in a list, as the
    loop rule emits it (`reverse.forward`), in the forward function.

    `forward` is one iteration's forward code (the body's statements, which assign
    `iteration`: `('next', *state)`, or another flag when the body may stop), and
    `step` one iteration's pullback: a pullback's body, reading the cotangents of
    the state after the iteration from the names `carried` and ending in
    `return (denv, ditem, *dstate)`, which `optimize` rewrites as any other.
    `optimize.loop_caches` writes it as Python: the loop appending to the list
    `cache`, and the definition of its pullback, named `pullback_name`, which runs `step` over
    the list in reverse. The loop reads `item` from `items` (None for a `while`) and
    its state `params` starts from `inits`; `env` is each variable the body reads from
    outside with its kind; `target` is bound to `(flag, *state)` after it. `kinds` is
    the kind of each of the body's variables, for the optimiser.
    """

    _fields = ("forward", "step", "items", "inits", "target", "pullback_name", "item", "params",
               "iteration", "carried", "cache", "env", "stops", "kinds")
    _attributes = ("lineno",)

    def __init__(self, **fields):
        super().__init__()
        for name in self._fields + self._attributes:
            setattr(self, name, fields[name])


def sum_of(terms, kind, zero):
    """The sum of `terms`: the one term itself, or the name `zero` for no term."""
    if not terms:
        return nodes.name(zero)
    return nodes.clone(terms[0]) if len(terms) == 1 else Sum(nodes.clone(terms), kind)


def lower(statements, bindings):
    """`statements` with every `Sum` written as Python (a copy where one is; the
    helpers `add` and `add_all` through `bindings`), a sum that adds to an earlier
    cotangent of the same variable read nowhere else taking its name (`reused`)."""
    renames = reused(statements)
    if renames:
        statements = [nodes.renamed(stmt, renames) for stmt in statements]
    return [_Lower(bindings).visit(nodes.clone(stmt)) if _has_sum(stmt) else stmt
            for stmt in statements]


def reused(statements):
    """`{name: earlier name}` for each `dx_2 = SUM(dx_1, ...)` where `dx_2` is bound once
    and `dx_1` is read only there: the sum may update it (`dx = dx + e`), as a person
    writes an accumulation. Chains of such sums all take the first name."""
    reads = nodes.read_counts(statements)
    every = [stmt for top in statements for stmt in nodes.statements(top)]
    assigned = collections.Counter(name for stmt in every if isinstance(stmt, nodes.Assign)
                                   for name in nodes.stores(stmt))
    renames = {}
    for stmt in every:
        target = nodes.single_target(stmt)
        if target is None or not isinstance(stmt.value, Sum) or assigned[target] != 1:
            continue
        first = stmt.value.terms[0] if stmt.value.terms else None
        if (nodes.is_name(first) and reads[first.id] == 1
                and _variable(first.id) == _variable(target)):
            renames[target] = renames.get(first.id, first.id)
    return renames


def _variable(name):
    """The name a generated name was numbered from (`dx` for `dx_2`)."""
    return re.sub(r"_[0-9]+$", "", name)


def _has_sum(node):
    return any(isinstance(n, Sum) for n in nodes.walk(node))


class _Lower(nodes.NodeTransformer):
    def __init__(self, bindings):
        self.bindings = bindings

    def visit_Sum(self, node):
        terms = [self.visit(term) for term in node.terms]
        if len(terms) == 1:
            return terms[0]
        if node.kind == NUMBER:
            total = terms[0]
            for term in terms[1:]:
                if isinstance(term, nodes.UnaryOp) and isinstance(term.op, nodes.USub):
                    total = nodes.binop(total, nodes.Sub(), term.operand)
                else:
                    total = nodes.binop(total, nodes.Add(), term)
            return total
        if len(terms) == 2:
            return nodes.call(nodes.name(self.bindings.object("add", add)), terms)
        return nodes.call(nodes.name(self.bindings.object("add_all", add_all)),
                          [nodes.tuple_(terms)])


def parse(text):
    """The statements of IR `text`, Python in which `SUM(a, b)` is a `Sum` of kind
    `NUMBER` and `ANY_SUM(a, b)` one of kind `ANY` (for tests and debugging)."""
    return [_FromText().visit(stmt) for stmt in nodes.from_ast(ast.parse(text)).body]


def show(statements):
    """IR `statements` as text, in the notation `parse` reads."""
    shown = [_ToText().visit(nodes.clone(stmt)) for stmt in statements]
    return nodes.unparse(nodes.module(shown))


class _FromText(nodes.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        if nodes.is_name(node.func, "SUM") or nodes.is_name(node.func, "ANY_SUM"):
            return Sum(node.args, NUMBER if node.func.id == "SUM" else ANY)
        return node


class _ToText(nodes.NodeTransformer):
    def visit_Sum(self, node):
        terms = [self.visit(term) for term in node.terms]
        return nodes.call(nodes.name("SUM" if node.kind == NUMBER else "ANY_SUM"), terms)
