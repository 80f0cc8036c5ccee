"""Functions of a column compared with literals, as conditions on the column itself.

``year(d) = 1994`` holds exactly where ``d`` lies in 1994: an index on ``d``
answers it. :func:`rewrite` turns a leaf on a :class:`Call` into a predicate on
the call's column that holds on *at least* every row where the leaf is TRUE
under Spark's semantics, exactly wherever it can be (and None, "might match",
where no rule applies):

* calendar fields (``year``, ``month``, ``quarter``, ``dayofmonth``,
  ``dayofyear``, ``weekofyear``, ``dayofweek``, ``weekday``, ``EXTRACT``) of a
  date or timestamp, ``to_date(ts)`` / ``CAST(ts AS DATE)``, ``trunc(d, unit)``
  and ``date_trunc(unit, ts)``: ranges of local days (:mod:`.calendar`), which
  are ranges of the column; a timestamp's local day is its wall clock in the
  session zone, and a wall-clock range is a range of instants (exact where the
  zone's offset is constant around each end, widened by the offset's change
  near a daylight-saving transition);
* ``substring(s, 1, n)`` / ``left(s, n)`` against a string: a prefix range;
* ``CAST(x AS <wider type>)``: the same comparison on ``x``;
* ``x + c``, ``x - c``, ``c - x``, ``x * c`` (c > 0): see :mod:`.arithmetic`.

A comparison with NULL never reaches here (binding makes it FALSE first), and a
function of a NULL is NULL, as is the rewritten condition on a NULL column.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo

import numpy as np
import pyarrow as pa

from skipindex.expressions.arithmetic import arithmetic, widening_cast
from skipindex.expressions.calendar import (
    DayRanges,
    FieldTest,
    civil_from_days,
    days_from_civil,
    days_where,
)
from skipindex.expressions.calendar_codes import linear_days
from skipindex.expressions.nodes import (
    AlwaysFalse,
    And,
    Call,
    ColumnName,
    Comparison,
    In,
    IsNull,
    Like,
    Literal,
    LiteralKind,
    Op,
    Or,
    Predicate,
)
from skipindex.expressions.timezones import MICROS_PER_DAY, instant_wall, wall_instant, wall_span

__all__ = ["CALENDAR", "rewrite"]

CALENDAR = frozenset(
    {"year", "month", "quarter", "dayofmonth", "dayofyear", "weekofyear", "dayofweek", "weekday"}
)
_K = LiteralKind
_OPS = {Op.EQ: "=", Op.NE: "!=", Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">="}
# trunc / date_trunc units of whole days and longer, as Spark spells them
_UNITS = {
    "YEAR": "year", "YYYY": "year", "YY": "year",
    "QUARTER": "quarter",
    "MONTH": "month", "MM": "month", "MON": "month",
    "WEEK": "week",
    "DAY": "day", "DD": "day",
}  # fmt: skip


def rewrite(leaf: Comparison | In, column_type: pa.DataType, zone: tzinfo) -> Predicate | None:
    """``leaf`` (on a Call whose first argument is a column of ``column_type``)
    as a predicate on that column, or None where no rule applies."""
    call = leaf.column
    assert isinstance(call, Call)
    if isinstance(leaf, In):
        parts = [rewrite(Comparison(call, Op.NE if leaf.negated else Op.EQ, v), column_type, zone)
                 for v in leaf.literals]  # fmt: skip
        if any(p is None for p in parts) or not parts:
            return None
        kept = [p for p in parts if p is not None]
        return And(tuple(kept)) if leaf.negated else Or(tuple(kept))
    if call.name in ("+", "-", "*"):
        coded = linear_days(call, leaf.op, leaf.literal)
        if coded is not None:  # year(d) * 100 + month(d) = 199401
            return local_days(coded[0], coded[1], column_type, zone)
        return arithmetic(call, leaf.op, leaf.literal, column_type)
    column = call.args[0] if call.args else None
    if not isinstance(column, str | tuple):
        return None
    if call.name in CALENDAR:
        return _calendar(call.name, column, leaf.op, leaf.literal, column_type, zone)
    if call.name == "to_date":
        return _to_date(column, leaf.op, leaf.literal, column_type, zone)
    if call.name in ("trunc", "date_trunc"):
        return _truncated(call, column, leaf.op, leaf.literal, column_type, zone)
    if call.name == "substring":
        return _prefix(call, column, leaf.op, leaf.literal, column_type)
    if call.name == "cast":
        return widening_cast(call, column, leaf.op, leaf.literal, column_type)
    return None


# --------------------------------------------------------------------------- days


def local_days(column: ColumnName, ranges: DayRanges, column_type: pa.DataType,
               zone: tzinfo) -> Predicate | None:  # fmt: skip
    """The rows whose local day (the date; a timestamp's date in ``zone``) is in
    ``ranges``, as comparisons on the column (None: not a date or timestamp)."""
    if not ranges:
        return AlwaysFalse()
    if pa.types.is_date(column_type):
        bounds = [(start, end) for start, end in ranges]
        return _between(column, bounds, _K.DATE)
    if not pa.types.is_timestamp(column_type):
        return None
    if column_type.tz is None:  # TIMESTAMP_NTZ: the wall clock is the value
        walls = [(_wall(start), _wall(end)) for start, end in ranges]
        return _between(column, walls, _K.TIMESTAMP_NTZ)
    instants: list[tuple[int | None, int | None]] = []
    for start, end in ranges:
        low = None if start is None else wall_span(start * MICROS_PER_DAY, zone)
        high = None if end is None else wall_span(end * MICROS_PER_DAY, zone)
        if (start is not None and low is None) or (end is not None and high is None):
            return None  # beyond the years whose zone rules are known
        instants.append((low[0] if low else None, high[1] if high else None))
    return _between(column, instants, _K.TIMESTAMP)


def _wall(day: int | None) -> int | None:
    return None if day is None else day * MICROS_PER_DAY


def _between(column: ColumnName, ranges: list[tuple[int | None, int | None]],
             kind: LiteralKind) -> Predicate:  # fmt: skip
    """OR of ``start <= column < end`` (an end None: unbounded; both: not NULL)."""
    parts: list[Predicate] = []
    for start, end in ranges:
        sides: list[Predicate] = []
        if start is not None:
            sides.append(Comparison(column, Op.GE, Literal(kind, start)))
        if end is not None:
            sides.append(Comparison(column, Op.LT, Literal(kind, end)))
        parts.append(And(tuple(sides)) if sides else IsNull(column, negated=True))
    return parts[0] if len(parts) == 1 else Or(tuple(parts))


def _calendar(field: str, column: ColumnName, op: Op, lit: Literal,
              column_type: pa.DataType, zone: tzinfo) -> Predicate | None:  # fmt: skip
    value = _integral(lit)
    if value is None:
        return None
    found = days_where([FieldTest(field, _OPS[op], (value,))])
    if found is None and field == "year" and op is Op.NE:  # every year but one: two ranges
        found = [(None, days_from_civil(value, 1, 1)), (days_from_civil(value + 1, 1, 1), None)]
    return None if found is None else local_days(column, found, column_type, zone)


def field_test(call: Call, op: Op, literals: tuple[Literal, ...], negated: bool = False
               ) -> FieldTest | None:  # fmt: skip
    """A calendar leaf as a :class:`FieldTest`, for :mod:`.calendar_merge`."""
    values = [_integral(lit) for lit in literals]
    if call.name not in CALENDAR or any(v is None for v in values) or not values:
        return None
    kept = tuple(v for v in values if v is not None)
    if negated:  # NOT IN, of one value or many: never the bare comparison
        return FieldTest(call.name, "not in", kept)
    if len(literals) > 1 or op is None:
        return FieldTest(call.name, "in", kept)
    return FieldTest(call.name, _OPS[op], kept)


def _integral(lit: Literal) -> int | None:
    """An integer literal's value (Spark compares an int field with it exactly)."""
    if lit.kind is _K.INT and isinstance(lit.value, int) and not isinstance(lit.value, bool):
        return lit.value
    return None


def _to_date(column: ColumnName, op: Op, lit: Literal, column_type: pa.DataType,
             zone: tzinfo) -> Predicate | None:  # fmt: skip
    if lit.kind is not _K.DATE or not isinstance(lit.value, int):
        return None
    return local_days(column, _day_ranges(op, lit.value), column_type, zone)


def _day_ranges(op: Op, day: int) -> DayRanges:
    ranges: dict[Op, DayRanges] = {
        Op.EQ: [(day, day + 1)],
        Op.NE: [(None, day), (day + 1, None)],
        Op.LT: [(None, day)],
        Op.LE: [(None, day + 1)],
        Op.GT: [(day + 1, None)],
        Op.GE: [(day, None)],
    }
    return ranges[op]


# --------------------------------------------------------------------------- truncation


def _truncated(call: Call, column: ColumnName, op: Op, lit: Literal,
               column_type: pa.DataType, zone: tzinfo) -> Predicate | None:  # fmt: skip
    """``trunc(d, unit) op DATE`` / ``date_trunc(unit, ts) op TIMESTAMP``. The
    value is the start of the period holding the row's local day (for a
    timestamp, that start's instant in the zone, by java.time's rules), which
    grows with the period; so the periods whose start satisfies ``op`` are a
    run of periods, kept whole: a range of local days."""
    unit_arg = call.args[1] if len(call.args) > 1 else None
    unit = _UNITS.get(str(unit_arg.value).upper()) if isinstance(unit_arg, Literal) else None
    if unit is None or not isinstance(lit.value, int) or isinstance(lit.value, bool):
        return None
    start_value: Callable[[int], int | None]
    if call.name == "trunc" and lit.kind is _K.DATE and pa.types.is_date(column_type):
        day = lit.value
        start_value = lambda start: start  # noqa: E731 (a date's value is its day)
    elif (
        call.name == "date_trunc"
        and lit.kind is _K.TIMESTAMP
        and pa.types.is_timestamp(column_type)
        and column_type.tz is not None
    ):
        wall = instant_wall(lit.value, zone)
        if wall is None:
            return None
        day = wall // MICROS_PER_DAY
        start_value = lambda start: wall_instant(start * MICROS_PER_DAY, zone)  # noqa: E731
    else:
        return None
    cuts = _cuts(_period_start(day, unit), unit, start_value, lit.value)
    if cuts is None:
        return None
    at_least, above = cuts  # first period starts with a value >= / > the literal
    choices: dict[Op, DayRanges] = {
        Op.EQ: [(at_least, above)] if at_least < above else [],
        Op.NE: [(None, at_least), (above, None)],
        Op.LT: [(None, at_least)],
        Op.LE: [(None, above)],
        Op.GT: [(above, None)],
        Op.GE: [(at_least, None)],
    }
    return local_days(column, choices[op], column_type, zone)


def _cuts(first: int, unit: str, value: Callable[[int], int | None], target: int
          ) -> tuple[int, int] | None:  # fmt: skip
    """The first days of the first periods whose value is >= ``target`` and >
    ``target``, searched among the periods around the one starting on ``first``."""
    starts = [first]
    for _ in range(2):
        starts.insert(0, _period_start(starts[0] - 1, unit))
        starts.append(_period_start(starts[-1], unit, after=True))
    values = [value(start) for start in starts]
    if any(v is None for v in values):
        return None
    at_least = next((s for s, v in zip(starts, values, strict=True) if v >= target), None)  # type: ignore[operator]
    above = next((s for s, v in zip(starts, values, strict=True) if v > target), None)  # type: ignore[operator]
    if at_least is None or above is None or at_least == starts[0]:
        return None  # not within the periods looked at: no answer rather than a wrong one
    return at_least, above


def _period_start(day: int, unit: str, after: bool = False) -> int:
    """The first day of the period holding ``day`` (of the next one: ``after``)."""
    if unit == "day":
        return day + after
    if unit == "week":  # Monday
        monday = day - (day + 3) % 7
        return monday + 7 * after
    year, month, _ = (int(v[0]) for v in civil_from_days(np.array([day])))
    if unit == "year":
        return days_from_civil(year + after, 1, 1)
    span = 3 if unit == "quarter" else 1
    first = (month - 1) // span * span + 1 + span * after
    return days_from_civil(year + (first - 1) // 12, (first - 1) % 12 + 1, 1)


# --------------------------------------------------------------------------- strings


def _prefix(call: Call, column: ColumnName, op: Op, lit: Literal,
            column_type: pa.DataType) -> Predicate | None:  # fmt: skip
    """``substring(s, 1, n)`` and ``left(s, n)`` (n characters, i.e. code points)
    compared with a string of k characters: for k = n, ``=`` is a prefix and
    ``<``, ``>=`` the same comparison on ``s``; for k < n, ``=`` is ``s = text``."""
    start, length = call.args[1:3] if len(call.args) == 3 else (None, None)
    if not (isinstance(start, Literal) and isinstance(length, Literal)):
        return None
    if _integral(start) != 1 or (n := _integral(length)) is None or n <= 0:
        return None
    if lit.kind is not _K.STRING or (
        not pa.types.is_string(column_type) and not (pa.types.is_large_string(column_type))
    ):
        return None
    text = str(lit.value)
    k = len(text)
    if op is Op.EQ:
        if k == n:
            return Like(column, text, prefix=True)
        return Comparison(column, Op.EQ, lit) if k < n else AlwaysFalse()
    if k != n:
        return None
    if op in (Op.LT, Op.GE):  # left(s, n) < t  <=>  s < t
        return Comparison(column, op, lit)
    if op is Op.NE:
        return Like(column, text, prefix=True, negated=True)
    # left(s, n) <= t  <=>  s < (the least string above every one starting with t)
    below = Like(column, text, prefix=True)
    return Or((Comparison(column, Op.LT, lit), below)) if op is Op.LE else _above(column, lit)


def _above(column: ColumnName, lit: Literal) -> Predicate:
    """``left(s, n) > t`` (t of n characters): s above t and not starting with it."""
    return And((Comparison(column, Op.GT, lit), Like(column, str(lit.value), negated=True)))
