"""The abstract interpreter: what an ANF function's values are before it runs.

`Interpreter` reads one function (or loop body) statement by statement and keeps,
for every variable, its kind (`kinds`) and a shape token (`shapes`). Each
statement's transfer function also decides how the statement is differentiated
and returns that as a `Step`, which the reverse pass (φ, `reverse.forward`)
turns into code: a primitive with its rule, a copy, a container built or
unpacked, a closure, a call compiled for its callee or resolved at run time, a
loop. Along the way it runs the analyses that need those facts: callees
(`callees`), updates in place (`updates`), shifts a computation cancels
(`invariance`), and `isinstance` tests the kinds decide.

It owns both fixed points of the analysis:
- a loop's: the kinds of its state, joined over iterations (`loop_state`);
- recursion's: the kind a function's calls of itself return, and the parameters
  they update in place (`recursion_fixed_point`).

Both run the interpreter alone, without generating code; the reverse pass then
generates each body once, for the kinds they settled on.

The reverse pass drives the interpreter through its own walk (`at`, `statement`,
`test`, `save`, `restore`, `join`, `after`); `run` walks a whole function alone.
"""

import dataclasses
import functools
import importlib
import inspect
import operator
import types

import numpy as np

from ... import errors
from ...errors import TransformError
from ...rules import registry
from ...runtime import calls, custom, introspection, loops, mutation, records, structures
from ..frontend import flow, parse
from ..syntax import nodes, operators, scopes
from . import aliases, callees, invariance, kinds, updates

_SET_REFUSED = ("a set holding a differentiable value: a set has no order in which to hold "
               "the cotangents of its members; use a list or a tuple")
_BY_OPERATOR = {abs: (operator.abs, 1), pow: (operator.pow, 2), float: (float, 1)}
"""Builtins that call a method of their argument's class (`__abs__`, `__pow__`,
`__float__`): what names the method (as an operator does), and their arity then."""
_REPEAT_REFUSED = ("repeating a list or tuple that holds a differentiable value (xs * n) is "
                   "not supported: build it with a comprehension, [x for _ in range(n)], or "
                   "use an array and np.tile")


@dataclasses.dataclass
class Step:
    """How a statement is differentiated, as the interpreter decided it.

    Attributes:
      how: what the statement is: "copy", "primitive", "build", "unpack",
        "closure", "static", "custom", "dynamic", "loop", "primal_loop" or
        "loop_body" (a loop's body, generated where the loop runs it).
      target: the variable it assigns (for "unpack", the list of them).
      fn: the primitive or the Python function called; for a build of
        `dict(d, k=v)` with a constant `d`, the atom `d`, whose keys it has too; for an
        operator on an object, the helper a dynamic step calls with `args`.
      rule: a primitive's rule.
      args: a primitive's arguments; a build's values; a static call's argument
        bound to each parameter; a closure's default values.
      keywords: a primitive's keyword arguments, as (name, atom) pairs; a build's
        keys (or its helper's layout).
      source: a copy's or an unpack's source; a build's helper (`structures.unstar`
        or `.undict`) when it unpacks parts; for an operator on an object, the call of
        its method that a static step makes (`Interpreter.overloaded`).
      callee: a static call's `Callee`, or a loop's body `FunctionDef`.
      later: a closure's or a loop body's free variables not assigned yet.
      kinds: a loop body's parameters' and free variables' kinds; an unpack's
        container kind.
    """

    how: str
    target: object = None
    fn: object = None
    rule: object = None
    args: list = dataclasses.field(default_factory=list)
    keywords: list = dataclasses.field(default_factory=list)
    source: object = None
    callee: object = None
    later: list = dataclasses.field(default_factory=list)
    kinds: object = None


@dataclasses.dataclass
class Summary:
    """What interpreting a whole function found.

    Attributes:
      result_kind: the kind of its return value.
      kinds: the kind of every variable.
      shapes: a token for every variable, equal for variables known to have one
        shape ("scalar" for scalars), or None.
      updated: the parameters and free variables it updates in place (as Python
        runs it), by the user's names, each followed by its `aliases.items` root when
        the values it holds are updated.
      exits: for a loop's body, the variables whose memory each item of the state
        it returns may share, and those it may hold: a pair of sets per item.
      globals_used: the global (or builtin) objects it looked up, by name.
      shares: what its return value may share of its parameters, by the user's names
        (`updates.Updates.result_shares`), or None when it may share other memory.
      guards: `(statement, check, names, error)`: before the statement, generated code
        calls `check(*names, error)`, which raises `error` when what the kinds could not
        tell holds when it runs: an update in place seen by a variable sharing an
        array's item, if that item is a view (`mutation.refuse_if_shared`,
        `updates.Updates.check`), or a sequence repeated by an int
        (`mutation.refuse_repetition`).
    """

    result_kind: object
    kinds: dict
    shapes: dict
    updated: list
    exits: list
    globals_used: dict
    guards: list = dataclasses.field(default_factory=list)
    shares: object = None


@dataclasses.dataclass
class Callee:
    """A Python function called from the function being interpreted.

    Attributes:
      cell: the closure cell that holds (or will hold) its forward function.
      name: the name generated code should preferably give it (`g_fwd`).
      result_kind: the kind of its result.
      updated: its parameters it updates in place.
      shares: what its result may share of its parameters (`Summary.shares`), or None.
    """

    cell: object
    name: str
    result_kind: object
    updated: tuple = ()
    shares: object = None


def recursion_fixed_point(attempt, calls_itself, rounds):
    """The assumption about a function's calls of itself under which interpreting it
    agrees with what it assumed: a pair (result kind, parameters updated in place).

    `attempt(assumed)` interprets the function under `assumed` and returns its
    `Summary`; `calls_itself()` says whether the last attempt met such a call. The
    updated parameters grow from none. The result kind grows from `NEVER`: the
    first attempt assumes the calls never return, so it finds the kind of what the
    function returns without recursing (a leaf's state), and each attempt joins the
    recursive paths' result under the last assumption to it. Once an attempt
    returns what it assumed, the code generated is correct by induction on the
    depth of the recursion. If that does not settle within `rounds` attempts, the
    result kind found assuming `ANY` is tried the same way (a fixed point from
    above); if neither settles, `ANY` is kept. Returns the pair and whether it
    settled: `ANY` is, when the attempt assuming it returned `ANY`.
    """
    updated = ()
    first = attempt((kinds.ANY, updated))
    while tuple(first.updated) != updated and calls_itself():
        updated = tuple(first.updated)
        first = attempt((kinds.ANY, updated))
    if not calls_itself():
        return (kinds.ANY, updated), True
    # the least fixed point first; its first attempt, assuming NEVER, cannot settle
    for assumed, attempts in ((kinds.NEVER, rounds + 1), (first.result_kind, rounds)):
        for _ in range(attempts):
            if assumed is kinds.ANY:
                break
            found = attempt((assumed, updated))
            if found.result_kind is kinds.NEVER:  # every return follows a call of itself
                break
            if found.result_kind == assumed and tuple(found.updated) == updated:
                return (assumed, updated), True
            assumed = found.result_kind
    return (kinds.ANY, updated), first.result_kind is kinds.ANY


_REAL_PARTS = (np.abs, np.absolute, np.real, np.imag, np.angle, abs, np.iscomplexobj,
               np.isreal, np.iscomplex)
"""Functions of complex constants whose result is real."""


