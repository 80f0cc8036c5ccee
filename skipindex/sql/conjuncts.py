"""Conditions as derivation moves them: split at AND, checked, renamed, written out.

A condition moves from where the query writes it to a table reference only if
every node of it is on a short list (:func:`derivable`): comparisons, IN lists,
BETWEEN, IS [NOT] NULL, LIKE, AND/OR/NOT over columns and literals, casts, and
the functions prune turns into ranges (``year``, ``month``, ``to_date``,
``trunc``, ``substring``, ``x + 1``...) or an expression index may hold
(``lower``, ``upper``, ``concat``, ``hour``...). Those are deterministic, hold no
subquery, and come back from sqlglot's Spark SQL text meaning what they meant.
Anything else is dropped, which only keeps more files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

from skipindex.expressions.sql_literals import SparkSQL

__all__ = [
    "Condition",
    "column_refs",
    "derivable",
    "has_function",
    "qualifiers",
    "render",
    "replace_columns",
    "split_and",
]


@dataclass(frozen=True)
class Condition:
    """A condition on the way to a reference, and where it came from."""

    node: exp.Expr
    origin: str  # "written", "pushed", "join", "dynamic"
    note: str = ""  # e.g. which join carried it

    def moved(self, node: exp.Expr, origin: str | None = None, note: str = "") -> Condition:
        return Condition(node, origin or self.origin, note or self.note)


_CONNECTIVES = (exp.And, exp.Or, exp.Not, exp.Paren)
_PREDICATES = (
    exp.EQ,
    exp.NEQ,
    exp.LT,
    exp.LTE,
    exp.GT,
    exp.GTE,
    exp.NullSafeEQ,
    exp.Between,
    exp.In,
    exp.Is,
    exp.Like,
    exp.Escape,
)
_VALUES = (
    exp.Column,
    exp.Identifier,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Neg,
    exp.Cast,
    exp.TryCast,
    exp.DataType,
    exp.DataTypeParam,
    exp.Var,
)
# The functions of columns prune rewrites into conditions on the column itself
# (skipindex.expressions.functions), as sqlglot parses them.
_FUNCTIONS = (
    exp.Year,
    exp.Month,
    exp.Quarter,
    exp.Day,
    exp.DayOfMonth,
    exp.DayOfYear,
    exp.DayOfWeek,
    exp.WeekOfYear,
    exp.Extract,
    exp.TsOrDsToDate,
    exp.DateTrunc,
    exp.TimestampTrunc,
    exp.Substring,
    exp.Left,
    exp.StartsWith,
    exp.Add,
    exp.Sub,
    exp.Mul,
    # ...and a few more an expression index may be defined on (lower(email) = ...),
    # each written back by sqlglot as Spark spells it.
    exp.Lower,
    exp.Upper,
    exp.Concat,
    exp.DPipe,
    exp.Hour,
    exp.Minute,
    exp.Length,
)
_ANONYMOUS = frozenset({"weekday"})
_ALLOWED = _CONNECTIVES + _PREDICATES + _VALUES + _FUNCTIONS


def split_and(node: exp.Expr | None) -> list[exp.Expr]:
    """The operands of a chain of ANDs (through parentheses), left to right."""
    out: list[exp.Expr] = []
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        while isinstance(current, exp.Paren):
            current = current.this
        if isinstance(current, exp.And):
            stack.append(current.expression)
            stack.append(current.this)
        else:
            out.append(current)
    return out


def derivable(node: exp.Expr) -> bool:
    """Every node is on the short list, and every column is a plain
    ``alias.column`` (no struct field, no outer catalog or database)."""
    for child in node.walk():
        if isinstance(child, exp.Anonymous):
            if child.name.lower() not in _ANONYMOUS:
                return False
            continue
        if not isinstance(child, _ALLOWED):
            return False
        if isinstance(child, exp.In) and any(
            child.args.get(k) for k in ("query", "unnest", "field")
        ):
            return False
        if isinstance(child, exp.Column) and not _plain(child):
            return False
    return True


def _plain(column: exp.Column) -> bool:
    return (
        isinstance(column.this, exp.Identifier)
        and isinstance(column.args.get("table"), exp.Identifier)
        and not column.args.get("db")
        and not column.args.get("catalog")
    )


def column_refs(node: exp.Expr) -> list[exp.Column]:
    return list(node.find_all(exp.Column))


def qualifiers(node: exp.Expr) -> set[str]:
    """The source aliases the columns of ``node`` are qualified with ('' if one is not)."""
    return {c.table for c in column_refs(node)}


def replace_columns(
    node: exp.Expr, swap: Callable[[exp.Column], exp.Expr | None]
) -> exp.Expr | None:
    """A copy of ``node`` with each column replaced by ``swap(column)``; None if
    ``swap`` returns None for any of them."""
    copy = node.copy()
    columns = column_refs(copy)
    replacements = [swap(c) for c in columns]
    if any(r is None for r in replacements):
        return None
    for column, replacement in zip(columns, replacements, strict=True):
        assert replacement is not None
        if column is copy:
            return replacement.copy()
        column.replace(replacement.copy())
    return copy


def render(node: exp.Expr) -> str:
    """Spark SQL for ``node`` over its table's own column names (unqualified, quoted)."""
    bare = replace_columns(node, lambda c: exp.column(exp.to_identifier(c.name, quoted=True)))
    assert bare is not None
    return bare.sql(dialect=SparkSQL)


def has_function(node: exp.Expr) -> bool:
    """Whether a column in ``node`` sits under a function (prune rewrites those)."""
    return any(isinstance(child, (*_FUNCTIONS, exp.Anonymous)) for child in node.walk())
