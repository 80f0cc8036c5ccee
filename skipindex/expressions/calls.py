"""Expressions of columns in a predicate as :class:`~skipindex.expressions.nodes.Call`
terms, and the canonical text that names them.

The SQL parser hands every operand that is neither a column nor a literal to
:func:`call_of`. A deterministic expression over at least one column becomes a
Call: its ``name`` picks the rewrite rule of
:mod:`skipindex.expressions.functions` (``year``, ``to_date``, ``cast``, ``+``...;
``""`` for an expression only an expression index can answer). Anything else
(``rand()``, ``current_date()``, an aggregate, a subquery) stays unsupported.

:func:`expression_key` is the Spark SQL text of an expression with its columns
spelled as the table spells them, as sqlglot renders it, kept only where that
text parses back to the same tree: then two expressions share a key only if
they are the same expression, which is what lets an expression index answer a
predicate that writes it differently (``WeekOfYear( D )`` and ``weekofyear(d)``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import cast

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from skipindex.expressions.nodes import Call, ColumnName, Literal, LiteralKind, Term

__all__ = [
    "CALENDAR_FIELDS",
    "EXPRESSION_METADATA",
    "call_of",
    "expression_key",
    "is_expression_field",
    "parse_expression",
]

# The metadata key that marks a schema field as an expression's values (its
# value: the expression as the index definition wrote it).
EXPRESSION_METADATA = b"skipindex.expression"

# Spark's date fields, by sqlglot's node for them.
CALENDAR_FIELDS: dict[type[exp.Expression], str] = {
    exp.Year: "year",
    exp.Month: "month",
    exp.Quarter: "quarter",
    exp.DayOfMonth: "dayofmonth",
    exp.Day: "dayofmonth",
    exp.DayOfYear: "dayofyear",
    exp.WeekOfYear: "weekofyear",
    exp.DayOfWeek: "dayofweek",
}
_EXTRACTED = {  # EXTRACT(<field> FROM d), as Spark names the fields
    "YEAR": "year", "Y": "year", "YEARS": "year", "YR": "year", "YRS": "year",
    "MONTH": "month", "MON": "month", "MONS": "month", "MONTHS": "month",
    "QUARTER": "quarter", "QTR": "quarter",
    "DAY": "dayofmonth", "D": "dayofmonth", "DAYS": "dayofmonth",
    "DOY": "dayofyear", "WEEK": "weekofyear", "W": "weekofyear", "WEEKS": "weekofyear",
    "DOW": "dayofweek", "DAYOFWEEK": "dayofweek",
}  # fmt: skip
_ARITHMETIC: dict[type[exp.Expression], str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}
# Functions whose value is not a function of the row: never an index's business.
_VOLATILE = (
    exp.Rand, exp.Randn, exp.Uuid, exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime,
    exp.CurrentUser, exp.Shuffle, exp.AggFunc, exp.Window, exp.Query, exp.Subquery,
    exp.Placeholder, exp.Parameter, exp.Star,
)  # fmt: skip
_VOLATILE_NAMES = frozenset(
    {"now", "random", "rand", "randn", "uuid", "shuffle", "monotonically_increasing_id",
     "input_file_name", "input_file_block_start", "input_file_block_length",
     "spark_partition_id", "current_timezone", "current_catalog", "current_database",
     "current_schema", "current_user", "user", "session_user", "unix_timestamp", "localtimestamp",
     "randstr", "uniform", "try_reflect", "reflect", "java_method"}
)  # fmt: skip

Operand = ColumnName | Literal | Call | None
MAX_NODES = 200  # an expression larger than this is not something an index is built on


def call_of(node: exp.Expression, operand: Callable[[exp.Expression], Operand]) -> Call | None:
    """``node`` as a Call (``operand`` converts its children), or None where it
    reads no column or is not deterministic."""
    if isinstance(node, exp.Predicate | exp.Connector | exp.Not):
        return None  # a condition, not a value: the parser takes it apart itself
    if any(True for _ in itertools.islice(node.walk(), MAX_NODES, None)):
        return None  # sqlglot renders and copies recursively: keep to what any stack holds
    if not _deterministic(node) or not any(True for _ in node.find_all(exp.Column)):
        return None
    name, parts = _rule(node)
    args: list[Term | Literal] = []
    for part in parts:
        if isinstance(part, str):
            args.append(Literal(LiteralKind.STRING, part))
            continue
        converted = operand(part)
        if converted is None:  # a part this rule cannot read: only an index on it answers
            name, args = "", []
            break
        args.append(converted)
    if not name:
        args = [_column_name(c) for c in node.find_all(exp.Column)]
    return Call(name, tuple(args), _plain_sql(node), node.copy())


def _rule(node: exp.Expression) -> tuple[str, list[exp.Expression | str]]:
    """The rewrite rule a node may take, and the operands it reads."""
    field = CALENDAR_FIELDS.get(type(node))
    if field is not None:
        return field, [_implicit_date(node.this)]
    if isinstance(node, exp.Anonymous) and str(node.this).lower() == "weekday":
        return ("weekday", [node.expressions[0]]) if len(node.expressions) == 1 else ("", [])
    if isinstance(node, exp.Extract) and isinstance(node.this, exp.Var):
        found = _EXTRACTED.get(str(node.this.this).upper())
        return (found, [node.expression]) if found else ("", [])
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None:
        return "to_date", [node.this]
    if isinstance(node, exp.Cast):  # TryCast too
        target = node.to.sql(dialect="spark").upper()
        return ("to_date", [node.this]) if target == "DATE" else ("cast", [node.this, target])
    if isinstance(node, exp.TimestampTrunc | exp.DateTrunc):
        unit = node.args.get("unit")
        text = unit.name if isinstance(unit, exp.Var | exp.Literal) else None
        kind = "date_trunc" if isinstance(node, exp.TimestampTrunc) else "trunc"
        return (kind, [node.this, text.upper()]) if text else ("", [])
    if isinstance(node, exp.Substring):
        start, length = node.args.get("start"), node.args.get("length")
        return ("substring", [node.this, start, length]) if start and length else ("", [])
    if isinstance(node, exp.Left):
        return "substring", [node.this, exp.Literal.number(1), node.expression]
    arithmetic = _ARITHMETIC.get(type(node))
    if arithmetic is not None:
        return arithmetic, [node.this, node.expression]
    return "", []


def _implicit_date(node: exp.Expression) -> exp.Expression:
    """sqlglot wraps the argument of ``year(d)`` in ``TO_DATE(d)``; Spark casts it
    to a date implicitly, which is the same thing: the column itself."""
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None:
        return cast(exp.Expression, node.this)
    return node


def _deterministic(node: exp.Expression) -> bool:
    for found in node.walk():
        if isinstance(found, _VOLATILE):
            return False
        if isinstance(found, exp.Anonymous) and str(found.this).lower() in _VOLATILE_NAMES:
            return False
        if isinstance(found, exp.Func) and found.sql_name().lower() in _VOLATILE_NAMES:
            return False
    return True


def _column_name(node: exp.Column) -> ColumnName:
    parts = [str(p.this) for p in node.parts]
    return parts[0] if len(parts) == 1 else tuple(parts)


def _plain_sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark")


# --------------------------------------------------------------------------- keys


def is_expression_field(field: pa.Field) -> bool:
    """Whether a schema field holds an expression's values, not a column's."""
    return bool(field.metadata and EXPRESSION_METADATA in field.metadata)


def parse_expression(text: str) -> exp.Expression:
    """One Spark SQL expression (an expression index's definition). ValueError
    names what is wrong."""
    try:
        found = [s for s in sqlglot.parse(text, read="spark") if s is not None]
    except (ParseError, TokenError) as exc:
        raise ValueError(f"cannot parse expression {text!r}: {exc}") from None
    if len(found) != 1 or isinstance(found[0], exp.Query | exp.Subquery):
        raise ValueError(f"{text!r} is not one expression")
    node = cast(exp.Expression, found[0])
    if not any(True for _ in node.find_all(exp.Column)):
        raise ValueError(f"expression {text!r} reads no column")
    if not _deterministic(node):
        raise ValueError(f"expression {text!r} is not deterministic: its values change per call")
    return node


def expression_key(
    node: exp.Expression, spelled: Mapping[ColumnName, tuple[str, ...]]
) -> str | None:
    """The canonical text of ``node`` with each column replaced by the table's
    spelling (``spelled``: as written -> the column's path in the table), or None
    where sqlglot cannot render it faithfully (then no index answers it)."""
    resolved = _normalised(node.copy())
    for column in list(resolved.find_all(exp.Column)):
        path = spelled.get(_column_name(column))
        if path is None:
            return None
        quoted = ".".join("`" + part.replace("`", "``") + "`" for part in path)
        column.replace(sqlglot.parse_one(quoted, read="spark"))
    text = resolved.sql(dialect="spark")
    try:
        again = sqlglot.parse_one(text, read="spark")
    except (ParseError, TokenError):
        return None
    return text if _normalised(cast(exp.Expression, again)) == resolved else None


def _normalised(node: exp.Expression) -> exp.Expression:
    """``node`` (changed in place) with the spellings Spark parses into the same
    expression made one: ``day(d)`` is ``dayofmonth(d)`` (one function, two
    names), ``a || b`` is ``concat(a, b)`` (Spark's parser builds a Concat), and
    a concat of a concat is one concat (the same value: NULL if any part is)."""
    for found in reversed(list(node.find_all(exp.Day, exp.DPipe))):  # innermost first
        if isinstance(found, exp.Day):
            replacement: exp.Expression = exp.DayOfMonth(this=found.this)
        else:
            parts = [found.this, found.expression]
            replacement = exp.Concat(expressions=parts, safe=True, coalesce=False)
        if found is node:
            node = replacement
        else:
            found.replace(replacement)
    for concat in reversed(list(node.find_all(exp.Concat))):
        if not _plain_concat(concat):
            continue
        parts = []
        for part in concat.expressions:
            parts.extend(part.expressions if _plain_concat(part) else [part])
        concat.set("expressions", parts)
    return node


def _plain_concat(node: exp.Expression) -> bool:
    """A Concat as Spark's ``concat``/``||`` parse into (not CONCAT_WS and kin)."""
    return (
        type(node) is exp.Concat
        and not node.args.get("coalesce")
        and all(
            key in ("expressions", "safe", "coalesce") for key, value in node.args.items() if value
        )
    )
