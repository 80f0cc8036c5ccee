"""Differential tests against Spark itself: the index must hold what *Spark* reads.

Every table here is written the way real lakes are (by Spark with its default
INT96 timestamps, in LEGACY calendar mode, by pyarrow's hive writer, with mixed
column case, nested structs, shadowed and escaped partition values, drifting
partition types), indexed with every kind that takes each column, and queried in
sessions outside UTC. The oracle is Spark: the files that hold a matching row
(``input_file_name()``) must all be kept, and ``read()`` must return exactly
Spark's row count, in every session zone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import skipindex as si
from tests._support import examples, spark_write

pytestmark = pytest.mark.spark

ZONES = ("UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu")  # +05:30, +05:45
KINDS = (si.MinMax, si.Bloom, si.EqualityBitmap, si.RangeBitmap, si.BitSlicedBitmap)


@contextlib.contextmanager
def zone(spark: Any, name: str) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", name)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def build_every_kind(spark: Any, root: Path, columns: Sequence[str]) -> None:
    """Each kind on every column whose type (as Spark reads it) it takes, in one build."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from skipindex._types import domain_of
    from skipindex.column_paths import resolve_path, split_name
    from skipindex.indexes import KINDS as KIND_CLASSES

    schema = to_arrow_schema(spark.read.parquet(str(root)).schema, timezone="UTC")
    specs = []
    for column in columns:
        found = resolve_path(schema, (column,)) or resolve_path(schema, split_name(column))
        assert found is not None, column
        domain = domain_of(found[1].type)
        specs += [k(column) for k in KINDS if domain in KIND_CLASSES[k(column).kind].domains]
    assert specs, "no index was built"
    si.build_index(str(root), specs, spark=spark)


def spark_files(spark: Any, root: Path, where: Any) -> tuple[set[str], int]:
    """The files Spark finds a matching row in (relative paths), and its row count."""
    return spark_files_of_each(spark, root, [where])[0]


def spark_files_of_each(
    spark: Any, root: Path, wheres: Sequence[Any]
) -> list[tuple[set[str], int]]:
    """:func:`spark_files` for many predicates in one Spark job (a row counts for a
    predicate where it is TRUE, as ``where`` keeps it)."""
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark.read.option("basePath", str(root)).parquet(str(root))
    counts = [
        F.sum(F.when(F.expr(w) if isinstance(w, str) else w, 1).otherwise(0)).alias(f"n{i}")
        for i, w in enumerate(wheres)
    ]
    rows = frame.groupBy(F.input_file_name().alias("f")).agg(*counts).collect()
    files = {r.f: os.path.relpath(unquote(urlparse(r.f).path), root) for r in rows}
    return [
        ({files[r.f] for r in rows if r[f"n{i}"]}, sum(r[f"n{i}"] for r in rows))
        for i in range(len(wheres))
    ]


def assert_never_drops(spark: Any, root: Path, wheres: Sequence[Any], zones=ZONES) -> None:
    """In each session zone: prune keeps every file Spark matches, read() counts as Spark."""
    for name in zones:
        with zone(spark, name):
            for where, (expected, count) in zip(
                wheres, spark_files_of_each(spark, root, wheres), strict=True
            ):
                kept = si.prune(str(root), where, time_zone=name)
                relative = {os.path.relpath(f, root) for f in kept.files}
                missing = expected - relative
                assert not missing, f"{where!r} in {name}: dropped {missing}\n{kept.explain()}"
                got = si.read(spark, str(root), where).count()
                assert got == count, f"{where!r} in {name}: read() {got} rows, Spark {count}"


def write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)


