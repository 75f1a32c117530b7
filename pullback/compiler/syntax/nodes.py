"""The one place that builds gast nodes.

The rest of pullback reads and builds syntax trees through these helpers and
the node classes re-exported here, so a change in gast's node classes is
absorbed in this file alone.
"""

import ast
import collections
import math

import gast
from gast import (  # noqa: F401  (re-exported node classes)
    AST,
    Add,
    And,
    AnnAssign,
    Assert,
    Assign,
    Attribute,
    AugAssign,
    BinOp,
    BitAnd,
    BitOr,
    BitXor,
    BoolOp,
    Break,
    Call,
    ClassDef,
    Compare,
    Constant,
    Continue,
    Del,
    Delete,
    Dict,
    DictComp,
    Div,
    Eq,
    Expr,
    FloorDiv,
    For,
    FormattedValue,
    FunctionDef,
    GeneratorExp,
    Global,
    Gt,
    GtE,
    If,
    IfExp,
    Import,
    ImportFrom,
    In,
    Invert,
    Is,
    IsNot,
    JoinedStr,
    Lambda,
    List,
    ListComp,
    Load,
    LShift,
    Lt,
    LtE,
    MatMult,
    Mod,
    Module,
    Mult,
    Name,
    NamedExpr,
    NodeTransformer,
    NodeVisitor,
    Nonlocal,
    Not,
    NotEq,
    NotIn,
    Or,
    Param,
    Pass,
    Pow,
    Raise,
    Return,
    RShift,
    Set,
    SetComp,
    Slice,
    Starred,
    Store,
    Sub,
    Subscript,
    Try,
    Tuple,
    UAdd,
    UnaryOp,
    USub,
    While,
    With,
    Yield,
    YieldFrom,
    arguments,
    comprehension,
    keyword,
)

parse = gast.parse
dump = gast.dump
_AST = ast.AST  # a module global: read faster than an attribute in the walks below


def walk_scope(*roots):
    """The nodes of `roots` in their own function scope: a nested function's or
    lambda's body is left out, its defaults (evaluated where it is made) are not."""
    pending = list(reversed(roots))  # depth first, in order, without nested generators
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            args = node.args
            children = [*args.defaults, *(d for d in args.kw_defaults if d)]
        else:
            children = list(iter_child_nodes(node))
        children.reverse()
        pending += children


def walk(node):
    """Every node of the tree `node`, breadth first, as `ast.walk` (faster): a node's
    children are read just before it is given."""
    todo = [node]
    append = todo.append
    for node in todo:
        fields = node.__dict__
        for name in node._fields:
            value = fields.get(name)
            if type(value) is list:  # a field's list is a plain list: no subclass test
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
            elif isinstance(value, _AST):
                append(value)
        yield node


def iter_child_nodes(node):
    """The nodes directly in `node`'s fields, in order, as `ast.iter_child_nodes`."""
    fields = node.__dict__
    for name in node._fields:
        value = fields.get(name)
        if type(value) is list:
            for item in value:
                if isinstance(item, _AST):
                    yield item
        elif isinstance(value, _AST):
            yield value


def name(id, ctx=None):
    """A Name node; `ctx` defaults to Load."""
    node = _NEW(gast.Name)
    node.__dict__ = {"id": id, "ctx": ctx or LOAD, "annotation": None, "type_comment": None}
    return node


def store(id):
    """A Name node in Store context."""
    return name(id, STORE)


def param(id):
    """A Name node used as a function parameter."""
    return name(id, PARAM)


def constant(value):
    """A Constant node."""
    return gast.Constant(value=value, kind=None)


def tuple_(elts, ctx=None):
    """A Tuple node."""
    return gast.Tuple(elts=list(elts), ctx=ctx or gast.Load())


def list_(elts):
    """A List node."""
    return gast.List(elts=list(elts), ctx=gast.Load())


def attribute(value, attr):
    """`value.attr`."""
    return gast.Attribute(value=value, attr=attr, ctx=gast.Load())