class Interpreter:
    """The abstract interpretation of one ANF function `tree` (see the module docstring).

    Args:
      tree: the function, in A-normal form.
      origin: its `parse.Origin`.
      param_kinds: the kind of each parameter and free variable (`kinds.CONST` if
        absent).
      calls: how calls are compiled: `calls.resolve(fn, param_kinds) -> Callee`.
      freevars: its free variables (for a loop body, the variables it captures).
      index_value: `index_value(index)`, subscript syntax as a value (the reverse
        pass binds `slice` in its generated code).
      cut_at_never: whether a call returning `kinds.NEVER` ends the path it is on
        (the attempts of `recursion_fixed_point`); else its result is `ANY`.
    """

    def __init__(self, tree, origin, param_kinds, calls, freevars=None, index_value=None,
                 cut_at_never=False):
        self.tree = tree
        self.cut_at_never = cut_at_never
        self.unreached = False  # a call assumed to return `NEVER` was met on this path
        self.origin = origin
        self.calls = calls
        self.params = nodes.parameter_names(tree.args)
        self.freevars = list(origin.cells) if freevars is None else freevars
        self.index_value = index_value or _index_value
        self.entry = getattr(tree, "parameter_versions", {})  # see `anf.capture`
        param_kinds = {self.entry.get(p, p): kind for p, kind in param_kinds.items()}
        unknown = set(param_kinds) - set(self.params) - set(self.freevars)
        if unknown:
            raise AssertionError(f"kinds for {sorted(unknown)}, which {tree.name} does not have")
        self.kinds = {p: param_kinds.get(p, kinds.CONST) for p in self.params + self.freevars}
        self.shapes = {p: "scalar" if k.shape == "scalar" else p for p, k in self.kinds.items()}
        self.lineno = tree.lineno
        self.imports = {}  # name -> what an import statement of the function bound to it
        self.shared = {name for stmt in tree.body if isinstance(stmt, (nodes.Global,
                                                                      nodes.Nonlocal))
                       for name in stmt.names}  # state outside the function
        self.callees = callees.Callees(origin, tree, lambda: self.kinds, self.kind_of,
                                       self.error, self.imports)
        self.updates = updates.Updates(self, self.params + self.freevars, [
            name for name, kind in self.kinds.items() if kind.shape == "array"],
            _outside_state(tree, origin, self.kinds, self.shared))
        self.known = {}  # a test's variable -> its value, when the kinds decide it
        self.complex = set()  # the constants known to be complex numbers or arrays
        self.place = None  # (the statements of the block being read, the position in it)
        self.blocks = {}  # id of a block's statements -> its `invariance.Block`
        self.reads = None  # how often the function reads each name, once asked
        self.loop_bodies = {}  # a loop body's name -> its FunctionDef, until its loop

    # -- the walk ----------------------------------------------------------------

    def run(self):
        """Interpret the whole function; its `Summary`."""
        *body, ret = self.tree.body
        self.block(body)
        return self.finish(ret)

    def block(self, statements):
        for position, stmt in enumerate(statements):
            if self.unreached:
                return
            self.at(statements, position)
            known = self.test(stmt) if isinstance(stmt, nodes.If) else None
            if known is not None:
                self.block(scopes.unassigned(self.tree, stmt, known) + (
                    stmt.body if known else stmt.orelse))
            elif isinstance(stmt, nodes.If):
                before = self.save()
                self.block(stmt.body)
                after_body = self.restore(before)
                self.block(stmt.orelse)
                self.join(after_body)
            else:
                self.statement(stmt)
                self.after(stmt)

    def at(self, statements, position):
        """Move to statement `position` of the block `statements`."""
        self.place = (statements, position)
        self.lineno = nodes.lineno_of(statements[position])

    def test(self, stmt):
        """For `if stmt.test:`, the test's value when the kinds decide it, else None."""
        self.updates.read(stmt.test, self.lineno, stmt)
        return self.known.get(stmt.test.id) if isinstance(stmt.test, nodes.Name) else None

    def save(self):
        """The state before a branch, to `restore` before the other branch."""
        return dict(self.kinds), dict(self.shapes), self.updates.aliases.branch()

    def restore(self, saved):
        """Go back to the state `saved` before the branch just read; the branch's state."""
        after = (self.kinds, self.shapes, self.updates.aliases.other_branch(saved[2]),
                 self.unreached)
        self.kinds, self.shapes = dict(saved[0]), dict(saved[1])
        self.unreached = False
        return after

    def join(self, other):
        """Join the state of the branch just read with `other`, the other branch's. A
        branch that did not reach its end (`unreached`) adds nothing."""
        other_kinds, other_shapes, other_memory, other_unreached = other
        self.updates.aliases.merge(other_memory)
        if other_unreached or self.unreached:
            if not other_unreached:
                self.kinds, self.shapes, self.unreached = other_kinds, other_shapes, False
            return
        for var in set(other_kinds) | set(self.kinds):
            self.kinds[var] = kinds.join(other_kinds.get(var), self.kinds.get(var))
        for var in other_shapes.keys() & self.shapes.keys():
            if other_shapes[var] != self.shapes[var]:
                self.shapes[var] = None
        self.shapes.update({v: s for v, s in other_shapes.items() if v not in self.shapes})

    def after(self, stmt):
        """Follow the statement just interpreted in the alias analysis."""
        self.updates.track(stmt)

    def finish(self, ret):
        """Interpret the `return` statement `ret`, check the updates in place, and sum up."""
        self.updates.read(ret, ret.lineno, ret)
        self.updates.check()
        user = {version: param for param, version in self.entry.items()}
        updated = [name for name in self.updates.updated(self.params + self.freevars)
                   if name not in self.packed_parameters()
                   or aliases.items(name) in self.updates.aliases.changed]
        shares = self.updates.result_shares(ret.value, self.params)
        if shares is not None:
            shares = tuple({_user_version(user, root) for root in roots} for roots in shares)
        result = kinds.NEVER if self.unreached else self.kind_of(ret.value)
        return Summary(result, self.kinds, self.shapes,
                       [_user_version(user, p) for p in updated], self.updates.reached_by_exits(),
                       self.callees.globals_used, self.updates.guards, shares)

    def packed_parameters(self):
        """The names of the `*args` tuple and the `**kwargs` dict: Python makes them anew at
        each call, so an update of their own memory (`kwargs.pop("lr")`) changes nothing
        of the caller's; an update of what they hold does."""
        args = self.tree.args
        return {param.id for param in (args.vararg, args.kwarg) if param is not None}

    # -- transfer functions --------------------------------------------------------

    def statement(self, stmt):
        """Interpret `stmt` (not an `if`): its `Step`, or None when it has no derivative."""
        if isinstance(stmt, nodes.FunctionDef) and getattr(stmt, "loop", False):
            self.loop_bodies[stmt.name] = stmt
            return Step("loop_body")
        if isinstance(stmt, nodes.FunctionDef):
            return self.closure(stmt.name, stmt)
        if isinstance(stmt, nodes.Assign):
            target = stmt.targets[0]
            if isinstance(target, nodes.Name) and target.id in self.shared:
                self.check_shared(target.id, stmt.value)
            if isinstance(target, nodes.Tuple):
                return self.unpack([t.id for t in target.elts], stmt.value)
            return self.assign(target.id, stmt.value)
        if isinstance(stmt, nodes.Expr):
            return self.dropped_call(stmt.value)
        if isinstance(stmt, (nodes.Import, nodes.ImportFrom)):
            self.imports.update(_imported(stmt))
        return None

    def assign(self, target, value):
        if self.is_complex(value):
            self.complex.add(target)
        if isinstance(value, nodes.Name) and value.id in self.kinds:
            self.kinds[target] = self.kinds[value.id]
            self.shapes[target] = self.shapes.get(value.id)
            return Step("copy", target, source=value.id)
        if isinstance(value, (nodes.Name, nodes.Constant)) or self.callees.is_reference(value):
            self.kinds[target] = self.kind_of(value)
            return None
        if isinstance(value, (nodes.Tuple, nodes.List, nodes.Dict)):
            return self.build(target, value)
        if isinstance(value, nodes.Lambda):
            return self.closure(target, value)
        if isinstance(value, nodes.Call):
            return self.call(target, value)
        return self.operation(target, value)

    def operation(self, target, value):
        """BinOp, UnaryOp, Compare, Attribute and Subscript: primitives by table."""
        if isinstance(value, nodes.BinOp):
            operands = [value.left, value.right]
            operator_ = operators.BINARY[type(value.op)]
            step = self.overloaded(target, operator_, operands)
            if step is not None:
                return step
            if operator_ is operator.add and any(kinds.is_sequence(self.kind_of(a))
                                                  for a in operands):
                operator_ = operator.concat
            if operator_ is operator.mul:
                return self.product(target, operands)
            return self.primitive(target, operator_, operands, [])
        if isinstance(value, nodes.UnaryOp):
            operator_ = operators.UNARY[type(value.op)]
            if operator_ is operator.not_ and isinstance(value.operand, nodes.Name) and (
                    self.known.get(value.operand.id) is not None):
                self.known[target] = not self.known[value.operand.id]
            step = self.overloaded(target, operator_, [value.operand])
            if step is not None:
                return step
            return self.primitive(target, operator_, [value.operand], [])
        if isinstance(value, nodes.Attribute):
            return self.attribute(target, value)
        if isinstance(value, nodes.Subscript):
            return self.subscript(target, value)
        if isinstance(value, nodes.Set) and any(self.kind_of(v).active for v in value.elts):
            raise self.error(_SET_REFUSED, "set")
        self.kinds[target] = kinds.CONST
        return None

    def overloaded(self, target, operator_, operands):
        """`a + b` (`-a`, `a[k]`) with a differentiable operand, where an operand is an
        object whose class defines the operator in Python (`__add__`, `__radd__` of the
        right one, `__neg__`, `__getitem__`): a call of its method, compiled now when the
        method cannot decline (never returns `NotImplemented`), else as Python makes it
        when it runs (`records.operator_method`); None for any other operation."""
        found = [self.kind_of(a) for a in operands]
        if not any(k.active for k in found):
            return None
        classes = [k.type if isinstance(k, kinds.Container) else None for k in found]
        name = f"__{operator_.__name__.strip('_')}__"
        reflected = f"__r{name[2:]}" if len(operands) == 2 and operator_ is not (
            operator.getitem) else None
        if records.defines(classes[0], name):
            method, args = getattr(classes[0], name), operands
        elif reflected is not None and records.defines(classes[1], reflected) and (
                found[0].shape == "scalar"):  # a number's own method declines
            method, args = getattr(classes[1], reflected), operands[::-1]
        else:
            self.refuse_if_overloaded(name, operands)
            return None
        if introspection.has_fixed_parameters(method):  # else its `*args` laid out when run
            call = nodes.call(nodes.name(method.__name__), args)
            resolved = self.resolve_call(method, call)
            if not _may_decline(method, resolved[2].result_kind):
                step = self.static_call(target, method, call, resolved)
                return dataclasses.replace(step, source=call)
        self.kinds[target] = kinds.ANY
        return Step("dynamic", target, fn=records.operator_method,
                    args=[nodes.constant(name), nodes.constant(reflected), *operands])

    def refuse_if_overloaded(self, name, operands):
        """Where `operands` of an operator of method `name` could be anything (`ANY`),
        generated code checks before the operation that none is an object whose class
        defines it, whose derivative would not be NumPy's
        (`records.refuse_if_overloaded`)."""
        unknown = [a for a in operands
                   if isinstance(a, nodes.Name) and self.kind_of(a) is kinds.ANY]
        if not unknown:
            return
        statements, position = self.place
        self.updates.guards.append((statements[position], records.refuse_if_overloaded,
                                    [a.id for a in unknown], self.error("", name)))

    def refuse_floated(self, fn, args):
        """`math.sin(p)` calls `p.__float__()` in compiled code, which pullback does not follow:
        refused now for an object whose class the kinds tell, else checked when it runs
        (`refuse_if_overloaded`)."""
        for arg in args:
            kind = self.kind_of(arg)
            cls = kind.type if isinstance(kind, kinds.Container) else None
            if records.defines(cls, "__float__"):
                raise self.error(f"math.{fn.__name__} of an object of class {cls.__name__}, "
                                 f"which it reads through __float__ in compiled code, where "
                                 f"pullback does not follow it: write "
                                 f"math.{fn.__name__}(float(p))", f"math.{fn.__name__}")
        self.refuse_if_overloaded("__float__", args)

    def product(self, target, operands):
        """`a * b`: a repetition of a tuple or list by a number the kinds tell
        (`structures.repeated`), else the product, refused when run if it repeats a
        differentiable sequence by an int after all (`mutation.refuse_repetition`)."""
        if kinds.repetition(*map(self.kind_of, operands)):
            items, count = operands if kinds.is_sequence(self.kind_of(operands[0])) else (
                operands[::-1])
            return self.primitive(target, structures.repeated, [items, count], [])
        count = _repeats(self.kind_of, operands)
        if count is not None:
            self.refuse_repetition(count)
        return self.primitive(target, operator.mul, operands, [])

    def attribute(self, target, value):
        """`x.attr`: a NumPy attribute of an array, else a field of an object (see
        `records`), the object's cotangent mirroring its fields."""
        receiver = self.kind_of(value.value)
        if not receiver.active:
            known = receiver.shape == "array" and getattr(np.ndarray, value.attr, None)
            result = known and registry.constant_result(known)
            self.kinds[target] = result if result and not callable(result) else kinds.CONST
            return None
        if kinds.is_array(receiver):
            if not hasattr(np.ndarray, value.attr):
                raise self.error(f"NumPy arrays have no attribute .{value.attr}",
                                 f"attribute .{value.attr}")
            return self.primitive(target, getattr(np.ndarray, value.attr), [value.value], [])
        self.check_not_computed(receiver, value)
        step = self.primitive(target, records.field,
                              [value.value, nodes.constant(value.attr)], [])
        self.kinds[target] = kinds.field(receiver, value.attr)
        return step

    def check_not_computed(self, receiver, value):
        """Refuse `obj.attr` on a differentiable object whose class computes `attr` (see
        `records.computed`), when the kinds tell the class; else it is refused when the
        derivative runs (`records.unfield`)."""
        cls = receiver.type if isinstance(receiver, kinds.Container) else None
        if isinstance(cls, type) and records.computed(cls, value.attr) is not None:
            message, construct = records.computed_refusal(cls, value.attr)
            raise self.error(message, construct)

    def subscript(self, target, value):
        if isinstance(value.slice, (nodes.Name, nodes.Constant)):
            step = self.overloaded(target, operator.getitem, [value.value, value.slice])
            if step is not None:
                return step
        container = self.kind_of(value.value)
        index = self.index_value(value.slice)
        step = self.indexed_by_version(target, value, container, index)
        if step is not None:
            return step
        self.refuse_computed_index(value, container)
        step = self.primitive(target, operator.getitem, [value.value, index], [])
        if isinstance(container, kinds.Container) and isinstance(index, nodes.Constant):
            self.kinds[target] = container.item(index.value) or kinds.element(container)
        elif isinstance(container, kinds.Container) and not isinstance(value.slice, nodes.Slice):
            self.kinds[target] = kinds.element(container)
        elif isinstance(container, kinds.Container) and kinds.is_sequence(container):
            self.kinds[target] = _sliced(container, value.slice) or kinds.Items(
                kinds.element(container), container.type)
        elif isinstance(container, kinds.Items):
            self.kinds[target] = container if isinstance(value.slice, nodes.Slice) else (
                container.element)
        elif kinds.rank_of(container):
            self.kinds[target] = self.ranked_item(container, value.slice)
        elif container.active:
            self.kinds[target] = kinds.ARRAY if kinds.is_array(container) else kinds.ANY
        return step

    def indexed_by_version(self, target, value, container, index):
        """`c[i]` with a differentiable item in `i` (no slice or string), `c` a library's
        object whose `__getitem__` has a Python version (`np.r_`, `np.c_`:
        `registry.implemented_by`): a call of the version with the items of `i`, made
        when the code runs, as a call of a function of `*args` is; else None."""
        if not _of_unknown_type(container) or not self.differentiable_in(value.slice) or any(
                isinstance(n, nodes.Slice) or isinstance(n, nodes.Constant) and isinstance(
                    n.value, str) for n in nodes.walk(value.slice)):
            return None
        found = self.callees.callee(value.value)
        version = registry.method_implementation(found, "__getitem__") if (
            found is not None) else None
        if version is None:
            return None
        self.kinds[target] = kinds.ANY
        items = index.elts if isinstance(index, nodes.Tuple) else [index]
        return Step("dynamic", target, fn=version, args=items)

    def differentiable_in(self, node):
        """The names in `node` that surely hold a differentiable number (`_differentiable`)."""
        return [n for n in nodes.walk(node) if isinstance(n, nodes.Name)
                and _differentiable(self.kind_of(n))]

    def refuse_computed_index(self, value, container):
        """Refuse `c[i]` with a differentiable index `i` into an object `c` of unknown type
        (a constant from a module, a closure or a call): its derivative is that of an item
        read, in which the index has none, but `np.r_`, `np.c_` or an object whose
        `__getitem__` computes with the index makes its result of it. A global or a
        module's attribute is checked now; a variable, when the code runs
        (`records.refuse_if_computing`)."""
        if not _of_unknown_type(container):
            return
        names = self.differentiable_in(value.slice)
        if not names:
            return
        what = nodes.unparse(value.value)
        error = self.error(
            f"{what}[...] is indexed by the differentiable {names[0].id}: pullback reads an "
            f"index as a position, with no derivative, but {what} is no list, tuple, dict "
            f"or array, and may compute its result from the index (np.r_ and np.c_ do, and "
            f"so may a class's __getitem__): build the array by a call (np.concatenate, "
            f"np.column_stack), or call the method of an object of your class "
            f"({what}.__getitem__(...))", "a differentiable index")
        found = self.callees.callee(value.value)
        if found is not None and not records.is_indexed(found):
            raise error
        if found is None and isinstance(value.value, nodes.Name):
            statements, position = self.place
            self.updates.guards.append((statements[position], records.refuse_if_computing,
                                        [value.value.id], error))

    def ranked_item(self, array, index):
        """The kind of `a[index]` of a vector or matrix of kind `array`: at ints, one
        axis fewer per int (`v[i]` and `m[i, j]` numbers, `m[i]` a vector, a view of the
        matrix, as the alias analysis reads any part of an array); the same kind at a
        slice (its first axis cut); else (an array of indices) an array."""
        if isinstance(index, nodes.Slice):
            return array
        parts = len(index.elts) if isinstance(index, nodes.Tuple) else 1
        if parts > array.rank or not self.updates.by_numbers(index):
            return kinds.vector_or_array(array.active, None)
        if parts == array.rank:
            return kinds.SCALAR if array.active else kinds.CONST_SCALAR
        return kinds.vector_or_array(array.active, array.rank - parts)

    def closure(self, target, node):
        """A nested `def` or `lambda` is active when a variable it reads is (or may be:
        one not assigned yet), or a default value."""
        defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        later = [var for var in node.captured if var not in self.kinds]
        active = bool(later) or any(self.kinds[var].active for var in node.captured) or any(
            self.kind_of(d).active for d in defaults)
        self.kinds[target] = kinds.ANY if active else kinds.CONST
        return Step("closure", target, args=defaults, source=node,
                    later=later) if active else None

    def build(self, target, value):
        """A tuple, list or dict display."""
        if _unpacks(value):
            if isinstance(value, nodes.Dict):
                helper, parts = structures.undict, value.values
                layout = [nodes.constant(None) if k is None else k for k in value.keys]
            else:
                helper = structures.unstar
                parts = [v.value if isinstance(v, nodes.Starred) else v for v in value.elts]
                layout = [nodes.constant(isinstance(v, nodes.Starred)) for v in value.elts]
            active = any(self.kind_of(p).active for p in parts)
            merged = self.merged_dict(value) if isinstance(value, nodes.Dict) else None
            self.kinds[target] = merged or (kinds.ANY if active else kinds.CONST)
            return Step("build", target, args=parts, keywords=layout,
                        source=helper) if active else None
        if isinstance(value, nodes.Dict):
            if not all(isinstance(k, nodes.Constant) for k in value.keys):
                items = [self.kind_of(v) for v in value.values]
                self.kinds[target] = kinds.ANY if any(k.active for k in items) else kinds.CONST
                return Step("build", target, args=value.values, keywords=value.keys)
            keys, values = value.keys, value.values
            container = kinds.container(dict, [k.value for k in keys], map(self.kind_of, values))
        else:
            keys = [nodes.constant(i) for i in range(len(value.elts))]
            values = value.elts
            type_ = tuple if isinstance(value, nodes.Tuple) else list
            container = kinds.sequence(type_, map(self.kind_of, values))
        self.kinds[target] = container
        return Step("build", target, args=values, keywords=keys) if container.active else None

    def merged_dict(self, value):
        """The kind of `{**d, 'k': v}` when every dict unpacked has known keys and every
        other key is a constant: the keys of all, the later ones winning; else None."""
        found = {}
        for key, item in zip(value.keys, value.values):
            part = self.kind_of(item)
            if key is None and isinstance(part, kinds.Container) and part.type is dict:
                found.update(zip(part.keys, part.items))
            elif isinstance(key, nodes.Constant):
                found[key.value] = part
            else:
                return None
        return kinds.container(dict, found.keys(), found.values())

    def dict_call(self, target, args, keywords):
        """`dict(a=x, b=y)` and `dict(items, a=x)`: the display `{'a': x, 'b': y}`, and
        `{**items, 'a': x}` (or, for constant items, a dict whose keys `a` and `b` have
        the values' cotangents)."""
        keys = [nodes.constant(name) for name, _ in keywords]
        values = [value for _, value in keywords]
        if not args:
            return self.build(target, nodes.Dict(keys=keys, values=values))
        source = self.kind_of(args[0])
        if len(args) == 1 and isinstance(source, kinds.Container) and source.type is dict:
            return self.build(target, nodes.Dict(keys=[None] + keys, values=args + values))
        if source.active:
            raise self.error("dict(items, key=value) with differentiable items other than a "
                             "dict's: make the dict first, then set its keys", "dict")
        active = any(self.kind_of(v).active for v in values)
        self.kinds[target] = kinds.ANY if active else kinds.CONST
        return Step("build", target, args[0], args=values, keywords=keys) if active else None

    def getattr_call(self, target, args):
        """`getattr(x, "name")` is `x.name`; with a name computed when it runs, a field of
        a record all the same. One with a default is refused on a differentiable `x`,
        whose derivative would depend on whether the attribute exists."""
        if len(args) == 2 and isinstance(args[1], nodes.Constant) and isinstance(
                args[1].value, str):
            return self.attribute(target, nodes.Attribute(value=args[0], attr=args[1].value,
                                                          ctx=nodes.Load()))
        if not self.kind_of(args[0]).active:
            self.kinds[target] = kinds.CONST
            return None
        if len(args) != 2:
            raise self.error("getattr with a default on a differentiable value: read the "
                             "attribute (x.name), or test hasattr first", "getattr")
        self.kinds[target] = kinds.ANY
        return self.primitive(target, records.field, args, [])

    def record_call(self, target, cls, args, keywords):
        """`Record(a, b=x)` of a dataclass, a named tuple or a class whose `__init__` only
        stores its parameters: a build of the record, whose cotangent gives each argument
        its field's (`records.unrecord`)."""
        fields = records.init_fields(cls)
        names = list(fields)
        if len(args) > len(names) or any(name not in names for name, _ in keywords):
            raise self.error(f"calling {cls.__qualname__}: its parameters are "
                             f"{', '.join(names)}", cls.__qualname__)
        given = [(fields[name], value) for name, value in list(zip(names, args)) + keywords]
        stored = [(field, value) for field, value in given if field is not None]
        self.kinds[target] = kinds.container(cls, [  # its class, for its operators
            names.index(field) if issubclass(cls, tuple) else field for field, _ in stored],
            [self.kind_of(value) for _, value in stored])
        if not any(self.kind_of(value).active for _, value in given):
            return None
        if issubclass(cls, tuple):  # its cotangent is a tuple, by the fields' positions
            return Step("build", target, args=[v for _, v in given], keywords=[
                nodes.constant(names.index(name)) for name, _ in given])
        return Step("build", target, args=[v for _, v in given],
                    keywords=[nodes.constant(name) for name, _ in given],
                    source=records.unrecord)

    def unpack(self, targets, source):
        container = self.kind_of(source)
        for i, target in enumerate(targets):
            if isinstance(container, kinds.Container):
                self.kinds[target] = container.item(i) or kinds.element(container)
            else:
                self.kinds[target] = kinds.element(container)
        if not container.active or not isinstance(source, nodes.Name):
            return None
        return Step("unpack", targets, source=source.id, kinds=container)

    def call(self, target, value):
        """`target = f(...)`: a primitive, a call of a Python function (compiled now for
        its callee, or resolved when it runs), a loop, or a constant."""
        helper = getattr(value, "helper", None)
        if helper is loops.iterate:
            return self.loop(target, value)
        fn = helper or self.callees.callee(value.func)
        fn = registry.implementation_of(fn) or fn  # a library function's Python version
        args = [a.value if isinstance(a, nodes.Starred) else a for a in value.args]
        if fn is not None and self.callees.is_method(value.func):
            args = [value.func.value] + args
        keywords = [(k.arg, k.value) for k in value.keywords]
        if fn is dict and keywords and not is_split(value):
            return self.dict_call(target, args, keywords)
        if records.init_fields(fn) is not None and not is_split(value):
            return self.record_call(target, fn, args, keywords)
        if fn is getattr and not is_split(value) and not keywords:
            return self.getattr_call(target, args)
        active = any(self.kind_of(a).active for a in args + [v for _, v in keywords])
        if fn is dict and is_split(value) and active:
            raise self.error("dict(*args, **kwargs) of differentiable values is not supported: "
                             "write the display, {**d, 'k': v}, or dict(d, k=v)", "dict(**...)")
        if fn is None or is_split(value):
            callee = value.func.value if self.callees.is_method(value.func) else value.func
            if active or self.kind_of(callee).active:
                self.kinds[target] = kinds.ANY
                return Step("dynamic", target)
        elif active and not registry.is_nondifferentiable(fn):
            if fn in _BY_OPERATOR and len(args) == _BY_OPERATOR[fn][1] and not keywords:
                step = self.overloaded(target, _BY_OPERATOR[fn][0], args)
                if step is not None:
                    return step
            if getattr(fn, "__module__", None) == "math":
                self.refuse_floated(fn, args)
            if registry.rule_for(fn) is not None:
                step = self.primitive(target, fn, args, keywords)
                if step is not None and self.is_cancelled_shift(target, fn, args, keywords):
                    self.kinds[target] = kinds.constant(self.kinds[target])
                    return None
                return step
            if custom.is_custom(fn):
                if value.keywords or is_split(value):
                    raise self.error(f"{fn.__qualname__} has a custom derivative: call it with "
                                     "positional arguments only", fn.__qualname__)
                self.check_refused(fn, args, [])
                self.kinds[target] = kinds.ANY
                return Step("custom", target, fn)
            if fn is mutation.with_member:  # a set comprehension
                raise self.error(_SET_REFUSED, "set")
            if isinstance(fn, types.FunctionType) and introspection.has_fixed_parameters(fn):
                return self.static_call(target, fn, value)
            if isinstance(fn, types.FunctionType) or isinstance(fn, types.MethodType) and (
                    isinstance(fn.__func__, types.FunctionType)):
                self.kinds[target] = kinds.ANY  # a method of a global object: resolved then
                return Step("dynamic", target)
            raise self.no_rule(fn)
        self.kinds[target] = self.constant_result(fn, args, keywords)
        self.note_complex(target, fn, args)
        if fn is isinstance and len(args) == 2:
            self.known[target] = self.type_test(*args)
        return None

    def primitive(self, target, fn, args, keywords):
        """`target = fn(*args, **keywords)` for a primitive `fn`: a step with its rule
        when an argument is differentiable."""
        rule = registry.rule_for(fn)
        arg_kinds = [self.kind_of(a) for a in args + [v for _, v in keywords]]
        spec = registry.spec_of(fn)
        if spec is not None and spec.refused_version is not None and self.refused_argument(
                fn, args, keywords):
            self.kinds[target] = kinds.ANY  # another form of the call: its Python version's
            return Step("dynamic", target)
        self.check_refused(fn, args, keywords)
        if registry.is_nondifferentiable(fn) or not any(k.active for k in arg_kinds):
            self.kinds[target] = self.constant_result(fn, args, keywords)
            self.note_complex(target, fn, args)
            return None
        self.check_real(args + [v for _, v in keywords])
        if rule is None:
            raise self.no_rule(fn)
        self.kinds[target] = self.result_kind(rule, args, keywords)
        self.shapes[target] = self.result_shape(rule, target, args)
        return Step("primitive", target, fn, rule, args, keywords)

    def is_complex(self, atom):
        """Whether `atom` is a constant known to be complex: a literal (`1j`), a global
        or free variable holding one or a complex type (`np.complex128`), or a constant
        computed from one."""
        if isinstance(atom, nodes.Constant):
            return isinstance(atom.value, complex)
        if isinstance(atom, nodes.Name) and atom.id in self.complex:
            return True
        if not self.callees.is_reference(atom):
            return False
        try:
            value = self.callees.callee(atom)
        except TransformError:
            return False
        if isinstance(value, type):  # a dtype: np.complex128, complex
            return issubclass(value, (complex, np.complexfloating))
        return isinstance(value, (complex, np.ndarray, np.generic)) and np.iscomplexobj(value)

    def note_complex(self, target, fn, args):
        """Note constant `target = fn(*args)` as complex when an argument is."""
        if fn not in _REAL_PARTS and any(map(self.is_complex, args)):
            self.complex.add(target)

    def check_real(self, args):
        """Refuse a primitive combining a differentiable value with a complex constant:
        pullback's derivative rules are written for real values."""
        for atom in args:
            if self.is_complex(atom):
                shown = nodes.unparse(atom) if not isinstance(atom, nodes.Name) or (
                    atom.id not in self.complex) else "a complex value"
                raise self.error(
                    f"computing with complex numbers ({shown} here, with a differentiable "
                    "value) is not supported: pullback's "
                    "derivative rules are written for real values; compute the real and "
                    "imaginary parts as real values (np.cos(t) and np.sin(t) for "
                    "np.exp(1j * t))", "complex numbers")

    def check_refused(self, fn, args, keywords):
        """Refuse a differentiable argument of primitive `fn` at a parameter whose
        derivative its spec does not give (`Spec.refused`)."""
        refused = self.refused_argument(fn, args, keywords)
        if refused is not None:
            name = registry.describe(fn)
            raise self.error(f"{name} is not differentiable in its argument {refused[0]}: "
                             f"{refused[1]}", name)

    def refused_argument(self, fn, args, keywords):
        """`(parameter, reason)` for the first differentiable argument of `fn` at a
        parameter its spec refuses (`Spec.refused`), or None."""
        rule = registry.spec_of(fn)
        if rule is None or not rule.refused:
            return None
        try:
            layout = rule.layout(len(args), tuple(name for name, _ in keywords))
        except TypeError:
            return None  # refused with the signature's message when the template is bound
        by_name = dict(keywords)
        for param, reason in rule.refused.items():
            slot = layout.get(param)
            atom = (args[slot.key] if isinstance(slot.key, int) else by_name[slot.key]) if (
                isinstance(slot, registry.Slot)) else None
            if atom is not None and self.kind_of(atom).active:
                return param, reason
        return None

    def static_call(self, target, fn, value, resolved=None):
        """A call of Python function `fn`, compiled for the kinds of its arguments
        (`resolved`: what `resolve_call` found already)."""
        params, arguments, callee = resolved or self.resolve_call(fn, value)
        result = callee.result_kind
        if result is kinds.NEVER:  # a call of the recursion assumed not to return
            result = kinds.ANY
            if self.cut_at_never:
                self.unreached = True
        if target is not None:
            self.kinds[target] = result
            if callee.shares is not None:
                self.updates.call_results[target] = (dict(zip(params, arguments)),
                                                     callee.shares)
        self.updates.track_call_updates(fn, dict(zip(params, arguments)), callee.updated)
        return Step("static", target, fn, args=arguments, callee=callee)

    def resolve_call(self, fn, value):
        """For call `value` of Python function `fn`: its parameters, the argument given
        to each (None where the default holds), and the `Callee` compiled for them."""
        signature = calls.signature(fn)
        try:
            bound = signature.bind(*value.args, **{k.arg: k.value for k in value.keywords})
        except TypeError as error:
            raise self.error(f"calling {fn.__qualname__}: {error}", fn.__qualname__) from None
        params = list(signature.parameters)
        arguments = [bound.arguments.get(p) for p in params]
        callee = self.located_in_user_code(self.calls.resolve, value.func, fn, {
            p: self.kind_of(a) if a is not None else kinds.CONST
            for p, a in zip(params, arguments)})
        return params, arguments, callee

    def located_in_user_code(self, resolve, func, fn, param_kinds):
        """`resolve(fn, param_kinds)`, a TransformError met inside a library's `fn`
        named at this call, written `func`, when this function is the user's."""
        try:
            return resolve(fn, param_kinds)
        except TransformError as error:
            if not errors.in_library(error.filename) or errors.in_library(
                    self.origin.filename):
                raise
            name, full = nodes.dotted_path(func) or fn.__qualname__, registry.describe(fn)
            called = name if full.endswith(name) and full.count(".") == name.count(
                ".") else f"{name} ({full})"
            raise errors.into_library(error, called, self.origin.filename,
                                      self.lineno) from None

    def loop(self, target, value):
        """`iterate(loop_body, items, *state)`: the body's kinds, for the kinds its
        state takes in any iteration (see `loops`)."""
        body_name, items, *inits = value.args
        body = self.loop_bodies.pop(body_name.id)
        item = kinds.element(self.kind_of(items))
        state = [self.kind_of(a) for a in inits]
        outer = {v: self.kinds.get(v, kinds.ANY) for v in body.captured}  # ANY: defined later
        if not any(k.active for k in [item, *state, *outer.values()]):
            return self.primal_loop(target, value, body)
        summary, state = self.loop_state(body, outer, item, state)
        self.updates.loop(target, body, items, inits, summary)
        self.kinds[body.name] = kinds.ANY if any(k.active for k in outer.values()) else (
            kinds.CONST)
        self.kinds[target] = kinds.sequence(tuple, [kinds.CONST] + state)
        param_kinds = dict(outer)
        param_kinds.update(zip(nodes.parameter_names(body.args), [item] + state))
        later = [var for var in body.captured if var not in self.kinds]
        return Step("loop", target, callee=body, later=later, kinds=param_kinds)

    def loop_state(self, body, outer, item, state, guarded=True):
        """The `Summary` of a loop body, and the kinds of its state: those of its initial
        values joined with those the body returns, until they no longer change. Unless
        `guarded`, the body's updates in place are not checked (a loop run as it is)."""
        while True:
            param_kinds = dict(outer)
            param_kinds.update(zip(nodes.parameter_names(body.args), [item] + state))
            inner = Interpreter(body, self.origin, param_kinds, self.calls, body.captured,
                                self.index_value)
            inner.updates.guarded = guarded
            summary = inner.run()
            returned = [kinds.item(summary.result_kind, i + 1) for i in range(len(state))]
            joined = [kinds.join(a, b) for a, b in zip(state, returned)]
            if joined == state:
                self.callees.globals_used.update(summary.globals_used)
                return summary, state
            state = joined

    def primal_loop(self, target, value, body):
        """A loop without differentiable values, which runs as it is: its updates in place,
        what its state may share, and its state's kinds, found as any loop's
        (`loop_state`: a list of numbers built by appending `0.0` is one). A body the
        interpreter cannot read, but which updates nothing, leaves its state CONST and
        sharing any memory."""
        items, *inits = value.args[1:]
        updating = any(hasattr(node, "updates") for node in nodes.walk(body))
        outer = {v: self.kinds.get(v, kinds.CONST) for v in body.captured}
        state = [self.kind_of(a) for a in inits]
        try:
            summary, state = self.loop_state(body, outer, kinds.element(self.kind_of(items)),
                                             state, guarded=False)
        except TransformError:
            if updating:
                raise
            summary, state = None, [kinds.CONST] * len(inits)
        if summary is not None:
            if updating:
                self.updates.track_loop(target, body, items, inits, summary.updated)
            self.updates.loop_results[target] = self.updates.loop_result(
                target, body, items, inits, summary.exits)
        self.kinds[target] = kinds.sequence(tuple, [kinds.CONST] + state)
        return Step("primal_loop", target, callee=body)

    def is_cancelled_shift(self, target, fn, args, keywords):
        """Whether `target = fn(...)` is a shift that what the function computes from
        it cancels, its cotangent zero (see `invariance`)."""
        shift = invariance.shift_of(fn, args, keywords, self.kinds[target].shape == "scalar")
        if shift is None:
            return False
        statements, position = self.place
        block = self.blocks.get(id(statements))
        if block is None:
            block = self.blocks[id(statements)] = invariance.Block(statements)
        return invariance.cancelled(target, shift, block, position, self.function_reads,
                                    self.callees.global_callee,
                                    lambda atom: self.kind_of(atom).shape == "scalar")

    def function_reads(self):
        """How often the function reads each name."""
        if self.reads is None:
            self.reads = nodes.read_counts(self.tree)
        return self.reads

    def type_test(self, value, types_):
        """`isinstance(value, types_)` when the kind of `value` decides it, else None."""
        kind = self.kind_of(value)
        cls = self.callees.callee(types_) if nodes.dotted_path(types_) is not None else None
        if kind.shape == "array":
            known = np.ndarray
        elif isinstance(kind, kinds.Container):
            known = kind.type
        else:
            return None
        builtin = (tuple, list, dict, set, str)
        decided = cls in builtin or known not in (tuple, list, dict, np.ndarray)
        return issubclass(known, cls) if isinstance(cls, type) and decided else None

    def constant_result(self, fn, args, keywords):
        """The kind of the result of a call of `fn` that has no derivative here."""
        if fn is None:
            return kinds.CONST
        if registry.is_nondifferentiable(fn):
            result = registry.constant_result(fn)
            if callable(result):
                return self.result_kind(registry.spec_of(fn), args, keywords)
            return result or kinds.CONST
        rule = registry.rule_for(fn)
        if rule is None:
            return kinds.CONST
        result = self.result_kind(rule, args, keywords)  # ANY from `dict` of a zip
        return kinds.constant(result) if result.active else result

    def result_kind(self, rule, args, keywords):
        """The kind of what primitive `rule` returns for these arguments (its spec's)."""
        return _result_kind(rule, [self.kind_of(a) for a in args],
                            {name: self.kind_of(value) for name, value in keywords})

    def refuse_repetition(self, count):
        """Refuse `xs * n` repeating a differentiable sequence: now for a literal `n`, else
        where it runs, if `n` is an int then (a float raises Python's own error; a
        branch not taken never runs)."""
        error = self.error(_REPEAT_REFUSED, "sequence repetition")
        if not isinstance(count, nodes.Name):
            raise error
        statements, position = self.place
        self.updates.guards.append((statements[position], mutation.refuse_repetition,
                                    [count.id], error))

    def check_shared(self, name, value):
        """`name = value` for a variable declared `global` or `nonlocal`: state outside the
        function, which may only hold constants (a counter, a cache of settings)."""
        if self.kind_of(value).active:
            raise self.error(
                f"{name} is declared global or nonlocal and is assigned a differentiable "
                "value: its derivative would not follow it out of the function; return the "
                "value instead", "global state")

    def dropped_call(self, value):
        """A call whose value is dropped (`log(x)`, `ax.plot(x)`) with a differentiable
        argument: None for a primitive's or a library's function, which runs as it is
        (a dropped value has no cotangent); the user's function is compiled or resolved
        when it runs (a step without target), so that what it updates in place is
        followed. A call known to update an argument in place is refused."""
        if not isinstance(value, nodes.Call):
            return None
        method = value.func.attr if self.callees.is_method(value.func) else None
        fn = None if method else getattr(value, "helper", None) or self.callees.callee(value.func)
        args = value.args + [k.value for k in value.keywords]
        if method:
            args = args + [value.func.value]
        elif nodes.is_name(value.func):
            args = args + [value.func]  # a closure over a differentiable value
        if not any(self.kind_of(a).active for a in args):
            return None
        what = f"{self.user_text(value.func.value)}.{value.func.attr}" if isinstance(
            value.func, nodes.Attribute) else nodes.dotted_path(value.func) or "the call"
        if fn is not None:
            self.check_refused(fn, value.args, [(k.arg, k.value) for k in value.keywords])
        if registry.updates_in_place(fn, method, {k.arg for k in value.keywords}):
            raise self.error(f"{what} updates a value in place, which pullback does not "
                             "follow: compute a new value instead", what)
        if self.fills_a_list_read_elsewhere(value, fn, method):
            raise self.error(
                f"{what} puts a differentiable value into a list that is not a variable of "
                "this function, and is read after: its derivative would not follow the list "
                "out of the function; return the value instead, and append it where the "
                "list is made", what)
        if fn is not None:
            if (registry.rule_for(fn) is not None or custom.is_custom(fn)
                    or not introspection.is_user_function(fn)):
                return None
            if (isinstance(fn, types.FunctionType) and introspection.has_fixed_parameters(fn)
                    and not is_split(value)):
                return self.static_call(None, fn, value)
        return Step("dynamic", None)

    def fills_a_list_read_elsewhere(self, value, fn, method):
        """Whether dropped call `value` appends to (extends, pops) a list that is not the
        function's own (ANF made those new values) but the enclosing function's, which
        reads it elsewhere, or a global this function reads too, or one a value read
        elsewhere may hold (a call's result: `d.setdefault(k, [])`). A list only
        appended to (a log of losses) is not read after."""
        owner = getattr(fn, "__self__", None)
        if not (method in flow.UPDATING_METHODS or isinstance(owner, list)
                and fn.__name__ in flow.UPDATING_METHODS):
            return False
        root = (nodes.dotted_path(value.func) or "").split(".")[0]
        part = self.part_of(root)
        while part is not None:  # the list is an attribute or item of a value (`s.xs`)
            root, part = part.value.id, self.part_of(part.value.id)
        counts = nodes.read_counts(self.tree.body)

        def read_elsewhere(var):
            return parse.read_around(self.origin, var) if var in self.freevars else (
                counts[var] > 1)

        # the list, or a value that may hold it (`d` for `d.setdefault(k, []).append(v)`)
        holders = {aliases.items_of(r) if aliases.is_items(r) else r
                   for r in self.updates.aliases.memory(root)} - {root}
        return read_elsewhere(root) or any(read_elsewhere(var) for var in holders
                                           if var in self.kinds)

    def part_of(self, name):
        """The attribute or item read the function binds `name` to (`s.xs` for ANF's
        `s_xs = s.xs`, read for `s.xs.append(v)`), else None."""
        value = self.value_of(name)
        if isinstance(value, (nodes.Attribute, nodes.Subscript)) and nodes.is_name(value.value):
            return value
        return None

    def value_of(self, name):
        """The value the function's `name = value` binds `name` to, or None."""
        for stmt in nodes.walk(self.tree):
            if isinstance(stmt, nodes.Assign) and nodes.single_target(stmt) == name:
                return stmt.value
        return None

    def user_text(self, atom):
        """The user's expression for ANF atom `atom`: `s.xs` for `s_1_xs`, bound to an
        attribute of a version of `s`."""
        if not nodes.is_name(atom):
            return nodes.unparse(atom)
        part = self.part_of(atom.id)
        if part is None and isinstance(self.value_of(atom.id), nodes.Call):
            return f"{nodes.unparse(self.value_of(atom.id).func).strip()}(...)"
        if part is None:
            return updates.user_name(atom.id)
        base = self.user_text(part.value)
        if isinstance(part, nodes.Attribute):
            return f"{base}.{part.attr}"
        return f"{base}[{nodes.unparse(part.slice)}]"

    # -- queries -------------------------------------------------------------------

    def kind_of(self, atom):
        """The kind of an atom (a name, a constant, a tuple of atoms)."""
        if isinstance(atom, nodes.Name):
            return self.kinds.get(atom.id, kinds.CONST)
        if isinstance(atom, nodes.Tuple):
            return kinds.promote([self.kind_of(e) for e in atom.elts] or [kinds.CONST])
        if isinstance(atom, nodes.Constant) and type(atom.value) in (int, float):
            return kinds.CONST_SCALAR  # not a bool (`kinds._EXACT`)
        if isinstance(atom, nodes.Constant) and atom.value is None:
            return kinds.NONE
        return kinds.CONST

    def shape_of(self, atom):
        """A token shared by atoms known to have the same shape ("scalar"), or None."""
        if self.kind_of(atom).shape == "scalar":
            return "scalar"
        if isinstance(atom, nodes.Name):
            return self.shapes.get(atom.id)
        return None

    def result_shape(self, rule, target, args):
        """The shape token of a primitive's result: an elementwise operation on
        operands of one shape (and scalars) has that shape."""
        if rule.result == "scalar":
            return "scalar"
        if rule.result != "elementwise":
            return target
        shapes = {self.shape_of(a) for a in args} - {"scalar"}
        if not shapes:
            return "scalar"
        return shapes.pop() if len(shapes) == 1 and None not in shapes else target

    def no_rule(self, fn):
        return self.error(registry.no_rule_message(fn), registry.describe(fn))

    def error(self, message, construct):
        """A TransformError at the line being read."""
        return TransformError(message, self.origin.filename, self.lineno, construct)