def test_timestamp_literals_mean_what_the_session_zone_makes_of_them(spark, tmp_path):
    root = tmp_path / "t"
    start = int(datetime(2024, 3, 9, 20, tzinfo=UTC).timestamp()) * 10**6
    for k in range(6):  # one minute apart, across New York's spring-forward night
        micros = pa.array([start + (k * 120 + i) * 60 * 10**6 for i in range(120)], pa.int64())
        ts = micros.cast(pa.timestamp("us", tz="UTC"))
        write(
            pa.table(
                {
                    "ts": ts,
                    "ntz": micros.cast(pa.timestamp("us")),
                    "d": ts.cast(pa.date32()),
                }
            ),
            root / f"f{k}.parquet",
        )
    build_every_kind(spark, root, ["ts", "ntz", "d"])
    from pyspark.sql import functions as F  # noqa: N812

    wheres: list[Any] = [
        "ts < TIMESTAMP '2024-03-10 03:00:00'",
        "ts = TIMESTAMP '2024-03-10 01:30:00'",
        "ts >= '2024-03-10 04:00'",
        "ts > DATE '2024-03-10'",
        "d < TIMESTAMP '2024-03-10 03:00:00'",
        "d = TIMESTAMP '2024-03-10 00:00:00'",
        "ntz > TIMESTAMP '2024-03-10 07:30:00'",
        "ntz = TIMESTAMP '2024-03-10 07:00:00'",
        "ntz <= TIMESTAMP_NTZ '2024-03-10 02:30:00'",
        "CAST(ts AS DATE) = DATE '2024-03-10'",
        F.col("ts") < F.lit("2024-03-10 03:00:00").cast("timestamp"),
        F.expr("ts = TIMESTAMP '2024-03-10 06:40:00'"),
    ]
    assert_never_drops(spark, root, wheres)


def test_a_column_predicate_defaults_to_its_sessions_zone(spark, tmp_path):
    from pyspark.sql import functions as F  # noqa: N812

    root = tmp_path / "t"
    for hour in range(24):
        moment = datetime(2024, 1, 1, hour, 30, tzinfo=UTC)
        write(
            pa.table({"ts": pa.array([moment], pa.timestamp("us", tz="UTC"))}),
            root / f"h{hour:02d}.parquet",
        )
    build_every_kind(spark, root, ["ts"])
    with zone(spark, "America/New_York"):
        kept = si.prune(str(root), F.expr("ts = TIMESTAMP '2024-01-01 10:30:00'"))
    assert kept.time_zone == "America/New_York"
    assert [Path(f).name for f in kept.files] == ["h15.parquet"]


def test_column_names_match_case_insensitively_across_files(spark, tmp_path):
    root = tmp_path / "t"
    write(pa.table({"X": pa.array([1, 2], pa.int64())}), root / "a.parquet")
    write(pa.table({"x": pa.array([5, 6], pa.int64())}), root / "b.parquet")
    build_every_kind(spark, root, ["X"])
    wheres = ["X = 5", "X > 1", "X IS NOT NULL", "x = 6", "X IN (5, 2)"]
    assert_never_drops(spark, root, wheres, zones=("UTC",))
    kept = si.prune(str(root), "X = 5", time_zone="UTC")
    assert {Path(f).name for f in kept.files} == {"b.parquet"}  # and still skips


def test_struct_fields_are_addressed_by_their_path(spark, tmp_path):
    root = tmp_path / "t"
    inner = pa.struct([("f", pa.int64())])
    nested = pa.struct([("f", pa.int64()), ("g", pa.string()), ("t", inner)])
    for k in range(3):
        values = [{"f": 10 * k + i, "g": f"g{k}", "t": {"f": 100 * k + i}} for i in range(3)]
        values.append(None)  # a NULL struct: its fields are NULL
        table = pa.table(
            {
                "f": pa.array([k, k, k, k], pa.int64()),
                "s": pa.array(values, nested),
                "a": pa.array([{"b": k}] * 4, pa.struct([("b", pa.int64())])),
                "b": pa.array([-k] * 4, pa.int64()),
            }
        )
        write(table, root / f"f{k}.parquet")
    build_every_kind(spark, root, ["f", "s.f", "s.t.f", "a.b"])
    wheres = [
        "s.f = 1",
        "s.f = 11",
        "s.g = 'g1'",
        "s.t.f > 150",
        "S.T.F = 201",
        "s.f IS NULL",
        "f = 1",
        "a.b = 1",
        "b = -1",
    ]
    assert_never_drops(spark, root, wheres, zones=("UTC",))
    names = {Path(f).name for f in si.prune(str(root), "s.f = 11", time_zone="UTC").files}
    assert names == {"f1.parquet"}  # nested fields skip files too
    names = {Path(f).name for f in si.prune(str(root), "s.t.f > 150", time_zone="UTC").files}
    assert names == {"f2.parquet"}