def dotted(path):
    """`a.b.c` from the string "a.b.c"."""
    head, *rest = path.split(".")
    node = name(head)
    for attr in rest:
        node = attribute(node, attr)
    return node


def call(func, args=(), keywords=()):
    """`func(*args, **keywords)`; `func` is a node or a dotted string."""
    if isinstance(func, str):
        func = dotted(func)
    return gast.Call(func=func, args=list(args), keywords=list(keywords))


def kw(arg, value):
    """A keyword argument node."""
    return gast.keyword(arg=arg, value=value)


def assign(target, value, lineno=None):
    """`target = value`; `target` is a node or a name string."""
    if isinstance(target, str):
        target = store(target)
    node = gast.Assign(targets=[target], value=value, type_comment=None)
    return located(node, lineno)


def alias(name, asname=None):
    """`name as asname` in an import statement."""
    return gast.alias(name=name, asname=asname)


def unpack(names, value, lineno=None):
    """`a, b, *c = value`; a name of None becomes `_`, a name "*c" is starred."""
    targets = []
    for n in names:
        n = n or "_"
        if n.startswith("*"):
            targets.append(gast.Starred(value=store(n[1:]), ctx=gast.Store()))
        else:
            targets.append(store(n))
    return assign(tuple_(targets, gast.Store()), value, lineno)


def for_(target, iterable, body, lineno=None):
    """`for target in iterable: body`; `target` is a node or a name string."""
    if isinstance(target, str):
        target = store(target)
    node = gast.For(target=target, iter=iterable, body=body, orelse=[], type_comment=None)
    return located(node, lineno)


def while_true(body, lineno=None):
    """`while True: body`."""
    return located(gast.While(test=constant(True), body=body, orelse=[]), lineno)


def break_(lineno=None):
    """`break`."""
    return located(gast.Break(), lineno)


def compare(left, op, right):
    """`left <op> right` for one comparison operator node `op`."""
    return gast.Compare(left=left, ops=[op], comparators=[right])


def return_(value, lineno=None):
    """`return value`."""
    return located(gast.Return(value=value), lineno)


def expr(value, lineno=None):
    """An expression statement."""
    return located(gast.Expr(value=value), lineno)


def if_(test, body, orelse=(), lineno=None):
    """`if test: body else: orelse`."""
    return located(gast.If(test=test, body=list(body), orelse=list(orelse)), lineno)


def pass_(lineno=None):
    """`pass`."""
    return located(gast.Pass(), lineno)


def try_(body, types, name, handler, lineno=None):
    """`try: body` with one clause, `except types as name: handler`."""
    clause = located(gast.ExceptHandler(type=types, name=store(name), body=list(handler)),
                     lineno)
    return located(gast.Try(body=list(body), handlers=[clause], orelse=[], finalbody=[]),
                   lineno)


def binop(left, op, right):
    """`left <op> right` where `op` is an operator node instance."""
    return gast.BinOp(left=left, op=op, right=right)


def arguments_(params, vararg=None, kwonly=(), kw_defaults=(), kwarg=None, defaults=()):
    """A function's `arguments` node from parameter names."""
    return gast.arguments(
        args=[param(p) for p in params],
        posonlyargs=[],
        vararg=param(vararg) if vararg else None,
        kwonlyargs=[param(p) for p in kwonly],
        kw_defaults=list(kw_defaults),
        kwarg=param(kwarg) if kwarg else None,
        defaults=list(defaults),
    )


def parameters(args):
    """The parameter nodes of an `arguments` node, in signature order."""
    params = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
    return [p for p in params if p is not None]


def parameter_names(args):
    """The names of the parameters of an `arguments` node, in signature order."""
    return [p.id for p in parameters(args)]


