"""Expression indexes against Spark itself: an index of every kind over
``weekofyear(d)``, ``month(d)``, ``dayofmonth(d)``, ``lower(s)``,
``concat(c_region, s_region)``, ``a + b`` and ``hour(ts)`` (built in a session in
New York, across its daylight-saving changes), over NULLs and non-ASCII text, in
folders and files whose names Spark percent-encodes.

Hypothesis writes predicates on them, written as the definitions wrote them or
otherwise (case, spacing, ``day`` for ``dayofmonth``, ``||`` for ``concat``,
``lcase``), and one Spark job finds the files holding a match for many at once:
prune never drops one of them, and keeps exactly them where the predicate is one
condition on an expression (every expression has an exact kind). A session in
another zone does not use the zone-dependent ``hour(ts)`` index, and still never
drops a match.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from tests._support import examples

pytestmark = pytest.mark.spark

BUILD_ZONE = "America/New_York"
FOLDERS = ["g=a b", "g=x%25y", "g=h#sh", "g=é"]
STRINGS = ["Ab", "ÄB", "äb", "İ", "ß", "", "x y", "日本", "Σ", None]
REGIONS = ["ASIA", "EUROPE", "", None]
SCHEMA = pa.schema(
    [
        ("d", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("s", pa.string()),
        ("a", pa.int32()),
        ("b", pa.int64()),
        ("c_region", pa.string()),
        ("s_region", pa.string()),
    ]
)
INDEXES = [
    si.EqualityBitmap(expr="weekofyear(d)"),
    si.BitSlicedBitmap(expr="month(d)"),
    si.MinMax(expr="month(d)"),
    si.EqualityBitmap(expr="dayofmonth(d)"),
    si.EqualityBitmap(expr="lower(s)"),
    si.Bloom(expr="lower(s)"),
    si.EqualityBitmap(expr="concat(c_region, s_region)"),
    si.MinMax(expr="concat(c_region, s_region)"),
    si.BitSlicedBitmap(expr="a + b"),
    si.RangeBitmap(expr="a + b"),
    si.EqualityBitmap(expr="hour(ts)"),
]


def _days() -> list[date]:
    out = [date(2020, 12, 31), date(2021, 1, 3), date(2021, 1, 4), date(2024, 2, 29)]
    out += [date(2021, m, 1) - timedelta(days=1) for m in range(1, 13)]
    return out


def _instants() -> list[datetime]:
    """Around New York's clock changes (a gap at 07:00 UTC, an overlap at 06:00)."""
    out = []
    for change in (datetime(2021, 3, 14, 7, tzinfo=UTC), datetime(2021, 11, 7, 6, tzinfo=UTC)):
        out += [change + timedelta(minutes=m) for m in (-90, -30, 0, 30, 90)]
    return [*out, datetime(2021, 1, 1, 4, 59, tzinfo=UTC), datetime(2021, 1, 1, 5, tzinfo=UTC)]


def _rows(rng: random.Random, n: int) -> list[dict[str, Any]]:
    def maybe(values: list[Any]) -> Any:
        return None if rng.random() < 0.1 else rng.choice(values)

    return [
        {
            "d": maybe(_days()),
            "ts": maybe(_instants()),
            "s": maybe(STRINGS),
            "a": maybe(list(range(-3, 4))),
            "b": maybe([0, 1, 10, 2**40]),
            "c_region": maybe(REGIONS),
            "s_region": maybe(REGIONS),
        }
        for _ in range(n)
    ]


def _write(root: Path, seed: int, files: int) -> None:
    rng = random.Random(seed)
    for k in range(files):
        folder = root / FOLDERS[k % len(FOLDERS)]
        folder.mkdir(parents=True, exist_ok=True)
        rows = _rows(rng, rng.randint(1, 4))
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), folder / f"f {k}%#é.parquet")


@contextmanager
def _session(spark: Any, zone: str) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


@pytest.fixture(scope="module")
def table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("expressions") / "t"
    _write(root, seed=7, files=28)
    with _session(spark, BUILD_ZONE):
        si.build_index(root, INDEXES, spark=spark)
    return root


# One expression, as the predicates may write it, and the values to compare it with.
_EXPRESSIONS: list[tuple[list[str], st.SearchStrategy[str]]] = [
    (["weekofyear(d)", "WEEKOFYEAR( d )", "weekofyear(D)"], st.integers(0, 54).map(str)),
    (["month(d)", "MONTH(d)"], st.integers(0, 13).map(str)),
    (["day(d)", "dayofmonth(d)", "DAYOFMONTH (d)"], st.integers(0, 32).map(str)),
    (
        ["lower(s)", "LOWER(S)", "lcase(s)"],
        st.sampled_from([s.lower() for s in STRINGS if s is not None] + ["ab", "i̇", "zz"]).map(
            lambda v: f"'{v}'"
        ),
    ),
    (
        ["concat(c_region, s_region)", "c_region || s_region", "CONCAT(C_REGION,S_REGION)"],
        st.sampled_from(["ASIAASIA", "ASIAEUROPE", "EUROPE", "", "ASIA", "X"]).map(
            lambda v: f"'{v}'"
        ),
    ),
    (["a + b", "a+b", "(A + B)"], st.sampled_from([-3, 0, 1, 3, 7, 11, 13, 2**40 + 2]).map(str)),
    (["hour(ts)", "HOUR(ts)"], st.integers(-1, 24).map(str)),
]
OPS = ["=", "!=", "<", "<=", ">", ">="]


