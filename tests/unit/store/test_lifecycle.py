"""Lifecycle without a JVM: staleness, refresh cost, damaged indexes, odd tables,
containment. Indexes are built in-process by the same task code Spark runs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing import indexer
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store.location import locate
from skipindex.store.manifest import SegmentRef, load_latest


def _build(root: Path, specs=None) -> si.BuildReport:
    return build_with(str(root), specs, InProcessRunner())


def _kept(root: Path, where: str, **kwargs) -> set[str]:
    return {
        Path(f).relative_to(root).as_posix() for f in si.prune(str(root), where, **kwargs).files
    }


def _write(root: Path, name: str, ids: list[int | None]) -> Path:
    """Fixed-width layout: a rewrite with as many other values keeps the file size."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": pa.array(ids, pa.int64())})
    pq.write_table(table, path, compression="none", use_dictionary=False, write_statistics=False)
    return path


def _bump_mtime(path: Path, seconds: int = 10) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 1_000_000_000))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    root = tmp_path / "t"
    for k in range(5):
        _write(root, f"p{k}.parquet", list(range(k * 10, k * 10 + 10)))
    _build(root, [si.MinMax("id"), si.BitSlicedBitmap("id")])
    return root


# ------------------------------------------------------------------ staleness


def test_appended_file_is_kept_until_indexed(table: Path):
    _write(table, "p9.parquet", [12])
    assert _kept(table, "id = 12") == {"p1.parquet", "p9.parquet"}
    assert _kept(table, "id = 999") == {"p9.parquet"}  # uncovered: always kept
    _build(table)
    assert _kept(table, "id = 999") == set()


def test_rewrite_with_same_size_and_new_mtime_is_stale(table: Path):
    path = table / "p0.parquet"
    size = path.stat().st_size
    _write(table, "p0.parquet", list(range(100, 110)))
    assert path.stat().st_size == size
    _bump_mtime(path)
    assert "p0.parquet" in _kept(table, "id = 105")  # the old index said 0..9
    _build(table)
    assert _kept(table, "id = 105") == {"p0.parquet"}
    assert _kept(table, "id = 5") == set()


def test_rewrite_with_same_mtime_and_new_size_is_stale(table: Path):
    path = table / "p0.parquet"
    stat = path.stat()
    _write(table, "p0.parquet", list(range(500, 600)))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert path.stat().st_size != stat.st_size
    assert "p0.parquet" in _kept(table, "id = 550")


def test_deleted_files_are_never_returned(table: Path):
    (table / "p3.parquet").unlink()
    assert "p3.parquet" not in _kept(table, "id >= 0")
    assert _kept(table, "id = 35") == set()


def test_compaction_replacing_files_is_handled(table: Path):
    merged = pa.concat_tables([pq.read_table(table / f"p{k}.parquet") for k in range(3)])
    for k in range(3):
        (table / f"p{k}.parquet").unlink()
    pq.write_table(merged, table / "compacted.parquet")
    assert _kept(table, "id = 15") == {"compacted.parquet"}
    report = _build(table)
    assert (report.files_indexed, report.files_removed, report.files_unchanged) == (1, 3, 2)
    assert _kept(table, "id = 15") == {"compacted.parquet"}
    assert _kept(table, "id = 45") == {"p4.parquet"}


