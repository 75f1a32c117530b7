"""Stage 3: the reverse rules, from an ANF function to its forward and pullback.

`forward` is φ: it walks the function forwards, emits the primal and records one
operation per statement it differentiates (`ops`); `backward` is ρ: it reads them
in reverse order and writes the pullback. What φ emits for each statement is
decided by the abstract interpreter (`analysis.interpret`), and `templates`
inlines a primitive's template at its call.
"""

from .forward import Result, reverse

__all__ = ["Result", "reverse"]
