"""The comparison operators of a leaf predicate, with their negation and mirror."""

from __future__ import annotations

import enum

__all__ = ["Op"]


class Op(enum.Enum):
    """A binary comparison operator between a column and a literal."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="

    def negate(self) -> Op:
        """The operator of ``NOT (x op v)`` under SQL three-valued logic."""
        return _NEGATED[self]

    def mirror(self) -> Op:
        """The operator of ``v op x`` rewritten as ``x op' v``."""
        return _MIRRORED[self]


_NEGATED = {
    Op.EQ: Op.NE,
    Op.NE: Op.EQ,
    Op.LT: Op.GE,
    Op.GE: Op.LT,
    Op.LE: Op.GT,
    Op.GT: Op.LE,
}
_MIRRORED = {
    Op.EQ: Op.EQ,
    Op.NE: Op.NE,
    Op.LT: Op.GT,
    Op.GT: Op.LT,
    Op.LE: Op.GE,
    Op.GE: Op.LE,
}
