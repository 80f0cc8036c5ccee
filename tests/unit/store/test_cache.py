"""The segment column cache: warm prunes skip Parquet reads; bounded in bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexes.base import FileBatch
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning import streamed
from skipindex.pruning.batches import units_of
from skipindex.pruning.options import active
from skipindex.store import segments
from skipindex.store.cache import ColumnCache
from skipindex.store.location import locate
from skipindex.store.manifest import load_latest


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
    from skipindex.indexes import _dense, _payloads
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
    # Nothing fits: every prune reads the payloads and decodes them again (a group
    # at a time, pruning/streamed.py), and the cache keeps none of them.
    real_many = _dense.decode_many
    monkeypatch.setattr(_dense, "decode_many", lambda *a: decodes.append(a) or real_many(*a))
    monkeypatch.setattr(batch_cache, "max_bytes", 1)
    batch_cache.clear()
    for _ in range(2):
        decodes.clear()
        assert si.prune(str(root), where).files == warm.files
        assert decodes
    assert not batch_cache._entries


def test_entries_in_use_are_never_evicted_and_what_does_not_fit_beside_them_is_not_kept():
    column = pa.chunked_array([pa.array(range(100), pa.int64())])  # 800 bytes
    cache = ColumnCache(max_bytes=2000)
    a, b, c = ("t", "a", "x"), ("t", "b", "x"), ("t", "c", "x")
    assert cache.put(a, column)
    assert cache.put(b, column)
    assert not cache.put(c, column, protect={a, b})  # would need a or b: not kept
    assert cache.get(c) is None
    assert cache.get(a) is column
    assert cache.get(b) is column
    assert cache.nbytes == 1600
    assert cache.put(c, column, protect={a})  # b, unprotected, makes room
    assert cache.get(b) is None
    assert cache.nbytes == 1600


def test_an_entry_put_again_is_counted_at_its_new_size():
    cache: ColumnCache[pa.ChunkedArray] = ColumnCache(max_bytes=2000)
    cache.put(("t", "a", "x"), pa.chunked_array([pa.array(range(50), pa.int64())]))
    cache.put(("t", "a", "x"), pa.chunked_array([pa.array(range(200), pa.int64())]))
    assert cache.nbytes == 1600
    assert not cache.put(("t", "a", "x"), pa.chunked_array([pa.array(range(300), pa.int64())]))
    assert cache.get(("t", "a", "x")) is None  # too big now: dropped, not kept over budget
    assert cache.nbytes == 0


def _undecoded_bytes(entry: Any) -> int:
    """What a batch cache entry costs without the bitmaps decoded into it."""
    if isinstance(entry, FileBatch):
        return int(entry.payloads.nbytes) + int(entry.num_rows.nbytes)
    return int(entry.nbytes)


def _payload_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index payload columns prune reads from segment files from now on."""
    reads: list[str] = []
    real = segments.pq.read_table

    def spy(*args: object, **kwargs: object) -> pa.Table:
        columns = kwargs.get("columns") or []
        reads.extend(c for c in columns if c not in segments.BASE_FIELDS)  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(segments.pq, "read_table", spy)
    real_group = streamed._read_group

    def group_spy(location: object, group: object, fields: list[str]) -> pa.Table:
        reads.extend(fields)
        return real_group(location, group, fields)  # type: ignore[arg-type]

    monkeypatch.setattr(streamed, "_read_group", group_spy)  # a group at a time (streamed.py)
    return reads


def test_payloads_are_cached_once_in_the_batches_not_also_as_segment_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from skipindex.store.cache import batch_cache, segment_cache

    root = tmp_path / "t"
    _bitmap_table(root)
    segment_cache.clear()
    batch_cache.clear()
    reads = _payload_reads(monkeypatch)
    si.prune(str(root), "id BETWEEN 150 AND 260 AND m = 3")
    assert len(set(reads)) == 2
    segment_files = list((root / "_skipindex").rglob("*.parquet"))
    assert len(reads) == 2 * len(segment_files)  # each read once per segment
    assert {key[-1] for key in segment_cache._entries} <= set(segments.BASE_FIELDS)
    reads.clear()
    si.prune(str(root), "id BETWEEN 150 AND 260 AND m = 3")
    assert reads == []


