"""Expression indexes as binding sees them: the schema field that holds an
expression's values, which sessions may use it, and the key a definition has.

A build records each expression index's values under a pseudo-field of the
table schema named by the expression's canonical key
(:func:`~skipindex.expressions.calls.expression_key`), typed as Spark types the
expression, and marked with metadata: the expression as written, the session
time zone Spark computed it in, and whether its values depend on that zone
(``hour(ts)`` does, ``lower(s)`` does not). A predicate's expression binds to
the field only where the prune session could get the same values: the zone
does not matter to it, or is the one it was computed in.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import cast

import pyarrow as pa
from sqlglot import exp

from skipindex.column_paths import ColumnPath, join_path, resolve_path
from skipindex.errors import InvalidSpecError, UnknownColumnError
from skipindex.expressions.calls import (
    EXPRESSION_METADATA,
    expression_key,
    is_expression_field,
    parse_expression,
)
from skipindex.expressions.nodes import Call, ColumnName
from skipindex.expressions.sql import expression_operand
from skipindex.expressions.timezones import zone_name, zone_named

__all__ = [
    "ZONE_DEPENDENT_METADATA",
    "ZONE_METADATA",
    "define_expression",
    "expression_field",
    "expression_text",
    "unusable_because",
    "zone_of",
]

# The session time zone Spark computed the values in, and whether they depend on it.
ZONE_METADATA = b"skipindex.expression.time_zone"
ZONE_DEPENDENT_METADATA = b"skipindex.expression.zone_dependent"


def expression_field(
    key: str, arrow_type: pa.DataType, text: str, time_zone: str, zone_dependent: bool
) -> pa.Field:
    """The schema field that records an expression index's values."""
    return pa.field(
        key,
        arrow_type,
        metadata={
            EXPRESSION_METADATA: text.encode("utf-8"),
            ZONE_METADATA: time_zone.encode("utf-8"),
            ZONE_DEPENDENT_METADATA: b"true" if zone_dependent else b"false",
        },
    )


def expression_text(field: pa.Field) -> str:
    """The expression as its index definition wrote it."""
    return bytes((field.metadata or {}).get(EXPRESSION_METADATA, b"")).decode("utf-8")


def zone_of(field: pa.Field) -> tuple[str | None, bool]:
    """The zone an expression field's values were computed in, and whether they
    depend on it (True where the field does not say: the safe answer)."""
    metadata = field.metadata or {}
    zone = metadata.get(ZONE_METADATA)
    dependent = metadata.get(ZONE_DEPENDENT_METADATA, b"true") != b"false"
    return (bytes(zone).decode("utf-8") if zone else None), dependent


def unusable_because(field: pa.Field, zone: tzinfo) -> str | None:
    """Why a session in ``zone`` may not use the expression field (None: it may)."""
    built, dependent = zone_of(field)
    if not dependent:
        return None
    if built is not None:
        try:
            if zone_name(zone_named(built)) == zone_name(zone):
                return None
        except ValueError:
            pass
    return (
        f"the index on expr={expression_text(field)!r} holds values computed in time zone "
        f"{built or '(unknown)'}, which this expression depends on, and this prune's zone is "
        f"{zone_name(zone)}"
    )


def define_expression(
    text: str, schema: pa.Schema, *, case_sensitive: bool = False
) -> tuple[str, list[ColumnPath]]:
    """The canonical key of the expression ``text`` over the table ``schema``
    (columns as the table spells them) and the columns it reads. Raises
    InvalidSpecError or UnknownColumnError saying what is wrong."""
    try:
        parse_expression(text)
    except ValueError as exc:
        raise InvalidSpecError(f"cannot index expr={text!r}: {exc}") from None
    call = expression_operand(text)
    if not isinstance(call, Call) or call.tree is None:
        raise InvalidSpecError(
            f"cannot index expr={text!r}: it is not an expression of columns skipindex can "
            "read (a plain column is indexed by its name, without expr=)"
        )
    columns = _columns_only(schema)
    spelled: dict[ColumnName, ColumnPath] = {}
    for name in call.columns():
        path = (name,) if isinstance(name, str) else tuple(name)
        try:
            found = resolve_path(columns, path, case_sensitive=case_sensitive)
        except LookupError as exc:
            raise UnknownColumnError(f"cannot index expr={text!r}: column {exc}") from None
        if found is None:
            known = ", ".join(columns.names[:50])
            raise UnknownColumnError(
                f"cannot index expr={text!r}: unknown column '{join_path(path)}'; the "
                f"table's columns are: {known}"
            )
        spelled[name] = found[0]
    key = expression_key(cast(exp.Expression, call.tree), spelled)
    if key is None:
        raise InvalidSpecError(
            f"cannot index expr={text!r}: skipindex cannot name it canonically (its Spark "
            "SQL text does not read back as the same expression), so no predicate could use it"
        )
    return key, list(dict.fromkeys(spelled.values()))


def _columns_only(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f for f in schema if not is_expression_field(f)])