def _of_unknown_type(kind):
    """Whether `kind` is that of a constant whose type the kinds do not tell (an object
    from a module, a closure or a call), not a container's or an array's."""
    return not kind.active and kind.shape == "unknown" and not isinstance(
        kind, (kinds.Container, kinds.Items))


def _differentiable(kind):
    """Whether a value of `kind` surely holds a differentiable number (a kind that may
    also hold an int, `ANY`, does not)."""
    if isinstance(kind, kinds.Container):
        return any(map(_differentiable, kind.items))
    return kind.active and kind.shape != "unknown"


def _may_decline(method, result_kind):
    """Whether operator `method` may return `NotImplemented`, by its code and by the
    kind of its result for the operands' kinds: `NotImplemented` would join with what
    it returns otherwise into a kind whose shape is unknown (a guard such as `if not
    isinstance(other, Poly)` that the kinds decide leaves a record's kind)."""
    if "NotImplemented" not in method.__code__.co_names:
        return False
    return isinstance(result_kind, kinds.Kind) and result_kind.shape == "unknown"


def _outside_state(tree, origin, local, declared):
    """The module globals `tree` reads (not its variables, `local`, nor those it declares
    `global`) whose values an update in place would change: arrays, containers and
    objects with attributes, not numbers, strings, functions, classes or modules."""
    found = []
    for name in sorted(nodes.reads(tree) - nodes.stores(tree) - set(local) - set(declared)):
        value = origin.globals.get(name, _ABSENT)
        if value is not _ABSENT and _holds_state(value):
            found.append(name)
    return found


