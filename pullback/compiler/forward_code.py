"""What both modes' walks share: the function's own statements as they run.

The reverse rules' forward pass (φ, `reverse.forward`) and forward mode's tangent pass
(τ, `tangent.statements`) both write each statement of the ANF function as Python
runs it, with their derivative code beside it. `ForwardCode` is that common part, for
a class holding the function's `namer`, `bindings` and interpreter (`facts`): calls of
pullback's helpers named, try statements written as `try`, the run-time checks the
interpreter asked for (`guards`), loops without derivatives.
"""

import dataclasses

from ..errors import TransformError
from ..rules import registry
from ..runtime import custom, handlers, loops, mutation
from .analysis import interpret, kinds
from .syntax import nodes


@dataclasses.dataclass
class Result:
    """What a stage produces (`reverse.reverse`, `tangent.tangent`).

    Attributes:
      tree: the generated function (a gast FunctionDef): the forward function with
        its pullback, or the derivative in forward mode.
      result_kind: the kind of the function's return value.
      globals_used: the global (or builtin) objects the transformation looked
        up, by name: calls of them were compiled for exactly these objects.
      kinds: the kind of every variable of the function.
      shapes: a token for every variable, equal for variables known to have one
        shape ("scalar" for scalars), or None.
      updated: the parameters and free variables it updates in place (as Python runs it).
      exits: for a loop's body, the variables (its parameters, free variables and
        its own values) whose memory each item of the state it returns may share,
        and those it may hold: a pair of sets per item.
    """

    tree: object
    result_kind: object
    globals_used: dict
    kinds: dict
    shapes: dict
    updated: list = dataclasses.field(default_factory=list)
    exits: list = dataclasses.field(default_factory=list)
    shares: object = None


