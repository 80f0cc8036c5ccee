"""End to end with Spark: build, incremental refresh, prune, read, describe, drop."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import files_opened

pytestmark = pytest.mark.spark


def _write_clustered(root: Path, files: int = 10, rows: int = 1000) -> None:
    """File k holds id in [k*rows, (k+1)*rows) and a random key."""
    rng = np.random.default_rng(1)
    root.mkdir(parents=True, exist_ok=True)
    for k in range(files):
        ids = np.arange(k * rows, (k + 1) * rows, dtype=np.int64)
        table = pa.table(
            {
                "id": ids,
                "key": rng.integers(0, 1_000_000, rows, dtype=np.int64),
                "name": pa.array([f"n{i % 97}" for i in ids]),
            }
        )
        _write(table, root / f"part-{k:03d}.parquet")


def _write(table: pa.Table, path: Path) -> None:
    """Fixed-width layout: a rewrite with other values keeps the exact file size."""
    pq.write_table(table, path, compression="none", use_dictionary=False, write_statistics=False)


def _names(result: si.PruneResult) -> set[str]:
    return {Path(f).name for f in result.files}


def test_range_predicate_on_clustered_column_keeps_only_overlapping_files(spark, tmp_path):
    _write_clustered(tmp_path / "t")
    report = si.build_index(str(tmp_path / "t"), [si.MinMax("id")], spark=spark)
    assert (report.version, report.files_indexed, report.files_unchanged) == (1, 10, 0)
    result = si.prune(str(tmp_path / "t"), "id >= 2500 AND id < 4100")
    assert _names(result) == {"part-002.parquet", "part-003.parquet", "part-004.parquet"}
    assert (result.total, result.kept) == (10, 3)
    assert "minmax ruled out" in result.explain()


def test_bloom_point_lookup_keeps_about_the_files_holding_the_key(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=40, rows=2000)
    fpp = 0.05
    si.build_index(str(root), [si.Bloom("key", fpp=fpp)], spark=spark)
    tables = {
        p.name: set(pq.read_table(p, columns=["key"]).column("key").to_pylist())
        for p in sorted(root.glob("*.parquet"))
    }
    rng = np.random.default_rng(5)
    false_positives = 0
    probes = 200
    for key in rng.integers(0, 1_000_000, probes).tolist():
        kept = _names(si.prune(str(root), f"key = {key}"))
        holding = {name for name, keys in tables.items() if key in keys}
        assert holding <= kept
        false_positives += len(kept - holding)
    rate = false_positives / (probes * len(tables))
    assert rate < 3 * fpp, f"false-positive rate {rate:.4f} for fpp {fpp}"
    print(f"measured Bloom false-positive rate {rate:.4f} at fpp={fpp}")


def test_incremental_build_reads_only_new_and_changed_files(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=6)
    si.build_index(str(root), [si.MinMax("id"), si.Bloom("key")], spark=spark)

    # add one file, rewrite one with the same size but a new mtime, delete one
    pq.write_table(
        pa.table(
            {
                "id": pa.array([50_000], pa.int64()),
                "key": pa.array([1], pa.int64()),
                "name": ["new"],
            }
        ),
        root / "part-100.parquet",
    )
    changed = root / "part-001.parquet"
    size_before = changed.stat().st_size
    table = pq.read_table(changed)
    ids = table.column("id").to_numpy().copy()
    ids[-1] = 1500  # the max 1999 disappears; same width, same size on disk
    _write(table.set_column(0, "id", pa.array(ids)), changed)
    stat = changed.stat()
    os.utime(changed, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    (root / "part-005.parquet").unlink()

    report = si.build_index(str(root), spark=spark)
    counts = (report.files_indexed, report.files_unchanged, report.files_removed)
    assert counts == (2, 4, 1)
    assert report.files_replaced == 1  # part-001 changed: its entry is replaced, not removed
    assert changed.stat().st_size == size_before
    assert _names(si.prune(str(root), "id = 1999")) == set()  # the stale range said 1000..1999
    assert _names(si.prune(str(root), "id = 1500")) == {"part-001.parquet"}
    assert _names(si.prune(str(root), "id = 50000")) == {"part-100.parquet"}
    assert "part-005.parquet" not in _names(si.prune(str(root), "id >= 0"))

    again = si.build_index(str(root), spark=spark)
    assert (again.files_indexed, again.files_unchanged) == (0, 6)


def test_files_changed_after_the_build_are_kept(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=3)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    time.sleep(0.01)
    pq.write_table(pa.table({"id": pa.array([10**9], pa.int64())}), root / "zz-new.parquet")
    kept = _names(si.prune(str(root), "id = 1000000000"))
    assert kept == {"zz-new.parquet"}  # not covered -> kept; covered files skipped


def test_bad_input_gets_clear_errors(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=2)
    with pytest.raises(si.UnknownColumnError, match=r"'idd'.*id"):
        si.build_index(str(root), [si.MinMax("idd")], spark=spark)
    pq.write_table(pa.table({"flag": [True]}), root / "zz.parquet")
    with pytest.raises(si.UnsupportedTypeError, match=r"bloom.*'flag'.*BOOLEAN"):
        si.build_index(str(root), [si.Bloom("flag")], spark=spark)
    (root / "zz.parquet").unlink()
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    with pytest.raises(si.InvalidPredicateError, match="id >>= 3"):
        si.prune(str(root), "id >>= 3")
    with pytest.raises(si.UnknownColumnError, match="nmae"):
        si.prune(str(root), "nmae = 'x'")
    with pytest.raises(si.NotATableError, match="does not exist"):
        si.build_index(str(tmp_path / "missing"), [si.MinMax("id")], spark=spark)
    with pytest.raises(si.NotATableError, match="not a directory"):
        si.prune(str(root / "part-000.parquet"), "id = 1")


def test_read_returns_exactly_the_rows_a_full_scan_returns(spark, tmp_path):
    root = tmp_path / "t"
    for year in (2020, 2021, 2022):
        part = root / f"year={year}"
        part.mkdir(parents=True)
        for k in range(3):
            ids = np.arange(k * 100, (k + 1) * 100, dtype=np.int64) + year * 1000
            pq.write_table(pa.table({"id": ids}), part / f"p{k}.parquet")
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    full = spark.read.parquet(str(root))
    for where in ["id BETWEEN 2021050 AND 2021150", "id = 2022299", "id < 0", "year = 2021"]:
        expected = sorted(map(tuple, full.where(where).collect()))
        frame = si.read(spark, str(root), where)
        assert sorted(map(tuple, frame.collect())) == expected, where
        assert frame.columns == full.columns  # partition column kept, same order
    empty = si.read(spark, str(root), "id < 0")
    assert empty.count() == 0
    assert empty.schema == full.schema


def test_read_accepts_a_column_predicate(spark, tmp_path):
    from pyspark.sql import functions as F  # noqa: N812

    root = tmp_path / "t"
    _write_clustered(root, files=4)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    condition = (F.col("id") >= 1500) & (F.col("id") < 1600)
    assert si.prune(str(root), condition).kept == 1
    assert si.read(spark, str(root), condition).count() == 100


def test_describe_and_drop(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=3)
    si.build_index(str(root), [si.MinMax("id"), si.Bloom("key")], spark=spark)
    description = si.describe(str(root))
    assert description.version == 1
    assert (description.files_indexed, description.files_unindexed) == (3, 0)
    assert {(d["column"], d["kind"]) for d in description.indexes} == {
        ("id", "minmax"),
        ("key", "bloom"),
    }
    assert all(d["bytes"] > 0 for d in description.indexes)

    dropped = si.drop_index(str(root), columns=["key"], kinds=["bloom"])
    assert [(d.column, d.kind) for d in dropped] == [("key", "bloom")]
    after = si.describe(str(root))
    assert after.version == 2
    assert [d["kind"] for d in after.indexes] == ["minmax"]
    assert si.prune(str(root), "key = 5").kept == 3  # no index on key any more
    assert si.prune(str(root), "id = 5").kept == 1

    si.drop_index(str(root), all=True)
    assert not (root / "_skipindex").exists()
    assert len(list(root.glob("*.parquet"))) == 3  # data untouched


def test_cli_build_then_refresh(spark, tmp_path, capsys):
    from skipindex.cli import main

    root = tmp_path / "t"
    _write_clustered(root, files=3)
    assert main(["build", str(root), "--index", "minmax:id", "--index", "bloom:key:fpp=0.02"]) == 0
    assert "indexed 3 files" in capsys.readouterr().out
    assert main(["build", str(root)]) == 0
    assert "indexed 0 files, 3 unchanged" in capsys.readouterr().out
    assert {
        (d["column"], d["kind"], d["params"].get("fpp")) for d in si.describe(str(root)).indexes
    } == {("id", "minmax", None), ("key", "bloom", 0.02)}


def test_read_reads_the_folder_when_more_than_half_the_files_are_kept(spark, tmp_path):
    root = tmp_path / "t"
    _write_clustered(root, files=4)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    everything = spark.read.parquet(str(root))
    for where, kept in (("id >= 0", 4), ("id >= 1000", 3)):
        frame = si.read(spark, str(root), where)
        assert si.prune(str(root), where).kept == kept
        assert frame.count() == everything.filter(where).count()
        assert frame.inputFiles() == everything.inputFiles()
    few = si.read(spark, str(root), "id < 1000")  # 1 of 4 kept: only that file is opened
    assert few.count() == 1000
    assert files_opened(few) == 1