def test_refresh_of_one_changed_file_among_1000_reads_only_that_file(tmp_path, monkeypatch):
    root = tmp_path / "t"
    for k in range(1000):
        _write(root, f"p{k:04d}.parquet", [k])
    _build(root, [si.MinMax("id")])
    _write(root, "p0500.parquet", [5000, 5001])
    opened: list[str] = []
    real = indexer.open_file

    def counting(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(indexer, "open_file", counting)
    report = _build(root)
    assert opened == [str(root / "p0500.parquet")]
    assert (report.files_indexed, report.files_unchanged) == (1, 999)
    assert _kept(root, "id = 5001") == {"p0500.parquet"}


# ------------------------------------------------------------------- damage


def _segment(table: Path) -> Path:
    return next((table / "_skipindex" / "segments").glob("*.parquet"))


def _damage_cases() -> dict[str, object]:
    def truncate(table: Path) -> str:
        seg = _segment(table)
        seg.write_bytes(seg.read_bytes()[: seg.stat().st_size // 2])
        return seg.name

    def flip_bytes(table: Path) -> str:
        seg = _segment(table)
        data = bytearray(seg.read_bytes())
        for offset in range(200, min(len(data) - 200, 4000), 97):
            data[offset] ^= 0x5A
        seg.write_bytes(bytes(data))
        return seg.name

    def remove_segment(table: Path) -> str:
        seg = _segment(table)
        seg.unlink()
        return seg.name

    def break_schema(table: Path) -> str:
        manifest = table / "_skipindex" / "v1.json"
        doc = json.loads(manifest.read_text())
        doc["indexes"][0]["kind"] = 42
        manifest.write_text(json.dumps(doc))
        return "v1.json"

    def newer_format(table: Path) -> str:
        manifest = table / "_skipindex" / "v1.json"
        doc = json.loads(manifest.read_text())
        doc["format_version"] = 999
        manifest.write_text(json.dumps(doc))
        return "v1.json"

    return {
        "truncated segment": truncate,
        "corrupted segment": flip_bytes,
        "missing segment": remove_segment,
        "manifest fails schema": break_schema,
        "newer format version": newer_format,
    }


@pytest.mark.parametrize("damage", sorted(_damage_cases()))
def test_damaged_index_raises_naming_the_file_or_keeps_every_file(table: Path, damage: str):
    name = _damage_cases()[damage](table)  # type: ignore[operator]
    with pytest.raises(si.IndexCorruptError, match=name.replace(".", r"\.")):
        si.prune(str(table), "id = 3")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = si.prune(str(table), "id = 3", on_damaged="keep")
    assert result.kept == result.total == 5
    assert any(name in str(w.message) for w in caught)


def test_damaged_bitmap_bytes_are_an_error_not_a_wrong_answer(table: Path):
    manifest = load_latest(locate(str(table)))
    assert manifest is not None
    field = next(d.field for d in manifest.indexes if d.kind == "bitsliced_bitmap")
    for ref in manifest.segments:
        path = table / "_skipindex" / ref.path
        segment = pq.read_table(path)
        payload = segment.column(field).combine_chunks()
        slices = payload.field("slices")
        garbage = pa.ListArray.from_arrays(
            slices.offsets, pa.array([b"\x00garbage"] * len(slices.values), pa.binary())
        )
        arrays = [garbage if n == "slices" else payload.field(n) for n in payload.type.names]
        broken = pa.StructArray.from_arrays(arrays, fields=list(payload.type))
        index = segment.schema.get_field_index(field)
        pq.write_table(segment.set_column(index, field, broken), path, write_page_checksum=True)
    with pytest.raises(si.IndexCorruptError, match="bitsliced_bitmap on id"):
        si.prune(str(table), "id = 3")


# ------------------------------------------------------------- odd tables


def test_empty_table_zero_row_files_hidden_and_non_parquet_files(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(si.UnknownColumnError, match="no readable Parquet files yet"):
        _build(empty, [si.MinMax("id")])  # no file declares the column's type
    assert si.prune(str(empty), "id = 1").files == []
    root = tmp_path / "t"
    _write(root, "zero.parquet", [])
    _write(root, "data.parquet", [1, 2])
    (root / "junk.parquet").write_text("not parquet, whatever the name says")
    (root / "notes.txt").write_text("named as another format: not data")
    (root / "export.CSV").write_text("a,b")
    (root / "_SUCCESS").write_text("")
    (root / ".hidden.parquet").write_bytes(b"junk")
    report = _build(root, [si.MinMax("id")])
    assert report.files_indexed == 3  # zero.parquet, data.parquet, junk.parquet
    described = si.describe(str(root))
    assert described.files_unreadable == 1
    assert described.files_not_parquet == ["export.CSV", "notes.txt"]
    assert "not Parquet, left out: export.CSV, notes.txt" in str(described)
    assert _kept(root, "id = 1") == {"data.parquet", "junk.parquet"}  # unreadable: kept
    assert _kept(root, "id IS NULL") == {"junk.parquet"}  # zero rows: never matches


def test_column_missing_from_some_files_or_of_another_type(tmp_path: Path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [1, 2])
    pq.write_table(pa.table({"other": [1]}), root / "b.parquet")  # no id: all NULL
    pq.write_table(pa.table({"id": pa.array([7], pa.int32())}), root / "c.parquet")  # castable
    pq.write_table(pa.table({"id": ["x"]}), root / "d.parquet")  # cannot be int64
    _build(root, [si.MinMax("id")])
    assert _kept(root, "id = 7") == {"c.parquet", "d.parquet"}
    assert _kept(root, "id IS NULL") == {"b.parquet", "d.parquet"}


def test_paths_with_spaces_and_non_ascii(tmp_path: Path):
    root = tmp_path / "my table ü"
    _write(root, "año=2024/part 1 é.parquet", [1])
    _write(root, "año=2025/part[2].parquet", [2])
    _build(root, [si.MinMax("id")])
    files = si.prune(str(root), "id = 2").files
    assert files == [str(root / "año=2025" / "part[2].parquet")]
    assert Path(files[0]).exists()


def test_huge_in_list_and_deep_nesting(table: Path):
    values = ", ".join(str(v) for v in range(100_000, 200_000))
    assert _kept(table, f"id IN ({values}, 42)") == {"p4.parquet"}
    deep = "id = 3"
    for level in range(1000):
        deep = (
            f"NOT ({deep})"
            if level % 3 == 0
            else f"({deep} {'AND' if level % 2 else 'OR'} id > -1)"
        )
    assert _kept(table, deep) == set()  # FALSE for every row (DuckDB agrees)
    assert _kept(table, f"({deep}) OR id = 3") == {"p0.parquet"}


# ------------------------------------------------------------- containment


def _digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "_skipindex" not in p.parts
    }


def test_the_index_never_modifies_or_deletes_data_files(table: Path):
    before = _digest(table)
    _build(table, [si.Bloom("id"), si.EqualityBitmap("id")])
    _build(table)
    si.drop_index(str(table), kinds=["bloom"])
    si.vacuum(str(table))
    si.drop_index(str(table), all=True)
    assert _digest(table) == before


def test_old_versions_and_orphans_are_vacuumed_but_not_the_current_ones(table: Path):
    index = table / "_skipindex"
    for k in range(4):
        _write(table, f"extra{k}.parquet", [1000 + k])
        _build(table)
    manifest = load_latest(locate(str(table)))
    assert manifest is not None
    assert sorted(p.name for p in index.glob("v*.json")) == [
        f"v{manifest.version - 1}.json",
        f"v{manifest.version}.json",
    ]
    orphan = index / "segments" / "0000000000001-deadbeef0000-1-00000.parquet"
    shutil.copy(next((index / "segments").glob("*.parquet")), orphan)
    removed = si.vacuum(str(table))
    assert removed == [f"_skipindex/segments/{orphan.name}"]
    referenced = {
        s.path.split("/")[-1]
        for v in (manifest.version - 1, manifest.version)
        for s in json_segments(index / f"v{v}.json")
    }
    assert {p.name for p in (index / "segments").iterdir()} == referenced
    assert _kept(table, "id = 1002") == {"extra2.parquet"}


def test_vacuum_without_an_index_is_a_no_op_that_says_so(table: Path, tmp_path: Path):
    si.drop_index(str(table), all=True)
    vacuumed = si.vacuum(str(table))
    assert vacuumed == []
    assert vacuumed.note is not None
    assert "nothing to vacuum" in vacuumed.note
    assert "nothing to vacuum" in str(vacuumed)
    never = tmp_path / "never"
    _write(never, "p.parquet", [1, 2])
    assert si.vacuum(never) == []
    assert not (never / "_skipindex").exists()  # vacuum creates nothing
    with pytest.raises(si.NotATableError):
        si.vacuum(tmp_path / "missing")  # a path that is not a table is still an error


def json_segments(manifest: Path) -> list[SegmentRef]:
    return [SegmentRef(**s) for s in json.loads(manifest.read_text())["segments"]]


def test_bitmaps_keep_correct_results_on_random_layout(tmp_path: Path):
    rng = np.random.default_rng(3)
    root = tmp_path / "t"
    for k in range(8):
        _write(root, f"p{k}.parquet", rng.integers(0, 50, 30).tolist())
    _build(root, [si.BitSlicedBitmap("id")])
    truth = {
        p.name for p in root.glob("*.parquet") if 17 in pq.read_table(p).column("id").to_pylist()
    }
    assert _kept(root, "id = 17") == truth


class _OneBin(InProcessRunner):
    parallelism = 1  # every file in one task


def test_a_bin_past_the_row_group_budget_is_written_in_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A task writes its segment a few files at a time; prune reads it whole."""
    rng = np.random.default_rng(5)
    root = tmp_path / "t"
    for k in range(7):
        _write(root, f"p{k}.parquet", rng.integers(0, 40, 25).tolist())
    monkeypatch.setattr(indexer, "ROW_GROUP_BYTES", 1)  # one file per row group
    specs = [si.MinMax("id"), si.Bloom("id"), si.RangeBitmap("id", bins=4)]
    assert build_with(str(root), specs, _OneBin()).files_indexed == 7
    (ref,) = load_latest(locate(str(root))).segments
    assert pq.ParquetFile(root / "_skipindex" / ref.path).metadata.num_row_groups == 7
    assert (ref.files, ref.rows) == (7, 7 * 25)
    columns = {p.name: pq.read_table(p).column("id").to_pylist() for p in root.glob("*.parquet")}
    for value in (3, 17, 39, 40):
        assert _kept(root, f"id = {value}") == {n for n, ids in columns.items() if value in ids}
        assert _kept(root, f"id <= {value}") == {
            n for n, ids in columns.items() if min(ids) <= value
        }


def test_a_bin_that_fails_midway_leaves_no_segment_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    root = tmp_path / "t"
    for k in range(4):
        _write(root, f"p{k}.parquet", list(range(k, k + 5)))
    _build(root, [si.MinMax("id")])
    before = sorted((root / "_skipindex" / "segments").iterdir())
    monkeypatch.setattr(indexer, "ROW_GROUP_BYTES", 1)
    real = indexer._index_file
    calls = []

    def failing(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:  # after two row groups are on disk
            raise OSError("disk went away")
        return real(*args)

    monkeypatch.setattr(indexer, "_index_file", failing)
    with pytest.raises(OSError, match="disk went away"):
        build_with(str(root), [si.MinMax("id"), si.Bloom("id")], _OneBin())
    assert sorted((root / "_skipindex" / "segments").iterdir()) == before
    assert _kept(root, "id = 2") == {"p0.parquet", "p1.parquet", "p2.parquet"}


def test_adding_an_index_reads_only_its_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from skipindex.indexing import indexer

    root = tmp_path / "t"
    root.mkdir()
    for k in range(4):
        ids = list(range(k * 100, k * 100 + 100))
        table = pa.table({"id": ids, "key": [i * 7 for i in ids], "text": ["x" * 200] * 100})
        pq.write_table(table, root / f"p{k}.parquet")
    build_with(root, [si.MinMax("id"), si.MinMax("text")], InProcessRunner())
    pq.write_table(pa.table({"id": [999], "key": [5], "text": ["y"]}), root / "p9.parquet")  # new
    (root / "p0.parquet").unlink()  # gone
    read: list[list[str]] = []
    original = indexer.read_columns

    def spy(parquet: Any, wanted: Any, view: Any, *more: Any) -> Any:
        read.append([path[0] for path, _ in wanted])
        return original(parquet, wanted, view, *more)

    monkeypatch.setattr(indexer, "read_columns", spy)
    report = build_with(root, [si.Bloom("key")], InProcessRunner())
    assert sorted(map(tuple, read)) == sorted([("id", "text", "key")] + [("key",)] * 3)
    assert report.files_indexed == 4
    assert report.files_removed == 1
    for key, expected in ((7 * 150, {"p1.parquet"}), (5, {"p9.parquet"}), (7 * 50, set())):
        assert _kept(root, f"key = {key}") == expected
    assert _kept(root, "id = 250") == {"p2.parquet"}  # old payloads kept alongside
    assert _kept(root, "text = 'x'") == set()
    assert si.describe(root).files_indexed == 4
