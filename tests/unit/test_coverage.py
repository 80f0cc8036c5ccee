"""A warm prune reuses the path join of an unchanged listing, never its verdicts:
files rewritten, added or removed since the last prune are seen as such."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning.coverage import covered_files
from skipindex.store.listing import DataFile, Listing


def _write(path: Path, values: list[int]) -> None:
    pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), path)


def test_warm_prunes_see_files_rewritten_added_and_removed(tmp_path: Path):
    for number in range(3):
        _write(tmp_path / f"f{number}.parquet", [number * 10, number * 10 + 1])
    build_with(str(tmp_path), [si.EqualityBitmap("x")], InProcessRunner())
    where = "x = 10"
    first = si.prune(str(tmp_path), where)
    assert [Path(f).name for f in first.files] == ["f1.parquet"]
    assert si.prune(str(tmp_path), where).files == first.files  # warm: the same answer

    # Same path, new rows (and a new size): no longer covered, so kept.
    _write(tmp_path / "f2.parquet", [10, 11, 12])
    os.utime(tmp_path / "f2.parquet", ns=(0, 10**18))
    rewritten = si.prune(str(tmp_path), where)
    assert [Path(f).name for f in rewritten.files] == ["f1.parquet", "f2.parquet"]
    assert rewritten.covered == 2

    _write(tmp_path / "f3.parquet", [10])  # new: kept, not covered
    (tmp_path / "f1.parquet").unlink()  # gone: never returned
    changed = si.prune(str(tmp_path), where)
    assert [Path(f).name for f in changed.files] == ["f2.parquet", "f3.parquet"]
    assert (changed.total, changed.covered) == (3, 1)


def test_an_index_of_no_files_covers_none():
    listing = Listing.of([DataFile("a.parquet", 1, 1)])
    segments = pa.table({"path": pa.array([], pa.string()), "size": [], "mtime_ms": []})
    covered, rows = covered_files(segments, listing, ("key",))
    assert covered.tolist() == [False]
    assert rows.tolist() == [0]
