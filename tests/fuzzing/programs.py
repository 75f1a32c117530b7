"""Random programs: the generator, a hypothesis strategy whose simplest choices come first."""


import ast
import collections
import dataclasses
import functools
import itertools
import re

import hypothesis
import numpy as np
from hypothesis import strategies as st

from .running import plain_value

# -- types of the values the generator tracks ----------------------------------

F, INT, V, M, L, D, P, R = "float", "int", "vector", "matrix", "list", "dict", "point", "record"
FN, FNS, FND = "function", "function list", "function dict"
RECURSIVE = "recursive function"  # a nested function of a float and an int depth
ARRAYS = "list of vectors"  # its items may be other variables' arrays: aliases
TUPLE = "tuple"  # an output: a float and a vector

LITERALS = ("2.0", "0.5", "-0.5", "1.5", "-1.5", "3.0", "-0.4", "0.25", "-2.0", "1.0")
THRESHOLDS = ("0.0", "0.5", "-0.5", "1.0", "10.0", "-10.0")
SCALAR_FUNCTIONS = (
    "np.sin({})", "np.cos({})", "np.tanh({})", "math.sin({})", "math.cos({})", "np.exp({})",
    "math.tanh({})", "math.exp({})", "np.log(1.0 + {0} * {0})", "math.log(1.0 + {0} * {0})",
    "np.sqrt(1.0 + {0} * {0})", "math.sqrt(2.0 + {0} * {0})", "np.arctan({})", "float({})",
)
ARRAY_FUNCTIONS = (
    "np.sin({})", "np.tanh({})", "np.cos({})", "np.exp({})", "np.log(1.0 + {0} * {0})",
    "np.sqrt(1.0 + {0} * {0})", "np.abs({})", "np.square({})", "-{}",
)
REDUCTIONS = ("np.sum({})", "np.mean({})", "np.max({})", "np.prod({})", "{}.sum()", "np.min({})")
MAX_STATEMENTS, MAX_DEPTH, EXPRESSION_DEPTH = 8, 2, 3

HEADER = """\
import collections
import contextlib
import dataclasses
import math

import numpy as np
"""
RECORDS = {
    P: 'Pt = collections.namedtuple("Pt", "a b")\n',
    R: """\
@dataclasses.dataclass
class Rec:
    w: np.ndarray
    s: float

    def scale(self, t):
        return self.s * t + np.sum(self.w)

    def __call__(self, t):
        return np.tanh(self.w * t)
""",
}


@dataclasses.dataclass
class Var:
    """A variable the generator may read: its name, type and what is known of it."""

    name: str
    type: str
    length: int = 0  # lists: the items certainly present; functions: their arity
    keys: tuple = ()  # dicts: the keys certainly present; functions: optional parameters
    captured: bool = False  # read by a closure: updating it would make the closure see it
    updated: bool = False  # assigned again: a closure reading it is refused, if alone
    alias: str = ""  # the variable it was assigned from, which it shares its value with
    busy: bool = False  # iterated over by an enclosing loop: not to be changed


class Scope:
    """The variables visible at a point of the program being generated."""

    def __init__(self, variables, outer=frozenset(), loop=False, top=True, returns=F,
                 depth=0, nested=0, helpers=True):
        self.vars = dict(variables)
        self.outer = outer  # names of enclosing functions: read, never assigned
        self.loop, self.top, self.returns = loop, top, returns
        self.depth = depth  # blocks (if, for, while) around this point
        self.nested = nested  # functions around this point, below module level
        self.helpers = helpers  # whether calls may define module-level helpers

    def _copy(self, variables=None, outer=None, **changes):
        scope = Scope(self.vars if variables is None else variables,
                      self.outer if outer is None else outer, self.loop, self.top,
                      self.returns, self.depth, self.nested, self.helpers)
        for key, value in changes.items():
            setattr(scope, key, value)
        return scope

    def block(self, loop=None):
        """The scope of a block nested in this one (its new names do not leave it)."""
        return self._copy(loop=self.loop if loop is None else loop, top=False,
                          depth=self.depth + 1)

    def function(self, parameters, updated=False):
        """The scope of a function defined here: its parameters, then our names, read-only
        (without those assigned more than once, unless `updated`)."""
        names = frozenset(self.vars) | self.outer
        variables = {k: v for k, v in self.vars.items() if updated or not v.updated}
        variables.update((v.name, v) for v in parameters)  # the latest: read first
        return self._copy(variables, names - set(variables.keys() - self.vars.keys()),
                          loop=False, top=True, returns=F, depth=0, nested=self.nested + 1)

    def shadowed(self, name, type_):
        """This scope with `name` rebound to a new variable of `type_` (a comprehension's)."""
        scope = self._copy(outer=self.outer - {name})
        scope.vars[name] = Var(name, type_)
        return scope

    def may_nest(self):
        """Whether a block (if, for, while) may open here."""
        return self.depth < MAX_DEPTH - self.nested

    def of(self, *types_):
        """The variables of these types, the latest first."""
        return [v for v in reversed(self.vars.values()) if v.type in types_]

    def writable(self, *types_):
        """The variables of these types that this scope may update."""
        busy = {v.name for v in self.vars.values() if v.busy}
        busy |= {v.alias for v in self.vars.values() if v.busy}
        return [v for v in self.of(*types_) if v.name not in self.outer
                and v.name not in busy and v.alias not in busy]

    def add(self, var):
        """Make `var` visible from here on."""
        self.vars[var.name] = var
        return var


@functools.lru_cache(maxsize=4096)
def _is_atom(text):
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.Constant):
        return not text.startswith("-")
    return isinstance(node, (ast.Name, ast.Call, ast.Subscript, ast.Attribute))


def wrap(text):
    """`text` in parentheses unless it is a name, a call, a subscript or a number."""
    return text if _is_atom(text) else f"({text})"


def indent(lines):
    """`lines` indented by one level."""
    return ["    " + line for line in lines]


_INTEGERS = {}


