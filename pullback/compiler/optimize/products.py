"""Rewrite rules on the products of a pullback's IR.

- `gather_scales`: the rules of `0.5 * (np.tanh(0.5 * z) + 1.0)` give a chain of
  products each scaled by 0.5, two multiplications of an array by a constant where
  a person writes one. A factor that names a product with powers of two, read only
  there, is put in the product, and the constants gather at its end
  (`dz = dout * (1.0 - t * t) * 0.25`). Scaling by a power of two is exact in
  floating point, so moving it, or folding it into another constant, gives the
  same numbers.
- `unreduced_factor`: the rules of `np.log(np.sum(np.exp(v)))` give
  `de = unreduce(ds, e)` then `dv = de * e`. `unreduce` broadcasts the scalar `ds`
  to `e`'s shape only for the product to read it; when another factor has that
  shape, the scalar is the factor (`dv = ds * e`). Broadcasting multiplies the same
  numbers. This holds too for reductions along the first axis and for those that
  keep their axes: their cotangents line up with `e`'s axes from the last, as NumPy
  lines up operands.
"""

import math

from ...runtime.cotangents import extremum_share, unreduce
from ..analysis import kinds
from ..syntax import nodes


def gather_scales(node, context):
    """`a * t` with `t = b * 0.5` read only here -> `a * b * 0.5` (powers of two)."""
    product = _product(node)
    if product is None:
        return None
    factors, constant, merged = [], product[1], False
    for factor in product[0]:
        inner = _product(context.read_once(factor))
        if inner is not None and inner[1] != 1:
            factors += nodes.clone(inner[0])
            constant *= inner[1]
            merged = True
        else:
            factors.append(factor)
    return _multiplied(factors, constant) if merged else None


def unreduced_factor(node, context):
    """`unreduce(g, x) * y` -> `g * y`, where `y` has the shape of array `x`; the
    broadcast may be the factor or a name bound to it read only there."""
    if not (isinstance(node, nodes.BinOp) and isinstance(node.op, nodes.Mult)):
        return None
    factors = _factors(node)
    for factor in factors:
        call = factor if context.calls(factor, unreduce) else context.read_once(factor)
        reduced = _reduced(call, context)
        if reduced is not None and any(_shaped_like(other, reduced[1], context)
                                       for other in factors if other is not factor):
            return _replaced(node, factor, nodes.clone(reduced[0]))
    return None


def _reduced(call, context):
    """`(g, x)` when `call` is `unreduce(g, x, ...)` of an array `x` whose cotangent
    `g` broadcasts to `x`'s shape as NumPy broadcasts operands: a whole reduction, one
    along the first axis, or one keeping its axes; else None."""
    if not context.calls(call, unreduce) or not 2 <= len(call.args) <= 4:
        return None
    g, x, *options = call.args
    if not _aligned(options) or not nodes.is_name(x):
        return None
    kind = context.kinds.get(x.id)
    return (g, x) if isinstance(kind, kinds.Kind) and kind.shape == "array" else None


def _shaped_like(factor, x, context):
    """Whether `factor` has the shape of array `x`: it is `x`, an array the reverse
    rules know has `x`'s shape (`np.exp(x)`, `x ** 2`), or the share of each of
    `x`'s items in its max or min (along any axes)."""
    if nodes.is_name(factor):
        token = context.shapes.get(factor.id)
        return factor.id == x.id or token is not None and token != "scalar" and (
            token == context.shapes.get(x.id))
    return (context.calls(factor, extremum_share) and bool(factor.args)
            and nodes.is_name(factor.args[0], x.id))


def _aligned(options):
    """Whether a reduction's cotangent, given `unreduce`'s `axis` and `keepdims`
    arguments (the defaults left out), lines up with the array's axes from the last:
    the whole array reduced, or its first axis, or axes kept."""
    if not options:
        return True
    if len(options) == 2 and nodes.is_constant(options[1], True):
        return True
    return (nodes.is_constant(options[0], None) or nodes.is_constant(options[0], 0)) and (
        len(options) == 1 or nodes.is_constant(options[1], False))


def _factors(product):
    """The factors of a chain of products (`a * 2 * b`: `a`, `2`, `b`)."""
    if isinstance(product, nodes.BinOp) and isinstance(product.op, nodes.Mult):
        return _factors(product.left) + _factors(product.right)
    return [product]


def _replaced(product, factor, new):
    """The chain of products `product` with its factor `factor` (that node) `new`."""
    if product is factor:
        return new
    if not (isinstance(product, nodes.BinOp) and isinstance(product.op, nodes.Mult)):
        return product
    return nodes.replaced(product, left=_replaced(product.left, factor, new),
                          right=_replaced(product.right, factor, new))


def _product(value):
    """`(factors, constant)` of a product of factors and numeric constants that are
    powers of two (which may move and fold exactly), else None."""
    if not (isinstance(value, nodes.BinOp) and isinstance(value.op, nodes.Mult)):
        return None
    factors = [f for f in _factors(value) if not _is_number(f)]
    constants = [f.value for f in _factors(value) if _is_number(f)]
    if not factors or not all(_power_of_two(c) for c in constants):
        return None
    return factors, math.prod(constants)


def _is_number(node):
    return isinstance(node, nodes.Constant) and type(node.value) in (int, float)


def _power_of_two(x):
    return x != 0 and math.isfinite(x) and abs(math.frexp(x)[0]) == 0.5


def _multiplied(factors, constant):
    value = factors[0]
    for factor in factors[1:]:
        value = nodes.binop(value, nodes.Mult(), factor)
    if constant != 1:
        value = nodes.binop(value, nodes.Mult(), nodes.constant(constant))
    return value
