"""Array cotangents kept as sums of cheap parts until something reads them.

The cotangent of the matrix in `x @ w` for a vector `x` is the outer product of
`x` and the result's cotangent; a recursion or a loop that multiplies by `w` at
every step sums one such product per step. Made one by one, each product is an
array of `w`'s size and each sum another. A person writing the adjoint by hand
would collect the vectors and form one matrix product at the end; the cotangent
of a row read from a table (`embedding[word]`) would likewise be a list of rows
added once, not a table of zeros per read.

`OuterSum` and `RowSum` are that bookkeeping done by the values themselves:
`matmul_left`/`matmul_right` and `unindex` return them where they are much
smaller than the dense array, adding two of the same kind joins their parts
(in constant time, the parts shared, never copied or changed), and anything else
(an operator, a NumPy function, an attribute, indexing, the user) gets the dense
array, made in one product or one scatter. A sum whose parts grow past half the
dense size and past `KEPT` numbers is made dense, so the memory its parts hold
stays within the larger of half the dense cotangent's and 32 MiB. The values are
immutable, like the arrays they stand for would be to their readers: every dense
array they make is new.
"""

import math
import operator

import numpy as np

# A cotangent is deferred when it has `LARGE` numbers or more and its parts hold at
# most 1/SPARSE of them; a sum whose parts pass 2/SPARSE of them and `KEPT` numbers is
# made dense. Below `LARGE` numbers, making the array costs less than keeping its
# parts; from it, the parts pay where many are joined in one product (a recursion's
# terms, `cotangents._long_column`: a TreeLSTM's 32 x 32 gate weights, one product per
# node). Up to `KEPT` numbers (32 MiB of float64), a loop's products are kept to the
# end and made in one product of the stacked factors, which BLAS does faster than one
# small product and one sum per step (lstm medium: 132 → 119 ms a gradient).
LARGE = 1024
SPARSE = 4
KEPT = 1 << 22