class Generator:
    """Draws a program, choice by choice, from hypothesis's `draw`; choice 0 is the simplest."""

    def __init__(self, draw, size):
        self.draw, self.n = draw, size
        self.helpers = {}  # name: source of a module-level definition
        self.kinds = collections.defaultdict(list)  # kind of helper: its names
        self.counts = collections.Counter()
        self.uses = set()  # P, R, "grad"

    # -- choices ---------------------------------------------------------------

    def pick(self, k):
        """An int in range(k), shrinking to 0."""
        if k <= 1:
            return 0
        if k not in _INTEGERS:
            _INTEGERS[k] = st.integers(0, k - 1)
        return self.draw(_INTEGERS[k])

    def weighted(self, weights):
        """The index of a weight, drawn in proportion to it; shrinks to index 0."""
        value = self.pick(sum(weights))
        for index, total in enumerate(itertools.accumulate(weights)):
            if value < total:
                return index
        raise AssertionError(weights)

    def chance(self, percent):
        """True with this probability; shrinks to False."""
        return self.pick(100) >= 100 - percent

    def one_of(self, items):
        """An item of a non-empty sequence; shrinks to the first."""
        return items[self.pick(len(items))]

    def index(self, length):
        """An index of a sequence of `length` items: 0, 1, ..., then -1, -2, ...; shrinks to 0."""
        k = self.pick(2 * length)
        return k if k < length else length - 1 - k

    def fresh(self, prefix):
        """A new name."""
        self.counts[prefix] += 1
        return f"{prefix}{self.counts[prefix]}"

    def float_literal(self):
        """A float literal, negative ones included."""
        return self.one_of(LITERALS)

    def variable(self, pool, otherwise):
        """An item of `pool` (mostly), or `otherwise()`; shrinks to the first item."""
        if not pool:
            return otherwise()
        index = self.weighted([3] + [2] * (len(pool) - 1) + [1])
        return pool[index] if index < len(pool) else otherwise()

    # -- scalar expressions ----------------------------------------------------

    def scalar(self, sc, d=EXPRESSION_DEPTH):
        """An expression whose value is a float."""
        if d <= 0:
            return self.scalar_atom(sc)
        options = (
            (self.scalar_atom, 6), (self.literal_of, 1), (self.arithmetic, 9),
            (self.division, 2), (self.power, 3), (self.negation, 1), (self.function, 5),
            (self.reduction, 4), (self.product, 2), (self.element, 5), (self.builtin, 3),
            (self.call, 7), (self.conditional, 1), (self.comprehension, 3),
            (self.boolean, 1), (self.nested_grad, 1), (self.with_int, 1),
        )
        chosen = options[self.weighted([w for _, w in options])][0]
        return chosen(sc, d - 1)

    def scalar_atom(self, sc, d=0):
        """A float variable, a field of a record, or a literal."""
        pool = [v.name for v in sc.of(F)]
        pool += [f"{v.name}.{field}" for v in sc.of(P) for field in "ab"]
        pool += [f"{v.name}.s" for v in sc.of(R)]
        return self.variable(pool, self.float_literal)

    def literal_of(self, sc, d):
        """A literal, negative ones included."""
        return self.float_literal()

    def arithmetic(self, sc, d):
        """`a + b`, `a - b`, `a * b`, also with int and negative-literal operands."""
        left, right = self.scalar(sc, d), self.scalar(sc, d)
        op = self.one_of(("+", "*", "-"))
        form = self.weighted([8, 1, 1])
        if form == 1:
            right = self.one_of(("2", "3", "-1"))
        elif form == 2:
            right = self.one_of(("-0.5", "-2.0", "-1.5"))  # x * -0.5: no parentheses
            return f"{wrap(left)} {op} {right}"
        return f"{wrap(left)} {op} {wrap(right)}"

    def division(self, sc, d):
        """A quotient with a denominator away from zero."""
        numerator = wrap(self.scalar(sc, d))
        form = self.pick(3)
        if form == 0:
            return f"{numerator} / {wrap(self.float_literal())}"
        inner = wrap(self.scalar(sc, d))
        if form == 1:
            return f"{numerator} / (1.0 + {inner} * {inner})"
        return f"{numerator} / (2.0 + np.sin({inner}))"

    def power(self, sc, d):
        """Powers: int exponents, negative ones, negative literal bases, `-x ** 2`."""
        form = self.pick(6)
        base = wrap(self.scalar(sc, d))
        if form == 0:
            return f"{base} ** {self.one_of(('2', '3'))}"
        if form == 1:
            literal = self.one_of(("-0.5", "-2.0", "-1.5", "0.5"))
            exponent = self.one_of(("2", "3", "2.0"))
            parenthesised = self.chance(80)
            base_text = f"({literal})" if parenthesised else literal
            return f"{base_text} ** {exponent} * {wrap(self.scalar(sc, d))}"
        if form == 2:
            return f"-{base} ** 2"
        if form == 3:
            return f"{base} ** -{self.one_of(('2', '1'))}"
        if form == 4:
            return f"(1.0 + {base} * {base}) ** {self.one_of(('0.5', '-0.5', '1.5'))}"
        return f"{wrap(self.float_literal())} ** 2"

    def negation(self, sc, d):
        """`-e`."""
        return f"-{wrap(self.scalar(sc, d))}"

    def function(self, sc, d):
        """A `math` or NumPy function of a float."""
        return self.one_of(SCALAR_FUNCTIONS).format(wrap(self.scalar(sc, d)))

    def reduction(self, sc, d):
        """A reduction of a vector or a matrix, or a builtin sum over a vector."""
        form = self.weighted([6, 2, 1, 1, 1])
        if form == 0:
            return self.one_of(REDUCTIONS).format(wrap(self.vector(sc, d)))
        if form == 1:
            return self.one_of(REDUCTIONS[:3]).format(wrap(self.matrix(sc, d)))
        if form == 2:
            return f"sum({self.vector(sc, d)})"
        if form == 3:
            return f"np.linalg.norm({self.vector(sc, d)})"
        return f"np.linalg.det(5.0 * np.eye({self.n}) + {wrap(self.matrix(sc, d))})"

    def product(self, sc, d):
        """`v @ w`, `np.dot(v, w)`, `v @ m @ w`, a trace, `np.einsum` of `v`, `m`, `w` with
        its subscripts as a string or as sublists."""
        form = self.pick(6)
        left, right = self.vector(sc, d), self.vector(sc, d)
        if form == 0:
            return f"{wrap(left)} @ {wrap(right)}"
        if form == 1:
            return f"np.dot({left}, {right})"
        if form == 2:
            return f"{wrap(left)} @ {wrap(self.matrix(sc, d))} @ {wrap(right)}"
        if form == 4:
            return f"np.einsum('i,ij,j', {left}, {self.matrix(sc, d)}, {right})"
        if form == 5:
            return f"np.einsum({left}, [0], {self.matrix(sc, d)}, [0, 1], {right}, [1], [])"
        return f"np.trace({self.matrix(sc, d)})"

    def element(self, sc, d):
        """An element of a vector, matrix, list, dict, record or slice."""
        options = [lambda: f"{wrap(self.vector(sc, d))}[{self.index(self.n)}]"]
        options.append(lambda: self.matrix_element(sc, d))
        if sc.of(L):
            options.append(lambda: self.list_element(sc))
        if sc.of(D):
            options.append(lambda: self.dict_element(sc))
        if sc.of(P):
            options.append(lambda: f"{self.one_of(sc.of(P)).name}[{self.pick(2)}]")
        if sc.of(R):
            options.append(lambda: f"{self.one_of(sc.of(R)).name}.w[{self.pick(self.n)}]")
        options.append(lambda: self.slice_sum(sc, d))
        return options[self.pick(len(options))]()

    def matrix_element(self, sc, d):
        """`m[i, j]` or `m[i][j]`."""
        m, i, j = wrap(self.matrix(sc, d)), self.pick(self.n), self.pick(self.n)
        return f"{m}[{i}, {j}]" if self.chance(50) else f"{m}[{i}][{j}]"

    def list_element(self, sc):
        """An item of a list certainly present."""
        var = self.one_of(sc.of(L))
        return f"{var.name}[{self.index(var.length)}]" if var.length else "1.0"

    def dict_element(self, sc):
        """The value of a key certainly present, by subscript or `get`; or `get` of a key
        absent, which gives the default."""
        var = self.one_of(sc.of(D))
        if not var.keys:
            return "1.0"
        key, form = self.one_of(var.keys), self.pick(6)
        if form == 0:
            return f"{var.name}.get({key!r}, 0.5)"
        if form == 1:
            return f"{var.name}.get('z', {self.scalar(sc, 0)})"
        return f"{var.name}[{key!r}]"

    def slice_sum(self, sc, d):
        """A sum over slices: `np.sum(v[1:])`, `np.sum(v[:-1] * w[1:])`, a mask."""
        v = wrap(self.vector(sc, d))
        form = self.pick(4)
        if form == 0:
            return f"np.sum({v}[1:])"
        if form == 1:
            return f"np.sum({v}[:-1] * {wrap(self.vector(sc, d))}[1:])"
        if form == 2:
            return f"np.sum({v}[::2])"
        return f"np.sum({v}[{v} > 0.0])"

    def builtin(self, sc, d):
        """`abs`, `max`, `min`, `sum` and `sorted` of floats and lists, of a list reversed
        or of two zipped."""
        form = self.pick(9)
        a, b = self.scalar(sc, d), self.scalar(sc, d)
        if form == 0:
            return f"abs({a})"
        if form == 1:
            return f"max({a}, {b})"
        if form == 2:
            return f"min({a}, {b}, {self.scalar(sc, d)})"
        if form == 3:
            return f"sum([{a}, {b}])"
        text, _ = self.list_value(sc, d)
        if form == 4:
            return f"sum({text})"
        if form == 5:
            return f"max({text})"
        if form == 7:
            return f"sum(reversed({text}))"
        if form == 8:
            return f"max(zip({text}, {self.list_value(sc, d)[0]}))[1]"
        return f"sorted({text})[0]"

    def conditional(self, sc, d):
        """`a if condition else b`."""
        return f"{wrap(self.scalar(sc, d))} if {self.condition(sc, d)} else {self.scalar(sc, d)}"

    def boolean(self, sc, d):
        """`a or b`, `a and b` on floats (non-zero at the generated points)."""
        op = self.one_of(("or", "and"))
        return f"{wrap(self.scalar(sc, d))} {op} {wrap(self.scalar(sc, d))}"

    def with_int(self, sc, d):
        """A float combined with a constant: a loop index, a length, an argmax, isinstance."""
        ints = [v.name for v in sc.of(INT)] + [f"len({v.name})" for v in sc.of(L)]
        ints += [f"np.argmax({self.vector(sc, d)})", f"float(isinstance({self.scalar(sc, d)}, "
                 "float))"]
        return f"{wrap(self.scalar(sc, d))} * {self.one_of(ints)}"

    # -- comprehensions --------------------------------------------------------

    def comprehension(self, sc, d):
        """A reduction of a list or dict comprehension or of a generator expression."""
        form = self.weighted([4, 3, 1, 1, 1])
        if form == 3:
            return self.dict_comprehension(sc, d)
        clause, inner, _ = self.comprehension_clause(sc, d)
        body = self.scalar(inner, d)
        if form == 0:
            return f"sum([{body} {clause}])"
        if form == 1 and self.chance(30):  # maybe empty: a float start keeps the sum a float
            return f"sum(({body} {clause} if {self.condition(inner, 0)}), 0.0)"
        if form == 1:
            return f"sum({body} {clause})"
        if form == 2:
            return f"max([{body} {clause}])"
        return f"min({body} {clause})"

    def dict_comprehension(self, sc, d):
        """`sum({k: e for k, t in enumerate(v)}.values())`."""
        index, name = self.fresh("k"), self.target_name(sc)
        inner = sc.shadowed(name, F).shadowed(index, INT)
        body = self.scalar(inner, d)
        return f"sum({{{index}: {body} for {index}, {name} in enumerate({self.vector(sc, d)})}}" \
               ".values())"

    def comprehension_clause(self, sc, d):
        """`(clause, scope, length)`: `for NAME in ITERABLE`, the scope of the body (NAME may
        shadow an outer name) and the number of items it certainly yields."""
        name = self.target_name(sc)
        form = self.weighted([3, 2, 2, 1, 1, 1])
        if form == 0:
            return f"for {name} in {self.vector(sc, d)}", sc.shadowed(name, F), self.n
        if form == 1:
            text, length = self.list_value(sc, d)
            return f"for {name} in {text}", sc.shadowed(name, F), length
        if form == 2:
            count = 1 + self.pick(3)
            return f"for {name} in range({count})", sc.shadowed(name, INT), count
        if form == 3:
            text, length = self.list_value(sc, d)
            return f"for {name} in reversed({text})", sc.shadowed(name, F), length
        if form == 4:
            other = self.target_name(sc, avoid=name)
            text, length = self.list_value(sc, d)
            inner = sc.shadowed(name, F).shadowed(other, F)
            return (f"for {name}, {other} in zip({self.vector(sc, d)}, {text})", inner,
                    min(length, self.n))
        index = self.fresh("k")
        inner = sc.shadowed(name, F).shadowed(index, INT)
        return f"for {index}, {name} in enumerate({self.vector(sc, d)})", inner, self.n

    def target_name(self, sc, avoid=None):
        """A comprehension variable: a fresh name, or one of the enclosing scope's (not often:
        pullback refuses a closure reading a name a comprehension also binds)."""
        names = [n for n in sc.vars if n != avoid]
        if names and self.chance(15):
            return self.one_of(names)
        return self.fresh("t")

    # -- calls -----------------------------------------------------------------

    def call(self, sc, d):
        """A call of a closure, a lambda, a helper, a factory's function or a method."""
        options = [self.closure_call, self.lambda_call, self.container_call]
        if sc.helpers:
            options += [self.helper_call, self.apply_call, self.recursive_call,
                        self.factory_call, self.generator_call]
        if sc.of(R):
            options.append(self.method_call)
        return options[self.pick(len(options))](sc, d)

    def arguments_for(self, sc, d, var):
        """The arguments of a call of closure `var`: its arity, maybe its optional ones."""
        texts = [self.scalar(sc, d) for _ in range(var.length)]
        if var.keys and self.chance(30):
            texts.append(f"{var.keys[0]}={self.scalar(sc, d)}")
        return ", ".join(texts)

    def closure_call(self, sc, d):
        """`g(e)` for a closure `g` in scope (a lambda's call if there is none)."""
        closures = sc.of(FN, RECURSIVE)
        if not closures:
            return self.lambda_call(sc, d)
        if closures[0].type == RECURSIVE:
            return f"{closures[0].name}({self.scalar(sc, d)}, {self.pick(3)})"
        closures = sc.of(FN)
        if not closures:
            return self.lambda_call(sc, d)
        var = self.one_of(closures)
        return f"{var.name}({self.arguments_for(sc, d, var)})"

    def lambda_call(self, sc, d):
        """`(lambda t: e)(e)`."""
        return f"({self.lambda_text(sc, d)})({self.scalar(sc, d)})"

    def lambda_text(self, sc, d, arity=1):
        """`lambda t: e`, reading the enclosing scope's variables."""
        parameters = [Var(self.fresh("t"), F) for _ in range(arity)]
        inner = sc.function(parameters, self.chance(10))
        names = ", ".join(v.name for v in parameters)
        text = f"lambda {names}: {self.scalar(inner, max(d, 1))}".replace("lambda :", "lambda:")
        self.mark_captured(sc, text)
        return text

    def mark_captured(self, sc, text):
        """Mark the variables of `sc` read by the function in `text` as captured."""
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name) and node.id in sc.vars:
                sc.vars[node.id].captured = True

    def function_value(self, sc, d):
        """A function of one float: a closure in scope, a lambda or a factory's."""
        closures = [v for v in sc.of(FN) if v.length == 1]
        form = self.pick(3)
        if form == 0 and closures:
            return self.one_of(closures).name
        if form == 2 and sc.helpers:
            return f"{self.factory()}({self.scalar(sc, d)})"
        return self.lambda_text(sc, d)

    def helper_call(self, sc, d):
        """A module-level helper, with keywords, defaults, `*args` or `**kwargs`."""
        form = self.pick(6)
        a, b = self.scalar(sc, d), self.scalar(sc, d)
        if form == 5:
            extra = f", extra={self.scalar(sc, d)}" if self.chance(50) else ""
            return f"{self.varargs_helper()}({a}, {b}, scale={self.scalar(sc, d)}{extra})"
        name = self.helper()
        calls = (f"{name}({a})", f"{name}({a}, b={b})", f"{name}(b={b}, a={a})",
                 f"{name}(*[{a}, {b}])", f"{name}(**{{'a': {a}, 'b': {b}}})")
        return calls[form]

    def apply_call(self, sc, d):
        """A closure passed to a module-level helper that calls it."""
        name = self.applier()
        if name.startswith("fold"):
            return f"{name}({self.function_list(sc, d)}, {self.scalar(sc, d)})"
        return f"{name}({self.function_value(sc, d)}, {self.scalar(sc, d)})"

    def function_list(self, sc, d):
        """A list of functions of one float: a list in scope or a list display."""
        lists = sc.of(FNS)
        if lists and self.chance(70):
            return self.one_of(lists).name
        return f"[{self.function_value(sc, d)}, {self.function_value(sc, d)}]"

    def recursive_call(self, sc, d):
        """A call of a recursive module-level helper with an int depth."""
        name = self.recursive()
        depth = self.pick(4)
        if name.startswith("iterate"):
            return f"{name}({self.function_value(sc, d)}, {self.scalar(sc, d)}, {depth})"
        if name.startswith("tree"):
            return f"{name}({self.scalar(sc, d)}, {self.vector(sc, d)}, {depth})"
        return f"{name}({self.scalar(sc, d)}, {depth})"

    def generator_call(self, sc, d):
        """A module-level generator, consumed by `sum`, `max`, `list` or a generator
        expression."""
        name, a = self.generator(), self.scalar(sc, d)
        n = 1 + self.pick(3)
        return self.one_of((f"sum({name}({a}, {n}))", f"max({name}({a}, {n}))",
                            f"list({name}({a}, {n}))[0]",
                            f"sum(t * 0.5 for t in {name}({a}, {n}))"))

    def factory_call(self, sc, d):
        """`make(c)(e)`: a function made by a factory, called at once."""
        return f"{self.factory()}({self.scalar(sc, d)})({self.scalar(sc, d)})"

    def container_call(self, sc, d):
        """A call of a function held in a list or dict, or of each of them."""
        lists, dicts = sc.of(FNS), sc.of(FND)
        if dicts and self.chance(40):
            var = self.one_of(dicts)
            return f"{var.name}[{self.one_of(var.keys)!r}]({self.scalar(sc, d)})"
        if not lists:
            return self.closure_call(sc, d)
        var = self.one_of(lists)
        if self.chance(50):
            name = self.fresh("h")
            return f"sum({name}({self.scalar(sc, d)}) for {name} in {var.name})"
        return f"{var.name}[{self.index(var.length)}]({self.scalar(sc, d)})"

    def method_call(self, sc, d):
        """A method of a dataclass argument, or its `__call__`."""
        name = self.one_of(sc.of(R)).name
        if self.chance(30):
            return f"np.sum({name}({self.scalar(sc, d)}))"
        return f"{name}.scale({self.scalar(sc, d)})"

    def nested_grad(self, sc, d):
        """`grad(lambda t: e)(e)`: pullback called inside the function."""
        self.uses.add("grad")
        closures = [v for v in sc.of(FN) if v.length == 1 and not v.keys]
        function = self.one_of(closures).name if closures and self.chance(40) else \
            self.lambda_text(sc, d)
        return f"grad({function})({self.scalar(sc, d)})"

    # -- module-level helpers --------------------------------------------------

    def define(self, kind, prefix, make, reuse=70):
        """The name of a helper of `kind`: an existing one, or a new one `make(name)` defines."""
        if self.kinds[kind] and self.chance(reuse):
            return self.one_of(self.kinds[kind])
        name = self.fresh(prefix)
        self.helpers[name] = make(name)  # after the helpers its body defines
        self.kinds[kind].append(name)
        return name

    def helper_scope(self, *names):
        """The scope of a module-level helper's body: its float parameters."""
        return Scope({n: Var(n, F) for n in names}, nested=1, helpers=False)

    def helper(self):
        """`def helper(a, b=2.0): ... return e`."""
        def make(name):
            sc = self.helper_scope("a", "b")
            body = self.body_lines(sc, limit=2)
            default = self.float_literal()
            return "\n".join([f"def {name}(a, b={default}):", *indent(body),
                              f"    return {self.scalar(sc, 2)}"])
        return self.define("helper", "helper", make)

    def varargs_helper(self):
        """`def total(*args, scale=1.0, **named)`: the sum of its arguments, scaled."""
        def make(name):
            return (f"def {name}(*args, scale=1.0, **named):\n"
                    "    return sum(args) * scale + sum(named.values())")
        return self.define("varargs", "total", make, reuse=100)

    def applier(self):
        """A higher-order helper: `apply(g, a)`, `twice(g, a)`, `fold(gs, a)`."""
        form = self.pick(3)
        texts = ("def {}(g, a):\n    return g(a)",
                 "def {}(g, a):\n    return g(g(a)) + a",
                 "def {}(gs, a):\n    for g in gs:\n        a = g(a) * 0.5\n    return a")
        prefix = ("apply", "twice", "fold")[form]
        return self.define(prefix, prefix, texts[form].format, reuse=100)

    def recursive(self):
        """A recursive helper with an int depth; mutual recursion; recursion over a closure;
        a binary recursion passing a vector on unchanged (its cotangent summed once)."""
        form = self.pick(4)
        if form == 3:
            return self.define("tree", "tree", self.binary_recursion)
        if form == 1:
            return self.define("iterate", "iterate", lambda name: (
                f"def {name}(g, a, n):\n    return a if n == 0 else {name}(g, g(a), n - 1)"))
        if form == 2:
            return self.define("even", "even", self.mutual)

        def make(name):
            sc = self.helper_scope("a")
            return "\n".join([
                f"def {name}(a, n):", "    if n <= 0:", f"        return {self.scalar(sc, 1)}",
                f"    return {name}({self.scalar(sc, 1)}, n - 1) {self.one_of('+*-')} "
                f"{wrap(self.scalar(sc, 1))}"])
        return self.define("recursive", "rec", make)

    def binary_recursion(self, name):
        """`tree(a, w, n)`: two calls of itself with `w` passed on unchanged."""
        sc = self.helper_scope("a")
        sc.add(Var("w", V))
        return "\n".join([
            f"def {name}(a, w, n):", "    if n <= 0:",
            f"        return {self.scalar(sc, 1)}",
            f"    left = {name}({self.scalar(sc, 1)}, w, n - 1)",
            f"    right = {name}(a * 0.5, w, n - 2)",
            f"    return {self.scalar(sc, 1)} + left * {wrap(self.scalar(sc, 1))} - right * 0.25"])

    def mutual(self, name):
        """Two mutually recursive helpers; `name` is the one called first."""
        other = self.fresh("odd")
        sc = self.helper_scope("a")
        return "\n".join([
            f"def {name}(a, n):",
            f"    return a if n == 0 else {other}({self.scalar(sc, 1)}, n - 1)",
            "", "", f"def {other}(a, n):",
            f"    return a if n == 0 else {name}({self.scalar(sc, 1)}, n - 1)"])

    def generator(self):
        """`def gen(a, n)`: yields from a loop, maybe under a condition, maybe from a list
        too (always at least one item)."""
        def make(name):
            sc = self.helper_scope("a")
            sc.add(Var("k", INT))
            item = self.scalar(sc, 2)
            lines = [f"def {name}(a, n):", f"    yield {self.scalar(self.helper_scope('a'), 1)}",
                     "    for k in range(n):"]
            if self.chance(40):
                lines += [f"        if {self.condition(sc)}:", f"            yield {item}"]
            else:
                lines += [f"        yield {item}"]
            if self.chance(40):
                lines += ["    yield from [a, a * 0.5]"]
            return "\n".join(lines)
        return self.define("generator", "gen", make)

    def vector_helper(self):
        """`def vloop(v, a)` with a loop (so not inlined), returning a new vector, its
        argument, or a view of it: a caller updating the result in place changes its
        argument in the last two."""
        form = self.pick(3)

        def make(name):
            sc = self.helper_scope("a")
            sc.add(Var("v", V))
            if form == 0:
                return "\n".join([f"def {name}(v, a):", "    for k in range(2):",
                                  f"        v = {self.vector(sc, 1)} * 0.5 + v",
                                  "    return v"])
            result = ("v", "v[::-1]")[form - 1]
            return "\n".join([f"def {name}(v, a):", "    t = 0.0", "    for vi in v:",
                              "        t = t + vi * a", f"    return {result}"])
        return self.define(f"vloop{form}", "vloop", make)

    def factory(self):
        """`def make(c): def h(a, b=c): ...; return h`: one code object, many functions."""
        form = self.pick(3)

        def make(name):
            sc = self.helper_scope("a", "b", "c")
            if form == 0:
                return "\n".join([f"def {name}(c):", "    def h(a, b=c):",
                                  f"        return {self.scalar(sc, 2)}", "", "    return h"])
            if form == 1:
                del sc.vars["b"]
                return f"def {name}(c):\n    return lambda a: {self.scalar(sc, 2)}"
            del sc.vars["b"]
            return "\n".join([f"def {name}(c):", "    k = c * 2.0", "", "    def h(a):",
                              f"        return {self.scalar(sc, 2)} + k", "", "    return h"])
        return self.define(f"factory{form}", "make", make)

    # -- vectors, matrices, lists, dicts ---------------------------------------

    def vector(self, sc, d=EXPRESSION_DEPTH):
        """An expression whose value is an array of shape (n,)."""
        if d <= 0:
            return self.vector_atom(sc)
        options = (
            (self.vector_atom, 6), (self.vector_constant, 2), (self.vector_arithmetic, 6),
            (self.vector_function, 4), (self.matrix_vector, 3), (self.vector_select, 3),
            (self.vector_build, 1), (self.vector_misc, 2),
        )
        return options[self.weighted([w for _, w in options])][0](sc, d - 1)

    def vector_atom(self, sc, d=0):
        """A vector variable, a record's vector field, or a constant vector."""
        pool = [v.name for v in sc.of(V)] + [f"{v.name}.w" for v in sc.of(R)]
        pool += [f"{v.name}[{self.index(v.length)}]" for v in sc.of(ARRAYS)]
        return self.variable(pool, lambda: self.vector_of_scalars(sc))

    def vector_of_scalars(self, sc):
        """A vector made from a float variable (or a constant vector if there is none)."""
        if not sc.of(F, P, R) or self.chance(25):
            return self.vector_constant(sc, 0)
        scalar = wrap(self.scalar_atom(sc))
        return self.one_of((f"{scalar} * np.linspace(0.5, 1.5, {self.n})",
                            f"np.full({self.n}, {scalar})", f"{scalar} * np.ones({self.n})"))

    def vector_constant(self, sc, d):
        """A constant vector, or one filled with a float."""
        n = self.n
        form = self.pick(5)
        if form >= 3:
            filler = self.scalar(sc, d)
            return f"np.zeros({n}) + {wrap(filler)}" if form == 3 else f"np.full({n}, {filler})"
        return (f"np.ones({n})", f"np.linspace(0.5, 1.5, {n})", f"np.arange({n}) * 0.5")[form]

    def vector_arithmetic(self, sc, d):
        """Sums, products and quotients of vectors and floats (broadcast)."""
        left = wrap(self.vector(sc, d))
        form = self.pick(4)
        op = self.one_of(("+", "*", "-"))
        if form == 0:
            return f"{left} {op} {wrap(self.vector(sc, d))}"
        if form == 1:
            return f"{left} {op} {wrap(self.scalar(sc, d))}"
        if form == 2:
            return f"{wrap(self.scalar(sc, d))} {op} {left}"
        other = wrap(self.vector(sc, d))
        return f"{left} / (1.0 + {other} * {other})"

    def vector_function(self, sc, d):
        """An elementwise NumPy function of a vector, or a power."""
        if self.chance(20):
            return f"{wrap(self.vector(sc, d))} ** {self.one_of(('2', '3'))}"
        return self.one_of(ARRAY_FUNCTIONS).format(wrap(self.vector(sc, d)))

    def matrix_vector(self, sc, d):
        """`m @ v`, `np.dot(m, v)`, `v @ m`."""
        m, v = wrap(self.matrix(sc, d)), wrap(self.vector(sc, d))
        return self.one_of((f"{m} @ {v}", f"np.dot({m}, {v})", f"{v} @ {m}"))

    def vector_select(self, sc, d):
        """A row or column of a matrix, a reversed vector, a reduction along an axis."""
        m = wrap(self.matrix(sc, d))
        form = self.pick(5)
        i = self.pick(self.n)
        if form == 0:
            return f"{m}[{i}]"
        if form == 1:
            return f"{m}[:, {i}]"
        if form == 2:
            return f"{wrap(self.vector(sc, d))}[::-1]"
        if form == 3:
            return f"np.sum({m}, axis={self.pick(2)})"
        return f"{m}.{self.one_of(('mean', 'max'))}(axis={self.pick(2)})"

    def vector_build(self, sc, d):
        """`np.array([a, b, ...])` from floats."""
        return f"np.array([{', '.join(self.scalar(sc, d) for _ in range(self.n))}])"

    def vector_misc(self, sc, d):
        """cumsum, maximum, where, clip, a linear solve, a copy, a helper's vector."""
        v = self.vector(sc, d)
        form = self.pick(7)
        if form == 6 and sc.helpers:
            return f"{self.vector_helper()}({v}, {self.scalar(sc, d)})"
        if form == 0:
            return f"np.cumsum({v})"
        if form == 1:
            return f"np.maximum({v}, {self.vector(sc, d)})"
        if form == 2:
            return f"np.where({wrap(v)} > 0.0, {v}, 0.5 * {wrap(v)})"
        if form == 3:
            return f"np.clip({v}, -1.0, 1.0)"
        if form == 4:
            return f"np.linalg.solve(5.0 * np.eye({self.n}) + {wrap(self.matrix(sc, d))}, {v})"
        return f"{wrap(v)}.copy()"

    def matrix(self, sc, d=EXPRESSION_DEPTH):
        """An expression whose value is an array of shape (n, n)."""
        pool = [v.name for v in sc.of(M)]
        form = self.weighted([6, 1, 3, 2, 3, 1]) if d > 0 else 0
        d -= 1
        if form == 0:
            return self.variable(pool, lambda: f"np.outer({self.vector_atom(sc)}, "
                                               f"np.linspace(0.5, 1.5, {self.n}))")
        if form == 1:
            return f"np.eye({self.n}) * {wrap(self.scalar(sc, d))}"
        if form == 2:
            left = wrap(self.matrix(sc, d))
            right = wrap(self.one_of((self.matrix, self.scalar))(sc, d))
            return f"{left} {self.one_of(('+', '*', '-'))} {right}"
        if form == 3:
            return self.one_of(ARRAY_FUNCTIONS[:4]).format(wrap(self.matrix(sc, d)))
        if form == 4:
            options = (lambda: f"{wrap(self.matrix(sc, d))} @ {wrap(self.matrix(sc, d))}",
                       lambda: f"np.outer({self.vector(sc, d)}, {self.vector(sc, d)})",
                       lambda: f"{wrap(self.matrix(sc, d))}.T")
            return options[self.pick(3)]()
        return f"np.linalg.inv(5.0 * np.eye({self.n}) + {wrap(self.matrix(sc, d))})"

    def list_value(self, sc, d=EXPRESSION_DEPTH):
        """`(text, length)`: a list expression and the number of items it certainly has."""
        lists = sc.of(L)
        form = self.weighted([4, 3, 3, 1, 1, 1])
        if form == 0 and lists:
            var = self.one_of(lists)
            return var.name, var.length
        if form == 2:
            clause, inner, length = self.comprehension_clause(sc, max(d - 1, 0))
            return f"[{self.scalar(inner, max(d - 1, 0))} {clause}]", length
        if form == 3 and lists:
            var = self.one_of(lists)
            return f"{var.name} + [{self.scalar(sc, max(d - 1, 0))}]", var.length + 1
        if form == 4 and lists:
            var = self.one_of(lists)
            return f"sorted({var.name})", var.length
        if form == 5:  # a repetition: one value held at several places
            count = 2 + self.pick(2)
            return f"[{self.scalar(sc, max(d - 1, 0))}] * {count}", count
        count = 1 + self.pick(3)
        return f"[{', '.join(self.scalar(sc, max(d - 1, 0)) for _ in range(count))}]", count

    def dict_value(self, sc, d=EXPRESSION_DEPTH):
        """`(text, keys)`: a dict expression and its keys."""
        if self.chance(30):
            count = 1 + self.pick(3)
            index = self.fresh("k")
            body = self.scalar(sc.shadowed(index, INT), max(d - 1, 0))
            return f"{{{index}: {body} for {index} in range({count})}}", tuple(range(count))
        merged = [v for v in sc.of(D) if v.keys]
        form = self.pick(8)
        if form == 0:
            values = ", ".join(self.scalar(sc, max(d - 1, 0)) for _ in range(2))
            return f"dict(zip(('p', 'q'), [{values}]))", ("p", "q")
        if form == 1 and merged:
            var = self.one_of(merged)
            text = f"{var.name} | {{'r': {self.scalar(sc, max(d - 1, 0))}}}"
            return text, tuple(dict.fromkeys(var.keys + ("r",)))
        keys = ("p", "q", "r")[: 1 + self.pick(3)]
        items = ", ".join(f"{k!r}: {self.scalar(sc, max(d - 1, 0))}" for k in keys)
        return f"{{{items}}}", keys

    def condition(self, sc, d=1):
        """A condition: comparisons of floats, of ints, chained, combined."""
        form = self.weighted([5, 2, 2, 1, 1, 1, 1])
        if form == 0:
            return f"{wrap(self.scalar(sc, d))} > {self.one_of(THRESHOLDS)}"
        if form == 1:
            return f"{wrap(self.scalar(sc, d))} < {wrap(self.scalar(sc, d))}"
        if form == 2:
            ints = [v.name for v in sc.of(INT)]
            if ints:
                name = self.one_of(ints)
                return self.one_of((f"{name} == 1", f"{name} % 2 == 0", f"{name} > 0"))
            lists = sc.of(L)
            return f"len({self.one_of(lists).name}) > 2" if lists else "True"
        if form == 3:
            return f"-1.0 < {wrap(self.scalar(sc, d))} < 1.0"
        if form == 4:
            return f"not {wrap(self.condition(sc, d))}"
        if form == 5:
            op = self.one_of(("and", "or"))
            return f"{wrap(self.condition(sc, d))} {op} {wrap(self.condition(sc, d))}"
        return f"np.all({wrap(self.vector(sc, d))} > 0.0)"

    # -- statements ------------------------------------------------------------

    def body_lines(self, sc, limit=MAX_STATEMENTS, minimum=0, more=82):
        """The statements of a block: `minimum` of them, then more while the draws say so."""
        lines = []
        count = 0
        while count < limit and (count < minimum or self.chance(more)):
            count += 1
            statement, ends = self.statement(sc)
            lines += statement
            if ends:
                break
        return lines

    def statement(self, sc):
        """`(lines, ends)`: one statement; `ends` when nothing may follow it (return, break)."""
        nested = sc.may_nest()
        options = [
            (self.assignment, 10), (self.update, 5), (self.mutation, 2), (self.closure, 5),
            (self.branch, 4 if nested else 0), (self.for_loop, 4 if nested else 0),
            (self.while_loop, 2 if nested else 0), (self.container_update, 5),
            (self.held_list_update, 2 if sc.writable(L) else 0),
            (self.function_container, 1), (self.made_function, 2), (self.unpacking, 2),
            (self.alias_update, 2), (self.early_return, 2 if not sc.top else 0),
            (self.jump, 5 if sc.loop and not sc.top else 0), (self.nested_factory, 1),
            (self.function_append, 1 if sc.writable(FNS) else 0), (self.statement_only, 1),
            (self.guarded, 2 if nested else 0), (self.context, 1 if nested else 0),
            (self.record_rebuild, 2 if sc.writable(P, R) else 0),
            (self.rebinding, 3 if sc.loop else 1), (self.deletion, 1),
        ]
        chosen = options[self.weighted([w for _, w in options])][0]
        result = chosen(sc)
        return result if isinstance(result, tuple) else (result, False)

    def new_value(self, sc, type_):
        """`(text, var)`: an expression of `type_` and the variable to assign it to."""
        prefix = {F: "s", V: "v", M: "m", L: "l", D: "d", ARRAYS: "vs"}[type_]
        var = Var(self.fresh(prefix), type_)
        if type_ == ARRAYS:
            var.length = 1 + self.pick(2)
            if self.chance(15):  # one array at each place: an update of one shows at all
                return f"[{self.vector(sc, 1)}] * {var.length}", var
            return f"[{', '.join(self.vector(sc, 1) for _ in range(var.length))}]", var
        if type_ == F:
            return self.scalar(sc), var
        if type_ == V:
            return self.vector(sc), var
        if type_ == M:
            return self.matrix(sc, 2), var
        if type_ == L:
            text, var.length = self.list_value(sc)
            return text, var
        text, var.keys = self.dict_value(sc)
        return text, var

    def assignment(self, sc):
        """`name = e` for a new name of a random type."""
        type_ = (F, V, L, M, D, ARRAYS)[self.weighted([8, 4, 2, 1, 1, 1])]
        text, var = self.new_value(sc, type_)
        sc.add(var)
        return [f"{var.name} = {text}"]

    def update_target(self, sc, *types_, mutation=False):
        """A variable to update, or None: for a `mutation` (an update in place, not binding
        the name again) any; else one no closure reads, mostly (pullback refuses to assign a
        name a closure reads, as the closure would see the new value)."""
        candidates = sc.writable(*types_)
        free = [v for v in candidates if mutation or not v.captured]
        if candidates and self.chance(5):
            return self.one_of(candidates)
        return self.one_of(free) if free else None

    def update(self, sc):
        """An augmented assignment or an update in place of a float or an array."""
        var = self.update_target(sc, F, V, M)
        if var is None:
            return self.mutation(sc)
        var.updated = True
        if var.type == F:
            op = self.one_of(("+=", "*=", "-="))
            if self.chance(15):
                return [f"{var.name} /= {wrap(self.float_literal())}"]
            return [f"{var.name} {op} {self.scalar(sc)}"]
        if var.type == M:
            i, j = self.pick(self.n), self.pick(self.n)
            return [self.one_of((f"{var.name}[{i}, {j}] = {self.scalar(sc)}",
                                 f"{var.name} *= {wrap(self.scalar(sc))}",
                                 f"{var.name}[{i}] += {self.vector(sc)}"))]
        return [self.vector_update(sc, var)]

    def mutation(self, sc):
        """An update in place of an array (maybe one a closure reads) by subscript: the name
        is not bound again."""
        var = self.update_target(sc, V, M, ARRAYS, mutation=True)
        if var is None:
            return self.assignment(sc)
        i = self.pick(self.n)
        if var.type == ARRAYS:
            item = f"{var.name}[{self.index(var.length)}]"
            if self.chance(20):
                var.length += sc.top
                return [f"{var.name}.append({self.vector(sc, 1)})"]
            if self.chance(30):
                return [f"{item} *= {wrap(self.scalar(sc))}"]
            return [f"{item}[{i}] {self.one_of(('=', '+='))} {self.scalar(sc)}"]
        target = f"{var.name}[{i}]" if var.type == V else f"{var.name}[{i}, {self.pick(self.n)}]"
        return [f"{target} {self.one_of(('=', '+=', '*='))} {self.scalar(sc)}"]

    def vector_update(self, sc, var):
        """An update in place of a vector."""
        i = self.pick(self.n)
        form = self.pick(6)
        if form == 0:
            return f"{var.name}[{i}] = {self.scalar(sc)}"
        if form == 1:
            return f"{var.name} {self.one_of(('+=', '*=', '-='))} {self.vector(sc)}"
        if form == 2:
            return f"{var.name} /= {self.one_of(('2.0', '-4.0', '0.5'))}"
        if form == 3:
            return f"{var.name}[{i}] {self.one_of(('+=', '*='))} {self.scalar(sc)}"
        if form == 4:
            return f"{var.name}[1:] += {wrap(self.scalar(sc))}"
        return f"{var.name} *= {wrap(self.scalar(sc))}"

    def container_update(self, sc):
        """`l.append(e)`, `l[i] = e`, `l.extend(...)`, `l.pop()`, `d[k] = e`."""
        var = self.update_target(sc, L, D, mutation=True)
        if var is None:
            text, var = self.new_value(sc, self.one_of((L, D)))
            sc.add(var)
            return [f"{var.name} = {text}"]
        if var.type == D:
            key = self.one_of(var.keys + ("z",)) if var.keys else "z"
            op = "+=" if key in var.keys and self.chance(30) else "="
            if sc.top and key not in var.keys:
                var.keys += (key,)
            return [f"{var.name}[{key!r}] {op} {self.scalar(sc)}"]
        return [self.list_update(sc, var)]

    def deletion(self, sc):
        """`del l[i]` or `del d[k]` (outside loops, which would delete again), or a
        temporary added into a number, then `del t`."""
        var = self.update_target(sc, L, D, mutation=True)
        if var is not None and sc.top and not sc.loop and self.chance(60):
            if var.type == L and var.length >= 2:
                var.length -= 1
                return [f"del {var.name}[{self.index(var.length + 1)}]"]
            if var.type == D and len(var.keys) >= 2:
                key = self.one_of(var.keys)
                var.keys = tuple(k for k in var.keys if k != key)
                return [f"del {var.name}[{key!r}]"]
        target = self.update_target(sc, F)
        if target is None:
            return self.assignment(sc)
        temporary = self.fresh("t")
        return [f"{temporary} = {self.scalar(sc)}",
                f"{target.name} = {target.name} + {temporary} * {wrap(self.scalar(sc))}",
                f"del {temporary}"]

    def held_list_update(self, sc):
        """A list updated through a dict holding it (`h1 = {'xs': l1}`, then
        `h1['xs'].append(e)`, `.extend`, `.pop()` or `h1['xs'][i] = e`): Python changes
        `l1` too."""
        var = self.update_target(sc, L, mutation=True)
        if var is None:
            return self.container_update(sc)
        holder = self.fresh("h")
        item = f"{holder}['xs']"
        form = self.weighted([3, 2, 1, 1])
        if form == 1 and var.length:
            op = self.one_of(("=", "+="))
            update = f"{item}[{self.index(var.length)}] {op} {self.scalar(sc)}"
        elif form == 2 and var.length >= 2 and not sc.loop:
            var.length -= 1
            update = f"{item}.pop()"
        elif form == 3:
            var.length += 2 * sc.top
            update = f"{item}.extend([{self.scalar(sc)}, {self.scalar(sc)}])"
        else:
            var.length += sc.top
            update = f"{item}.append({self.scalar(sc)})"
        return [f"{holder} = {{'xs': {var.name}}}", update]

    def list_update(self, sc, var):
        """An update in place of a list."""
        form = self.weighted([4, 2, 1, 1, 2, 1])
        if form == 0:
            read_last = sc.loop and var.length and self.chance(30)  # a trajectory
            var.length += sc.top
            if read_last:
                return f"{var.name}.append(np.sin({var.name}[-1] * {wrap(self.scalar(sc))}))"
            return f"{var.name}.append({self.scalar(sc)})"
        if form == 1 and var.length:
            op = self.one_of(("=", "+=", "*="))
            counters = sc.of(INT) if sc.loop else []
            if counters and self.chance(50):  # by the loop's counter: a list of states
                i = self.one_of(counters).name
                read = f"{var.name}[{i} % {var.length}]"
                value = f"{read} * {wrap(self.scalar(sc))}" if self.chance(50) else self.scalar(sc)
                return f"{var.name}[({i} + {self.pick(3)}) % {var.length}] {op} {value}"
            return f"{var.name}[{self.index(var.length)}] {op} {self.scalar(sc)}"
        if form == 2:
            var.length += 2 * sc.top
            return f"{var.name}.extend([{self.scalar(sc)}, {self.scalar(sc)}])"
        if form == 3 and not var.captured:  # binds the name again
            var.length += sc.top
            var.updated = True
            return f"{var.name} += [{self.scalar(sc)}]"
        if form == 4 and var.length >= 2 and not sc.loop:
            var.length -= 1
            return f"{var.name}.pop()"
        return f"{var.name}.append({self.scalar(sc)})"

    def recursive_closure(self, sc):
        """A nested function calling itself with a smaller int depth."""
        name, parameter = self.fresh("r"), Var(self.fresh("t"), F)
        inner = sc.function([parameter], self.chance(10))
        lines = [f"def {name}({parameter.name}, n):", "    if n <= 0:",
                 f"        return {self.scalar(inner, 2)}",
                 f"    return {name}({self.scalar(inner, 2)}, n - 1) {self.one_of('+*-')} "
                 f"{wrap(self.scalar(inner, 1))}"]
        self.mark_captured(sc, "\n".join(lines))
        sc.add(Var(name, RECURSIVE))
        return lines

    def closure_pair(self, sc):
        """Two nested functions, the first calling the second, which is defined after it."""
        first, second = self.fresh("g"), Var(self.fresh("g"), FN, 1)
        parameter = Var(self.fresh("t"), F)
        later = sc.function([parameter], self.chance(10))
        second_lines = [f"def {second.name}({parameter.name}):",
                        f"    return {self.scalar(later, 2)}"]
        parameter = Var(self.fresh("t"), F)
        inner = sc.function([parameter], self.chance(10))
        inner.add(second)
        call = f"{second.name}({self.scalar(inner, 1)})"
        body = f"{wrap(call)} {self.one_of('+*-')} {wrap(self.scalar(inner, 2))}"
        if self.chance(40):
            lines = [f"{first} = lambda {parameter.name}: {body}"]
        else:
            lines = [f"def {first}({parameter.name}):", f"    return {body}"]
        lines += second_lines
        self.mark_captured(sc, "\n".join(lines))
        sc.add(Var(first, FN, 1))
        sc.add(second)
        return lines

    def closure(self, sc):
        """A nested `def` or a `lambda` reading the enclosing function's variables."""
        if self.chance(8):
            return self.recursive_closure(sc)
        if self.chance(20):
            return self.closure_pair(sc)
        arity = self.weighted([6, 2, 1])  # 1, 0 or 2 parameters
        arity = (1, 0, 2)[arity]
        name = self.fresh("g")
        if self.chance(30):
            text = f"{name} = {self.lambda_text(sc, 2, arity)}"
            sc.add(Var(name, FN, arity))
            return [text]
        parameters = [Var(self.fresh("t"), F) for _ in range(arity)]
        optional = ()
        names = [v.name for v in parameters]
        if self.chance(25):
            optional = (self.fresh("b"),)
            names.append(f"{optional[0]}={self.scalar(sc, 1)}")
            parameters.append(Var(optional[0], F))
        inner = sc.function(parameters, self.chance(10))
        body = self.body_lines(inner, limit=3, more=40)
        lines = [f"def {name}({', '.join(names)}):", *indent(body),
                 f"    return {self.scalar(inner)}"]
        self.mark_captured(sc, "\n".join(lines))
        sc.add(Var(name, FN, arity, optional))
        return lines

    def nested_factory(self, sc):
        """`def make(c): return lambda t: ...` inside `f`, and a function it makes."""
        name, made = self.fresh("mk"), self.fresh("g")
        cell = Var(self.fresh("c"), F)
        inner = sc.function([cell])
        lines = [f"def {name}({cell.name}):", f"    return {self.lambda_text(inner, 2)}"]
        self.mark_captured(sc, "\n".join(lines))
        lines.append(f"{made} = {name}({self.scalar(sc, 2)})")
        sc.add(Var(made, FN, 1))
        return lines

    def function_append(self, sc):
        """`fs.append(lambda t: ...)`: a function added to a list of functions."""
        var = self.one_of(sc.writable(FNS))
        var.length += sc.top
        return [f"{var.name}.append({self.function_value(sc, 2)})"]

    def statement_only(self, sc):
        """Statements without derivatives: assert, an f-string, a raise not taken."""
        form = self.pick(3)
        value = self.scalar(sc, 1)
        if form == 0:
            return [f"assert np.isfinite({value}), 'finite'"]
        if form == 1:
            return [f'{self.fresh("label")} = f"value {{{value}:.3f}}"']
        return [f"if {wrap(value)} > 1e9:", "    raise ValueError('too large')"]

    def function_container(self, sc):
        """A list or dict of functions of one float."""
        if self.chance(30):
            name = self.fresh("fd")
            values = {k: self.function_value(sc, 2) for k in ("p", "q")}
            sc.add(Var(name, FND, keys=("p", "q")))
            return [f"{name} = {{{', '.join(f'{k!r}: {v}' for k, v in values.items())}}}"]
        name = self.fresh("fs")
        count = 1 + self.pick(3)
        items = ", ".join(self.function_value(sc, 2) for _ in range(count))
        sc.add(Var(name, FNS, count))
        return [f"{name} = [{items}]"]

    def made_function(self, sc):
        """`h = make(e)`: a function returned by a factory."""
        name = self.fresh("g")
        text = f"{name} = {self.factory()}({self.scalar(sc, 2)})"
        sc.add(Var(name, FN, 1))
        return [text]

    def unpacking(self, sc):
        """Tuple unpacking, chained and annotated assignment, starred targets, `:=`."""
        form = self.pick(5)
        a, b = Var(self.fresh("s"), F), Var(self.fresh("s"), F)
        if form == 0:
            line = f"{a.name}, {b.name} = {self.scalar(sc)}, {self.scalar(sc)}"
        elif form == 1:
            type_ = self.one_of((F, V))
            text, a = self.new_value(sc, type_)
            b = Var(self.fresh("v" if type_ == V else "s"), type_)
            line = f"{a.name} = {b.name} = {text}"
        elif form == 2:
            rest = Var(self.fresh("l"), L, 1)
            items = ", ".join(self.scalar(sc) for _ in range(3))
            sc.add(rest)
            line = f"{a.name}, *{rest.name} = [{items}]"
        elif form == 3:
            line = f"{a.name}: float = {self.scalar(sc)}"
        else:
            first = self.scalar(sc)
            inner = sc.block()
            inner.add(b)
            line = f"{a.name} = ({b.name} := {first}) * {wrap(self.scalar(inner))}"
        sc.add(a)
        if form in (0, 1, 4):
            sc.add(b)
        return [line]

    def alias_update(self, sc):
        """`d = c` for an array or list `c`, then an update in place through `d`."""
        sources = sc.writable(V, L)
        if not sources:
            return self.assignment(sc)
        source = self.one_of(sources)
        alias = Var(self.fresh("a"), source.type, source.length, alias=source.name)
        lines = [f"{alias.name} = {source.name}"]
        sc.add(alias)
        update = self.vector_update(sc, alias) if alias.type == V else \
            self.list_update(sc.block(loop=True), alias)
        if self.chance(50):
            lines += [f"for {self.fresh('i')} in range({1 + self.pick(3)}):", "    " + update]
        else:
            lines.append(update)
        return lines

    def rebinding(self, sc):
        """`v = w` for a vector or list `v` and another variable of its type, maybe a
        parameter: `v` then names `w`'s memory, which an update in place of `v` after it
        (in a loop, the next iteration's, maybe just before it) changes."""
        targets = [v for v in sc.writable(V, L) if not v.captured]
        var = self.one_of(targets) if targets else None
        sources = [w for w in sc.of(var.type) if w is not var and (
            var.type == V or w.length == var.length)] if var else []
        if not sources:
            return self.assignment(sc)
        source = self.one_of(sources)
        var.updated = True
        lines = [f"{var.name} = {source.name}"]
        if sc.loop and self.chance(50):  # updated, then rebound: the next step updates `w`
            update = self.vector_update(sc, var) if var.type == V else self.list_update(sc, var)
            lines.insert(0, update)
        var.alias = source.name
        return lines

    def branch(self, sc):
        """`if`, maybe `elif`, maybe `else`."""
        lines = [f"if {self.condition(sc)}:", *indent(self.block(sc))]
        if self.chance(30):
            lines += [f"elif {self.condition(sc)}:", *indent(self.block(sc))]
        if self.chance(50):
            lines += ["else:", *indent(self.block(sc))]
        return lines

    def guarded(self, sc):
        """`try`, the block raising when a condition holds, and a handler; maybe `else`,
        maybe `finally`, or `finally` alone."""
        error = self.one_of(("ValueError", "KeyError"))
        raising = [f"if {self.condition(sc)}:", f"    raise {error}"]
        body = self.block(sc)  # the raise goes between statements: first or last
        lines = ["try:", *indent(raising + body if self.chance(50) else body + raising)]
        alone = self.chance(15)
        if not alone:
            lines += [f"except {self.one_of(('ValueError', '(KeyError, ValueError)'))}:",
                      *indent(self.block(sc))]
        if not alone and self.chance(30):
            lines += ["else:", *indent(self.block(sc))]
        final = self.block(sc) if alone or self.chance(25) else []
        if any(line.lstrip().startswith(("return", "break", "continue")) for line in final):
            final = ["pass"]  # Python 3.14 warns of an exit there
        return lines + (["finally:", *indent(final)] if final else [])

    def record_rebuild(self, sc):
        """A record variable made anew: `dataclasses.replace`, `_replace`, or its class
        called, by name or through `type(...)`."""
        var = self.update_target(sc, P, R)
        if var is None:
            return self.assignment(sc)
        value = wrap(self.scalar(sc, 2))
        if var.type == P:
            text = self.one_of((f"{var.name}._replace(a={value})", f"Pt({value}, {var.name}.b)",
                                f"type({var.name})(b={value}, a={var.name}.a)"))
        else:
            vector = self.vector(sc, 2)
            text = self.one_of((f"dataclasses.replace({var.name}, s={value})",
                                f"Rec({vector}, {var.name}.s)",
                                f"type({var.name})({var.name}.w, s={value})"))
        var.updated = True
        return [f"{var.name} = {text}"]

    def context(self, sc):
        """A `with` block entering `np.errstate` or `contextlib.nullcontext`."""
        manager = self.one_of(('np.errstate(all="ignore")', "contextlib.nullcontext()"))
        return [f"with {manager}:", *indent(self.block(sc))]

    def block(self, sc, loop=None):
        """The statements of a nested block (at least one)."""
        return self.body_lines(sc.block(loop), limit=4, minimum=1, more=45)

    def for_loop(self, sc):
        """`for` over a range, a list, an array, zip, enumerate, reversed, items; maybe `else`."""
        inner = sc.block(loop=True)
        header, iterated = self.loop_header(sc, inner)
        if iterated is not None:
            iterated.busy = True
        lines = [header, *indent(self.body_lines(inner, limit=4, minimum=1, more=45))]
        if iterated is not None:
            iterated.busy = False
        if self.chance(20):
            lines += ["else:", *indent(self.block(sc))]
        return lines

    def loop_header(self, sc, inner):
        """`(line, container)`: the `for` line, adding its variables to `inner`, and the
        variable it iterates over (not to be changed in the loop), if any."""
        form = self.weighted([4, 3, 2, 1, 1, 1, 1, 1, 1])
        lists, dicts, functions = sc.writable(L), sc.writable(D), sc.of(FNS)
        if form == 0:
            index = inner.add(Var(self.fresh("i"), INT))
            return f"for {index.name} in range({1 + self.pick(3)}):", None
        target = inner.add(Var(self.fresh("t"), F))
        if form == 1 and lists:
            var = self.one_of(lists)
            iterable = f"reversed({var.name})" if self.chance(30) else var.name
            return f"for {target.name} in {iterable}:", var
        if form == 3:
            index = inner.add(Var(self.fresh("i"), INT))
            return f"for {index.name}, {target.name} in enumerate({self.vector(sc, 2)}):", None
        if form == 4:
            other = inner.add(Var(self.fresh("t"), F))
            return (f"for {target.name}, {other.name} in zip({self.vector(sc, 2)}, "
                    f"{self.list_value(sc, 2)[0]}):"), None
        if form == 5:
            var = self.one_of(dicts) if dicts else None
            items = var.name if var else self.dict_value(sc, 2)[0]
            return f"for {self.fresh('key')}, {target.name} in {items}.items():", var
        if form == 6 and functions:
            inner.add(Var(target.name, FN, 1))
            return f"for {target.name} in {self.one_of(functions).name}:", None
        if form == 7:
            inner.add(Var(target.name, V))
            return f"for {target.name} in {self.matrix(sc, 2)}:", None
        if form == 8:
            text, _ = self.list_value(sc, 2)
            return f"for {target.name} in {text}:", sc.vars.get(text)
        return f"for {target.name} in {self.vector(sc, 2)}:", None

    def while_loop(self, sc):
        """A counted `while`, maybe with a float condition too, maybe with `else`."""
        counter = self.fresh("j")
        inner = sc.block(loop=True)
        inner.add(Var(counter, INT))
        condition = f"{counter} < {1 + self.pick(3)}"
        if self.chance(30):
            condition += f" and {wrap(self.condition(sc))}"
        lines = [f"{counter} = 0", f"while {condition}:", f"    {counter} += 1",
                 *indent(self.body_lines(inner, limit=4, minimum=1, more=45))]
        if self.chance(25):
            lines += ["else:", *indent(self.block(sc))]
        return lines

    def early_return(self, sc):
        """`return e` inside a branch or a loop (nothing follows it in its block)."""
        return [f"return {self.output(sc, sc.returns)}"], True

    def jump(self, sc):
        """`break` or `continue`, alone or under an `if`."""
        word = self.one_of(("break", "continue"))
        if self.chance(60):
            return [f"if {self.condition(sc)}:", f"    {word}"]
        return [word], True

    def leftovers(self, sc, text):
        """Terms (floats) reading variables of `sc` that `text` does not mention: defined but
        unused, most of them, to add to the returned value so that what they compute counts
        (a closure is called, a container summed)."""
        terms = []
        for var in sc.vars.values():
            if re.search(rf"\b{var.name}\b(?! =)", text) or not self.chance(60):
                continue
            term = self.use(sc, var)
            if term is not None:
                terms.append(term)
        return terms

    def use(self, sc, var):
        """A float computed from `var` (a call, a sum, an item), or None for an int."""
        name, argument = var.name, self.scalar_atom(sc)
        uses = {
            F: name, V: f"np.sum({name})", M: f"np.sum({name})", L: f"sum({name})",
            D: f"sum({name}.values())", ARRAYS: f"np.sum({name}[0])",
            FN: f"{name}({self.arguments_for(sc, 0, var)})", RECURSIVE: f"{name}({argument}, 1)",
            FNS: f"sum(h({argument}) for h in {name})", FND: f"{name}['p']({argument})",
            P: f"{name}.a", R: f"{name}.s",
        }
        return uses.get(var.type)

    def output(self, sc, type_):
        """A returned expression of `f`."""
        return assemble_output(type_, self.output_parts(sc, type_))

    def output_parts(self, sc, type_):
        """The expressions a returned value of `type_` is made of, its float first if any."""
        if type_ == F:
            return [self.scalar(sc)]
        if type_ == V:
            return [self.vector(sc)]
        if type_ == M:
            return [self.matrix(sc, 2)]
        if type_ in (TUPLE, D):
            return [self.scalar(sc), self.vector(sc)]
        return [self.scalar(sc), self.scalar(sc)]


