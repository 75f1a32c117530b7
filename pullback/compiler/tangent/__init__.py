"""Stage 3, forward mode: the tangent rules, from an ANF function to its derivative
in forward mode (`statements`, τ), each primitive's tangent rule read from its spec
(`rules`)."""

from .statements import tangent

__all__ = ["tangent"]
