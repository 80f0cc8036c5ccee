"""PySpark Columns -> predicates, checked against the equivalent SQL text and
against Spark itself (its own casts, and which rows its filter keeps)."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import reduce
from typing import Any

import pyarrow as pa
import pytest

from skipindex.errors import InvalidPredicateError
from skipindex.expressions import parse_column, prepare
from skipindex.expressions.casts import (
    UnrepresentableError,
    str_to_bool,
    str_to_date,
    str_to_double,
    str_to_int,
    str_to_timestamp,
)
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundComparison,
    BoundIn,
    Or,
    Unsupported,
)
from skipindex.expressions.timezones import session_zone, zone_named
from tests._support import bound_holds

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        ("i", pa.int64()),
        ("n", pa.int32()),
        ("dec", pa.decimal128(10, 2)),
        ("f", pa.float64()),
        ("g", pa.float32()),
        ("s", pa.string()),
        ("dt", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("b", pa.bool_()),
        ("bin", pa.binary()),
    ]
)


def same(left: Any, right: Any) -> bool:
    """Structural equality where NaN equals NaN."""
    if isinstance(left, float) and isinstance(right, float):
        return (math.isnan(left) and math.isnan(right)) or left == right
    if isinstance(left, tuple) and isinstance(right, tuple):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if type(left) is not type(right):
        return False
    if isinstance(left, BoundComparison):
        return left.column == right.column and left.op is right.op and same(left.value, right.value)
    if isinstance(left, BoundIn):
        return (
            left.column == right.column
            and left.negated == right.negated
            and same(left.values, right.values)
        )
    if isinstance(left, (And, Or)):
        return same(left.children, right.children)
    return bool(left == right)


def _pairs() -> list[tuple[str, Any, str]]:
    from pyspark.sql import functions as F  # noqa: N812

    col = F.col
    return [
        ("gt", col("i") > 5, "i > 5"),
        ("eq", col("i") == 5, "i = 5"),
        ("ne", col("i") != 5, "i != 5"),
        (
            "lt_le_ge",
            (col("i") < 5) | (col("i") <= 6) | (col("i") >= 7),
            "i < 5 OR i <= 6 OR i >= 7",
        ),
        ("mirrored", F.lit(5) < col("i"), "5 < i"),
        ("and", (col("i") > 1) & (col("s") == "x"), "i > 1 AND s = 'x'"),
        ("or_not", (col("i") > 1) | ~(col("s") == "x"), "i > 1 OR NOT s = 'x'"),
        ("not_and", ~((col("i") > 1) & (col("n") < 3)), "NOT (i > 1 AND n < 3)"),
        ("isin", col("i").isin(3, 1, 2), "i IN (1, 2, 3)"),
        ("isin_list", col("s").isin(["a", "b", None]), "s IN ('a', 'b', NULL)"),
        ("not_isin", ~col("i").isin(1, 2), "i NOT IN (1, 2)"),
        ("between", col("i").between(1, 5), "i BETWEEN 1 AND 5"),
        (
            "not_between",
            ~col("dt").between(date(2020, 1, 1), date(2020, 12, 31)),
            "dt NOT BETWEEN DATE '2020-01-01' AND DATE '2020-12-31'",
        ),
        ("is_null", col("i").isNull(), "i IS NULL"),
        ("is_not_null", col("i").isNotNull(), "i IS NOT NULL"),
        ("null_safe", col("i").eqNullSafe(5), "i <=> 5"),
        ("not_null_safe", ~col("i").eqNullSafe(5), "NOT (i <=> 5)"),
        ("null_safe_null", col("i").eqNullSafe(None), "i <=> NULL"),
        ("eq_none", col("i") == None, "i = NULL"),  # noqa: E711
        ("date", col("dt") >= F.lit(date(2020, 1, 1)), "dt >= DATE '2020-01-01'"),
        ("old_date", col("dt") == F.lit(date(1000, 1, 1)), "dt = DATE '1000-01-01'"),
        (
            "ts_aware",
            col("ts") >= F.lit(datetime(2020, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)),
            "ts >= TIMESTAMP '2020-01-01 12:00:00.123456'",
        ),
        ("ts_vs_date", col("ts") == F.lit(date(2020, 1, 1)), "ts = DATE '2020-01-01'"),
        (
            "date_vs_ts",
            col("dt") < F.lit(datetime(2020, 1, 1, 12, tzinfo=UTC)),
            "dt < TIMESTAMP '2020-01-01 12:00:00'",
        ),
        ("decimal", col("dec") == F.lit(Decimal("2.50")), "dec = 2.50"),
        ("decimal_round", col("dec") > Decimal("2.505"), "dec > 2.505"),
        ("int_vs_decimal", col("n") > Decimal("2.5"), "n > 2.5"),
        ("int_vs_double", col("n") > 2.5, "n > 2.5e0"),
        ("double", col("f") == 1.5, "f = 1.5e0"),
        ("nan", col("f") == math.nan, "f = CAST('NaN' AS DOUBLE)"),  # noqa: PLW0177
        ("inf", col("f") < float("inf"), "f < CAST('Infinity' AS DOUBLE)"),
        ("isnan", F.isnan(col("f")), "isnan(f)"),
        ("float32_cast", col("g") == F.lit(0.1).cast("float"), "g = CAST(0.1 AS FLOAT)"),
        ("float32_double", col("g") == 0.1, "g = 0.1e0"),
        ("string", col("s") != "it's", "s != 'it''s'"),
        ("unicode", col("s") == "日本", "s = '日本'"),
        ("bool", col("b"), "b"),
        ("not_bool", ~col("b"), "NOT b"),
        ("bool_eq", col("b") == True, "b = TRUE"),  # noqa: E712
        ("binary", col("bin") == bytearray(b"\x01\x02"), "bin = X'0102'"),
        ("expr", F.expr("i > 5 AND s = 'x'"), "i > 5 AND s = 'x'"),
        ("expr_operand", col("dt") == F.expr("DATE '2020-01-01'"), "dt = DATE '2020-01-01'"),
        ("alias", (col("i") > 1).alias("z"), "i > 1"),
        ("cast_literal", col("i") == F.lit("5").cast("int"), "i = CAST('5' AS INT)"),
        ("negative", col("i") > -F.lit(5), "i > -5"),
        ("negative_lit", col("i") > -5, "i > -5"),
        ("qualified", col("t.i") > 1, "t.i > 1"),
        ("case", col("I") > 1, "I > 1"),
        ("true", F.lit(True), "TRUE"),
        ("false", F.lit(False), "FALSE"),
        ("big_int", col("i") == 2**40, "i = 1099511627776"),
    ]


def test_columns_bind_like_the_equivalent_sql(spark):
    failures = []
    for name, column, sql in _pairs():
        from_column = prepare(column, SCHEMA)
        from_sql = prepare(sql, SCHEMA)
        if not same(from_column, from_sql):
            failures.append(f"{name}: {column} -> {from_column!r} but {sql!r} -> {from_sql!r}")
    assert not failures, "\n".join(failures)


def test_unsupported_columns_stay_local(spark):
    from pyspark.sql import functions as F  # noqa: N812

    assert isinstance(prepare(F.lower(F.col("s")) == "x", SCHEMA), Unsupported)
    assert isinstance(prepare(F.col("s").rlike("[ab].*"), SCHEMA), Unsupported)  # no text needed
    # a regex that needs literal text: what SQL makes of it (but for the text it shows)
    by_column = prepare(F.col("s").rlike("a(b)?c+"), SCHEMA).children
    by_sql = prepare("s RLIKE 'a(b)?c+'", SCHEMA).children
    assert isinstance(by_column[-1], Unsupported)
    assert same(by_column[:-1], by_sql[:-1])
    assert isinstance(prepare(F.col("i") == F.col("n"), SCHEMA), Unsupported)
    assert isinstance(prepare(F.col("s").startswith(F.col("s")), SCHEMA), Unsupported)
    # a prefix is a range on a string column (issue 8), in the Column API as in SQL
    assert prepare(F.col("s").like("a%"), SCHEMA) == prepare("s >= 'a' AND s < 'b'", SCHEMA)
    assert prepare(F.col("s").startswith("a"), SCHEMA) == prepare("s LIKE 'a%'", SCHEMA)
    # a pattern with wildcards inside, contains and endswith: what SQL makes of them
    assert prepare(F.col("s").like("a_%"), SCHEMA) == prepare("s LIKE 'a_%'", SCHEMA)
    assert prepare(F.col("s").contains("ab"), SCHEMA) == prepare("s LIKE '%ab%'", SCHEMA)
    assert prepare(F.col("s").endswith("ab"), SCHEMA) == prepare("s LIKE '%ab'", SCHEMA)
    mixed = prepare((F.col("i") > 1) & F.lower(F.col("s")).startswith("q"), SCHEMA)
    assert isinstance(mixed, And)
    assert mixed.children[0] == prepare("i > 1", SCHEMA)
    assert isinstance(mixed.children[1], Unsupported)
    assert "lower" in mixed.children[1].sql.lower()


def test_empty_isin_matches_spark(spark):
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark.createDataFrame([(1,), (None,)], "i bigint")
    assert frame.filter(~F.col("i").isin([])).count() == 2
    assert prepare(~F.col("i").isin([]), SCHEMA) == AlwaysTrue()
    assert prepare(F.col("i").isin([]), SCHEMA) == AlwaysFalse()


def test_non_boolean_columns_raise(spark):
    from pyspark.sql import functions as F  # noqa: N812

    for column in (F.col("i") + 1, F.lit(5), F.lit("x")):
        with pytest.raises(InvalidPredicateError, match="not a boolean"):
            parse_column(column)
    with pytest.raises(InvalidPredicateError, match="Column"):
        parse_column(object())


def test_deep_and_wide_columns(spark):
    from pyspark.sql import functions as F  # noqa: N812

    wide = reduce(lambda a, b: a & b, [F.col("i") != k for k in range(500)])
    bound = prepare(wide, SCHEMA)
    assert isinstance(bound, And)
    assert len(bound.children) == 500
    deep = F.col("i") > 0
    for k in range(200):
        deep = ~((F.col("n") == k) | deep) if k % 2 else (F.col("n") != k) & deep
    assert prepare(deep, SCHEMA) is not None


def test_timestamps_are_the_instants_spark_uses(spark):
    from pyspark.sql import functions as F  # noqa: N812

    for value in (
        datetime(2020, 1, 1, 12, 0, 0, 123456),  # naive: PySpark uses the local zone
        datetime(2020, 6, 1, 12, tzinfo=UTC),
        datetime(1000, 1, 1, 12, 0, 0, 123456, tzinfo=UTC),  # Spark rebases old dates
        datetime(1, 1, 1, tzinfo=UTC),
    ):
        literal = F.lit(value)
        truth = spark.range(1).select(F.unix_micros(literal)).first()[0]
        bound = prepare(F.col("ts") == literal, SCHEMA)
        if isinstance(bound, BoundComparison):
            assert bound.value == truth, value
        else:
            assert isinstance(bound, (Unsupported, AlwaysFalse))
    day = spark.range(1).select(F.unix_date(F.lit(date(1000, 1, 1)))).first()[0]
    assert prepare(F.col("dt") == F.lit(date(1000, 1, 1)), SCHEMA).value == day  # type: ignore[union-attr]


# --------------------------------------------------------------------------- string casts vs Spark

TIMESTAMP_STRINGS = [
    "2020-01-01",
    "2024-03-10 02:30:00",  # in New York's spring-forward gap
    "2024-11-03 01:30:00",  # in New York's fall-back overlap
    "294247-01-10",  # beyond Python's years
    "10000-01-01 00:00:00",
    "-0044-03-15",
    "2020-01-01 12:34:56",
    "2020-01-01T12:34:56.123456",
    "2020-1-2 3:4:5.6",
    "2020-01-01 12:34",
    "2020-01-01T12",
    "2020-01-01 12:34:56.",
    " 2020-01-01 00:00:00 ",
    "2020-01-01 12:34:56.123456789",
    "2020-01-01T00:00:00Z",
    "2020-01-01 12:34:56+02:00",
    "2020-01-01 12:34:56 +02:00",
    "2020-01-01 12:34:56+0200",
    "2020-01-01 12:34:56-07",
    "2020-01-01 12:34:56 UTC",
    "2020-01-01 12:34:56 UTC+2",
    "2020-01-01 12:34:56 GMT-03:30",
    "2020-07-01 12:34:56 Europe/Paris",
    "2020-03-08 02:30:00 America/New_York",
    "2020",
    "2020-06",
    "+2020-01-01",
    "2020-13-01",
    "2020-02-30",
    "2020-01-01 25:00:00",
    "2020-01-01T",
    "abc",
    "20200101",
    "2020/01/01",
    "",
    "2020-01-01 12:60:00",
]
DATE_STRINGS = [
    "2020-01-01",
    "2020-1-1",
    "2020",
    "2020-06",
    " 2020-01-01 ",
    "2020-01-01 12:34",
    "2020-01-01T99",
    "2020-01-01 garbage",
    "+2020-01-01",
    "2020-13-01",
    "2020-02-30",
    "20200101",
    "2020/01/01",
    "abc",
    "",
    "2020-01-01x",
]
NUMBER_STRINGS = [
    "1",
    " 12 ",
    "+5",
    "-0",
    "1.5",
    ".5",
    "5.",
    "1e3",
    "1E-2",
    "1.5d",
    "1.5F",
    "NaN",
    "nan",
    "-NaN",
    "Infinity",
    "-Infinity",
    "inf",
    "-inf",
    "+inf",
    "infinity",
    "INF",
    "0x1p3",
    "abc",
    "1_0",
    "",
    "1e400",
    "--1",
    "1,5",
]
BOOL_STRINGS = ["true", " TRUE ", "t", "y", "yes", "1", "false", "f", "n", "no", "0", "maybe", ""]


def _spark_try_casts(spark: Any, strings: list[str], target: str) -> list[Any]:
    from pyspark.sql import functions as F  # noqa: N812

    # Dates and timestamps as Spark's own integers (days, UTC micros), never through
    # Python datetimes (which PySpark converts in the Python process's zone).
    unwrap = {"DATE": "unix_date", "TIMESTAMP": "unix_micros"}.get(target, "")
    frame = spark.createDataFrame([(i, s) for i, s in enumerate(strings)], "i int, s string")
    rows = frame.select("i", F.expr(f"{unwrap}(try_cast(s AS {target}))").alias("v")).collect()
    return [v for _, v in sorted((r["i"], r["v"]) for r in rows)]


def _agree(mine: Any, theirs: Any) -> bool:
    if isinstance(mine, float) and isinstance(theirs, float):
        return (math.isnan(mine) and math.isnan(theirs)) or mine == theirs
    return bool(mine == theirs)


def test_string_casts_match_spark(spark):
    def run(strings: list[str], target: str, parse: Any, convert: Any = lambda v: v) -> list[str]:
        problems = []
        for text, theirs in zip(strings, _spark_try_casts(spark, strings, target), strict=True):
            try:
                mine = parse(text)
            except UnrepresentableError:
                continue  # skipindex declines; callers make it might-match
            expected = None if theirs is None else convert(theirs)
            if not _agree(mine, expected):
                problems.append(f"{target} {text!r}: skipindex {mine!r}, Spark {expected!r}")
        return problems

    problems = []
    for name in ("UTC", "America/New_York", "Asia/Kathmandu"):  # zone-less strings: session's
        previous = spark.conf.get("spark.sql.session.timeZone")
        spark.conf.set("spark.sql.session.timeZone", name)
        try:
            with session_zone(zone_named(name)):
                problems += [
                    f"{name}: {p}" for p in run(TIMESTAMP_STRINGS, "TIMESTAMP", str_to_timestamp)
                ]
        finally:
            spark.conf.set("spark.sql.session.timeZone", previous)
    problems += run(DATE_STRINGS, "DATE", str_to_date)
    problems += run(NUMBER_STRINGS, "DOUBLE", str_to_double)
    problems += run(NUMBER_STRINGS, "BIGINT", str_to_int)
    problems += run(BOOL_STRINGS, "BOOLEAN", str_to_bool)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- rows vs Spark's filter

_NAMES = ("i", "n", "dec", "f", "g", "s", "dt", "ts", "b", "bin")
_NOON = datetime(2020, 1, 1, 12, tzinfo=UTC)
ROWS = [
    dict(zip(_NAMES, values, strict=True))
    for values in [
        (2, 3, Decimal("2.50"), 0.1, 0.1, "a", date(2020, 1, 1), _NOON, True, b"\x01"),
        (
            -1,
            127,
            Decimal("-1.00"),
            math.nan,
            math.nan,
            "",
            date(1999, 12, 31),
            _NOON.replace(hour=0),
            False,
            b"",
        ),
        (
            16777217,
            0,
            Decimal("0.10"),
            -0.0,
            16777216.0,
            "é",
            date(2020, 1, 2),
            datetime(1970, 1, 1, tzinfo=UTC),
            None,
            None,
        ),
        (None,) * 10,
        (
            3,
            -128,
            Decimal("2.51"),
            math.inf,
            0.5,
            "日本",
            date(2020, 1, 1),
            _NOON.replace(microsecond=1),
            True,
            b"\xff",
        ),
    ]
]
FILTERS = [
    "g = 0.1",
    "g = CAST(0.1 AS FLOAT)",
    "g = 16777217",
    "g = 16777216",
    "g > 0.4e0",
    "g = CAST('NaN' AS DOUBLE)",
    "g < '0.6'",
    "f = 0",
    "f > CAST('Infinity' AS DOUBLE)",
    "f >= CAST('NaN' AS DOUBLE)",
    "NOT (f < CAST('NaN' AS DOUBLE))",
    "f IN (0.1, CAST('NaN' AS DOUBLE))",
    "dec = 2.5",
    "dec > 2.505",
    "dec = '2.5'",
    "dec < 0.1e0",
    "dec IN (2.5, 2.51)",
    "n > 126.5",
    "n < 1000",
    "n = 1000",
    "i > 2.5e0",
    "i = 16777217",
    "i NOT IN (2, NULL)",
    "i IN (2, NULL)",
    "NOT (i <=> 2)",
    "i IS DISTINCT FROM 3",
    "dt = TIMESTAMP '2020-01-01 12:00:00'",
    "dt < TIMESTAMP '2020-01-01 12:00:00'",
    "dt = '2020-01-01 12:00'",
    "ts = DATE '2020-01-01'",
    "ts > '2020-01-01 11:00:00-01:00'",
    "ts BETWEEN '2020-01-01' AND TIMESTAMP '2020-01-01 12:00:00'",
    "s < ''",
    "s >= ''",
    "s > 'b'",
    "b",
    "NOT b",
    "b IS NOT TRUE",
    "b != TRUE",
    "bin = 'a'",
    "bin < X'02'",
    "isnan(f)",
    "NOT isnan(f)",
    "NOT (NOT (i > 0) OR s = 'a')",
]


def _physical(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    if row["dt"] is not None:
        out["dt"] = (row["dt"] - date(1970, 1, 1)).days
    if row["ts"] is not None:
        out["ts"] = (row["ts"] - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    if row["g"] is not None:  # what a float32 column holds, widened to double
        out["g"] = float(pa.array([row["g"]], pa.float32())[0].as_py())
    return out


def test_bound_predicates_keep_every_row_spark_keeps(spark):
    from pyspark.sql import functions as F  # noqa: N812

    table = pa.Table.from_pylist(ROWS, schema=SCHEMA).append_column(
        "rid", pa.array(range(len(ROWS)))
    )
    frame = spark.createDataFrame(table)
    physical = [_physical(r) for r in ROWS]
    problems = []
    for where in FILTERS:
        kept = {r["rid"] for r in frame.filter(F.expr(where)).select("rid").collect()}
        bound = prepare(where, SCHEMA)
        got = {i for i, row in enumerate(physical) if bound_holds(bound, row)}
        if not kept <= got:
            problems.append(f"{where!r} -> {bound}: dropped rows {sorted(kept - got)}")
        exact = "Unsupported" not in repr(bound)
        if exact and got != kept:
            problems.append(f"{where!r} -> {bound}: extra rows {sorted(got - kept)}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "text", ["1999 + 2", "(1200 + 11) - 3", "2.5 * 800", "0.1 + 0.2", "2147483648 + 1", "1e0 + 1"]
)
def test_literal_arithmetic_folds_to_sparks_value(spark, text):
    from skipindex.expressions import parse_sql
    from skipindex.expressions.nodes import Comparison

    folded = parse_sql(f"a = {text}")
    assert isinstance(folded, Comparison)
    assert folded.literal.value == spark.sql(f"SELECT {text}").first()[0]


def test_literal_arithmetic_that_overflows_is_left_to_spark(spark):
    from pyspark.errors import ArithmeticException

    from skipindex.expressions import parse_sql
    from skipindex.expressions.nodes import Comparison

    assert not isinstance(parse_sql("a = 2147483647 + 1"), Comparison)
    with pytest.raises(ArithmeticException):  # ANSI: INT + INT overflows
        spark.sql("SELECT 2147483647 + 1").collect()