def function_def(fname, args, body, lineno=None):
    """`def fname(args): body`; `args` is an `arguments` node or a list of names."""
    if not isinstance(args, gast.arguments):
        args = arguments_(args)
    node = gast.FunctionDef(
        name=fname,
        args=args,
        body=list(body),
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return located(node, lineno)


def module(body):
    """A Module node."""
    return gast.Module(body=list(body), type_ignores=[])


def index_value(index, slice_call, bind=lambda node, hint: node):
    """Subscript syntax as a value: `x[1:n, 0]` indexes with `(slice(1, n), 0)`.

    `slice_call(parts)` makes the call building a slice (without a step when there is
    none); `bind(node, hint)` may name each slice and tuple made (ANF gives them
    variables, the reverse pass does not).
    """
    if isinstance(index, Slice):
        bounds = (index.lower, index.upper) if index.step is None else (
            index.lower, index.upper, index.step)
        return bind(slice_call([p if p is not None else constant(None) for p in bounds]),
                    "part")
    if isinstance(index, Tuple):
        return bind(tuple_([index_value(e, slice_call, bind) for e in index.elts]), "index")
    return index


def located(node, lineno):
    """Give `node` the user's line `lineno` (kept through every stage)."""
    if lineno is not None:
        node.lineno = lineno
    return node


def lineno_of(node):
    """The user's line a node came from, or None."""
    return getattr(node, "lineno", None)


def clone(node):
    """A deep copy of a node (or a list of nodes); other values, and nodes without
    fields (contexts, operators), are shared."""
    if isinstance(node, list):
        return [clone(item) if isinstance(item, _COPIED) else item for item in node]
    if not isinstance(node, gast.AST) or not node._fields:
        return node
    new = node.__class__.__new__(node.__class__)
    fields = {}
    for key, value in node.__dict__.items():
        fields[key] = clone(value) if isinstance(value, _COPIED) else value
    new.__dict__ = fields
    return new


def replaced(node, **fields):
    """A shallow copy of `node` with `fields` (a block: `body=[...]`) replaced."""
    new = node.__class__.__new__(node.__class__)
    new.__dict__.update(node.__dict__)
    new.__dict__.update(fields)
    return new


def with_blocks(stmt, rewrite):
    """`stmt` with `rewrite` applied to its blocks when it is an `if`, `for`, `while` or
    `try` (a copy), else `stmt` itself."""
    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        return replaced(stmt, body=rewrite(stmt.body), orelse=rewrite(stmt.orelse))
    if isinstance(stmt, gast.Try):
        return replaced(stmt, body=rewrite(stmt.body), orelse=rewrite(stmt.orelse),
                        finalbody=rewrite(stmt.finalbody),
                        handlers=[replaced(h, body=rewrite(h.body)) for h in stmt.handlers])
    return stmt


def statements(tree):
    """Every statement of `tree` and of the blocks nested in it (not expressions)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        for field in ("body", "orelse", "finalbody"):
            pending.extend(reversed(getattr(node, field, None) or []))


def reads(node):
    """The names `node` (and everything in it) reads."""
    return _names(node, gast.Load)


def stores(node):
    """The names `node` (and everything in it) assigns."""
    return _names(node, gast.Store)


def renamed(node, renames):
    """A copy of `node` (a statement or an expression) with each name `renames` maps,
    read or assigned, written as it maps it; `node` itself when it has none of them."""
    if not renames or not names_in(node) & renames.keys():
        return node
    node = clone(node)
    for n in walk(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return node


def names_in(node):
    """Every name in `node`, read or assigned (nested functions included)."""
    return {n.id for n in walk(node) if type(n) is gast.Name}


def store_counts(node):
    """How often each name is assigned in `node`, nested functions included (a list of
    statements or a node)."""
    return collections.Counter(
        n.id for part in (node if isinstance(node, list) else [node]) for n in walk(part)
        if type(n) is gast.Name and type(n.ctx) is gast.Store)


def read_counts(node):
    """How often each name is read in `node`, nested functions included (a list of
    statements or a node); `x += e` reads `x`."""
    read = []
    add = read.append
    for part in node if isinstance(node, list) else [node]:
        for n in walk(part):
            kind = type(n)
            if kind is gast.Name:
                if type(n.ctx) is gast.Load:
                    add(n.id)
            elif kind is gast.AugAssign and type(n.target) is gast.Name:
                add(n.target.id)
    return collections.Counter(read)


def _names(node, context):
    """The names in `node` used in `context`."""
    found = set()
    todo = [node]
    append = todo.append
    for node in todo:
        if type(node) is gast.Name and type(node.ctx) is context:
            found.add(node.id)
        fields = node.__dict__
        for name in node._fields:
            value = fields.get(name)
            if type(value) is list:
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
            elif isinstance(value, _AST):
                append(value)
    return found


def single_target(stmt):
    """The name `stmt` assigns when it is `name = value`, else None."""
    if isinstance(stmt, gast.Assign) and is_name(stmt.targets[0]):
        return stmt.targets[0].id
    return None


_COPIED = (gast.AST, list)


def is_constant(node, value):
    """Whether `node` is the constant `value` (of its type: `True` is not `1`)."""
    return isinstance(node, gast.Constant) and type(node.value) is type(value) and (
        node.value == value)


def is_name(node, id=None):
    """Whether `node` is a Name (with id `id`, when given)."""
    return isinstance(node, gast.Name) and (id is None or node.id == id)


def dotted_path(node):
    """"a.b.c" for an attribute chain rooted at a Name, else None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def to_ast(node):
    """Convert a gast tree to a standard-library ast tree (new nodes; `node` unchanged).

    The same conversion as `gast.gast_to_ast`, several times faster: each node
    becomes the ast class of the same name with the fields that class has and
    the source positions (set in its `__dict__`, where ast's own constructor
    would put them), and nodes without fields (contexts, operators) become
    shared instances, as in trees from `ast.parse`. `arguments` and `except`
    clauses, whose parts change type, are converted by gast.
    """
    cls = type(node)
    fields = node.__dict__
    if not fields and cls in _SHARED_AST:
        return _SHARED_AST[cls]
    if cls is gast.Constant and _is_negative(fields["value"]):
        return _negated(to_ast(replaced(node, value=-fields["value"])))
    found = _AST_CLASSES.get(cls)
    if found is None:
        return _NegativeConstants().visit(gast.gast_to_ast(node))
    ast_class, names = found
    converted = {}
    for name in names:
        value = fields.get(name, _ABSENT)
        if type(value) is list:
            value = [to_ast(item) if isinstance(item, gast.AST) else item for item in value]
        elif isinstance(value, gast.AST):
            value = to_ast(value)
        elif value is _ABSENT:
            continue
        converted[name] = value
    new = _NEW(ast_class)
    new.__dict__ = converted
    return new


def _is_negative(value):
    """Whether `value` is a real number with its sign bit set (`-0.0` and `-inf` too)."""
    return (type(value) in (int, float) and math.copysign(1.0, value) < 0
            and not math.isnan(value))


def _negated(operand):
    """The ast of `-operand`. A negative number is printed this way, so that
    `ast.unparse` parenthesises it where precedence needs it: `(-0.5) ** 2`, not
    `-0.5 ** 2`, which is `-(0.5 ** 2)`."""
    new = _NEW(ast.UnaryOp)
    new.__dict__ = {"op": ast.USub(), "operand": operand}
    return ast.copy_location(new, operand)


class _NegativeConstants(ast.NodeTransformer):
    """Negative numbers as `-number` in ast trees that gast converted (see `_negated`)."""

    def visit_Constant(self, node):
        if _is_negative(node.value):
            return _negated(ast.copy_location(ast.Constant(-node.value), node))
        return node


def from_ast(node):
    """Convert a standard-library ast tree to gast (new nodes; `node` unchanged).

    The same conversion as `gast.ast_to_gast`, faster, the other way round from
    `to_ast`: each node becomes the gast class of the same name with the node's
    fields (and an empty `type_params` where gast has one and ast does not);
    parameters (`arg`) become `Name`s in the `Param` context. Classes gast
    converts by a rule of its own (`except` clauses, type parameters) are
    converted by gast.
    """
    cls = type(node)
    shared = _SHARED_GAST.get(cls)
    if shared is not None:
        return shared
    fields = node.__dict__
    if cls is ast.Name:
        new = name(fields["id"], from_ast(fields["ctx"]))
    elif cls is ast.arg:
        new = gast.Name(fields["arg"], gast.Param(), _field_from_ast(fields["annotation"]),
                        fields.get("type_comment"))
    elif cls in _GAST_CLASSES:
        gast_class, missing = _GAST_CLASSES[cls]
        new = gast_class(**{f: _field_from_ast(fields[f]) for f in cls._fields if f in fields})
        for field in missing:
            setattr(new, field, [])
    else:
        return gast.ast_to_gast(node)
    return _positioned(new, fields)


def _field_from_ast(value):
    return _converted(value, from_ast, ast.AST)


def _converted(value, convert, node_class):
    """A field's value with its nodes (instances of `node_class`) converted."""
    if type(value) is list:
        return [convert(item) if isinstance(item, node_class) else item for item in value]
    return convert(value) if isinstance(value, node_class) else value


def _positioned(new, fields):
    """`new` with the source positions among `fields` (a converted node's)."""
    for attribute in _POSITION:
        if attribute in fields:
            setattr(new, attribute, fields[attribute])
    return new


def _gast_classes():
    """For each ast class converted field by field: its gast class and the list
    fields only the gast class has."""
    own_rules = {name.removeprefix("visit_") for name in vars(gast.ast3.Ast3ToGAst)
                 if name.startswith("visit_")} - {"FunctionDef", "AsyncFunctionDef", "ClassDef"}
    table = {}
    for ast_class, gast_class in _same_names():
        if ast_class.__name__ not in own_rules | {"Name", "arg"}:
            table[ast_class] = (gast_class, [f for f in gast_class._fields
                                             if f == "type_params" and f not in ast_class._fields])
    return table


def _same_names():
    """The pairs of ast and gast node classes of the same name."""
    for gast_class in vars(gast).values():
        ast_class = getattr(ast, getattr(gast_class, "__name__", ""), None)
        if (isinstance(gast_class, type) and issubclass(gast_class, gast.AST)
                and gast_class is not gast.AST
                and isinstance(ast_class, type) and issubclass(ast_class, ast.AST)):
            yield ast_class, gast_class


def _ast_classes():
    """For each gast class converted field by field: its ast class and the fields they share."""
    table = {}
    for ast_class, gast_class in _same_names():
        if gast_class not in (gast.arguments, gast.ExceptHandler):
            table[gast_class] = (ast_class, [f for f in ast_class._fields
                                             if f in gast_class._fields] + list(_POSITION))
    return table


_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_AST_CLASSES = _ast_classes()
_SHARED_AST = {gast_class: ast_class() for gast_class, (ast_class, _) in _AST_CLASSES.items()
               if not ast_class._fields and not ast_class._attributes}
_GAST_CLASSES = _gast_classes()
_SHARED_GAST = {ast_class: gast_class() for ast_class, (gast_class, _) in _GAST_CLASSES.items()
                if not gast_class._fields and not ast_class._attributes}
LOAD, STORE, PARAM = _SHARED_GAST[ast.Load], _SHARED_GAST[ast.Store], gast.Param()
_NEW = gast.AST.__new__
_ABSENT = object()


def unparse(node):
    """The source text of a gast node (a statement or an expression)."""
    tree = to_ast(node)
    for part in ast.walk(tree):
        if isinstance(part, ast.stmt) and not hasattr(part, "lineno"):
            part.lineno = 0  # ast.unparse reads it
    return ast.unparse(tree)
