"""The segment column cache: warm prunes skip Parquet reads; bounded in bytes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from skipindex.store import segments
from skipindex.store.cache import ColumnCache


def test_a_warm_prune_reads_no_segment_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "t"
    root.mkdir()
    for k in range(3):
        pq.write_table(pa.table({"id": [k, k + 10]}), root / f"p{k}.parquet")
    build_with(str(root), [si.MinMax("id"), si.BitSlicedBitmap("id")], InProcessRunner())
    first = si.prune(str(root), "id = 11")
    reads: list[object] = []
    real = segments.pq.read_table
    monkeypatch.setattr(segments.pq, "read_table", lambda *a, **k: reads.append(a) or real(*a, **k))
    assert si.prune(str(root), "id = 11").files == first.files
    assert reads == []
    build_with(str(root), [si.Bloom("id")], InProcessRunner())  # new version, new segments
    assert si.prune(str(root), "id = 11").files == first.files
    assert reads  # the new segments were read


def test_cache_evicts_least_recently_used_within_its_budget():
    column = pa.chunked_array([pa.array(range(100), pa.int64())])  # 800 bytes
    cache = ColumnCache(max_bytes=2000)
    cache.put(("t", "a", "x"), column)
    cache.put(("t", "b", "x"), column)
    assert cache.get(("t", "a", "x")) is column  # a is now the most recent
    cache.put(("t", "c", "x"), column)
    assert cache.get(("t", "b", "x")) is None
    assert cache.get(("t", "a", "x")) is column
    assert cache.get(("t", "c", "x")) is column
    cache.put(("t", "huge", "x"), pa.chunked_array([pa.array(range(1000), pa.int64())]))
    assert cache.get(("t", "huge", "x")) is None  # larger than the whole budget


def _bitmap_table(root: Path) -> None:
    root.mkdir()
    for k in range(4):
        ids = pa.array([k * 100 + i for i in range(100)], pa.int64())
        pq.write_table(
            pa.table({"id": ids, "m": pa.array([i % 7 for i in range(100)])}),
            root / f"p{k}.parquet",
        )
    build_with(str(root), [si.BitSlicedBitmap("id"), si.EqualityBitmap("m")], InProcessRunner())


def test_decoded_bitmaps_are_counted_and_kept_only_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from skipindex.indexes import _payloads
    from skipindex.indexes.base import FileBatch
    from skipindex.store.cache import batch_cache

    root = tmp_path / "t"
    _bitmap_table(root)
    where = "id BETWEEN 150 AND 260 AND m = 3"
    batch_cache.clear()
    warm = si.prune(str(root), where)
    assert warm.kept == 2
    cached = [
        b for k in list(batch_cache._entries) if isinstance(b := batch_cache.get(k), FileBatch)
    ]
    assert cached
    assert all(b.nbytes > b.payloads.nbytes for b in cached)  # decoded bitmaps are counted
    decodes: list[object] = []
    real = _payloads.decode
    monkeypatch.setattr(_payloads, "decode", lambda data: decodes.append(data) or real(data))
    assert si.prune(str(root), where).files == warm.files
    assert decodes == []  # a warm prune decodes nothing again
    monkeypatch.setattr(batch_cache, "max_bytes", 1)  # nothing fits: decode on every use
    batch_cache.clear()
    for _ in range(2):
        decodes.clear()
        assert si.prune(str(root), where).files == warm.files
        assert decodes
    assert not batch_cache._entries