def test_partition_values_follow_spark(spark, tmp_path):
    root = tmp_path / "t"
    # (a) a data column named like the partition column: the folder's value wins
    write(pa.table({"p": [9], "v": [1]}), root / "p=1" / "a.parquet")
    write(pa.table({"p": [1], "v": [2]}), root / "p=2" / "b.parquet")
    build_every_kind(spark, root, ["v"])
    assert_never_drops(spark, root, ["p = 1", "p = 9", "p > 1", "v = 1 AND p = 1"])

    # (b) escaped folder names: each %XX is one character to Spark
    escaped = tmp_path / "e"
    write(pa.table({"v": [1]}), escaped / "p=%C3%A9" / "a.parquet")
    write(pa.table({"v": [2]}), escaped / "p=plain" / "b.parquet")
    build_every_kind(spark, escaped, ["v"])
    assert_never_drops(spark, escaped, ["p = 'Ã©'", "p = 'é'", "p > 'b'"], zones=("UTC",))

    # (c) type drift: ints at build time, a string folder afterwards
    drift = tmp_path / "d"
    write(pa.table({"v": [1]}), drift / "p=9" / "a.parquet")
    write(pa.table({"v": [2]}), drift / "p=10" / "b.parquet")
    build_every_kind(spark, drift, ["v"])
    write(pa.table({"v": [3]}), drift / "p=abc" / "c.parquet")
    assert_never_drops(spark, drift, ["p < '5'", "p = '10'", "p > 'a'"], zones=("UTC",))

    # (d) a double partition column holding NaN
    floats = tmp_path / "n"
    write(pa.table({"v": [1]}), floats / "p=NaN" / "a.parquet")
    write(pa.table({"v": [2]}), floats / "p=1.5" / "b.parquet")
    write(pa.table({"v": [3]}), floats / "p=0.5" / "c.parquet")
    build_every_kind(spark, floats, ["v"])
    wheres = ["p > 1", "p = 'NaN'", "isnan(p)", "p < 1", "p = CAST('NaN' AS DOUBLE)"]
    assert_never_drops(spark, floats, wheres, zones=("UTC",))
    names = {Path(f).name for f in si.prune(str(floats), "p < 1", time_zone="UTC").files}
    assert names == {"c.parquet"}

    # timestamp partition folders are wall times in the session zone
    stamps = tmp_path / "s"
    write(pa.table({"v": [1]}), stamps / "p=2024-01-01 10%3A00%3A00" / "a.parquet")
    write(pa.table({"v": [2]}), stamps / "p=2024-01-02 10%3A00%3A00" / "b.parquet")
    build_every_kind(spark, stamps, ["v"])
    wheres = ["p < TIMESTAMP '2024-01-01 12:00:00'", "p = TIMESTAMP '2024-01-02 10:00:00'"]
    assert_never_drops(spark, stamps, wheres)


