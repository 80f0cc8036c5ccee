"""Typed SQL literals as a predicate writes them, before they are cast to a column."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from decimal import Decimal

from skipindex.expressions.formatting import format_days, format_micros

__all__ = ["Literal", "LiteralKind", "LiteralValue"]


class LiteralKind(enum.Enum):
    """The SQL type a literal was written as, before casting to a column."""

    INT = "int"
    DECIMAL = "decimal"  # exact: `2.5` in Spark SQL is DECIMAL(2,1)
    FLOAT = "float"  # approximate: `2.5e0`, `2.5D`, NaN, Infinity
    STRING = "string"
    BINARY = "binary"
    DATE = "date"  # int: days since 1970-01-01
    TIMESTAMP = "timestamp"  # int: microseconds since the epoch (an instant, UTC)
    TIMESTAMP_NTZ = "timestamp_ntz"  # int: wall-clock microseconds since 1970-01-01T00:00
    BOOLEAN = "boolean"
    NULL = "null"


LiteralValue = int | Decimal | float | str | bytes | bool | None


@dataclass(frozen=True)
class Literal:
    """A typed SQL literal as written in the predicate."""

    kind: LiteralKind
    value: LiteralValue

    def __str__(self) -> str:
        if self.kind is LiteralKind.INT:  # first: a join's key list holds thousands
            return str(self.value)
        if self.kind is LiteralKind.NULL:
            return "NULL"
        if self.kind is LiteralKind.STRING:
            return "'" + str(self.value).replace("'", "''") + "'"
        if self.kind is LiteralKind.DATE:
            return f"DATE '{format_days(int(self.value))}'"  # type: ignore[arg-type]
        if self.kind is LiteralKind.TIMESTAMP:
            return f"TIMESTAMP '{format_micros(int(self.value))} UTC'"  # type: ignore[arg-type]
        if self.kind is LiteralKind.TIMESTAMP_NTZ:
            return f"TIMESTAMP_NTZ '{format_micros(int(self.value))}'"  # type: ignore[arg-type]
        if self.kind is LiteralKind.BOOLEAN:
            return "TRUE" if self.value else "FALSE"
        if isinstance(self.value, bytes):
            return f"X'{self.value.hex().upper()}'"
        return str(self.value)