class ForwardCode:
    """The statements of a function as they run (see the module docstring): a walk of
    ANF function `tree` with the interpreter (`facts`), for the kinds `param_kinds` of
    its parameters and free variables (`freevars`: a loop body's captured ones)."""

    def __init__(self, tree, origin, param_kinds, namer, bindings, calls, freevars=None):
        self.tree = tree
        self.origin = origin
        self.namer = namer
        self.bindings = bindings
        self.calls = calls
        self.facts = interpret.Interpreter(tree, origin, param_kinds, calls, freevars,
                                           self.index_value)
        self.params, self.freevars = self.facts.params, self.facts.freevars
        self.kind_of = self.facts.kind_of
        self.first_emitted = {}  # id of a statement -> the first node of its code

    @property
    def lineno(self):
        """The user's line being read; errors name it."""
        return self.facts.lineno

    @lineno.setter
    def lineno(self, lineno):
        self.facts.lineno = lineno

    def bind_helper(self, stmt):
        """A call of one of pullback's helpers (ANF's `append`, ...) names its cell."""
        value = stmt.value if isinstance(stmt, (nodes.Assign, nodes.Expr)) else None
        helper = getattr(value, "helper", None)
        if helper is not None and helper is not loops.iterate:
            value.func = nodes.name(self.bindings.helper(value.func.id, helper))

    def guard(self, code, guards, ret, first_emitted):
        """Before each statement of `guards` (`interpret.Summary`), the run-time check the
        interpreter asked for, in `code`, the function's code (`first_emitted`: the first
        node written for each statement)."""
        before, errors = {}, []  # id of a node -> the checks to insert before it, in order
        for stmt, helper, names, error in guards:
            check = nodes.expr(nodes.call(
                nodes.name(self.bindings.object(helper.__name__, helper)),
                [*map(nodes.name, names), nodes.name(self.bindings.object("refusal", error))]),
                error.lineno)
            if stmt is ret:
                code.append(check)
            else:
                target = id(first_emitted.get(id(stmt)))
                before.setdefault(target, []).append(check)
                errors.append((target, error))
        insert_before(code, before)
        for target, error in errors:
            if target in before:  # not found: the statement wrote no code to check before
                raise error

    def attempt(self, stmt, handler, block):
        """A try statement's `if` (`frontend.try_blocks`): the block inside `try:`, the
        handler inside `except`, after it sets the test (and exits the contexts the
        block left entered)."""
        types, error = stmt.attempt
        caught = self.namer.fresh("caught")
        failed = nodes.call(nodes.name(self.bindings.object("try_failed", handlers.try_failed)),
                            [nodes.name(caught), nodes.name(error.id)])
        flagged = nodes.unpack([stmt.test.id, error.id], failed, stmt.lineno)
        return nodes.try_(block, types, caught, [flagged] + handler, stmt.lineno)

    def attempts(self, statements):
        """ANF `statements` run as they are (a loop without differentiable values), each
        try statement's `if` in them written as the `try` it stands for."""
        out = []
        for stmt in statements:
            if isinstance(stmt, nodes.FunctionDef):
                stmt.body = self.attempts(stmt.body)
            elif isinstance(stmt, nodes.If):
                body, orelse = self.attempts(stmt.body), self.attempts(stmt.orelse)
                stmt = (self.attempt(stmt, body, orelse) if getattr(stmt, "attempt", None)
                        else nodes.replaced(stmt, body=body, orelse=orelse))
            out.append(stmt)
        return out

    def primal_loop_code(self, stmt, step):
        """A loop without differentiable values, run as it is, with `loops.iterate`."""
        for node in [stmt.value] + list(nodes.walk(step.callee)):
            helper = getattr(node, "helper", None)
            if helper is not None:
                node.func = nodes.name(self.bindings.helper(node.func.id, helper))
        callee = self.attempts([step.callee])[0]
        return [callee, nodes.assign(step.target, stmt.value, self.facts.lineno)]

    def custom_driver(self, fn, for_jvp, for_vjp):
        """`(driver, functions)`: the names of the run-time function a call of `fn`, which
        has a hand-written derivative, goes through (`for_jvp` for a `custom_jvp`
        function, `for_vjp` for a `custom_vjp` one), and of the hand-written functions
        it is given first."""
        rule = custom.jvp_of(fn)
        functions, driver = ([rule], for_jvp) if rule is not None else (
            list(custom.vjp_of(fn)), for_vjp)
        names = [nodes.name(self.bindings.object(f.__name__, f)) for f in functions]
        return nodes.name(self.bindings.object(driver.__name__, driver)), names

    def step_code(self, stmt, step):
        """The code of `stmt`, by its `Step`: the emitter `EMITTERS` names."""
        return getattr(self, EMITTERS[step.how])(stmt, step)

    def as_run(self, stmt, step):
        """The primitive call `stmt` as the function runs it: generated code appending to
        a list in place calls the copying update instead (`mutation.COPYING`). Where the
        optimiser wrote the update in place, nothing read the old list; the derivative
        code beside it may (a tangent rule reads its argument after the call)."""
        copying = mutation.COPYING.get(step.fn)
        if copying is None:
            return stmt
        name = nodes.name(self.bindings.object(copying.__name__, copying))
        return nodes.replaced(stmt, value=nodes.replaced(stmt.value, func=name))

    def call_of(self, stmt, step):
        """The call a "static" or "dynamic" step makes: the statement's, or for an
        operator on an object (`Interpreter.overloaded`), that of its method
        (`step.source`) or of the helper `step.fn` with `step.args`."""
        if isinstance(step.source, nodes.Call):
            return step.source
        if step.how == "dynamic" and step.fn is not None:
            return nodes.call(nodes.name(self.bindings.object(step.fn.__name__, step.fn)),
                              step.args)
        return stmt.value

    def listed_iterators(self, stmt, step):
        """`(listings, stmt, step)`: primitive call `stmt` given an iterator of
        differentiable items (a zip, an enumerate: kind `Items` of no known type) as an
        argument, whose template reads that argument again after the call took its items
        (its spec holds `iterates`), given the list of the items instead; `listings` are
        the `(name = list(iterator), its step)` making them."""
        if not (registry.holds(step.fn, "iterates") and isinstance(stmt.value, nodes.Call)):
            return [], stmt, step
        listed = {}
        for atom in step.args + [value for _, value in step.keywords]:
            kind = self.kind_of(atom)
            if isinstance(atom, nodes.Name) and isinstance(kind, kinds.Items) and (
                    kind.type is None and kinds.element(kind).active):
                listed.setdefault(atom.id, self.namer.fresh(atom.id + "_list"))
        if not listed:
            return [], stmt, step
        listings = [self.listing(name, iterator) for iterator, name in listed.items()]

        def renamed(atom):
            is_listed = isinstance(atom, nodes.Name) and atom.id in listed
            return nodes.name(listed[atom.id]) if is_listed else atom

        call = nodes.replaced(stmt.value, args=[renamed(a) for a in stmt.value.args],
                              keywords=[nodes.replaced(k, value=renamed(k.value))
                                        for k in stmt.value.keywords])
        step = dataclasses.replace(step, args=[renamed(a) for a in step.args], keywords=[
            (key, renamed(value)) for key, value in step.keywords])
        return listings, nodes.replaced(stmt, value=call), step

    def listing(self, name, iterator):
        """`(name = list(iterator), its step)`: the items of an iterator, listed where the
        derivative code reads them again (a loop's, a primitive's)."""
        call = nodes.call(nodes.name(self.bindings.object("list", list)), [nodes.name(iterator)])
        assign = nodes.assign(name, call, self.lineno)
        return assign, self.facts.primitive(name, list, [nodes.name(iterator)], [])

    def index_value(self, index):
        """Subscript syntax as a value (`nodes.index_value`), reading `slice` from a cell."""
        def slice_call(parts):
            return nodes.call(nodes.name(self.bindings.object("slice", slice)), parts)

        return nodes.index_value(index, slice_call)

    def located(self, step, *args):
        """Run `step(*args)`, giving a TransformError it raises this statement's line."""
        try:
            return step(*args)
        except TransformError as error:
            if error.lineno is not None:
                raise
            raise self.error(error.message, error.construct) from None

    def error(self, message, construct):
        return self.facts.error(message, construct)


EMITTERS = {
    "copy": "copy", "primitive": "primitive", "build": "build", "unpack": "unpack",
    "closure": "closure", "static": "static_call", "custom": "custom_call",
    "dynamic": "dynamic_call", "loop": "loop", "primal_loop": "primal_loop",
    "loop_body": "loop_body",
}
"""The method of a walk writing the code of each kind of `interpret.Step`."""


def stops_early(code, iteration):
    """Whether an iteration of a loop body's code may set `iteration` to another flag
    than 'next' (a `break`, a `return`, the end of a `while`)."""
    return any(isinstance(node, nodes.Assign) and nodes.is_name(node.targets[0], iteration)
               and not (isinstance(node.value, nodes.Tuple) and node.value.elts
                        and isinstance(node.value.elts[0], nodes.Constant)
                        and node.value.elts[0].value == loops.NEXT)
               for stmt in code for node in nodes.walk(stmt))


def insert_before(block, before):
    """Insert the statements `before` maps the id of a node to before that node, in
    `block` or a block inside it (not in a nested function), in one walk; the ids found
    are taken out of `before`."""
    if not before:
        return
    written = []
    for node in block:
        written += before.pop(id(node), ())
        written.append(node)
        if isinstance(node, nodes.FunctionDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            if getattr(node, field, None):
                insert_before(getattr(node, field), before)
        for handler in getattr(node, "handlers", []):
            insert_before(handler.body, before)
    block[:] = written