@st.composite
def leaves(draw: st.DrawFn) -> str:
    writings, values = draw(st.sampled_from(_EXPRESSIONS))
    term = draw(st.sampled_from(writings))
    shape = draw(st.integers(0, 5))
    if shape == 0:
        listed = draw(st.lists(values | st.just("NULL"), min_size=1, max_size=3))
        leaf = f"{term} {draw(st.sampled_from(['IN', 'NOT IN']))} ({', '.join(listed)})"
    elif shape == 1:
        leaf = f"{term} IS {draw(st.sampled_from(['NULL', 'NOT NULL']))}"
    else:
        leaf = f"{term} {draw(st.sampled_from(OPS))} {draw(values)}"
    return f"NOT ({leaf})" if draw(st.integers(0, 4)) == 0 else leaf


@st.composite
def predicates(draw: st.DrawFn) -> str:
    parts = draw(st.lists(leaves(), min_size=1, max_size=3))
    joiner = draw(st.sampled_from([" AND ", " OR "]))
    return joiner.join(f"({p})" for p in parts)


def _spark_files(spark: Any, root: Path, wheres: list[str]) -> list[set[str]]:
    """Per predicate, the files Spark finds a TRUE row in (one job for all)."""
    from pyspark.sql import functions as F  # noqa: N812

    flags = [F.max(F.when(F.expr(w), 1).otherwise(0)).alias(f"p{n}") for n, w in enumerate(wheres)]
    rows = _rows_with_files(spark, root).groupBy("file").agg(*flags).collect()
    # (Spark percent-encodes the names it reports)
    return [{unquote(r["file"]) for r in rows if r[f"p{n}"] == 1} for n in range(len(wheres))]


_READ: dict[Path, Any] = {}


def _rows_with_files(spark: Any, root: Path) -> Any:
    """The table's rows as Spark reads them, with their file's name, read once and
    cached in Spark (the predicates, evaluated in each session's zone, vary)."""
    from pyspark.sql import functions as F  # noqa: N812

    if root not in _READ:
        frame = spark.read.parquet(str(root))
        _READ[root] = frame.select("*", F.col("_metadata.file_name").alias("file")).cache()
    return _READ[root]


def _kept(root: Path, where: str, zone: str) -> tuple[set[str], si.PruneResult]:
    result = si.prune(root, where, time_zone=zone)
    return {Path(f).name for f in result.files}, result


def test_expression_indexes_never_drop_a_file_spark_finds_a_match_in(spark, table):
    @settings(max_examples=examples(80))
    @given(wheres=st.lists(predicates(), min_size=1, max_size=12))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, table, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            kept, result = _kept(table, where, BUILD_ZONE)
            assert matching <= kept, f"{where}: dropped {sorted(matching - kept)}; {result.bound}"

    with _session(spark, BUILD_ZONE):
        check()


def test_one_condition_on_an_expression_keeps_exactly_sparks_files(spark, table):
    @settings(max_examples=examples(80))
    @given(wheres=st.lists(leaves(), min_size=1, max_size=12))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, table, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            kept, result = _kept(table, where, BUILD_ZONE)
            assert kept == matching, f"{where}: kept {sorted(kept - matching)}; {result.bound}"

    with _session(spark, BUILD_ZONE):
        check()


EXACT = [
    "weekofyear(d) = 53",
    "WeekOfYear(d) = 1 OR month(d) = 2",
    "day(d) = 29 AND month(d) = 2",
    "lower(s) = 'äb'",
    "lcase(S) IN ('ß', '\u03c3')",  # ß, and the small sigma of Σ
    "c_region || s_region = 'ASIAEUROPE'",
    "a + b > 1000",
    "hour(ts) = 1",
    "hour(ts) IN (1, 2)",
]


def test_explain_credits_the_expression_index(spark, table):
    with _session(spark, BUILD_ZONE):
        truth = _spark_files(spark, table, EXACT)
    for where, matching in zip(EXACT, truth, strict=True):
        kept, result = _kept(table, where, BUILD_ZONE)
        assert kept == matching, f"{where}: {result.explain()}"
        assert "no index answers" not in result.explain(), where
    explained = si.prune(table, "hour(ts) = 1", time_zone=BUILD_ZONE).explain()
    assert "hour(ts) = 1: equality_bitmap ruled out" in explained