def test_read_types_partitions_over_the_whole_table_without_a_recorded_schema(spark, tmp_path):
    from skipindex.indexing.build import InProcessRunner, build_with

    root = tmp_path / "t"
    for value, v in (("9", 1), ("10", 2), ("abc", 3)):
        write(pa.table({"v": [v]}), root / f"p={value}" / "f.parquet")
    build_with(str(root), [si.MinMax("v")], InProcessRunner())  # no Spark schema recorded
    # The kept files alone (p=9, p=10) would make p an int; the table makes it a string.
    assert_never_drops(spark, root, ["v < 3 AND p < '5'", "v <= 2 AND p = '10'"], ("UTC",))


def test_int96_timestamps_are_read_as_spark_reads_them(spark, tmp_path):
    root = tmp_path / "t"
    sentinel = "SELECT TIMESTAMP'9999-12-31 00:00:00' AS valid_to, 1 AS id"
    current = "SELECT TIMESTAMP'2020-06-01 12:00:00' AS valid_to, 2 AS id"
    ancient = "SELECT TIMESTAMP'0001-01-01 00:00:00' AS valid_to, 3 AS id"
    with zone(spark, "UTC"):
        for name, sql in (("a", sentinel), ("b", current), ("c", ancient)):
            spark_write(spark.sql(sql), root / f"{name}.parquet")
    assert spark.conf.get("spark.sql.parquet.outputTimestampType") == "INT96"
    build_every_kind(spark, root, ["valid_to"])
    wheres = [
        "valid_to > TIMESTAMP'2024-01-01 00:00:00'",
        "valid_to = TIMESTAMP'9999-12-31 00:00:00'",
        "valid_to < TIMESTAMP'1000-01-01 00:00:00'",
        "valid_to IN (TIMESTAMP'9999-12-31 00:00:00', TIMESTAMP'2020-06-01 12:00:00')",
    ]
    assert_never_drops(spark, root, wheres)
    kept = si.prune(str(root), "valid_to = TIMESTAMP'9999-12-31 00:00:00'", time_zone="UTC")
    assert [Path(f).name for f in kept.files] == ["a.parquet"]


@pytest.mark.parametrize(
    ("write_zone", "int96_mode"),
    [("UTC", "LEGACY"), ("America/Los_Angeles", "LEGACY"), ("UTC", "CORRECTED")],
)
def test_legacy_calendar_files_are_rebased_like_spark(spark, tmp_path, write_zone, int96_mode):
    root = tmp_path / "t"
    rows = {
        "a": "SELECT DATE'1000-03-01' AS d, TIMESTAMP'1000-03-01 00:00:00' AS ts, 1 AS id",
        "b": "SELECT DATE'0001-01-01' AS d, TIMESTAMP'0001-01-01 00:00:00' AS ts, 2 AS id",
        "c": "SELECT DATE'2020-01-01' AS d, TIMESTAMP'2020-01-01 00:00:00' AS ts, 3 AS id",
        "e": "SELECT DATE'1582-10-04' AS d, TIMESTAMP'1582-10-04 12:00:00' AS ts, 4 AS id",
    }
    legacy = {
        "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY",
        "spark.sql.parquet.int96RebaseModeInWrite": int96_mode,
        "spark.sql.session.timeZone": write_zone,
    }
    previous = {k: spark.conf.get(k) for k in legacy}
    try:
        for key, value in legacy.items():
            spark.conf.set(key, value)
        for name, sql in rows.items():
            spark_write(spark.sql(sql), root / f"{name}.parquet")  # INT96 ts
            with_micros = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}
            spark.conf.set(*next(iter(with_micros.items())))
            spark_write(spark.sql(sql), root / f"{name}_micros.parquet")
            spark.conf.set("spark.sql.parquet.outputTimestampType", "INT96")
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)
    build_every_kind(spark, root, ["d", "ts"])
    wheres = [
        "d = DATE '1000-03-01'",
        "d = DATE '0001-01-01'",
        "d < DATE '1582-10-15'",
        "d = DATE '1582-10-04'",
        "ts = TIMESTAMP '1000-03-01 00:00:00'",
        "ts < TIMESTAMP '1500-01-01 00:00:00'",
    ]
    assert_never_drops(spark, root, wheres, zones=(write_zone, "Asia/Kolkata"))
    kept = si.prune(str(root), "d = DATE '2020-01-01'", time_zone="UTC")
    assert {Path(f).name for f in kept.files} <= {"c.parquet", "c_micros.parquet"}  # skips


