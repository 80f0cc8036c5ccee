"""Calendar fields of dates, and the dates where fields take given values.

Spark's ``year``, ``month``, ``quarter``, ``dayofmonth``, ``dayofyear``,
``weekofyear`` (ISO 8601 weeks: Monday first, week 1 holds the year's first
Thursday), ``dayofweek`` (1 = Sunday) and ``weekday`` (0 = Monday) of a date are
fields of the proleptic Gregorian calendar, for any year Spark holds (java.time's
``LocalDate``). Dates here are day numbers since 1970-01-01, so no Python
``date`` limits (years 1..9999) apply.

:func:`days_where` turns a conjunction of conditions on such fields into the
ranges of day numbers where all of them hold: the form an index can answer.
It enumerates the days of the years the conditions leave (vectorised, a few
hundred years at most) and never returns fewer days than hold; where it cannot
bound the years it keeps only what the year conditions say.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FIELDS",
    "DayRanges",
    "FieldTest",
    "civil_from_days",
    "days_from_civil",
    "days_where",
    "field_values",
]

# java.time's LocalDate holds years -999,999,999..999,999,999, Spark's DATE
# -5877641..5881580 (int32 days): a year condition beyond them bounds nothing.
MIN_YEAR, MAX_YEAR = -5_877_641, 5_881_580
# Enumerate the days of at most this many years; more, and only the year
# conditions are kept (a superset).
MAX_YEARS = 400
# At most this many ranges; more, and the closest are merged (a superset).
MAX_RANGES = 64

FIELDS = (
    "year",
    "month",
    "quarter",
    "dayofmonth",
    "dayofyear",
    "weekofyear",
    "dayofweek",
    "weekday",
)

# Half-open ranges [start, end) of day numbers, sorted and disjoint; None for
# an end means unbounded.
DayRanges = list[tuple[int | None, int | None]]


def days_from_civil(year: int, month: int, day: int) -> int:
    """The day number of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(year, month, day) of each day number, vectorised."""
    z = days.astype(np.int64) + 719468
    era = np.floor_divide(z, 146097)
    day_of_era = z - era * 146097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted + 2) // 5 + 1
    month = np.where(shifted < 10, shifted + 3, shifted - 9)
    year = year_of_era + era * 400 + (month <= 2)
    return year, month, day


def field_values(name: str, days: np.ndarray) -> np.ndarray:
    """Spark's ``name(d)`` of each day number ``d``."""
    year, month, day = civil_from_days(days)
    if name == "year":
        return year
    if name == "month":
        return month
    if name == "quarter":
        return (month - 1) // 3 + 1
    if name == "dayofmonth":
        return day
    if name == "dayofyear":
        return np.asarray(days - _new_years_day(year) + 1)
    monday_based = (days.astype(np.int64) + 3) % 7  # 1970-01-01 was a Thursday: 3
    if name == "weekday":
        return monday_based
    if name == "dayofweek":
        return (monday_based + 1) % 7 + 1
    if name == "weekofyear":
        thursday = days - monday_based + 3  # the Thursday of the ISO week decides its year
        thursday_year = civil_from_days(thursday)[0]
        return np.asarray((thursday - _new_years_day(thursday_year)) // 7 + 1)
    raise ValueError(f"unknown calendar field {name!r}")


def _new_years_day(year: np.ndarray) -> np.ndarray:
    y = year.astype(np.int64) - 1  # January 1st: days_from_civil(y, 1, 1), vectorised
    era = np.floor_divide(y, 400)
    year_of_era = y - era * 400
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + 306
    return np.asarray(era * 146097 + day_of_era - 719468)


@dataclass(frozen=True)
class FieldTest:
    """A condition on one calendar field: ``field op value`` (op one of
    ``= != < <= > >=``), or ``field [NOT] IN values`` (op ``in`` / ``not in``)."""

    field: str
    op: str
    values: tuple[int, ...]

    def holds(self, found: np.ndarray) -> np.ndarray:
        tests: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
            "=": np.equal,
            "!=": np.not_equal,
            "<": np.less,
            "<=": np.less_equal,
            ">": np.greater,
            ">=": np.greater_equal,
        }
        if self.op == "in":
            return np.isin(found, self.values)
        if self.op == "not in":
            return ~np.isin(found, self.values)
        return np.asarray(tests[self.op](found, self.values[0]))

    def year_bounds(self) -> tuple[int, int]:
        """The years this condition (on ``year``) allows, as [low, high]."""
        low, high = MIN_YEAR, MAX_YEAR
        value = self.values[0] if self.values else 0
        if self.op in ("=", "in"):
            low, high = min(self.values, default=1), max(self.values, default=0)
        elif self.op in ("<", "<="):
            high = value - (self.op == "<")
        elif self.op in (">", ">="):
            low = value + (self.op == ">")
        return max(low, MIN_YEAR), min(high, MAX_YEAR)


def days_where(tests: Iterable[FieldTest]) -> DayRanges | None:
    """The day numbers where every test holds, as ranges (a superset where
    the years are not bounded closely enough to enumerate); None where no
    year condition bounds them at all (``month(d) = 12`` alone: every year)."""
    tests = list(tests)
    low, high = MIN_YEAR, MAX_YEAR
    for test in tests:
        if test.field == "year":
            a, b = test.year_bounds()
            low, high = max(low, a), min(high, b)
    if low > high:
        return []
    if low == MIN_YEAR and high == MAX_YEAR:
        return None
    start = None if low == MIN_YEAR else days_from_civil(low, 1, 1)
    end = None if high == MAX_YEAR else days_from_civil(high + 1, 1, 1)
    if start is None or end is None or high - low + 1 > MAX_YEARS:
        return [(start, end)]
    days = np.arange(start, end, dtype=np.int64)
    keep = np.ones(len(days), dtype=bool)
    for test in tests:
        keep &= test.holds(field_values(test.field, days))
    return _merged(_ranges(days, keep))


def _ranges(days: np.ndarray, keep: np.ndarray) -> list[tuple[int, int]]:
    """Runs of kept consecutive days as [start, end) ranges."""
    edges = np.diff(np.concatenate(([0], keep.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    first = int(days[0]) if len(days) else 0
    return [(first + int(a), first + int(b)) for a, b in zip(starts, ends, strict=True)]


def _merged(ranges: list[tuple[int, int]]) -> DayRanges:
    """At most MAX_RANGES ranges: the narrowest gaps are filled first."""
    while len(ranges) > MAX_RANGES:
        gaps = [b[0] - a[1] for a, b in itertools.pairwise(ranges)]
        cut = set(sorted(range(len(gaps)), key=gaps.__getitem__)[: len(ranges) - MAX_RANGES])
        merged: list[tuple[int, int]] = []
        for at, (a, b) in enumerate(ranges):
            if merged and at - 1 in cut:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        ranges = merged
    return list(ranges)