def test_a_session_in_another_zone_does_not_use_a_zone_dependent_index(spark, table):
    zone = "Asia/Kolkata"
    wheres = ["hour(ts) = 1", "hour(ts) IN (20, 21)", "month(d) = 2", "lower(s) = 'ab'"]
    with _session(spark, zone):
        truth = _spark_files(spark, table, wheres)
    for where, matching in zip(wheres, truth, strict=True):
        kept, result = _kept(table, where, zone)
        assert matching <= kept, where
        if where.startswith("hour"):
            assert kept == {Path(f).name for f in si.prune(table, "TRUE").files}, where
            assert f"computed in time zone {BUILD_ZONE}" in result.explain(), where
        else:
            assert kept == matching, where

    @settings(max_examples=examples(40))
    @given(wheres=st.lists(predicates(), min_size=1, max_size=12))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, table, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            kept, _ = _kept(table, where, zone)
            assert matching <= kept, f"{where} in {zone}: dropped {sorted(matching - kept)}"

    with _session(spark, zone):
        check()


def test_describe_shows_expression_indexes(table):
    described = {
        (d["expression"], d["kind"]): d
        for d in si.describe(table).to_dict()["indexes"]
        if d.get("expression")
    }
    assert len(described) == len(INDEXES)
    hour = described[("hour(ts)", "equality_bitmap")]
    assert (hour["spark_type"], hour["time_zone"], hour["zone_dependent"]) == (
        "INT",
        BUILD_ZONE,
        True,
    )
    concat = described[("concat(c_region, s_region)", "minmax")]
    assert (concat["column"], concat["spark_type"], concat["zone_dependent"]) == (
        "CONCAT(`c_region`, `s_region`)",
        "STRING",
        False,
    )
    assert described[("a + b", "bitsliced_bitmap")]["spark_type"] == "BIGINT"
    assert "expr weekofyear(d) [key WEEKOFYEAR(`d`)" in str(si.describe(table))


# --------------------------------------------------------------------------- lifecycle


def _version_doc(root: Path) -> dict[str, Any]:
    index = root / "_skipindex"
    latest = max(int(p.stem[1:]) for p in index.glob("v*.json"))
    return dict(json.loads((index / f"v{latest}.json").read_text()))


def test_incremental_builds_added_and_dropped_expression_indexes(spark, tmp_path):
    root = tmp_path / "t"
    _write(root, seed=3, files=6)
    si.build_index(root, [si.MinMax("a"), si.EqualityBitmap(expr="lower(s)")], spark=spark)
    assert _version_doc(root)["format_version"] == 2
    # a new file is indexed by a refresh, its values computed by Spark
    pq.write_table(
        pa.Table.from_pylist([{"s": "NEU", "a": 5, "b": 6}], schema=SCHEMA),
        root / FOLDERS[1] / "new #1.parquet",
    )
    report = si.build_index(root, spark=spark)
    assert report.files_indexed == 1
    assert [Path(f).name for f in si.prune(root, "lower(s) = 'neu'").files] == ["new #1.parquet"]
    # an expression index added to an index: every file read for it alone
    report = si.build_index(root, [si.BitSlicedBitmap(expr="a + b")], spark=spark)
    assert report.files_indexed == 7
    assert [Path(f).name for f in si.prune(root, "a+b = 11").files] == ["new #1.parquet"]
    assert si.prune(root, "lower(s) = 'neu' AND a + b = 11").kept == 1
    # dropped as written otherwise; the last one dropped makes the manifest version 1 again
    si.drop_index(root, columns=["LCASE(s)"])
    assert _version_doc(root)["format_version"] == 2
    si.drop_index(root, columns=["a + b"], kinds=["bitsliced_bitmap"])
    assert _version_doc(root)["format_version"] == 1
    assert si.prune(root, "lower(s) = 'neu'").kept == 7


def test_files_spark_cannot_read_or_compute_get_no_payload(spark, tmp_path):
    """Spark reads ``a`` as the table's INT and skips a file where it is a string
    (a corrupt file to it); with ANSI on, ``b + 1`` fails on a file holding
    BIGINT's maximum (the job is narrowed down to that file). Both files are
    kept with a note; the others are indexed."""
    root = tmp_path / "t"
    _write(root, seed=5, files=5)
    pq.write_table(
        pa.table({"a": ["not a number"], "b": pa.array([1], pa.int64())}),
        root / FOLDERS[2] / "z-bad.parquet",
    )
    pq.write_table(
        pa.Table.from_pylist([{"a": 1, "b": 2**63 - 1}], schema=SCHEMA),
        root / FOLDERS[3] / "z-max.parquet",
    )
    with _session(spark, "UTC"):
        previous = spark.conf.get("spark.sql.ansi.enabled")
        spark.conf.set("spark.sql.ansi.enabled", "true")
        try:
            si.build_index(
                root, [si.EqualityBitmap(expr="a + b"), si.MinMax(expr="b + 1")], spark=spark
            )
        finally:
            spark.conf.set("spark.sql.ansi.enabled", previous)
    result = si.prune(root, "a + b = -1000")
    assert [Path(f).name for f in result.files] == ["z-bad.parquet", "z-max.parquet"]
    assert any("Spark read no rows of it" in w for w in result.warnings), result.warnings
    assert any("Spark failed on it" in w for w in result.warnings), result.warnings
    assert si.prune(root, "b + 1 < 0").kept == 2