def test_literals_spark_accepts_are_bound_exactly(spark, tmp_path):
    root = tmp_path / "t"
    decimal_type = pa.decimal128(38, 10)
    big = Decimal("-1234567890123456789.0123456789")
    write(
        pa.table(
            {
                "dw": pa.array([big, Decimal(1)], decimal_type),
                "y": pa.array([-128, 5], pa.int8()),
                "sm": pa.array([-32768, 7], pa.int16()),
            }
        ),
        root / "a.parquet",
    )
    write(
        pa.table(
            {
                "dw": pa.array([Decimal(2)], decimal_type),
                "y": pa.array([1], pa.int8()),
                "sm": pa.array([1], pa.int16()),
            }
        ),
        root / "b.parquet",
    )
    build_every_kind(spark, root, ["dw", "y", "sm"])
    from pyspark.sql import functions as F  # noqa: N812

    wheres: list[Any] = [
        f"dw = {big}",
        F.col("dw") == F.lit(big),
        "y = -128Y",
        "sm = -32768S",
        "y < -127Y",
    ]
    assert_never_drops(spark, root, wheres, zones=("UTC",))


def test_strings_with_nul_and_long_in_lists(spark, tmp_path):
    root = tmp_path / "t"
    for k, values in enumerate((["a", "b\x00"], ["b", "c"], ["\uffff", "z"])):
        write(pa.table({"s": values}), root / f"f{k}.parquet")
    build_every_kind(spark, root, ["s"])
    from pyspark.sql import functions as F  # noqa: N812

    many = [f"v{i}" for i in range(20)]
    wheres: list[Any] = [
        F.col("s").isin([*many, "b\x00"]),
        F.col("s").isin([*many, "\uffff"]),
        F.col("s") == "b\x00",
        F.col("s") > "b",
    ]
    assert_never_drops(spark, root, wheres, zones=("UTC",))


def test_strings_read_as_dictionaries_hold_what_spark_reads(spark, tmp_path, monkeypatch):
    """Spark writes the strings (its own dictionary pages, a fallback to plain
    pages where a row group's dictionary grows, several row groups per file);
    indexed only by kinds that take dictionaries, they are read as dictionaries,
    and prune keeps every file Spark matches in sessions outside UTC. Equality
    bitmaps are exact, so for their predicates exactly Spark's files are kept."""
    from skipindex.indexing import indexer
    from skipindex.indexing.build import InProcessRunner, build_with

    root = tmp_path / "t"
    text = "CASE WHEN id % 7 = 0 THEN NULL WHEN id % 5 = 0 THEN concat('b', char(0)) "
    text += "WHEN id % 3 = 0 THEN 'é' ELSE concat('v', CAST(id % 40 + {k} * 40 AS STRING)) END"
    for k in range(3):
        frame = spark.range(0, 3000).selectExpr(
            f"{text.format(k=k)} AS s",
            f"CAST(concat(repeat('x', 70), CAST(id * {k + 1} AS STRING)) AS BINARY) AS b",
            "CAST(id AS TIMESTAMP) AS ts",
        )
        spark_write(frame, root / f"f{k}.parquet", **{"parquet.block.size": "8192"})
    assert pq.ParquetFile(root / "f0.parquet").metadata.num_row_groups >= 3
    dictionaries: list[list[tuple[str, ...]]] = []
    original = indexer.read_columns

    def spy(parquet: Any, wanted: Any, view: Any, chosen: Any, *more: Any) -> Any:
        dictionaries.append(sorted(chosen))
        return original(parquet, wanted, view, chosen, *more)

    monkeypatch.setattr(indexer, "read_columns", spy)
    kinds = (si.MinMax, si.Bloom, si.EqualityBitmap, si.RangeBitmap)
    build_with(str(root), [k(c) for c in ("s", "b") for k in kinds], InProcessRunner())
    assert dictionaries == [[("b",), ("s",)]] * 3
    exact = ["s = 'v45'", "s = concat('b', char(0))", "s IN ('é', 'v119')", "s IS NULL"]
    for where in exact:
        expected, _ = spark_files(spark, root, where)
        kept = {os.path.relpath(f, root) for f in si.prune(str(root), where).files}
        assert kept == expected, where
    wheres = [
        *exact,
        "s > 'v9'",
        "s BETWEEN 'v1' AND 'v2'",
        "s LIKE 'v4%'",
        "s <> 'é'",
        "b = CAST(concat(repeat('x', 70), '2998') AS BINARY)",
        "b < CAST('xy' AS BINARY)",
    ]
    assert_never_drops(spark, root, wheres, zones=("America/Los_Angeles", "Asia/Kathmandu"))


