"""Functions of columns in predicates (year(d) = 1994, left(s, 3) = 'abc', x + 1 > 5...)
against Spark itself, at their edges: one row per file, so the files Spark finds a
match in are exactly the rows where the predicate is TRUE, and prune must keep each.

The rows sit on year and month boundaries, leap days, ISO week 1 and 53, local
midnights and daylight-saving gaps and overlaps in three zones (Sao Paulo moved
its clocks at midnight; Lord Howe by 30 minutes), integers at their types' ends
(arithmetic that overflows wraps with ANSI mode off, the oracle's setting here),
NULLs; Hypothesis draws the constants. Where a rewrite is exact (dates; timestamps
in UTC), the files kept are exactly Spark's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import examples

pytestmark = pytest.mark.spark

ZONES = ["UTC", "America/Sao_Paulo", "Europe/Berlin", "Australia/Lord_Howe"]
I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)


def _rows() -> list[dict[str, Any]]:
    days: list[date] = []
    for year in (1992, 1994, 1995, 2000, 2004, 2020, 2024):
        for month in (1, 2, 3, 12):
            first = date(year, month, 1)
            days += [first - timedelta(days=1), first, first + timedelta(days=28)]
    days += [date(2020, 12, 31), date(2021, 1, 3), date(2021, 1, 4), date(1, 1, 1)]
    locals_ = (
        datetime(2018, 11, 4, 0, 30), datetime(2018, 11, 3, 23, 30),  # Sao Paulo gap
        datetime(2019, 2, 16, 23, 30), datetime(2019, 2, 17, 0, 0),  # Sao Paulo overlap
        datetime(2021, 3, 28, 2, 30), datetime(2021, 10, 31, 2, 30),  # Berlin
        datetime(2021, 4, 4, 1, 45), datetime(2021, 10, 3, 2, 15),  # Lord Howe
        datetime(2020, 12, 31, 23, 59, 59, 999999), datetime(2021, 1, 1),
        datetime(2021, 6, 30, 23, 59), datetime(2021, 7, 1, 0, 0, 0, 1),
    )  # fmt: skip
    instants = [
        local.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
        for zone in ZONES[1:]
        for local in locals_
    ]
    instants += [datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC), datetime(2000, 1, 1, tzinfo=UTC)]
    ints = [I32[0], I32[0] + 1, -7, -1, 0, 1, 7, 100, I32[1] - 1, I32[1]]
    longs = [I64[0], I64[0] + 3, -5, 0, 5, I64[1] - 3, I64[1]]
    doubles = [-1e308, -2.5, -0.0, 0.0, 0.1, 0.3, 1998.4, 1998.4000000000001, 2.5e15, 1e308]
    strings = ["", "a", "ab", "abc", "abd", "abcz", "ab\U0001f600", "b", "日本語", "日本"]
    decimals = [
        Decimal(v) for v in ("-99999999.99", "-1.50", "0.00", "0.01", "1.25", "99999999.99")
    ]
    count = max(len(days), len(instants), len(ints), len(doubles))
    columns = {"d": days, "ts": instants, "i": ints, "l": longs, "f": doubles, "s": strings,
               "dec": decimals}  # fmt: skip
    # each column cycles through its values, one row per file
    rows = [
        {name: values[n % len(values)] for name, values in columns.items()} for n in range(count)
    ]
    rows.append(dict.fromkeys(rows[0]))  # every column NULL
    return rows


SCHEMA = pa.schema(
    [
        ("d", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float64()),
        ("s", pa.string()),
        ("dec", pa.decimal128(10, 2)),
    ]
)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("functions") / "t"
    root.mkdir()
    for n, row in enumerate(_rows()):
        pq.write_table(pa.Table.from_pylist([row], schema=SCHEMA), root / f"r{n:03d}.parquet")
    build_with(str(root), [si.MinMax(c) for c in SCHEMA.names], InProcessRunner())
    return root


_FIELDS = ["year", "month", "quarter", "dayofmonth", "dayofyear", "weekofyear", "dayofweek",
           "weekday"]  # fmt: skip
_RANGES = {
    "year": (1990, 2025), "month": (0, 13), "quarter": (0, 5), "dayofmonth": (0, 32),
    "dayofyear": (0, 367), "weekofyear": (0, 54), "dayofweek": (0, 8), "weekday": (-1, 7),
}  # fmt: skip
_OPS = ["=", "!=", "<", "<=", ">", ">="]
ops = st.sampled_from(_OPS)
day_literals = st.dates(date(1991, 6, 1), date(2025, 6, 1)).map(lambda d: f"DATE '{d}'")
wall_literals = st.datetimes(datetime(2018, 1, 1), datetime(2022, 1, 1)).map(
    lambda t: f"TIMESTAMP '{t.isoformat(sep=' ')}'"
)


@st.composite
def calendar(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["d", "ts"]))
    field = draw(st.sampled_from(_FIELDS))
    low, high = _RANGES[field]
    value = draw(st.integers(low, high))
    leaf = f"{field}({column}) {draw(ops)} {value}"
    if draw(st.integers(0, 3)) == 0:  # [NOT] IN, a NULL among the values now and then
        values = draw(st.lists(st.integers(low, high).map(str) | st.just("NULL"), min_size=1,
                               max_size=3))  # fmt: skip
        leaf = f"{field}({column}) {draw(st.sampled_from(['IN', 'NOT IN']))} ({', '.join(values)})"
    if draw(st.booleans()):  # with a year, as dashboards write months and weeks
        leaf += f" AND year({column}) {draw(ops)} {draw(st.integers(1991, 2024))}"
    if draw(st.booleans()):
        leaf = f"NOT ({leaf})"
    return leaf


@st.composite
def truncated(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        unit = draw(st.sampled_from(["YEAR", "MM", "MONTH", "QUARTER", "WEEK", "YY"]))
        return f"trunc(d, '{unit}') {draw(ops)} {draw(day_literals)}"
    unit = draw(st.sampled_from(["YEAR", "MONTH", "QUARTER", "WEEK", "DAY", "DD"]))
    if draw(st.booleans()):
        return f"to_date(ts) {draw(ops)} {draw(day_literals)}"
    if draw(st.booleans()):
        return f"CAST(ts AS DATE) {draw(ops)} {draw(day_literals)}"
    return f"date_trunc('{unit}', ts) {draw(ops)} {draw(wall_literals)}"


@st.composite
def prefixes(draw: st.DrawFn) -> str:
    n = draw(st.integers(0, 4))
    text = draw(st.sampled_from(["", "a", "ab", "abc", "abd", "ab\U0001f600", "日本", "b", "abcz"]))
    function = draw(
        st.sampled_from([f"left(s, {n})", f"substring(s, 1, {n})", f"substr(s, 1, {n})"])
    )
    return f"{function} {draw(ops)} '{text}'"


@st.composite
def arithmetic(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["i", "l", "dec", "f"]))
    bound = {"i": I32, "l": I64}.get(column, (-(10**8), 10**8))
    c = draw(st.one_of(st.integers(-10, 10), st.integers(bound[0], bound[1])))
    k = draw(st.one_of(st.integers(-20, 20), st.integers(bound[0], bound[1])))
    if column in ("dec", "f") and draw(st.booleans()):
        c_text, k_text = f"{c}.5", f"{k}.25"
    else:
        c_text, k_text = str(c), str(k)
    shape = draw(st.sampled_from(["{x} + {c}", "{c} + {x}", "{x} - {c}", "{c} - {x}",
                                  "{x} * {c}", "{c} * {x}"]))  # fmt: skip
    if column in ("i", "l") and "*" in shape:
        c_text = str(draw(st.integers(1, 5)))
    expression = shape.format(x=column, c=c_text)
    if draw(st.booleans()) and column == "i":
        target = draw(st.sampled_from(["BIGINT", "DECIMAL(12,2)", "DOUBLE", "INT"]))
        expression = f"CAST(i AS {target})"
    if draw(st.integers(0, 4)) == 0:
        return f"{expression} {draw(st.sampled_from(['IN', 'NOT IN']))} ({k_text}, {c_text})"
    return f"{expression} {draw(ops)} {k_text}"


@st.composite
def calendar_codes(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["d", "ts"]))
    shape = draw(
        st.sampled_from(
            ["year({c}) * 100 + month({c})", "year({c}) * 10000 + month({c}) * 100 + day({c})"]
        )
    )
    k = draw(
        st.integers(199_000, 202_500)
        if "10000" not in shape
        else st.integers(19_900_101, 20_241_231)
    )
    return f"{shape.format(c=column)} {draw(ops)} {k}"


predicates = st.one_of(calendar(), truncated(), prefixes(), arithmetic(), calendar_codes())


def _spark_files(spark: Any, table: Path, wheres: list[str]) -> list[set[str]]:
    """Per predicate, the files Spark finds a TRUE row in."""
    from pyspark.sql import functions as F  # noqa: N812

    flags = [F.max(F.when(F.expr(w), 1).otherwise(0)).alias(f"p{n}") for n, w in enumerate(wheres)]
    rows = _rows_with_files(spark, table).groupBy("file").agg(*flags).collect()
    return [{Path(r["file"]).name for r in rows if r[f"p{n}"] == 1} for n in range(len(wheres))]


_READ: dict[Path, Any] = {}


def _rows_with_files(spark: Any, table: Path) -> Any:
    """The table's rows as Spark reads them, with their file, read once and cached
    in Spark (a zone changes what a predicate makes of them, not the rows: Spark
    holds timestamps as instants)."""
    from pyspark.sql import functions as F  # noqa: N812

    if table not in _READ:
        frame = spark.read.parquet(str(table))
        _READ[table] = frame.select("*", F.input_file_name().alias("file")).cache()
    return _READ[table]


@pytest.mark.parametrize("zone", ZONES)
def test_functions_never_drop_a_file_spark_finds_a_match_in(spark, table, zone):
    @settings(max_examples=examples(60))
    @given(wheres=st.lists(predicates, min_size=1, max_size=10))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, table, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            result = si.prune(str(table), where, time_zone=zone)
            kept = {Path(f).name for f in result.files}
            assert matching <= kept, f"{where} in {zone}: dropped {sorted(matching - kept)}"

    with _session(spark, zone):
        check()


EXACT = [
    "year(d) = 1994",
    "year(d) BETWEEN 2004 AND 2024 AND month(d) = 2",
    "year(d) = 2020 AND weekofyear(d) = 53",
    "year(d) IN (1992, 2024) AND quarter(d) = 1 AND dayofmonth(d) > 28",
    "EXTRACT(YEAR FROM d) < 1995",
    "to_date(ts) = DATE '2021-01-01'",
    "CAST(ts AS DATE) >= DATE '2021-07-01'",
    "year(ts) = 2021 AND month(ts) = 7",
    "trunc(d, 'MM') = DATE '2000-03-01'",
    "year(d) * 100 + month(d) = 200402",
    "year(ts) * 100 + month(ts) >= 202107",
    "trunc(d, 'YEAR') > DATE '2004-06-01'",
    "date_trunc('MONTH', ts) = TIMESTAMP '2021-07-01 00:00:00'",
    "date_trunc('DAY', ts) <= TIMESTAMP '2019-02-16 12:00:00'",
    "left(s, 2) = 'ab'",
    "substring(s, 1, 3) < 'abd'",
    "left(s, 3) > 'abc'",
    "left(s, 5) = 'ab'",
    "CAST(i AS BIGINT) = 2147483647",
    "CAST(i AS DECIMAL(12, 2)) < 0.5",
    "dec + 1.25 = 2.50",
    "dec * 2 > 2.5",
    "f + 0.5 > 1998.9",
    "f * 3 <= 0.9",
]
# Integer arithmetic: exact but for the rows where it may overflow (kept: with
# ANSI mode on the query fails there, off it wraps around).
NEAR_OVERFLOW = ["i + 1 > 0", "7 - i >= 0", "i * 3 <= 21", "l - 5 < 0", "1 + l = 6", "i * 2 = 14"]


def test_integer_arithmetic_keeps_beyond_sparks_files_only_where_it_may_overflow(spark, table):
    with _session(spark, "UTC"):
        truth = _spark_files(spark, table, NEAR_OVERFLOW)
        values = spark.read.parquet(str(table)).selectExpr("input_file_name() AS file", "i", "l")
        extreme = {
            Path(row.file).name
            for row in values.collect()
            if any(v is not None and abs(v) > 2**30 for v in (row.i, row.l))
        }
    for where, matching in zip(NEAR_OVERFLOW, truth, strict=True):
        kept = {Path(f).name for f in si.prune(str(table), where).files}
        assert matching <= kept, where
        assert kept - matching <= extreme, where


@pytest.mark.parametrize("zone", ["UTC", "Australia/Lord_Howe"])
def test_exact_rewrites_keep_exactly_sparks_files(spark, table, zone):
    """Dates and most rules are exact in any zone; timestamps wherever the zone's
    offset does not change around the range's ends (every case here)."""
    with _session(spark, zone):
        truth = _spark_files(spark, table, EXACT)
    for where, matching in zip(EXACT, truth, strict=True):
        result = si.prune(str(table), where, time_zone=zone)
        assert {Path(f).name for f in result.files} == matching, f"{where}: {result.bound}"


