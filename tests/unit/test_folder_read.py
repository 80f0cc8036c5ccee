"""When read() may reuse the schema Spark inferred for a table folder (no JVM here:
the session is a stand-in that only reports its settings; the index is built
in-process)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning.result import PruneResult
from skipindex.reading.folder import _key, folder_frame, schema_cache
from skipindex.reading.read import _filter_pays, _folder_pays
from skipindex.store.location import locate

EVERY_FILE = "id >= 0"


def _session(settings: str = "Map(spark.sql.parquet.mergeSchema -> false)") -> Any:
    conf = SimpleNamespace(getAllConfs=lambda: SimpleNamespace(toString=lambda: settings))
    state = SimpleNamespace(conf=lambda: conf)
    return SimpleNamespace(_jsparkSession=SimpleNamespace(sessionState=lambda: state))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    root = tmp_path / "t"
    root.mkdir()
    for k in range(3):
        pq.write_table(
            pa.table({"id": pa.array(range(k * 10, k * 10 + 10))}), root / f"p{k}.parquet"
        )
    build_with(root, [si.MinMax("id")], InProcessRunner())
    return root


class _Reader:
    """Records how Spark was asked to read the folder."""

    def __init__(self) -> None:
        self.given: list[Any] = []

    def schema(self, schema: Any) -> _Reader:
        self.given.append(schema)
        return self

    def parquet(self, root: str) -> Any:
        return SimpleNamespace(schema=f"inferred {root}", given=list(self.given))


def test_a_folder_of_exactly_the_indexed_files_has_a_key(table: Path):
    spark, location = _session(), locate(table)
    every = si.prune(table, EVERY_FILE)
    assert every.kept == every.total == every.covered == 3
    assert _key(spark, location, every) is not None
    some = si.prune(table, "id < 10")  # one file kept: the version still names the listing
    assert some.kept == 1
    assert _key(spark, location, some) == _key(spark, location, every)
    assert _key(SimpleNamespace(), location, every) is None  # Spark Connect: no JVM session
    summaries = _session("Map(spark.sql.parquet.respectSummaryFiles -> true)")
    assert _key(summaries, location, every) is None  # may infer from _common_metadata
    assert _key(spark, location, replace(every, not_parquet=["notes.txt"])) is None
    assert _key(spark, location, replace(every, swapping=["p1.parquet"])) is None


def test_added_changed_and_deleted_files_change_or_drop_the_key(table: Path):
    spark, location = _session(), locate(table)
    before = _key(spark, location, si.prune(table, EVERY_FILE))
    pq.write_table(pa.table({"id": pa.array([100, 101])}), table / "p9.parquet")
    assert _key(spark, location, si.prune(table, EVERY_FILE)) is None  # not covered
    (table / "p9.parquet").unlink()
    stat = os.stat(table / "p0.parquet")
    os.utime(table / "p0.parquet", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**10))
    assert _key(spark, location, si.prune(table, EVERY_FILE)) is None  # changed since indexed
    os.utime(table / "p0.parquet", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _key(spark, location, si.prune(table, EVERY_FILE)) == before
    (table / "p2.parquet").unlink()  # fewer files than indexed: named by the kept paths
    every = si.prune(table, EVERY_FILE)
    assert _key(spark, location, every) not in (None, before)
    assert _key(spark, location, si.prune(table, "id < 10")) is None  # not all kept


def test_settings_and_version_are_part_of_the_key(table: Path):
    location = locate(table)
    every = si.prune(table, EVERY_FILE)
    key = _key(_session(), location, every)
    assert _key(_session("Map(spark.sql.parquet.mergeSchema -> true)"), location, every) != key
    build_with(table, [si.Bloom("id")], InProcessRunner())  # version 2, same files
    assert _key(_session(), location, si.prune(table, EVERY_FILE)) != key


def test_the_second_read_of_a_folder_gives_spark_the_first_one_s_schema(table: Path):
    schema_cache.clear()
    spark, location = _session(), locate(table)
    every = si.prune(table, EVERY_FILE)
    assert folder_frame(spark, _Reader(), location, every).given == []
    assert folder_frame(spark, _Reader(), location, every).given == [f"inferred {table}"]
    assert folder_frame(spark, _Reader(), location, replace(every, covered=2)).given == []


@pytest.mark.parametrize(
    ("files", "mb_each", "kept", "folder"),
    [
        (1000, 2.5, 831, True),  # measured: the folder 5.88 s, 831 paths 6.53 s
        (1000, 2.5, 500, False),  # up to half kept: always the paths
        (40, 10.0, 24, False),  # TPC-DS SF1's facts: 16 files of 10 MB repay 24 paths
        (40, 10.0, 39, True),  # one file skipped saves less than 39 paths cost
        (40, 0.0, 30, True),  # an empty listing's bytes: nothing to save
    ],
)
def test_the_folder_is_read_where_the_files_skipped_save_less_than_the_paths_cost(
    files: int, mb_each: float, kept: int, folder: bool
) -> None:
    result = PruneResult(
        files=[f"/t/f{i}.parquet" for i in range(kept)],
        total=files,
        predicate="x",
        bound="x",
        listed_bytes=int(files * mb_each * 2**20),
    )
    assert _folder_pays(result) is folder


def test_a_prune_counts_the_bytes_of_the_files_it_keeps(table: Path) -> None:
    result = si.prune(table, "id >= 10 AND id < 20")
    assert result.kept == 1
    assert result.kept_bytes == os.path.getsize(result.files[0])
    assert result.listed_bytes == sum(os.path.getsize(p) for p in table.glob("*.parquet"))
    assert si.prune(table, EVERY_FILE).kept_bytes == result.listed_bytes


@pytest.mark.parametrize(
    ("kept_mb", "filter_pays"),
    [
        (2.0, True),  # a few small files: the filter on their rows costs a few ms
        (14.0, True),  # about what building a relation of the kept files costs
        (30.0, True),  # more, but not by enough to pay for Spark planning anew
        (40.0, False),  # 9 TPC-H lineitem files: the filter costs twice a relation
        (160.0, False),  # 36 of them: 0.1-0.25 s of filtering measured
    ],
)
def test_large_kept_sets_are_named_rather_than_filtered_row_by_row(
    kept_mb: float, filter_pays: bool
) -> None:
    result = PruneResult(
        files=["/t/a.parquet"], total=48, predicate="x", bound="x", kept_bytes=int(kept_mb * 2**20)
    )
    assert _filter_pays(result) is filter_pays