_ABSENT = object()
_STATELESS = (int, float, complex, str, bytes, bool, type(None), np.generic, type,
              types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType, functools.partial, np.ufunc, range, frozenset)


def _holds_state(value):
    """Whether an update in place may change `value` or what it holds."""
    return not isinstance(value, _STATELESS) and (
        isinstance(value, (np.ndarray, list, dict, set, bytearray, tuple))
        or hasattr(value, "__dict__"))


def _user_version(user, name):
    """`name` (a version of a parameter, or an `aliases.items` root of one) by the
    parameter's name (`user`: version -> parameter)."""
    if aliases.is_items(name):
        return aliases.items(user.get(aliases.items_of(name), aliases.items_of(name)))
    return user.get(name, name)


def _index_value(index):
    return nodes.index_value(index, lambda parts: nodes.call(nodes.name("slice"), parts))


def _repeats(kind_of, operands):
    """The count of `a * b` when it may repeat a differentiable list or tuple: one is, and
    the other is a constant that may be an int (not an array; not a float literal, which
    Python refuses); else None."""
    for items, count in (operands, operands[::-1]):
        times = kind_of(count)
        float_literal = isinstance(count, nodes.Constant) and isinstance(count.value, float)
        if (kinds.is_sequence(kind_of(items)) and kind_of(items).active and not times.active
                and times.shape != "array" and not float_literal):
            return count
    return None


