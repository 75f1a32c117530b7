"""Library functions and methods that update an argument in place.

A call whose value is dropped runs as it is when it belongs to a library
(`print`, a plot, a log): it has no effect on the derivative, unless it writes
into a value the function reads later, which pullback would not follow. These
are the calls known to do that: a dropped call of one with a differentiable
argument (or object) is refused, as is one passing `out=`.
"""

import bisect
import collections
import heapq
import operator
import random

import numpy as np

from pullback.rules.registry import declare, updating_methods

declare(np.copyto, np.put, np.putmask, np.place, np.fill_diagonal, np.put_along_axis,
        np.random.shuffle, random.shuffle, heapq.heappush, heapq.heappushpop,
        heapq.heapreplace, heapq.heapify, bisect.insort, bisect.insort_left, bisect.insort_right,
        np.ndarray.sort, np.ndarray.fill, np.ndarray.put, np.ndarray.resize,
        np.ndarray.partition, np.ndarray.setfield, list.sort, list.reverse, list.clear,
        list.remove, list.insert, dict.update, dict.clear, dict.setdefault, dict.popitem,
        collections.deque.appendleft, collections.deque.extendleft, collections.deque.rotate,
        # called as functions (`list.append(xs, v)`): ANF follows `xs.append(v)` alone
        list.append, list.extend, list.pop, dict.pop, operator.setitem, operator.delitem,
        operator.iadd, operator.iconcat, operator.imul, updates=True)

updating_methods(
    "sort", "reverse", "clear", "remove", "insert", "update", "setdefault", "popitem", "add",
    "discard", "difference_update", "intersection_update", "symmetric_difference_update",
    "appendleft", "extendleft", "rotate", "popleft", "fill", "put", "itemset", "resize",
    "partition", "setfield", "at", "__setitem__", "__delitem__", "__iadd__", "__imul__",
    "__isub__", "__itruediv__")
