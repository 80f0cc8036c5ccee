"""Rewrites of functions of columns (:mod:`skipindex.expressions.functions`) against
brute force in Python, without Spark: for every value, a row the original condition
holds on must satisfy the rewritten one. (``tests/spark/test_functions_oracle.py``
holds them to Spark itself, in several session zones.)"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skipindex.expressions import prepare
from skipindex.expressions.nodes import (
    Op,
)
from skipindex.expressions.timezones import instant_to_wall, wall_span
from tests._support import bound_holds, examples, spark_date_field

EPOCH = date(1970, 1, 1)
_COMPARE = {
    Op.EQ: lambda a, b: a == b,
    Op.NE: lambda a, b: a != b,
    Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b,
    Op.GT: lambda a, b: a > b,
    Op.GE: lambda a, b: a >= b,
}


def holds(pred: Any, value: Any) -> bool:
    """A bound predicate on one column, for one non-NULL value."""
    column = next(iter(_columns(pred)), None)
    return bound_holds(pred, {column: value} if column else {})


def _columns(pred: Any) -> set[str]:
    stack, out = [pred], set()
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", ()))
        if hasattr(node, "column"):
            out.add(node.column.name)
    return out


_OPS = ["=", "!=", "<", "<=", ">", ">="]
_PY = {"=": Op.EQ, "!=": Op.NE, "<": Op.LT, "<=": Op.LE, ">": Op.GT, ">=": Op.GE}
_FIELDS = {
    "year": (1995, 2005),
    "month": (0, 13),
    "quarter": (0, 5),
    "dayofmonth": (0, 32),
    "dayofyear": (0, 367),
    "weekofyear": (0, 54),
    "dayofweek": (0, 8),
    "weekday": (-1, 7),
}
DATES = [date(1995, 1, 1) + timedelta(days=n) for n in range(0, 11 * 366, 3)] + [
    date(2000, 2, 29),
    date(2004, 12, 31),
    date(2005, 1, 1),
    date(2004, 1, 1),
]


@st.composite
def _field_tests(draw: st.DrawFn) -> list[tuple[str, str, tuple[int, ...]]]:
    """Comparisons, and [NOT] IN lists of one or more values (in range or not)."""
    tests = []
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(sorted(_FIELDS)))
        values = st.integers(*_FIELDS[field])
        op = draw(st.sampled_from([*_OPS, "IN", "NOT IN"]))
        if op in ("IN", "NOT IN"):
            tests.append((field, op, tuple(draw(st.lists(values, min_size=1, max_size=3)))))
        else:
            tests.append((field, op, (draw(values),)))
    return tests


def _field_holds(field: str, op: str, values: tuple[int, ...], day: date) -> bool:
    found = spark_date_field(field, day)
    if op == "IN":
        return found in values
    if op == "NOT IN":
        return found not in values
    return bool(_COMPARE[_PY[op]](found, values[0]))


def _field_sql(field: str, op: str, values: tuple[int, ...]) -> str:
    if op in ("IN", "NOT IN"):
        return f"{field}(d) {op} ({', '.join(map(str, values))})"
    return f"{field}(d) {op} {values[0]}"


@settings(max_examples=examples(300))
@given(_field_tests())
@example([("month", "NOT IN", (0,)), ("year", "=", (1995,))])  # once merged into `month = 0`
def test_calendar_conditions_on_dates_keep_every_matching_date(tests):
    where = " AND ".join(_field_sql(*test) for test in tests)
    bound = prepare(where, pa.schema([("d", pa.date32())]))
    for day in DATES:
        if all(_field_holds(*test, day) for test in tests):
            assert holds(bound, (day - EPOCH).days), (where, day, str(bound))


@settings(max_examples=examples(200))
@given(
    st.sampled_from(["YEAR", "QUARTER", "MONTH", "MM", "WEEK"]),
    st.sampled_from(_OPS),
    st.dates(date(1995, 1, 1), date(2005, 12, 31)),
)
def test_trunc_of_a_date_keeps_every_matching_date(unit, op, literal):
    bound = prepare(f"trunc(d, '{unit}') {op} DATE '{literal}'", pa.schema([("d", pa.date32())]))
    for day in DATES:
        first = {
            "YEAR": day.replace(month=1, day=1),
            "QUARTER": day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1),
            "MONTH": day.replace(day=1),
            "MM": day.replace(day=1),
            "WEEK": day - timedelta(days=day.weekday()),
        }[unit]
        if _COMPARE[_PY[op]](first, literal):
            assert holds(bound, (day - EPOCH).days), (unit, op, literal, day, str(bound))


STRINGS = ["", "a", "ab", "abc", "abd", "abcz", "ab\U0001f600", "b", "日本語", "日本", "ab\x00"]


@settings(max_examples=examples(200))
@given(
    st.integers(1, 4),
    st.sampled_from(_OPS),
    st.sampled_from(STRINGS),
    st.sampled_from(["left(s, {n})", "substring(s, 1, {n})"]),
)
def test_string_prefixes_keep_every_matching_string(n, op, text, shape):
    where = f"{shape.format(n=n)} {op} '{text}'"
    bound = prepare(where, pa.schema([("s", pa.string())]))
    for value in STRINGS:
        if _COMPARE[_PY[op]](value[:n], text):
            assert holds(bound, value), (where, value, str(bound))


def _wrap(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


INTS = [-(2**31), -(2**31) + 1, -100, -7, -1, 0, 1, 3, 7, 100, 2**31 - 2, 2**31 - 1]


@settings(max_examples=examples(300))
@given(
    st.sampled_from(["i + {c}", "{c} + i", "i - {c}", "{c} - i", "i * {m}", "{m} * i"]),
    st.one_of(st.integers(-10, 10), st.sampled_from([2**31 - 1, -(2**31)])),
    st.integers(1, 5),
    st.sampled_from(_OPS),
    st.one_of(st.integers(-25, 25), st.sampled_from([2**31 - 1, -(2**31)])),
)
def test_integer_arithmetic_keeps_every_matching_value_even_when_it_wraps(shape, c, m, op, k):
    where = f"{shape.format(c=c, m=m)} {op} {k}"
    bound = prepare(where, pa.schema([("i", pa.int32())]))
    for value in INTS:
        exact = eval(shape.format(c=c, m=m), {"i": value})
        for result in {exact, _wrap(exact, 32)}:  # ANSI fails, legacy wraps
            if _COMPARE[_PY[op]](result, k):
                assert holds(bound, value), (where, value, str(bound))


DOUBLES = [-1e308, -2.5, -0.0, 0.0, 5e-324, 0.1, 0.3, 1998.4, 1998.4000000000001, 1e16, 1e308]


@settings(max_examples=examples(300))
@given(
    st.sampled_from(["f + {c}", "f - {c}", "f * {p}", "{c} + f"]),
    st.sampled_from(["0.5", "0.1", "1", "1e16", "3"]),
    st.sampled_from(["2", "0.1", "3"]),
    st.sampled_from(_OPS),
    st.sampled_from(["1998.9", "0.4", "0", "1e16", "-2.4", "1e308"]),
)
def test_double_arithmetic_keeps_every_matching_value(shape, c, p, op, k):
    where = f"{shape.format(c=c, p=p)} {op} {k}"
    bound = prepare(where, pa.schema([("f", pa.float64())]))
    for value in [*DOUBLES, math.inf, -math.inf]:
        result = eval(shape.format(c=float(c), p=float(p)), {"f": value})
        if _COMPARE[_PY[op]](result, float(k)):
            assert holds(bound, value), (where, value, str(bound))


@settings(max_examples=examples(300))
@given(
    st.sampled_from(["America/Sao_Paulo", "Europe/Berlin", "Australia/Lord_Howe", "UTC"]),
    st.datetimes(datetime(2017, 1, 1), datetime(2022, 1, 1)),
)
def test_wall_span_bounds_every_instant_of_a_wall_range(zone_name, wall):
    zone = ZoneInfo(zone_name)
    wall_micros = (wall - datetime(1970, 1, 1)) // timedelta(microseconds=1)
    span = wall_span(wall_micros, zone)
    assert span is not None
    low, high = span
    assert low <= high
    guess = wall_micros - 3 * 3600 * 10**6
    for step in range(0, 6 * 3600, 900):  # every quarter hour from three hours before
        instant = guess + step * 10**6
        seen = instant_to_wall(instant, zone)
        if seen >= wall_micros:
            assert instant >= low
        else:
            assert instant < high
    if zone_name == "UTC":
        assert low == high == wall_micros


def test_year_of_a_timestamp_is_its_year_in_the_session_zone():
    schema = pa.schema([("ts", pa.timestamp("us", tz="UTC"))])
    bound = prepare("year(ts) = 2021", schema, time_zone="America/New_York")
    start = datetime(2021, 1, 1, 5, tzinfo=UTC)  # midnight in New York
    micros = (start - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert holds(bound, micros)
    assert not holds(bound, micros - 1)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("year(d) = 1994 AND month(d) = 1", "(d >= DATE '1994-01-01') AND (d < DATE '1994-02-01')"),
        ("CAST(i AS BIGINT) > 5", "i > 5"),
        ("left(s, 3) = 'abc'", "(s >= 'abc') AND (s < 'abd')"),
        ("lower(s) = 'x'", "LOWER(s) = 'x'"),
    ],
)
def test_rewrites_read_as_conditions_on_the_column(where, expected):
    schema = pa.schema([("d", pa.date32()), ("i", pa.int32()), ("s", pa.string())])
    assert expected in str(prepare(where, schema))


@settings(max_examples=examples(300))
@given(
    st.sampled_from(
        [
            "year(d) * 100 + month(d)",
            "month(d) + 100 * year(d)",
            "year(d) * 10000 + month(d) * 100 + dayofmonth(d)",
            "year(d) * 10 + quarter(d)",
            "year(d) * 1000 + dayofyear(d)",
            "year(d) * 10 + month(d)",  # not monotone: stays might match, never wrong
            "year(d) * 100 + month(d) - 5",
        ]
    ),
    st.sampled_from(_OPS),
    st.one_of(st.integers(199_000, 200_600), st.integers(19_950_101, 20_051_231)),
)
def test_sums_of_calendar_fields_keep_every_matching_date(expression, op, k):
    where = f"{expression} {op} {k}"
    bound = prepare(where, pa.schema([("d", pa.date32())]))
    for day in DATES:
        value = eval(
            expression.replace("(d)", ""),
            {f: spark_date_field(f, day) for f in _FIELDS},
        )
        if _COMPARE[_PY[op]](value, k):
            assert holds(bound, (day - EPOCH).days), (where, day, str(bound))
        elif "* 10 + month" not in expression:  # monotone sums are exact
            assert not holds(bound, (day - EPOCH).days), (where, day, str(bound))