def assemble_output(type_, parts, terms=()):
    """The returned expression of `type_` made of `parts`, with float `terms` added to its
    first part."""
    first = " + ".join(wrap(t) for t in [parts[0], *terms]) if terms else parts[0]
    if type_ in (F, V, M):
        return first
    if type_ == TUPLE:
        return f"{first}, {parts[1]}"
    if type_ == L:
        return f"[{first}, {parts[1]}]"
    return f"{{'p': {first}, 'q': {parts[1]}}}"


# -- programs ------------------------------------------------------------------

PARAMETER_NAMES = ("x", "y", "z", "w")
PARAMETER_TYPES = (F, V, M, P, R, L, D)


@dataclasses.dataclass(frozen=True)
class Program:
    """A generated module: `f`, its helpers, and `arguments()`, which gives `f`'s arguments."""

    source: str
    types: tuple  # of f's parameters

    def __repr__(self):
        return f"Program(\n{self.source})"

    @property
    def one_scalar(self):
        """Whether `f` takes a single float."""
        return self.types == (F,)


def argument_text(type_, size, rng):
    """The source of an argument of `type_`: generic values, none of them zero or simple."""
    def value():
        return (-1) ** int(rng.integers(2)) * (3001 + 2 * int(rng.integers(5000))) / 10000

    def vector():
        return f"np.array([{', '.join(repr(value()) for _ in range(size))}])"

    if type_ == F:
        return repr(value())
    if type_ == V:
        return vector()
    if type_ == M:
        return f"np.array([{', '.join(vector()[9:-1] for _ in range(size))}])"
    if type_ == P:
        return f"Pt({value()!r}, {value()!r})"
    if type_ == R:
        return f"Rec({vector()}, {value()!r})"
    if type_ == L:
        return f"[{', '.join(repr(value()) for _ in range(size))}]"
    return f"{{'a': {value()!r}, 'b': {value()!r}}}"


