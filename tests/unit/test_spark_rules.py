"""Spark's reading rules and the skipping they enable, without a JVM.

The differential tests in ``tests/spark/test_spark_view.py`` prove these against
Spark itself; these pin each rule down quickly and show that the files a rule
lets skipindex skip are skipped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.expressions import prepare
from skipindex.expressions.nodes import And, BoundColumn, BoundComparison, Op, Or, Unsupported
from skipindex.indexes.base import FileBatch
from skipindex.indexes.minmax import MinMaxKind
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning.evaluate import IndexColumn, evaluate
from skipindex.spark.view import julian_to_gregorian_days
from skipindex.store import vacuum
from skipindex.store.location import locate


def _table(root: Path, files: dict[str, pa.Table]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, table in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)
    return root


def _kept(root: Path, where: str, **options: str) -> set[str]:
    result = si.prune(str(root), where, time_zone=options.get("time_zone", "UTC"))
    return {str(Path(f).relative_to(root)) for f in result.files}


# ------------------------------------------------------------ skipping power


def test_nested_struct_fields_are_indexed_and_skip(tmp_path):
    nested = pa.struct([("f", pa.int64()), ("t", pa.struct([("g", pa.string())]))])
    files = {
        f"f{k}.parquet": pa.table(
            {
                "f": [100 + k],
                "s": pa.array([{"f": k, "t": {"g": f"v{k}"}}], nested),
            }
        )
        for k in range(3)
    }
    root = _table(tmp_path / "t", files)
    build_with(
        str(root),
        [si.MinMax("s.f"), si.EqualityBitmap("s.t.g"), si.MinMax("f")],
        InProcessRunner(),
    )
    assert _kept(root, "s.f = 1") == {"f1.parquet"}
    assert _kept(root, "S.T.G = 'v2'") == {"f2.parquet"}
    assert _kept(root, "f = 101") == {"f1.parquet"}
    assert _kept(root, "f = 1") == set()  # never answered by s.f's index
    assert len(_kept(root, "s.t.missing = 1")) == 3  # no such field: might match


def test_like_prefix_and_startswith_skip_with_every_kind(tmp_path):
    prefix = "http://www.example.org/"  # long shared prefixes still separate files
    files = {
        "a.parquet": pa.table({"u": [prefix + "apple", prefix + "apricot"]}),
        "b.parquet": pa.table({"u": [prefix + "banana"]}),
        "c.parquet": pa.table({"u": ["ftp://x", None]}),
    }
    root = _table(tmp_path / "t", files)
    for spec in (si.MinMax("u"), si.EqualityBitmap("u"), si.Bloom("u")):
        build_with(str(root), [spec], InProcessRunner())
    assert _kept(root, f"u LIKE '{prefix}ap%'") == {"a.parquet"}
    assert _kept(root, f"startswith(u, '{prefix}b')") == {"b.parquet"}
    assert _kept(root, f"u LIKE '{prefix}banana'") == {"b.parquet"}
    assert _kept(root, f"u NOT LIKE '{prefix}%'") == {"c.parquet"}
    # '%apple' is no range: the equality bitmap matches it against each file's values
    assert _kept(root, "u LIKE 'http%' AND u LIKE '%apple'") == {"a.parquet"}


def test_is_null_over_a_condition_follows_three_valued_logic(tmp_path):
    files = {
        "full.parquet": pa.table({"a": [1, 2], "b": [5, 6]}),
        "null_b.parquet": pa.table({"a": [1, 2], "b": pa.array([None, 6], pa.int64())}),
        "false_a.parquet": pa.table({"a": [-1, -2], "b": pa.array([None, None], pa.int64())}),
    }
    root = _table(tmp_path / "t", files)
    build_with(str(root), [si.MinMax("a"), si.MinMax("b")], InProcessRunner())
    # NULL needs no FALSE conjunct and one UNKNOWN: only null_b can (a > 0, b NULL)
    assert _kept(root, "(a > 0 AND b > 1) IS NULL") == {"null_b.parquet"}
    assert _kept(root, "NOT ((a > 0 AND b > 1) IS NOT NULL)") == {"null_b.parquet"}
    assert _kept(root, "(a > 0 AND b > 1) IS TRUE") == {"full.parquet", "null_b.parquet"}
    assert _kept(root, "isnull(a < 0 OR b > 100)") == {"null_b.parquet"}


def test_literals_beyond_python_years_are_converted(tmp_path):
    moments = [datetime(2020, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC)]
    root = _table(
        tmp_path / "t",
        {
            f"f{k}.parquet": pa.table({"ts": pa.array([m], pa.timestamp("us", tz="UTC"))})
            for k, m in enumerate(moments)
        },
    )
    build_with(str(root), [si.MinMax("ts")], InProcessRunner())
    schema = pa.schema([("ts", pa.timestamp("us", tz="UTC"))])
    bound = prepare("ts < CAST('294247-01-10' AS TIMESTAMP)", schema, time_zone="UTC")
    assert isinstance(bound, BoundComparison)
    assert bound.value == 9_223_372_022_400_000_000  # 294247-01-10T00:00Z in micros
    assert _kept(root, "ts > CAST('10000-01-01' AS TIMESTAMP)") == set()
    assert _kept(root, "ts < CAST('10000-01-01 00:00:00+05:00' AS TIMESTAMP)") == {
        "f0.parquet",
        "f1.parquet",
    }
    # In a zone with rules Python cannot extend past 9999: might match, never a guess.
    far = prepare("ts < TIMESTAMP '10000-01-01 00:00:00'", schema, time_zone="Europe/Oslo")
    assert isinstance(far, Unsupported)


# ------------------------------------------------------------ session zones


def test_timestamp_literals_are_read_in_the_session_zone(tmp_path):
    start = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp()) * 10**6
    minute = 60 * 10**6
    files = {
        f"h{h:02d}.parquet": pa.table(
            {
                "ts": pa.array([start + (h * 60 + m) * minute for m in range(60)], pa.int64()).cast(
                    pa.timestamp("us", tz="UTC")
                )
            }
        )
        for h in range(24)
    }
    root = _table(tmp_path / "t", files)
    build_with(str(root), [si.MinMax("ts")], InProcessRunner())
    where = "ts = TIMESTAMP '2024-01-01 10:30:00'"
    assert _kept(root, where, time_zone="UTC") == {"h10.parquet"}
    assert _kept(root, where, time_zone="America/New_York") == {"h15.parquet"}
    assert _kept(root, where, time_zone="Asia/Kathmandu") == {"h04.parquet"}  # +05:45
    assert _kept(root, where, time_zone="+01:00") == {"h09.parquet"}
    explained = si.prune(str(root), where, time_zone="Asia/Kathmandu").explain()
    assert "session time zone: Asia/Kathmandu" in explained
    with pytest.raises(si.InvalidPredicateError, match="Mars/Olympus"):
        si.prune(str(root), where, time_zone="Mars/Olympus")


def test_prune_defaults_to_the_zone_a_new_spark_session_would_use(tmp_path, monkeypatch):
    root = _table(
        tmp_path / "t",
        {"f.parquet": pa.table({"ts": pa.array([0], pa.timestamp("us", tz="UTC"))})},
    )
    build_with(str(root), [si.MinMax("ts")], InProcessRunner())
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # the JVM's default zone comes from TZ
    assert si.prune(str(root), "ts IS NULL").time_zone == "Asia/Tokyo"
    assert _kept(root, "ts = TIMESTAMP '1970-01-01 09:00:00'", time_zone="Asia/Tokyo") == {
        "f.parquet"
    }


# ------------------------------------------------------------ what Spark reads


def test_columns_match_case_insensitively_and_dictionaries_are_values(tmp_path):
    import pandas as pd

    root = tmp_path / "t"
    root.mkdir()
    pq.write_table(pa.table({"X": [1, 2]}), root / "a.parquet")
    pq.write_table(pa.table({"x": [5, 6]}), root / "b.parquet")
    frame = pd.DataFrame({"X": [7, 8], "cat": pd.Categorical(["p", "q"])})
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), root / "c.parquet")
    build_with(
        str(root), [si.MinMax("X"), si.Bloom("x"), si.EqualityBitmap("cat")], InProcessRunner()
    )
    assert _kept(root, "X = 5") == {"b.parquet"}
    assert _kept(root, "x > 6") == {"c.parquet"}
    assert _kept(root, "cat = 'q'") == {"c.parquet"}


def test_int96_timestamps_keep_their_far_future_values(tmp_path):
    sentinel = datetime(9999, 12, 31, tzinfo=UTC)
    root = tmp_path / "t"
    root.mkdir()
    for name, moment in (("far", sentinel), ("now", datetime(2020, 1, 1, tzinfo=UTC))):
        table = pa.table({"valid_to": pa.array([moment], pa.timestamp("us", tz="UTC"))})
        pq.write_table(table, root / f"{name}.parquet", use_deprecated_int96_timestamps=True)
    assert pq.ParquetFile(root / "far.parquet").metadata.schema.column(0).physical_type == "INT96"
    build_with(str(root), [si.MinMax("valid_to"), si.Bloom("valid_to")], InProcessRunner())
    assert _kept(root, "valid_to > TIMESTAMP '2024-01-01 00:00:00'") == {"far.parquet"}
    assert _kept(root, "valid_to = TIMESTAMP '9999-12-31 00:00:00'") == {"far.parquet"}


def test_julian_rebase_matches_sparks_rebase_table():
    # Values read off Spark's RebaseDateTime.rebaseJulianToGregorianDays.
    days = np.array([-720162, -719162, -700000, -500000, -141428, -141427, 0], dtype=np.int64)
    expected = [-720160, -719160, -699998, -500003, -141438, -141427, 0]
    assert julian_to_gregorian_days(days).tolist() == expected


def test_legacy_files_are_rebased_by_their_footer_key(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    julian = -500000  # a date Spark writes in LEGACY mode as Julian days
    table = pa.table({"d": pa.array([julian], pa.int32()).cast(pa.date32())})
    legacy = table.replace_schema_metadata(
        {"org.apache.spark.version": "3.5.0", "org.apache.spark.legacyDateTime": ""}
    )
    pq.write_table(legacy, root / "legacy.parquet")
    pq.write_table(table, root / "modern.parquet")
    build_with(str(root), [si.MinMax("d"), si.EqualityBitmap("d")], InProcessRunner())
    rebased = "DATE '" + str(np.datetime64(-500003, "D")) + "'"
    written = "DATE '" + str(np.datetime64(julian, "D")) + "'"
    assert _kept(root, f"d = {rebased}") == {"legacy.parquet"}
    assert _kept(root, f"d = {written}") == {"modern.parquet"}


def test_partition_column_hides_the_data_column_of_its_name(tmp_path):
    files = {
        "p=1/a.parquet": pa.table({"p": [9], "v": [1]}),
        "p=2/b.parquet": pa.table({"p": [1], "v": [2]}),
    }
    root = _table(tmp_path / "t", files)
    build_with(str(root), [si.MinMax("v")], InProcessRunner())
    assert _kept(root, "p = 1") == {"p=1/a.parquet"}
    assert _kept(root, "p = 9") == set()
    with pytest.raises(si.UnknownColumnError, match="partition column"):
        build_with(str(root), [si.MinMax("P")], InProcessRunner())


def test_nan_partition_values_are_counted_as_nan(tmp_path):
    files = {f"p={v}/f.parquet": pa.table({"v": [1]}) for v in ("NaN", "1.5", "0.5")}
    root = _table(tmp_path / "t", files)
    build_with(str(root), [si.MinMax("v")], InProcessRunner())
    assert _kept(root, "p > 1") == {"p=NaN/f.parquet", "p=1.5/f.parquet"}
    assert _kept(root, "isnan(p)") == {"p=NaN/f.parquet"}


# ------------------------------------------------------------ literals and evaluation


def test_negative_literals_are_exact():
    schema = pa.schema([("dw", pa.decimal128(38, 10)), ("y", pa.int8()), ("sm", pa.int16())])
    bound = prepare("dw = -1234567890123456789.0123456789", schema)
    assert isinstance(bound, BoundComparison)
    assert bound.value == Decimal("-1234567890123456789.0123456789")
    assert prepare("y = -128Y", schema) == BoundComparison(bound_column(schema, "y"), Op.EQ, -128)
    assert prepare("sm = -32768S", schema) == BoundComparison(
        bound_column(schema, "sm"), Op.EQ, -32768
    )


def bound_column(schema: pa.Schema, name: str) -> BoundColumn:
    return BoundColumn(name, schema.field(name).type)


def test_a_repeated_subtree_is_evaluated_like_any_other():
    kind = MinMaxKind("x", pa.int64(), {})
    payloads = pa.array(
        [kind.build(pa.array([1, 2])), kind.build(pa.array([5, 6]))], kind.payload_type()
    )
    num_rows = np.array([2, 2])
    leaf = BoundComparison(bound_column(pa.schema([("x", pa.int64())]), "x"), Op.EQ, 5)
    shared = Or((leaf, leaf))
    evaluation = evaluate(
        And((shared, shared)), num_rows, {"x": [IndexColumn(kind, FileBatch(num_rows, payloads))]}
    )
    assert evaluation.might_match.tolist() == [False, True]


def test_an_evaluation_bug_is_not_reported_as_damage(tmp_path, monkeypatch):
    root = _table(tmp_path / "t", {"f.parquet": pa.table({"x": [1]})})
    build_with(str(root), [si.MinMax("x")], InProcessRunner())

    def broken(*_args: object) -> None:
        raise ValueError("a bug in the evaluator")

    monkeypatch.setattr(MinMaxKind, "might_match", broken)
    with pytest.raises(ValueError, match="a bug in the evaluator") as raised:
        si.prune(str(root), "x = 1", on_damaged="keep")
    assert not isinstance(raised.value, si.IndexCorruptError)


def test_drop_refuses_to_delete_the_index_under_a_running_build(tmp_path):
    root = _table(tmp_path / "t", {"f.parquet": pa.table({"x": [1]})})
    build_with(str(root), [si.MinMax("x")], InProcessRunner())
    location = locate(str(root))
    with vacuum.in_flight(location, vacuum.new_build_id()):
        with pytest.raises(si.ConflictError, match="a build is running"):
            si.drop_index(str(root), all=True)
        assert (root / "_skipindex").exists()
    si.drop_index(str(root), all=True)
    assert not (root / "_skipindex").exists()


def test_metadata_summary_files_are_not_data(tmp_path):
    root = _table(tmp_path / "t", {"f.parquet": pa.table({"file_name": ["a"]})})
    pq.write_metadata(pq.read_schema(root / "f.parquet"), root / "_metadata")
    pq.write_metadata(pq.read_schema(root / "f.parquet"), root / "_common_metadata")
    build_with(str(root), [si.MinMax("file_name")], InProcessRunner())
    result = si.prune(str(root), "_metadata.file_name = 'zzz'", time_zone="UTC")
    assert (result.total, result.kept) == (1, 1)  # a metadata field: might match
    assert _kept(root, "file_name = 'zzz'") == set()


def test_int96_follows_its_own_rebase_rule_not_the_datetime_one(tmp_path):
    # Spark >= 3.1 with datetimeRebaseModeInWrite=LEGACY, int96RebaseModeInWrite=CORRECTED:
    # only legacyDateTime is set, so INT96 values are read as written.
    root = tmp_path / "t"
    root.mkdir()
    old = datetime(1000, 3, 1, tzinfo=UTC)
    table = pa.table({"ts": pa.array([old], pa.timestamp("us", tz="UTC"))})
    footer = {"org.apache.spark.version": "3.5.0", "org.apache.spark.legacyDateTime": ""}
    pq.write_table(
        table.replace_schema_metadata(footer),
        root / "f.parquet",
        use_deprecated_int96_timestamps=True,
    )
    build_with(str(root), [si.MinMax("ts")], InProcessRunner())
    assert _kept(root, "ts = TIMESTAMP '1000-03-01 00:00:00'") == {"f.parquet"}
