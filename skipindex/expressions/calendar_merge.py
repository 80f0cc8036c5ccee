"""Calendar conditions on one column, taken together: ``year(d) = 1994 AND
month(d) = 1`` is January 1994, though ``month(d) = 1`` alone is every January.

:func:`merge_calendar` runs on a predicate in negation normal form, before
binding. In each AND, the calendar leaves on one column (``year``, ``month``,
``quarter``, ``dayofmonth``, ``dayofyear``, ``weekofyear``, ``dayofweek``,
``weekday``, as :mod:`skipindex.expressions.calls` names them) that are two or
more are joined by one more condition, on the column's local day:
``to_date(d) >= DATE '1994-01-01' AND to_date(d) < DATE '1994-02-01'`` (days
from :func:`~skipindex.expressions.calendar.days_where`). The original leaves
stay: they are implied, and an expression index on one of them may answer it.
"""

from __future__ import annotations

from typing import cast

import sqlglot

from skipindex.expressions.calendar import DayRanges, FieldTest, days_where
from skipindex.expressions.functions import field_test
from skipindex.expressions.nodes import (
    AlwaysFalse,
    And,
    AnyPredicate,
    Call,
    ColumnName,
    Comparison,
    In,
    IsNull,
    Literal,
    LiteralKind,
    Op,
    Or,
    Predicate,
    children_of,
)
from skipindex.expressions.visitors import fold

__all__ = ["merge_calendar"]


def merge_calendar(pred: AnyPredicate) -> AnyPredicate:
    """``pred`` with a local-day range added to each AND that has several
    calendar conditions on one column."""

    def visit(node: AnyPredicate, parts: list[AnyPredicate]) -> AnyPredicate:
        if isinstance(node, Or):
            return Or(tuple(cast(list[Predicate], parts)))
        if not isinstance(node, And):
            return node
        return And(tuple(cast(list[Predicate], parts)) + tuple(_ranges(parts)))

    return fold(pred, children_of, visit)


def _ranges(children: list[AnyPredicate]) -> list[Predicate]:
    groups: dict[ColumnName, list[FieldTest]] = {}
    for child in children:
        if not isinstance(child, Comparison | In) or not isinstance(child.column, Call):
            continue
        call = child.column
        column = call.args[0] if call.args else None
        if not isinstance(column, str | tuple):
            continue
        if isinstance(child, In):
            test = field_test(call, Op.EQ, child.literals, negated=child.negated)
        else:
            test = field_test(call, child.op, (child.literal,))
        if test is not None:
            groups.setdefault(column, []).append(test)
    out: list[Predicate] = []
    for column, tests in groups.items():
        if len(tests) < 2 or all(t.field == "year" for t in tests):
            continue  # year conditions alone are ranges each: nothing to merge
        days = days_where(tests)
        if days is not None:
            out.append(_on_local_days(column, days))
    return out


def _on_local_days(column: ColumnName, days: DayRanges) -> Predicate:
    """``to_date(column)`` within ``days``."""
    path = (column,) if isinstance(column, str) else column
    quoted = ".".join("`" + part.replace("`", "``") + "`" for part in path)
    tree = sqlglot.parse_one(f"to_date({quoted})", read="spark")
    local_day = Call("to_date", (column,), tree.sql(dialect="spark"), tree)
    parts: list[Predicate] = []
    for start, end in days:
        sides: list[Predicate] = []
        if start is not None:
            sides.append(Comparison(local_day, Op.GE, Literal(LiteralKind.DATE, start)))
        if end is not None:
            sides.append(Comparison(local_day, Op.LT, Literal(LiteralKind.DATE, end)))
        parts.append(And(tuple(sides)) if sides else IsNull(local_day, negated=True))
    if not parts:
        return AlwaysFalse()
    return parts[0] if len(parts) == 1 else Or(tuple(parts))