def parameter_var(name, type_, size):
    """The generator's variable for parameter `name` of `type_`."""
    if type_ == L:
        return Var(name, L, size)
    if type_ == D:
        return Var(name, D, keys=("a", "b"))
    return Var(name, type_)


def assemble(gen, parameters, body, returned, argument_texts):
    """The module's source: header, records, helpers, `f`, `arguments()`."""
    header = HEADER + ("\nfrom pullback import grad\n" if "grad" in gen.uses else "")
    parts = [header]
    parts += [RECORDS[t] for t in (P, R) if t in gen.uses]
    parts += [text + "\n" for text in gen.helpers.values()]
    signature = ", ".join(name for name, _ in parameters)
    parts.append("\n".join([f"def f({signature}):", *indent(body), f"    return {returned}"])
                 + "\n")
    parts.append(f"def arguments():\n    return ({', '.join(argument_texts)},)\n")
    return "\n\n".join(parts)


@st.composite
def raw_programs(draw):
    """Programs as generated, not yet run: see `programs`."""
    size = 2 + draw(st.integers(0, 1))
    gen = Generator(draw, size)
    arity = 1 + gen.weighted([6, 3, 1])
    types_ = [PARAMETER_TYPES[gen.weighted([10, 5, 1, 2, 1, 1, 1])] for _ in range(arity)]
    gen.uses.update(t for t in types_ if t in (P, R))
    parameters = list(zip(PARAMETER_NAMES, types_))
    returns = (F, V, TUPLE, L, M, D)[gen.weighted([20, 3, 1, 1, 1, 1])]
    sc = Scope({n: parameter_var(n, t, size) for n, t in parameters}, returns=returns)
    body = gen.body_lines(sc)
    parts = gen.output_parts(sc, returns)
    terms = gen.leftovers(sc, "\n".join([*body, *parts]))
    returned = assemble_output(returns, parts, terms)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    texts = [argument_text(t, size, rng) for t in types_]
    return Program(assemble(gen, parameters, body, returned, texts), tuple(types_))


@st.composite
def programs(draw):
    """Programs that run without error as plain Python and return finite real values."""
    program = draw(raw_programs())
    if plain_value(program) is None:
        hypothesis.reject()
    return program