def _sliced(container, index):
    """The kind of `container[index]` for a tuple or list kind and a slice of constant
    bounds (`params[5:]`), else None."""
    bounds = [index.lower, index.upper, index.step]
    if not all(b is None or isinstance(b, nodes.Constant) and type(b.value) is int
               for b in bounds):
        return None
    part = slice(*[None if b is None else b.value for b in bounds])
    return kinds.sequence(container.type, container.items[part])


def _unpacks(value):
    """Whether a literal unpacks another value into itself (`*x`, `**d`)."""
    if isinstance(value, nodes.Dict):
        return any(k is None for k in value.keys)
    return any(isinstance(e, nodes.Starred) for e in value.elts)


def _imported(stmt):
    """`{name: object}` for what import statement `stmt` binds (modules import once, so
    importing them here is what running the function does)."""
    found = {}
    for alias in stmt.names:
        if isinstance(stmt, nodes.Import):
            module = importlib.import_module(alias.name)
            found[alias.asname or alias.name.split(".")[0]] = (
                module if alias.asname else importlib.import_module(alias.name.split(".")[0]))
            continue
        module = importlib.import_module(stmt.module)
        found[alias.asname or alias.name] = (
            getattr(module, alias.name) if hasattr(module, alias.name)
            else importlib.import_module(f"{stmt.module}.{alias.name}"))
    return found