class Deferred:
    """A cotangent array of `shape` and `dtype`, the sum of `parts` (a leaf's parts
    are its factors; a sum's, the two sums joined), `rows` being the number of rows
    its leaves hold."""

    __slots__ = ("shape", "dtype", "parts", "rows")
    __array_priority__ = 20
    __hash__ = None

    def __init__(self, shape, dtype, parts, rows):
        self.shape, self.dtype, self.parts, self.rows = shape, dtype, parts, rows

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape}, rows={self.rows})"

    def leaves(self):
        """The factors of every leaf of the sum, without recursion (a sum may be deep)."""
        pending, found = [self], []
        while pending:
            node = pending.pop()
            if isinstance(node.parts[0], Deferred):
                pending.extend(node.parts)
            else:
                found.append(node.parts)
        return found

    def dense(self):
        """The array this sum stands for, newly made."""
        raise NotImplementedError

    def row_cost(self):
        """How many numbers one row of a leaf holds."""
        raise NotImplementedError

    def join(self, other):
        """`self + other` for two sums of the same kind and shape: a sum holding both,
        or the dense array when the parts would pass half the dense size and `KEPT`."""
        rows = self.rows + other.rows
        dtype = self.dtype
        if other.dtype is not dtype:
            dtype = np.promote_types(dtype, other.dtype)
        return self._kept(type(self)(self.shape, dtype, (self, other), rows))

    def join_all(self, sums):
        """The sum of `sums`, deferred sums of `self`'s kind and shape, as one sum holding
        them all (`join` of each with the next makes one sum per term)."""
        dtypes = {term.dtype for term in sums}
        dtype = dtypes.pop() if len(dtypes) == 1 else np.result_type(*dtypes)
        rows = sum([term.rows for term in sums])
        return self._kept(type(self)(self.shape, dtype, tuple(sums), rows))

    def _kept(self, joined):
        """`joined`, or the dense array when its parts pass half the dense size and `KEPT`."""
        parts = joined.rows * self.row_cost()
        return joined.dense() if parts > KEPT and parts * SPARSE > 2 * self.size else joined

    def __array__(self, dtype=None, copy=None):
        dense = self.dense()
        return dense if dtype is None else dense.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(_foreign(x) for x in inputs + kwargs.get("out", ())):
            return NotImplemented
        if ufunc is np.add and method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs
            if type(a) is type(b) and a.shape == b.shape:
                return a.join(b)
        if "out" in kwargs:
            kwargs["out"] = concrete(kwargs["out"])
        return getattr(ufunc, method)(*concrete(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        attribute = _ATTRIBUTES.get(func)
        if attribute is not None and len(args) == 1 and not kwargs:
            return getattr(args[0], attribute)
        return func(*concrete(args), **concrete(kwargs))

    def __add__(self, other):
        if type(other) is type(self) and other.shape == self.shape:
            return self.join(other)
        return NotImplemented if _foreign(other) else self.dense() + concrete(other)

    def __radd__(self, other):
        return NotImplemented if _foreign(other) else concrete(other) + self.dense()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dense(), name)

    def __getitem__(self, index):
        return self.dense()[index]

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        return iter(self.dense())

    def __bool__(self):
        return bool(self.dense())

    def __neg__(self):
        return -self.dense()

    def __pos__(self):
        return self.dense()


_ATTRIBUTES = {np.shape: "shape", np.ndim: "ndim", np.size: "size"}


def _foreign(x):
    """Whether `x` brings NumPy overrides of its own (the symbolic zero does), which
    then decide what an operation with a deferred sum gives."""
    return hasattr(x, "__array_ufunc__") and not isinstance(x, (np.ndarray, np.generic,
                                                                 Deferred))


def _dense_operator(op, reflected):
    def method(self, other):
        if _foreign(other):
            return NotImplemented
        if reflected:
            return op(concrete(other), self.dense())
        return op(self.dense(), concrete(other))
    return method


for _name, _op in [("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
                   ("matmul", operator.matmul), ("pow", operator.pow)]:
    setattr(Deferred, f"__{_name}__", _dense_operator(_op, False))
    setattr(Deferred, f"__r{_name}__", _dense_operator(_op, True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Deferred, f"__{_name}__", _dense_operator(getattr(operator, _name), False))


class OuterSum(Deferred):
    """The sum of `u.T @ v` over its leaves `(u, v)`, `u` of `rows` × m and `v` of
    `rows` × n: the cotangent of a matrix multiplied by few vectors."""

    __slots__ = ()

    def dense(self):
        factors = self.leaves()
        if len(factors) == 1:
            u, v = factors[0]
        else:
            u = np.concatenate([u for u, _ in factors])
            v = np.concatenate([v for _, v in factors])
        return np.dot(u.T, v)

    def row_cost(self):
        return self.shape[0] + self.shape[1]


class RowSum(Deferred):
    """Zeros of `shape` with the rows of its leaves `(index, values)` added at
    `index` (an int, or a vector of row numbers): the cotangent of a table whose
    rows were read."""

    __slots__ = ()

    def dense(self):
        out = np.zeros(self.shape, self.dtype)
        leaves = self.leaves()
        if len(leaves) == 1 and type(leaves[0][0]) is not np.ndarray:
            out[leaves[0][0]] = leaves[0][1]
            return out
        index = np.concatenate([np.reshape(i, -1) for i, _ in leaves])
        values = np.concatenate([np.reshape(v, (-1,) + self.shape[1:]) for _, v in leaves])
        scatter_add(out, index, values)
        return out

    def row_cost(self):
        return math.prod(self.shape[1:]) + 1


def _deferrable(parts, size):
    return size >= LARGE and parts * SPARSE <= size


def outer_sum(u, v):
    """`u.T @ v` for 2-D arrays `u` and `v`, deferred when the product is large and
    their rows hold few of its numbers (see `LARGE`), else the product itself (`ZERO`
    for a symbolic zero: `np.dot` absorbs it)."""
    if type(u) is np.ndarray and type(v) is np.ndarray:  # inlined: a call per weight per step
        rows, m = u.shape
        n = v.shape[1]
        size = m * n
        u_type, v_type = u.dtype, v.dtype
        if (size >= LARGE and rows * (m + n) * SPARSE <= size and u_type.kind == "f"
                and v_type.kind == "f"):
            return OuterSum((m, n), u_type if u_type is v_type else np.promote_types(
                u_type, v_type), (u, v), rows)
    return np.dot(u.T, v)


def row_sum(g, x, index):
    """The cotangent of array `x` from the cotangent `g` of `x[index]`, deferred when
    `index` picks rows (an int, or a vector of row numbers) of a large table that
    hold few of its numbers (see `LARGE`); None otherwise."""
    if x.size < LARGE:
        return None
    if type(index) is np.ndarray:
        if index.ndim != 1 or index.dtype.kind not in "iu":
            return None
        count, index_shape = index.size, index.shape
    elif is_int(index):
        count, index_shape = 1, ()
    else:
        return None
    row_shape = x.shape[1:]
    if (x.ndim < 2 or not (_is_real(g) and _is_real(x)) or g.shape != index_shape + row_shape
            or not _deferrable(count * (math.prod(row_shape) + 1), x.size)):
        return None
    dtype = x.dtype if g.dtype is x.dtype else np.promote_types(x.dtype, g.dtype)
    return RowSum(x.shape, dtype, (index, g), count)


def is_int(index):
    """Whether `index` is one int (Python's or NumPy's, not a bool)."""
    return type(index) is int or isinstance(index, np.integer)


def scatter_add(out, index, g):
    """`np.add.at(out, index, g)`, for gathered rows (`x[rows]`, `index` an array of row
    numbers of a float64 `out` of two axes or more) by `np.bincount`, which adds up many
    values three to four times faster: one count per column where the rows are narrow or
    `out` is large, one over the flattened array where wide rows fit in a small `out`.
    `np.add.at` keeps the cases it does as fast: a vector `out`, few values, or many more
    rows than values (a count per column reads every row)."""
    if not (type(index) is np.ndarray and index.dtype.kind in "iu" and index.size
            and out.dtype == np.float64 and out.ndim > 1):
        np.add.at(out, index, g)
        return
    rows = out.shape[0]
    width = out.size // rows
    if index.size * width < _FEW or rows > 3 * index.size:
        np.add.at(out, index, g)
        return
    if index.min() < 0:
        index = np.where(index < 0, index + rows, index)
    values = np.broadcast_to(g, index.shape + out.shape[1:]).reshape(index.size, width)
    index = index.ravel()
    if width > _NARROW and out.size <= _SMALL:
        flat = index.reshape(-1, 1) * width + np.arange(width)
        out += np.bincount(flat.ravel(), weights=values.ravel(), minlength=out.size).reshape(
            out.shape)
        return
    columns = out.reshape(rows, width)
    for j in range(width):
        columns[:, j] += np.bincount(index, weights=values[:, j], minlength=rows)


# `scatter_add`'s choices, measured on this project's machine: below `_FEW` values
# `np.add.at` costs less than any count; rows of more than `_NARROW` numbers are counted
# over the flattened array when `out` has at most `_SMALL` numbers (it stays in cache).
_FEW = 4096
_NARROW = 16
_SMALL = 16384


def _is_real(x):
    return type(x) is np.ndarray and x.dtype.kind == "f"


def concrete(value):
    """`value` with every deferred sum in it (in tuples, lists and dicts too) made dense."""
    if isinstance(value, Deferred):
        return value.dense()
    if type(value) in (tuple, list):
        return type(value)(concrete(v) for v in value)
    if type(value) is dict:
        return {k: concrete(v) for k, v in value.items()}
    return value
