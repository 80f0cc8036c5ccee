"""Sums of calendar fields, like ``year(d) * 100 + month(d)`` (SSB's
``d_yearmonthnum``, 199401), as ranges of days.

A sum ``a * year(d) + b * quarter(d) + c * month(d) + e * dayofmonth(d) +
f * dayofyear(d) + k`` with coefficients that are never negative never
decreases from one day to the next when each field's step outweighs what the
smaller fields lose as they wrap (a month's ``c + f`` against ``30 * e``; a
year's ``a`` against ``3 * b + 11 * c + 30 * e + 365 * f``): it is a monotone
function of the day. Then ``sum op K`` holds on a range of days, whose ends a
binary search over day numbers finds exactly (Spark's fields of each day, see
:mod:`.calendar`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from skipindex.expressions.calendar import DayRanges, field_values
from skipindex.expressions.nodes import Call, ColumnName, Literal, LiteralKind, Op

__all__ = ["linear_days"]

_FIELDS = ("year", "quarter", "month", "dayofmonth", "dayofyear")
# Spark's DATE holds int32 day numbers.
_FIRST_DAY, _LAST_DAY = -(2**31), 2**31 - 1
_Form = tuple[ColumnName, dict[str, int], int]  # column, coefficient per field, constant


def linear_days(call: Call, op: Op, lit: Literal) -> tuple[ColumnName, DayRanges] | None:
    """The column and the days where ``call op lit`` holds, for a monotone sum
    of calendar fields of one column compared with an integer; else None."""
    form = _linear(call)
    if form is None or lit.kind is not LiteralKind.INT or isinstance(lit.value, bool):
        return None
    column, weights, constant = form
    if not _monotone(weights) or set(weights) == {"year"} or not weights:
        return None  # a year alone is the calendar rule's; a constant is no condition
    target = int(lit.value)  # type: ignore[arg-type]

    def value(day: int) -> int:
        days = np.array([day], dtype=np.int64)
        return constant + sum(w * int(field_values(f, days)[0]) for f, w in weights.items())

    at_least = _first(value, target)  # first day whose value is >= target
    above = _first(value, target + 1)  # ... > target
    ranges: dict[Op, list[tuple[int | None, int | None]]] = {
        Op.EQ: [(at_least, above)],
        Op.NE: [(None, at_least), (above, None)],
        Op.LT: [(None, at_least)],
        Op.LE: [(None, above)],
        Op.GT: [(above, None)],
        Op.GE: [(at_least, None)],
    }
    kept = [(a, b) for a, b in ranges[op] if a is None or b is None or a < b]
    # A range reaching Spark's first or last day is open on that side.
    return column, [
        (None if a == _FIRST_DAY else a, None if b == _LAST_DAY + 1 else b) for a, b in kept
    ]


def _linear(node: object) -> _Form | None:
    """``node`` as a linear form in the calendar fields of one column."""
    if isinstance(node, Literal):
        ok = node.kind is LiteralKind.INT and not isinstance(node.value, bool)
        return ((), {}, int(node.value)) if ok else None  # type: ignore[arg-type]
    if not isinstance(node, Call):
        return None
    if node.name in _FIELDS and len(node.args) == 1 and isinstance(node.args[0], str | tuple):
        return node.args[0], {node.name: 1}, 0
    if node.name not in ("+", "-", "*") or len(node.args) != 2:
        return None
    left, right = _linear(node.args[0]), _linear(node.args[1])
    if left is None or right is None:
        return None
    if node.name == "*":
        scaled, factor = (left, right) if not right[1] else (right, left)
        if factor[1]:
            return None  # a product of two fields is not linear
        return scaled[0], {f: w * factor[2] for f, w in scaled[1].items()}, scaled[2] * factor[2]
    columns = {c for c in (left[0], right[0]) if c != ()}
    if len(columns) > 1:
        return None
    sign = -1 if node.name == "-" else 1
    weights = dict(left[1])
    for field, weight in right[1].items():
        weights[field] = weights.get(field, 0) + sign * weight
    return next(iter(columns), ()), weights, left[2] + sign * right[2]


def _monotone(weights: dict[str, int]) -> bool:
    a, b, c, e, f = (weights.get(name, 0) for name in _FIELDS)
    if min(a, b, c, e, f) < 0:
        return False
    return c + f >= 30 * e and a >= 3 * b + 11 * c + 30 * e + 365 * f


def _first(value: Callable[[int], int], target: int) -> int:
    """The first day number whose (non-decreasing) value reaches ``target``
    (one past Spark's last day where none does)."""
    if value(_FIRST_DAY) >= target:
        return _FIRST_DAY
    low, high = _FIRST_DAY, _LAST_DAY + 1  # value(low) < target; high: none found yet
    while high - low > 1:
        middle = (low + high) // 2
        if value(middle) >= target:
            high = middle
        else:
            low = middle
    return high
