"""Loops as functions: the drivers that run a loop body, forwards and backwards.

ANF turns a loop into a function for its body and a call of `iterate`::

    for x in xs:                  def loop_body(x, total):
        total = total + x   ->        total_1 = total + x
                                      return 'next', total_1
                                  loop = iterate(loop_body, xs, total)
                                  loop_flag, total_2 = loop

The body takes an item and the loop's state (the variables the loop carries
from one iteration to the next or out of the loop) and returns a flag and the
new state. The flag says how the iteration ended: 'next', 'break', 'return'
(the value returned is part of the state) or, for a `while` loop, 'done' when
its condition is false. A `while` loop iterates over `None`: forever, until
its body says otherwise.

The reverse pass transforms the body once into a forward function that also
returns the iteration's pullback, and calls `iterate_fwd` with it. Each
iteration runs in its own call, so its pullback closes over that iteration's
values however often the loop rebinds its variables. The pullbacks are kept
in a trail of pairs `(pullback, earlier trail)`: memory linear in the number
of iterations, no recursion, and nothing consumed when the loop's pullback
runs, which may happen any number of times.

`iterate_fwd` is written in the Python pullback transforms, so a loop's
derivative can be differentiated again: its own `for` and `while` loops
become bodies and calls of `iterate` in turn.
"""

import itertools

from . import tangents
from .calls import zeros
from .cotangents import ZERO, add
from .iteration import item_cotangents, like_items

NEXT = "next"
DONE = "done"


def iterate(body, items, *state):
    """Run a loop: `body(item, *state)` for each of `items` until it stops.

    Args:
      body: the loop body, returning `(flag, *state)`.
      items: what the loop iterates over; None for a `while` loop.
      state: the values of the loop's state before the loop.

    Returns:
      `(flag, *state)`: 'done' when the items ran out (or the `while`
      condition was false), else the flag of the iteration that stopped the loop.
    """
    flag = NEXT
    for item in forever() if items is None else items:
        flag, *state = body(item, *state)
        if flag != NEXT:
            break
    return (finished(flag), *state)


def iterate_fwd(body, items, *state):
    """`iterate` for a forward `body`, returning `(result, pullback)`.

    `body(item, *state)` returns `((flag, *state), pullback)`. The loop's
    pullback maps the cotangent of the result to `(ZERO, the cotangent of
    body (its environment), of items, of each value of the state)`.
    """
    trail = None
    flag = NEXT
    values = state
    for item in forever() if items is None else items:
        out, pullback = body(item, *values)
        trail = (pullback, trail)
        flag = out[0]
        values = out[1:]
        if flag != NEXT:
            break
    count = len(values)

    def iterate_pullback(dresult):
        dvalues = zeros(count) if dresult is ZERO else dresult[1:]
        denv = ZERO
        ditems = None
        node = trail
        while node is not None:
            iteration_pullback, node = node
            cotangents = iteration_pullback((ZERO, *dvalues))
            denv = add(denv, cotangents[0])
            ditems = (cotangents[1], ditems)
            dvalues = cotangents[2:]
        return (ZERO, denv, reiterate(ditems, items), *dvalues)

    return (finished(flag), *values), iterate_pullback


def iterate_jvp(body, dots, items, *state):
    """`iterate` in forward mode: `body(tangents, item, *state)`, a loop body's derivative
    (see `compiler.tangent`), returns `((flag, *state), its tangent)`; `dots` holds the
    tangents of `items` and of the state's initial values. Returns the loop's result
    and its tangent."""
    flag = NEXT
    values, tangents_ = state, dots[1:]
    for item, item_dot in zip(forever() if items is None else items,
                              tangents.item_tangents(dots[0], items)):
        out, out_dot = body((ZERO, item_dot, *tangents_), item, *values)
        flag = out[0]
        values = out[1:]
        tangents_ = tangents.unpacked(out_dot, len(out), out)[1:]
        if flag != NEXT:
            break
    return (finished(flag), *values), (ZERO, *tangents_)


def forever():
    """The items of a `while` loop: None, without end."""
    return itertools.repeat(None)


def finished(flag):
    """The flag a loop ends with: 'done' when its last iteration did not stop it."""
    return DONE if flag == NEXT else flag


def reiterate(trail, items):
    """The cotangent of `items` from those of the items a loop took from it, held
    in `trail` as pairs `(first, rest)` (see `iteration.like_items`)."""
    return like_items(_unwind(trail), items)


def unreiterate(h, trail, items):
    """The transpose of `reiterate`: the items of `h` in a trail shaped like `trail`."""
    cts = item_cotangents(h, _unwind(trail), items)
    if cts is ZERO:
        return ZERO
    result = None
    for ct in reversed(cts):
        result = (ct, result)
    return result


def _unwind(trail):
    """The items of a trail; a cotangent of one may end in `ZERO`, zero for the rest."""
    items = []
    while trail is not None and trail is not ZERO:
        first, trail = trail
        items.append(first)
    return items