@contextmanager
def _session(spark: Any, zone: str) -> Iterator[None]:
    """The session in ``zone``, with overflow wrapping (ANSI off): the harder case."""
    keys = ("spark.sql.session.timeZone", "spark.sql.ansi.enabled")
    previous = {key: spark.conf.get(key) for key in keys}
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        yield
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)


def test_a_column_with_functions_prunes_as_its_sql_does(spark, table):
    from pyspark.sql import functions as F  # noqa: N812

    columns = {
        "year(d) = 1994": F.year("d") == 1994,
        "year(d) = 2020 AND month(d) = 12": (F.year("d") == 2020) & (F.month(F.col("d")) == 12),
        "left(s, 2) = 'ab'": F.left(F.col("s"), F.lit(2)) == "ab",
        "i + 1 > 0": F.col("i") + 1 > 0,
        "date_trunc('MONTH', ts) >= TIMESTAMP '2021-07-01 00:00:00'": (
            F.date_trunc("MONTH", "ts") >= F.lit("2021-07-01 00:00:00").cast("timestamp")
        ),
    }
    for sql, column in columns.items():
        by_sql = si.prune(str(table), sql, time_zone="UTC")
        by_column = si.prune(str(table), column, time_zone="UTC")
        assert by_column.files == by_sql.files, (sql, by_column.bound)
        assert by_column.kept < by_column.total, (sql, by_column.bound)
