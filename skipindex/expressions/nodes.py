"""Immutable predicate trees.

Two layers, as in pyiceberg:

* *Unbound* nodes name columns by string and carry typed SQL literals
  (:class:`Literal`). Parsers (SQL text, PySpark ``Column``) produce them.
* *Bound* nodes (``Bound*``) point at a :class:`BoundColumn` with the column's
  Arrow type, and carry literal values already cast to that column's domain
  (see :mod:`skipindex.expressions.binding`). Index kinds only ever see bound
  leaves, in negation normal form: no :class:`Not` survives
  :func:`~skipindex.expressions.rewrite.rewrite_not`.

``And``/``Or`` are n-ary so that a chain of 10,000 conditions is one flat node
instead of a 10,000-deep tree.

:class:`AlwaysFalse` means "no row can make this TRUE" and :class:`AlwaysTrue`
means "any row might make this TRUE". Neither is ever negated: negation is pushed
into the leaves before binding, so three-valued logic never has to be undone.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

import pyarrow as pa

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BoundColumn",
    "BoundComparison",
    "BoundIn",
    "BoundIsNull",
    "BoundLeaf",
    "BoundPredicate",
    "Comparison",
    "In",
    "IsNull",
    "Literal",
    "LiteralKind",
    "Not",
    "Op",
    "Or",
    "Predicate",
    "Unsupported",
]


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


class LiteralKind(enum.Enum):
    """The SQL type a literal was written as, before casting to a column."""

    INT = "int"
    DECIMAL = "decimal"  # exact: `2.5` in Spark SQL is DECIMAL(2,1)
    FLOAT = "float"  # approximate: `2.5e0`, `2.5D`, NaN, Infinity
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "timestamp"  # tz-aware datetime in UTC
    BOOLEAN = "boolean"
    NULL = "null"


LiteralValue = int | Decimal | float | str | bytes | date | datetime | bool | None


@dataclass(frozen=True)
class Literal:
    """A typed SQL literal as written in the predicate."""

    kind: LiteralKind
    value: LiteralValue

    def __str__(self) -> str:
        if self.kind is LiteralKind.NULL:
            return "NULL"
        if self.kind is LiteralKind.STRING:
            return "'" + str(self.value).replace("'", "''") + "'"
        if self.kind is LiteralKind.DATE:
            return f"DATE '{self.value!s}'"
        if self.kind is LiteralKind.TIMESTAMP:
            return f"TIMESTAMP '{self.value!s}'"
        if self.kind is LiteralKind.BOOLEAN:
            return "TRUE" if self.value else "FALSE"
        if isinstance(self.value, bytes):
            return f"X'{self.value.hex().upper()}'"
        return str(self.value)


# --------------------------------------------------------------------------- shared


@dataclass(frozen=True)
class AlwaysTrue:
    """Any row might satisfy the predicate: nothing can be skipped."""

    def __str__(self) -> str:
        return "TRUE"


@dataclass(frozen=True)
class AlwaysFalse:
    """No row can satisfy the predicate (it is FALSE or NULL for every row)."""

    def __str__(self) -> str:
        return "FALSE"


@dataclass(frozen=True)
class Unsupported:
    """A condition no index can decide (a function, LIKE, arithmetic...).

    It always *might match*. ``sql`` is kept for ``explain()``; ``negated``
    records that a NOT was pushed into it, so ``explain()`` stays truthful.
    """

    sql: str
    reason: str
    negated: bool = False

    def __str__(self) -> str:
        return f"NOT ({self.sql})" if self.negated else self.sql


# --------------------------------------------------------------------------- unbound


@dataclass(frozen=True)
class Comparison:
    column: str
    op: Op
    literal: Literal

    def __str__(self) -> str:
        return f"{_quote(self.column)} {self.op.value} {self.literal}"


@dataclass(frozen=True)
class In:
    column: str
    literals: tuple[Literal, ...]
    negated: bool = False

    def __str__(self) -> str:
        values = ", ".join(str(v) for v in self.literals)
        return f"{_quote(self.column)} {'NOT IN' if self.negated else 'IN'} ({values})"


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False

    def __str__(self) -> str:
        return f"{_quote(self.column)} IS {'NOT NULL' if self.negated else 'NULL'}"


@dataclass(frozen=True)
class Not:
    child: Predicate

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class And:
    children: tuple[Predicate, ...]

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class Or:
    children: tuple[Predicate, ...]

    def __str__(self) -> str:
        return render(self)


Predicate = AlwaysTrue | AlwaysFalse | Unsupported | Comparison | In | IsNull | Not | And | Or


# --------------------------------------------------------------------------- bound


@dataclass(frozen=True)
class BoundColumn:
    """A column resolved against the table schema (name as the table spells it)."""

    name: str
    type: pa.DataType

    def __str__(self) -> str:
        return _quote(self.name)


# A bound value lives in the column's domain:
#   integers, dates (days), timestamps (ticks of the column's unit) -> int
#   decimals -> Decimal quantized to the column's scale
#   floats -> float (float32 columns compare in double, like Spark)
#   strings -> str, binary -> bytes, booleans -> bool
BoundValue = int | Decimal | float | str | bytes | bool


@dataclass(frozen=True)
class BoundComparison:
    column: BoundColumn
    op: Op
    value: BoundValue

    def __str__(self) -> str:
        return f"{self.column} {self.op.value} {format_value(self.value, self.column.type)}"


@dataclass(frozen=True)
class BoundIn:
    """``column [NOT] IN values``: values are distinct, non-NULL and sorted
    (NaN last, like Spark)."""

    column: BoundColumn
    values: tuple[BoundValue, ...]
    negated: bool = False

    def __str__(self) -> str:
        shown = ", ".join(format_value(v, self.column.type) for v in self.values[:8])
        if len(self.values) > 8:
            shown += f", ... ({len(self.values)} values)"
        return f"{self.column} {'NOT IN' if self.negated else 'IN'} ({shown})"


@dataclass(frozen=True)
class BoundIsNull:
    column: BoundColumn
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.column} IS {'NOT NULL' if self.negated else 'NULL'}"


BoundLeaf = BoundComparison | BoundIn | BoundIsNull
BoundPredicate = (
    AlwaysTrue | AlwaysFalse | Unsupported | BoundComparison | BoundIn | BoundIsNull | And | Or
)


def render(node: object) -> str:
    """SQL-like text of a tree, iteratively: trees may be thousands of levels deep."""
    values: list[str] = []
    stack: list[tuple[object, bool]] = [(node, False)]
    while stack:
        current, combined = stack.pop()
        children = _children_of(current)
        if children and not combined:
            stack.append((current, True))
            stack.extend((child, False) for child in reversed(children))
            continue
        if not children:
            values.append(str(current))
            continue
        parts = values[-len(children) :]
        del values[-len(children) :]
        if isinstance(current, Not):
            values.append(f"NOT ({parts[0]})")
        else:
            joiner = " AND " if isinstance(current, And) else " OR "
            values.append(joiner.join(f"({p})" for p in parts))
    return values[0]


def _children_of(node: object) -> tuple[object, ...]:
    if isinstance(node, And | Or):
        return node.children
    if isinstance(node, Not):
        return (node.child,)
    return ()


def format_value(value: object, arrow_type: pa.DataType) -> str:
    """A bound value as a SQL literal of its column's type (for explain())."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        return repr(value)
    if isinstance(value, int) and pa.types.is_date(arrow_type):
        return f"DATE '{date(1970, 1, 1) + timedelta(days=value)}'"
    if isinstance(value, int) and pa.types.is_timestamp(arrow_type):
        per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[arrow_type.unit]
        seconds, ticks = divmod(value, per_second)
        moment = datetime(1970, 1, 1) + timedelta(seconds=seconds)  # naive: the ticks are UTC
        fraction = f".{ticks:0{len(str(per_second)) - 1}d}" if ticks else ""
        return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}{fraction}'"
    return str(value)


def _quote(name: str) -> str:
    if name.replace("_", "a").isalnum() and not name[:1].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"