def test_files_spark_hides_or_reads_specially(spark, tmp_path):
    root = tmp_path / "t"
    import pandas as pd

    frame = pd.DataFrame({"c": pd.Categorical(["x", "y", "x"]), "file_name": ["a", "b", "c"]})
    root.mkdir(parents=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), root / "a.parquet")
    other = pd.DataFrame({"c": pd.Categorical(["z"]), "file_name": ["d"]})
    pq.write_table(pa.Table.from_pandas(other, preserve_index=False), root / "b.parquet")
    pq.write_metadata(pq.read_schema(root / "a.parquet"), root / "_metadata")
    build_every_kind(spark, root, ["c"])  # a dictionary column Spark reads as strings
    result = si.prune(str(root), "c = 'x'", time_zone="UTC")
    assert result.total == 2  # _metadata is not a data file
    assert {Path(f).name for f in result.files} == {"a.parquet"}
    wheres = ["c = 'x'", "c IN ('y', 'z')", "_metadata.file_name = 'a.parquet'"]
    assert_never_drops(spark, root, wheres, zones=("UTC",))


# ----------------------------------------------------------------- property test

STRINGS = [
    "",
    "a",
    "ab",
    "abc",
    "b",
    "b\x00",
    "\uffff",
    "é",
    "http://www.x.org/a",
    "http://www.x.org/b",
]
PARTITIONS = ["1.5", "NaN", "-0.5", "%C3%A9", "a%20b", "7", "__HIVE_DEFAULT_PARTITION__"]
STAMPS = [  # UTC micros around New York's 2024 spring-forward and Kathmandu's odd offset
    int(datetime(2024, 3, 10, h, m, tzinfo=UTC).timestamp()) * 10**6
    for h in (5, 6, 7, 8, 18)
    for m in (0, 15, 45)
]


def _sql_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    escaped = escaped.replace("\x00", "\\u0000").replace("\uffff", "\\uFFFF")
    return f"'{escaped}'"


def _stamp_literal(micros: int, minutes: int) -> str:
    moment = datetime.fromtimestamp(micros / 10**6 + minutes * 60, tz=UTC)
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S}'"  # a wall time: read in the session zone


