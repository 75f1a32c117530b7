"""Stage 4 (optimize): constant factors of a chain of products are multiplied once.

The rules of `0.5 * (np.tanh(0.5 * z) + 1.0)` give, one statement each::

    dplus = dout * 0.5
    dv_0_5_times_z = dplus * (1.0 - t * t)
    dz = dv_0_5_times_z * 0.5

two multiplications of an array by a constant where a person writes one. A
temporary that is a product with a power of two, read once, as a factor of a
later product of the same block (or of the product a later statement adds,
`d = d + e * 0.5`), is put into that product, and the constants gather at its
end::

    dz = dout * (1.0 - t * t) * 0.25

Scaling by a power of two is exact in floating point, so moving it, or folding
it into another constant, gives the same numbers as before.
"""

import collections
import math

from ..syntax import nodes


def gather_scales(statements):
    """`statements` (a pullback's body, with the blocks nested in it) with the powers
    of two of chains of products gathered in the last product."""
    every = [inner for stmt in statements for inner in nodes.statements(stmt)]
    reads = nodes.read_counts(statements)
    stores = collections.Counter(nodes.single_target(stmt) for stmt in every)
    factors = collections.Counter(
        f.id for stmt in every if nodes.single_target(stmt) is not None
        for f in (_product(_site(stmt.value)) or ((), 1))[0] if nodes.is_name(f))
    waiting = {name for name, count in factors.items()
               if count == 1 and reads[name] == 1 and stores[name] == 1}
    return _Block(waiting).rewrite(statements)


class _Block:
    def __init__(self, waiting):
        self.waiting = waiting  # names read once, as a factor of a product
        self.pending = {}  # name -> (factors, constant, names read, line)

    def rewrite(self, statements):
        out = []
        for stmt in statements:
            target = nodes.single_target(stmt)
            site = _site(stmt.value) if target is not None else None
            product = _product(site)
            merges = product is not None and any(
                nodes.is_name(f) and f.id in self.pending for f in product[0])
            if merges:
                product = self.merged(product)
            self.flush(out, stmt)
            if isinstance(stmt, nodes.If):
                stmt = nodes.replaced(stmt, body=_Block(self.waiting).rewrite(stmt.body),
                                      orelse=_Block(self.waiting).rewrite(stmt.orelse))
            if product is not None and site is stmt.value and target in self.waiting and (
                    product[1] != 1):
                names = set().union(*(nodes.reads(f) for f in product[0]))
                self.pending[target] = (*product, names, nodes.lineno_of(stmt))
            elif merges:
                value = _multiplied(*product)
                if site is not stmt.value:
                    value = nodes.binop(stmt.value.left, stmt.value.op, value)
                out.append(nodes.assign(target, value, nodes.lineno_of(stmt)))
            else:
                out.append(stmt)
        self.flush(out)
        return out

    def merged(self, product):
        """The factors and constant of a product with the pending products among its
        factors put in."""
        factors, constant = [], product[1]
        for factor in product[0]:
            entry = self.pending.pop(factor.id, None) if nodes.is_name(factor) else None
            if entry is None:
                factors.append(factor)
            else:
                factors.extend(entry[0])
                constant *= entry[1]
        return factors, constant

    def flush(self, out, stmt=None):
        """Write the pending products that `stmt` reads, or that must be made before it
        changes a name they read (all of them without `stmt`), in the order they were
        made."""
        if not self.pending:
            return
        read, stored = (nodes.reads(stmt), nodes.stores(stmt)) if stmt is not None else ((), ())
        for name in [n for n, entry in self.pending.items()
                     if stmt is None or n in read or entry[2] & stored]:
            factors, constant, _, lineno = self.pending.pop(name)
            out.append(nodes.assign(name, _multiplied(factors, constant), lineno))


def _site(value):
    """The product a statement's value is, or adds or subtracts (`d + e * 0.5`)."""
    if isinstance(value, nodes.BinOp) and isinstance(value.op, (nodes.Add, nodes.Sub)):
        return value.right
    return value


def _product(value):
    """`(factors, constant)` of a product of factors and numeric constants that are
    powers of two (which may move and fold exactly), else None."""
    if not (isinstance(value, nodes.BinOp) and isinstance(value.op, nodes.Mult)):
        return None
    factors, constants = [], []
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, nodes.BinOp) and isinstance(node.op, nodes.Mult):
            pending += [node.right, node.left]
        elif isinstance(node, nodes.Constant) and type(node.value) in (int, float):
            constants.append(node.value)
        else:
            factors.append(node)
    if not factors or not all(_power_of_two(c) for c in constants):
        return None
    return factors, math.prod(constants)


def _power_of_two(x):
    return x != 0 and math.isfinite(x) and abs(math.frexp(x)[0]) == 0.5


def _multiplied(factors, constant):
    value = factors[0]
    for factor in factors[1:]:
        value = nodes.binop(value, nodes.Mult(), factor)
    if constant != 1:
        value = nodes.binop(value, nodes.Mult(), nodes.constant(constant))
    return value
