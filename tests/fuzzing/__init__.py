"""A differential fuzzer for pullback: random programs, derivatives against finite differences.

`programs()` is a hypothesis strategy of random Python programs: a module defining
`f(x, ...)` (and, when it needs them, helper functions, factories and record classes
at module level) and `arguments()`, which returns the floats, arrays, lists, dicts
and records `f` is called with. The programs mix every construct docs/supported.md
lists: closures called before, in and after loops and branches, calling one another
(also one defined later), in containers, passed to helpers and returned from factories;
comprehensions whose variables shadow outer names; recursion; loops with `break`,
`continue` and `else`; early returns; updates in place through aliases and lists of
arrays; negative literals everywhere; NumPy and `math` functions, reductions, products,
indexing; `pullback.grad` inside `f`. Every choice lists its simplest option first, so
hypothesis shrinks a failure to a small program. Each program runs as plain Python
(else hypothesis discards it); what it defines but does not use is added to its result.

`check_program(program)` differentiates `f` with pullback up to an order and sorts
the result into an `Outcome`: `ok`; `wrong` (a value, a gradient, a gradient's type,
or an argument changed by pullback); `crash` (pullback raised anything but
`TransformError`, or ran out of time); `refused` (a `TransformError`, with its message
normalised so that refusals group); `skipped` (finite differences at several steps
disagree, or show a kink: `f` is not smooth there). Order k is checked by finite
differences of pullback's order k - 1 (order 1 by those of the plain `f`), each
derivative taken as a vjp with a random cotangent (a gradient for a scalar `f`).

Long runs, from the repository root:

    python tests/fuzz.py --n 10000 --seed 0 --out DIR [--orders 2] [--jobs 2]

checks `--n` distinct programs (the same ones for the same seed and jobs) in a child
process replaced every 200 programs (pullback keeps every function it transforms),
prints the count of each outcome and the commonest refusals, and writes each wrong or
crashing program into DIR as a standalone reproducer, which prints pullback's
derivatives when run; the first failures of each signature are shrunk (`--shrink`):
hypothesis generates the programs of the seed again up to that one and shrinks it, then
statements are deleted and expressions replaced by their parts while it fails the same
way. `python tests/fuzz.py --check FILE` checks a reproducer again.
tests/test_fuzz.py runs a fixed seed and budget in the test suite.

The modules, in the order a program meets them: `programs` (the generator),
`running` (the program run as plain Python, and as pullback's subject), `values`
(flattening and comparing what it returns), `checking` (derivatives against finite
differences), `reducing` (reproducers, and smaller programs failing alike), `drivers`
(hypothesis: the CI test's gate, a seed's programs, shrinking) and `command`.
"""