@st.composite
def _leaf(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["s", "ts", "x", "p"]))
    if column == "s":
        literal = _sql_string(draw(st.sampled_from([*STRINGS, "aa", "c", "b\x00\x00"])))
        many = draw(st.lists(st.sampled_from(STRINGS), min_size=17, max_size=24))
        prefix = draw(st.sampled_from(["a", "http://www.x.org/", "b", "b\x00"]))
        return draw(
            st.sampled_from(
                [
                    f"s {draw(st.sampled_from(['=', '<', '>=', '!=']))} {literal}",
                    f"s IN ({', '.join(_sql_string(v) for v in many)})",
                    f"s LIKE {_sql_string(prefix + '%')}",
                    f"startswith(s, {literal})",
                ]
            )
        )
    if column == "ts":
        literal = _stamp_literal(draw(st.sampled_from(STAMPS)), draw(st.sampled_from([-30, 0, 60])))
        return f"ts {draw(st.sampled_from(['=', '<', '>', '>=']))} {literal}"
    if column == "x":
        many = draw(st.lists(st.integers(-3, 40), min_size=17, max_size=20))
        return draw(
            st.sampled_from(
                [f"x IN ({', '.join(map(str, many))})", f"x > {draw(st.integers(-3, 40))}",
                 "(x > 3 AND s > 'a') IS NULL", "(x < 0 OR s = 'b') IS NOT TRUE"]
            )
        )  # fmt: skip
    literal = draw(st.sampled_from(["1.5", "'NaN'", "'\u00c3\u00a9'", "'a b'", "7", "-0.5", "0"]))
    return draw(st.sampled_from([f"p = {literal}", f"p > {literal}", "p IS NULL", "isnan(p)"]))


_PREDICATES = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"({t[0]} AND {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} OR {t[1]})"),
        inner.map(lambda p: f"NOT ({p})"),
    ),
    max_leaves=3,
)


@settings(max_examples=examples(25), deadline=None)
@given(
    files=st.lists(
        st.tuples(
            st.sampled_from(PARTITIONS),
            st.lists(
                st.tuples(
                    st.none() | st.sampled_from(STRINGS),
                    st.none() | st.sampled_from(STAMPS),
                    st.none() | st.integers(-3, 40),
                ),
                min_size=0,
                max_size=6,
            ),
        ),
        min_size=1,
        max_size=5,
    ),
    predicates=st.lists(_PREDICATES, min_size=1, max_size=5),
    zone_name=st.sampled_from(ZONES),
)
@example(  # Spark never casts 'é' where s = '' is FALSE: the row matches
    files=[("1.5", [("a", None, None)])],
    predicates=["NOT ((s = '' AND p = 'é'))"],
    zone_name="UTC",
)
def test_prune_never_drops_what_spark_matches_property(spark, files, predicates, zone_name):
    import shutil
    import tempfile

    from pyspark.errors import PySparkException

    from skipindex.indexing.build import InProcessRunner, build_with

    root = Path(tempfile.mkdtemp(prefix="spark-view-")) / "t"
    try:
        for number, (partition, rows) in enumerate(files):
            columns = list(zip(*rows, strict=True)) if rows else [[], [], []]
            table = pa.table(
                {
                    "s": pa.array(columns[0], pa.string()),
                    "ts": pa.array(columns[1], pa.int64()).cast(pa.timestamp("us", tz="UTC")),
                    "x": pa.array(columns[2], pa.int64()),
                }
            )
            write(table, root / f"p={partition}" / f"f{number}.parquet")
        specs = [kind(c) for c in ("s", "ts", "x") for kind in KINDS if kind is not si.RangeBitmap]
        build_with(str(root), specs, InProcessRunner())
        with zone(spark, zone_name):
            for where in predicates:
                try:
                    expected, _ = spark_files(spark, root, where)
                except PySparkException:
                    continue  # Spark rejects it (ANSI casts of p): nothing to compare
                try:
                    kept = si.prune(str(root), where, time_zone=zone_name)
                except si.UnsupportedTypeError:
                    # prune refuses a lone comparison with a string Spark's cast to p's
                    # type cannot read (beside other conditions it might match); Spark
                    # raises for it on every row, so it answered only where it read none.
                    assert not expected, f"{where} in {zone_name}: refused, Spark matched"
                    continue
                relative = {os.path.relpath(f, root) for f in kept.files}
                assert expected <= relative, (
                    f"{where} in {zone_name}: dropped {expected - relative}"
                )
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
