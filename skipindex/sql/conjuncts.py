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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from sqlglot import exp

from skipindex.errors import SkipIndexError
from skipindex.expressions.nodes import And, AnyPredicate, Predicate
from skipindex.expressions.rewrite import assemble
from skipindex.expressions.sql import from_tree, parse_sql
from skipindex.expressions.sql_literals import SparkSQL
from skipindex.expressions.timezones import session_zone, zone_named

__all__ = [
    "Condition",
    "bare_column",
    "plain_column",
    "column_refs",
    "derivable",
    "has_function",
    "prune_where",
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
    exp.ILike,
    exp.Escape,
    exp.RegexpLike,  # the literal text a regex needs: n-gram Blooms, equality bitmaps
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
    exp.EndsWith,  # ...and the substring tests an n-gram or equality bitmap answers
    exp.Contains,
    exp.StrPosition,
    exp.ArrayContains,  # ...and the array tests an element index answers
    exp.Exists,  # exists(a, x -> x = v); EXISTS (SELECT ...) holds a Select: not derivable
    exp.Lambda,
    exp.Array,
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
_ANONYMOUS = frozenset({"weekday", "arrays_overlap", "regexp"})
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
    bare = replace_columns(node, bare_column)
    assert bare is not None
    return bare.sql(dialect=SparkSQL)


def has_function(node: exp.Expr) -> bool:
    """Whether a column in ``node`` sits under a function (prune rewrites those)."""
    return any(isinstance(child, (*_FUNCTIONS, exp.Anonymous)) for child in node.walk())


def plain_column(node: exp.Expr) -> exp.Column | None:
    """``node`` (through parentheses) where it is a column qualified by its source's
    alias alone (no database), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier) and node.table:
        return node if not node.args.get("db") else None
    return None


def bare_column(column: exp.Column) -> exp.Expr:
    """``column`` by its name alone (quoted), as its own table's column."""
    return exp.column(exp.to_identifier(column.name, quoted=True))


def prune_where(
    conditions: Sequence[Condition],
    time_zone: str,
    text: Callable[[Condition], str] = lambda c: render(c.node),
) -> str | Predicate | None:
    """What a reference is pruned with in a session in ``time_zone``: its
    conditions as SQL (``text``), which prune parses, but a join's key lists
    (origin "dynamic", made by si.sql from values) as prune's predicate made
    from their trees, which is what parsing their text gives
    (tests/unit/sql/test_key_predicates.py) without writing out and parsing back
    thousands of keys (100 ms and more for each list). The rest is then parsed
    here, as prune would: its literals in the session's zone."""
    lists = [c for c in conditions if c.origin == "dynamic"]
    written = " AND ".join(f"({text(c)})" for c in conditions if c.origin != "dynamic")
    if not lists:
        return written or None
    try:
        with session_zone(zone_named(time_zone)):
            parts = [parse_sql(written)] if written else []
    except SkipIndexError:  # prune says why, as for any text it cannot parse
        return " AND ".join(f"({text(c)})" for c in conditions)
    parts += [from_tree(cast(exp.Expression, c.node), qualified=True) for c in lists]
    if len(parts) == 1:
        return parts[0]
    return cast(Predicate, assemble(And, cast(list[AnyPredicate], parts)))
