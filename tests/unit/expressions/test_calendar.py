"""Calendar fields against Python's proleptic Gregorian ``date`` (years 1..9999),
and the day ranges of field conditions against brute force."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.expressions.calendar import (
    FieldTest,
    civil_from_days,
    days_from_civil,
    days_where,
    field_values,
)
from tests._support import examples, spark_date_field

EPOCH = date(1970, 1, 1)
dates = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 31))


def _days(d: date) -> int:
    return (d - EPOCH).days


@settings(max_examples=examples(400))
@given(st.lists(dates, min_size=1, max_size=50))
def test_fields_are_pythons_proleptic_gregorian_fields(found):
    days = np.array([_days(d) for d in found])
    year, month, day = civil_from_days(days)
    assert [(int(y), int(m), int(x)) for y, m, x in zip(year, month, day, strict=True)] == [
        (d.year, d.month, d.day) for d in found
    ]
    assert [days_from_civil(d.year, d.month, d.day) for d in found] == days.tolist()
    for name in ("year", "month", "quarter", "dayofmonth", "dayofyear", "weekofyear",
                 "weekday", "dayofweek"):  # fmt: skip
        assert field_values(name, days).tolist() == [spark_date_field(name, d) for d in found], name


def test_years_beyond_python_round_trip():
    for year in (-5_877_641, -1, 0, 10_000, 294_247, 5_881_580):
        for month, day in ((1, 1), (2, 28), (12, 31)):
            days = days_from_civil(year, month, day)
            found = civil_from_days(np.array([days]))
            assert [int(v[0]) for v in found] == [year, month, day]


_OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "not in"]
_RANGES = {
    "year": (1990, 2001),
    "month": (0, 13),
    "quarter": (0, 5),
    "dayofmonth": (0, 32),
    "dayofyear": (0, 367),
    "weekofyear": (0, 54),
    "weekday": (-1, 7),
    "dayofweek": (0, 8),
}


@st.composite
def _tests(draw):
    field = draw(st.sampled_from(sorted(_RANGES)))
    low, high = _RANGES[field]
    op = draw(st.sampled_from(_OPS))
    count = draw(st.integers(1, 3)) if op in ("in", "not in") else 1
    values = tuple(draw(st.integers(low, high)) for _ in range(count))
    return FieldTest(field, op, values)


@settings(max_examples=examples(300))
@given(st.lists(_tests(), min_size=1, max_size=4))
def test_day_ranges_hold_every_day_where_the_conditions_hold(tests):
    """Brute force over 1988-2003: never a day left out; exact where the year
    conditions bound the years."""
    first, last = date(1988, 1, 1), date(2003, 12, 31)
    every = np.arange(_days(first), _days(last) + 1)
    truth = np.ones(len(every), dtype=bool)
    for test in tests:
        truth &= test.holds(field_values(test.field, every))
    ranges = days_where(tests)
    if ranges is None:
        assert not any(t.field == "year" and t.op not in ("!=", "not in") for t in tests)
        return
    inside = np.zeros(len(every), dtype=bool)
    for start, end in ranges:
        lo = -(2**62) if start is None else start
        hi = 2**62 if end is None else end
        inside |= (every >= lo) & (every < hi)
    assert not (truth & ~inside).any()
    bounded = all(r[0] is not None and r[1] is not None for r in ranges)
    if bounded and len(ranges) < 64:
        assert (inside == truth).all()


def test_year_and_month_is_one_month():
    assert days_where([FieldTest("year", "=", (1994,)), FieldTest("month", "=", (1,))]) == [
        (_days(date(1994, 1, 1)), _days(date(1994, 2, 1)))
    ]


def test_iso_week_one_may_start_in_december_and_week_53_end_in_january():
    # ISO week 1 of 2020 began on Monday 2019-12-30; 2020 in year 2020 means Jan 1-5 only.
    week_one = days_where([FieldTest("year", "=", (2020,)), FieldTest("weekofyear", "=", (1,))])
    assert week_one == [(_days(date(2020, 1, 1)), _days(date(2020, 1, 6)))]
    # Week 1 of 2025 starts 2024-12-30: in calendar 2024, week 1 is two days of December.
    in_2024 = days_where([FieldTest("year", "=", (2024,)), FieldTest("weekofyear", "=", (1,))])
    assert in_2024 == [
        (_days(date(2024, 1, 1)), _days(date(2024, 1, 8))),
        (_days(date(2024, 12, 30)), _days(date(2025, 1, 1))),
    ]
    assert _days(date(2024, 12, 30) + timedelta(days=2)) == _days(date(2025, 1, 1))


def test_unbounded_years_keep_only_the_year_conditions():
    assert days_where([FieldTest("month", "=", (12,))]) is None
    assert days_where([FieldTest("year", ">=", (1994,)), FieldTest("month", "=", (12,))]) == [
        (_days(date(1994, 1, 1)), None)
    ]
    assert days_where([FieldTest("year", "=", (1994,)), FieldTest("year", "=", (1995,))]) == []