@functools.cache
def _named_parameters(fn):
    """The names `fn` takes by keyword, or None when it takes any (`**`)."""
    parameters = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                               p.KEYWORD_ONLY))


def is_split(call):
    """Whether a call passes `*args` or `**kwargs` (ANF then calls `f(*args, **kwargs)`)."""
    return any(isinstance(a, nodes.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords)


def _result_kind(rule, arg_kinds, keyword_kinds):
    """The kind of a primitive's result, from its spec, given the kinds of its positional
    and keyword arguments: a spec's function takes by name the keywords it names (or
    all, with `**`), and the others after the positional ones."""
    if callable(rule.result):
        named = _named_parameters(rule.result)
        by_name = {k: v for k, v in keyword_kinds.items() if named is None or k in named}
        rest = [v for k, v in keyword_kinds.items() if k not in by_name]
        return rule.result(*arg_kinds, *rest, **by_name)
    arg_kinds = arg_kinds + list(keyword_kinds.values())
    active = any(k.active for k in arg_kinds)
    if rule.result == "elementwise":
        return kinds.promote(arg_kinds)
    if rule.result == "scalar":
        return kinds.SCALAR if active else kinds.CONST_SCALAR
    if rule.result == "array" and active:
        return kinds.ARRAY
    return kinds.ANY if active else kinds.CONST