def test_a_prune_needing_more_than_the_budget_still_hits_on_what_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Under plain LRU the second batch evicted the first and every warm prune
    read both again; now the first stays and only the second is read."""
    from skipindex.store.cache import batch_cache

    root = tmp_path / "t"
    _bitmap_table(root)
    where = "id BETWEEN 150 AND 260 AND m = 3"
    batch_cache.clear()
    expected = si.prune(str(root), where).files
    held = [b for k in list(batch_cache._entries) if (b := batch_cache.get(k)) is not None]
    # Room for the listing and for one index's payloads, not for both indexes'.
    monkeypatch.setattr(batch_cache, "max_bytes", sum(map(_undecoded_bytes, held)) - 1)
    batch_cache.clear()
    reads = _payload_reads(monkeypatch)
    assert si.prune(str(root), where).files == expected
    assert len(set(reads)) == 2
    for _ in range(3):
        reads.clear()
        assert si.prune(str(root), where).files == expected
        assert len(set(reads)) == 1  # the one that did not fit; the other is a hit
    assert batch_cache.nbytes <= batch_cache.max_bytes


def test_payloads_stay_cached_where_only_their_decoded_bitmaps_do_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from skipindex.store.cache import batch_cache

    root = tmp_path / "t"
    _bitmap_table(root)
    where = "id BETWEEN 150 AND 260 AND m = 3"
    batch_cache.clear()
    expected = si.prune(str(root), where).files
    held = [b for k in list(batch_cache._entries) if (b := batch_cache.get(k)) is not None]
    decoded = sum(b.nbytes for b in held) - sum(map(_undecoded_bytes, held))
    assert decoded > 0
    # The cache shrinks under batches decoded with a larger budget: room for every
    # batch's payloads, not for all that was decoded from them.
    monkeypatch.setattr(batch_cache, "max_bytes", sum(b.nbytes for b in held) - decoded // 2)
    reads = _payload_reads(monkeypatch)
    for _ in range(3):
        assert si.prune(str(root), where).files == expected
    assert reads == []
    assert batch_cache.nbytes <= batch_cache.max_bytes
    kept = sum(isinstance(batch_cache.get(k), FileBatch) for k in list(batch_cache._entries))
    manifest = load_latest(locate(root))
    assert manifest is not None
    assert kept == 2 * len(
        units_of(manifest, active().unit_bytes)
    )  # per field and unit of segments


def test_a_refresh_reads_only_the_payloads_of_the_segments_it_added(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Payloads are cached per unit of segments, not per manifest: after a
    refresh, a warm prune reads the new segments' payloads and no others."""
    from skipindex.store.cache import batch_cache, segment_cache

    per_segment = si.PruneOptions(unit_bytes=0)  # a unit per segment
    root = tmp_path / "t"
    _bitmap_table(root)
    where = "id BETWEEN 150 AND 260 AND m = 3"
    segment_cache.clear()
    batch_cache.clear()
    si.prune(str(root), where, options=per_segment)
    before = load_latest(locate(root))
    assert before is not None
    ids = pa.array(range(1000, 1100), pa.int64())
    pq.write_table(
        pa.table({"id": ids, "m": pa.array([i % 7 for i in range(100)])}), root / "new.parquet"
    )
    build_with(str(root), [si.BitSlicedBitmap("id"), si.EqualityBitmap("m")], InProcessRunner())
    after = load_latest(locate(root))
    assert after is not None
    added = [ref for ref in after.segments if ref not in before.segments]
    assert added
    assert len(added) < len(after.segments)
    reads = _payload_reads(monkeypatch)
    again = si.prune(str(root), f"{where} OR id = 1042", options=per_segment)
    assert again.kept == 3
    assert sorted(reads) == sorted(["bitsliced_bitmap_0", "equality_bitmap_1"] * len(added))


def test_payloads_not_cached_are_let_go_when_the_prune_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Nothing a prune decoded outlives it unless the cache keeps it: no
    reference cycle holds a batch's payloads until the cycle collector runs
    (at a million files that held gigabytes mid-prune)."""
    import gc

    from skipindex.indexes._payloads import PayloadColumns
    from skipindex.store.cache import batch_cache

    root = tmp_path / "t"
    _bitmap_table(root)
    monkeypatch.setattr(batch_cache, "max_bytes", 0)  # nothing is kept
    batch_cache.clear()
    gc.collect()
    gc.disable()
    try:
        assert si.prune(str(root), "id BETWEEN 150 AND 260 AND m = 3").kept == 2
        alive = [o for o in gc.get_objects() if isinstance(o, PayloadColumns)]
    finally:
        gc.enable()
    assert alive == []


def test_a_tight_cache_still_decodes_into_words_and_lets_them_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Where the cache has room for the payloads (as their footers count them)
    and not for their decoded words (sparse bitmaps of many values decode to
    far more than they store), the row-level pass still works on words (the
    per-file Roaring path took minutes at a million files), and the words are
    not kept."""
    from skipindex.indexes import _payloads
    from skipindex.store.cache import batch_cache

    root = tmp_path / "t"
    root.mkdir()
    for k in range(2):
        rows = pa.array([(i * 7 + k) % 1000 for i in range(5000)], pa.int64())
        pq.write_table(pa.table({"m": rows}), root / f"p{k}.parquet")
    build_with(str(root), [si.EqualityBitmap("m")], InProcessRunner())
    where = "m = 3 OR m = 500"
    batch_cache.clear()
    expected = si.prune(str(root), where, row_level="always")
    location = locate(root)
    manifest = load_latest(location)
    assert manifest is not None
    footers = [streamed._open(location, ref).metadata for ref in manifest.segments]
    field = manifest.indexes[0].field
    stored = sum(size for f in footers for _, size in streamed._row_group_bytes(f, field))
    monkeypatch.setattr(batch_cache, "max_bytes", stored)  # just room for the payloads
    batch_cache.clear()
    per_file: list[object] = []
    real = _payloads.decode
    monkeypatch.setattr(_payloads, "decode", lambda data: per_file.append(data) or real(data))
    tight = si.prune(str(root), where, row_level="always")
    assert tight.files == expected.files
    assert {f: list(r) for f, r in tight.rows.items()} == {
        f: list(r) for f, r in expected.rows.items()
    }
    assert per_file == []  # no bitmap decoded one file at a time
    kept = [b for k in list(batch_cache._entries) if isinstance(b := batch_cache.get(k), FileBatch)]
    assert len(kept) == 1  # the payloads, as they fit
    assert kept[0].decoded_nbytes == 0  # not what was decoded from them
    assert batch_cache.nbytes <= batch_cache.max_bytes
