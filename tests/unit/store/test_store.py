"""The on-disk store: listing like Spark, manifests validated and never overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex.errors import (
    ConflictError,
    IndexCorruptError,
    IndexFormatVersionError,
    NotATableError,
    UnsupportedTableError,
)
from skipindex.indexing.runners import pack_bins
from skipindex.store import listing as listing_module
from skipindex.store.listing import _hidden
from skipindex.store.location import DataFile, Listing, is_hidden, locate
from skipindex.store.manifest import IndexDef, Manifest, commit, load_latest, manifest_versions


def _manifest(version: int) -> Manifest:
    return Manifest(
        version=version,
        arrow_schema=pa.schema([("a", pa.int64()), ("é x", pa.string())]),
        indexes=(IndexDef(0, "a", "minmax", {}, "int64", "minmax_0"),),
        segments=(),
        next_index_id=1,
    )


def test_listing_follows_spark_hidden_file_rules(tmp_path: Path):
    table = pa.table({"a": [1]})
    for relative in [
        "part-0.parquet",
        "year=2020/part-1.parquet",
        "_year=2021/part-2.parquet",  # partition folder despite the underscore
        "_skipindex/v1.json",
        "_SUCCESS",
        ".part-0.parquet.crc",
        "sub/.hidden/x.parquet",
        "sub/_tmp/x.parquet",
        "a b/ü.parquet",
        "copy._COPYING_",
    ]:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)
    listed = [f.path for f in locate(str(tmp_path)).list_data_files()]
    assert listed == [
        "_year=2021/part-2.parquet",
        "a b/ü.parquet",
        "part-0.parquet",
        "year=2020/part-1.parquet",
    ]


def test_listing_reports_size_and_mtime_in_milliseconds(tmp_path: Path):
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "f.parquet")
    os.utime(tmp_path / "f.parquet", ns=(0, 1_234_567_890_123_456_789))
    (listed,) = locate(str(tmp_path)).list_data_files()
    assert listed == DataFile(
        "f.parquet", (tmp_path / "f.parquet").stat().st_size, 1_234_567_890_123
    )


# Spark lists Parquet's summary files but never reads them as data (isDataPath).
@pytest.mark.parametrize(
    "name", ["_x", ".x", "_SUCCESS", "x._COPYING_", "_metadata", "_common_metadata"]
)
def test_hidden_names(name: str):
    assert is_hidden(name)


@pytest.mark.parametrize("name", ["x", "k=v", "_k=v", "metadata"])
def test_visible_names(name: str):
    assert not is_hidden(name)


@given(st.lists(st.text(alphabet="_.=x_COPYING", max_size=12), max_size=30))
def test_names_are_hidden_alike_one_at_a_time_and_all_at_once(names: list[str]):
    at_once = _hidden(pa.array(names, pa.string())).tolist()
    assert at_once == [is_hidden(name) for name in names]


def test_files_deleted_while_listing_are_left_out(tmp_path: Path, monkeypatch):
    for name in ["a.parquet", "b.parquet", "c.parquet"]:
        (tmp_path / name).write_bytes(b"x" * len(name))
    stat_all = listing_module._stat_all

    def delete_then_stat(folder: str, names: list[str]) -> tuple[np.ndarray, ...]:
        (tmp_path / "b.parquet").unlink()  # between the names and the stat
        return stat_all(folder, names)

    monkeypatch.setattr(listing_module, "_stat_all", delete_then_stat)
    listed = locate(tmp_path).list_table()
    assert [f.path for f in listed.files()] == ["a.parquet", "c.parquet"]
    assert listed.sizes.tolist() == [9, 9]


def test_listing_tells_files_folders_and_the_rest_by_their_stat(tmp_path: Path):
    (tmp_path / "a.parquet").write_bytes(b"abc")
    (tmp_path / "k=1").mkdir()
    (tmp_path / "k=1" / "b.parquet").write_bytes(b"abcdef")
    os.mkfifo(tmp_path / "pipe.parquet")  # neither file nor folder: not listed
    (tmp_path / "gone.parquet").symlink_to(tmp_path / "nowhere")  # stat finds nothing
    listed = locate(tmp_path).list_table()
    assert [f.path for f in listed.files()] == ["a.parquet", "k=1/b.parquet"]
    assert listed.sizes.tolist() == [3, 6]
    expected = [
        os.stat(tmp_path / p).st_mtime_ns // 1_000_000 for p in ("a.parquet", "k=1/b.parquet")
    ]
    assert listed.mtimes_ms.tolist() == expected


def test_a_file_name_that_is_not_utf8_is_refused_by_name(tmp_path: Path):
    (tmp_path / "ok.parquet").write_bytes(b"x")
    with open(os.fsencode(tmp_path) + b"/bad\xff.parquet", "wb") as file:
        file.write(b"x")
    with pytest.raises(UnsupportedTableError, match=r"bad\\udcff\.parquet.*not UTF-8"):
        locate(tmp_path).list_table()


def test_listing_sorts_only_the_positions_asked_for(tmp_path: Path):
    names = ["b/z.parquet", "a.parquet", "b/é.parquet", "b/a.parquet"]
    listing = Listing.of(DataFile(name, i, i) for i, name in enumerate(names))
    assert listing.path_list(listing.in_order()) == sorted(names)
    assert listing.path_list(listing.in_order(np.array([0, 2, 1]))) == sorted(
        [names[0], names[2], names[1]]
    )
    assert [f.path for f in listing.without({"a.parquet"}).files()] == sorted(names)[1:]


def test_not_a_table_errors_name_the_path(tmp_path: Path):
    with pytest.raises(NotATableError, match="does not exist"):
        locate(str(tmp_path / "nope")).list_data_files()
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotATableError, match="not a directory"):
        locate(str(tmp_path / "file")).list_data_files()


def test_manifest_round_trip_and_versions(tmp_path: Path):
    location = locate(str(tmp_path))
    commit(location, _manifest(1))
    commit(location, _manifest(2))
    latest = load_latest(location)
    assert latest is not None
    assert latest.version == 2
    assert latest.arrow_schema == _manifest(2).arrow_schema
    assert latest.indexes == _manifest(2).indexes
    assert manifest_versions(location) == [1, 2]


def test_commit_never_overwrites_a_version(tmp_path: Path):
    location = locate(str(tmp_path))
    commit(location, _manifest(1))
    before = (tmp_path / "_skipindex" / "v1.json").read_bytes()
    with pytest.raises(ConflictError, match=r"v1\.json"):
        commit(location, _manifest(1))
    assert (tmp_path / "_skipindex" / "v1.json").read_bytes() == before
    assert not [p for p in (tmp_path / "_skipindex").iterdir() if p.name.startswith(".tmp")]


def _write_manifest(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "_skipindex" / "v1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_manifest_failing_its_schema_is_named(tmp_path: Path):
    doc = _manifest(1).to_json()
    doc["segments"] = [{"path": "../../etc/passwd", "files": 1, "rows": 1, "bytes": 1}]
    _write_manifest(tmp_path, doc)
    with pytest.raises(
        IndexCorruptError, match=r"v1\.json fails the manifest schema at segments/0/path"
    ):
        load_latest(locate(str(tmp_path)))


def test_truncated_manifest_is_named(tmp_path: Path):
    path = _write_manifest(tmp_path, _manifest(1).to_json())
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(IndexCorruptError, match=r"v1\.json is not valid JSON"):
        load_latest(locate(str(tmp_path)))


def test_newer_format_version_is_refused_with_advice(tmp_path: Path):
    doc = _manifest(1).to_json()
    doc["format_version"] = 99
    _write_manifest(tmp_path, doc)
    with pytest.raises(IndexFormatVersionError, match="upgrade skipindex"):
        load_latest(locate(str(tmp_path)))


@pytest.mark.parametrize("bad", ["../x.parquet", "/etc/passwd", "a/../../b", "a//b", ""])
def test_paths_from_the_index_stay_inside_the_table(tmp_path: Path, bad: str):
    with pytest.raises(IndexCorruptError, match="outside the table root"):
        locate(str(tmp_path)).fs_path(bad)


def test_bins_are_size_balanced_and_cover_every_file_once():
    files = [DataFile(f"f{i}", size=(i % 7 + 1) * 1000, mtime_ms=0) for i in range(100)]
    bins = pack_bins(files, 6)
    assert len(bins) == 6
    assert sorted(f.path for b in bins for f in b) == sorted(f.path for f in files)
    loads = [sum(f.size for f in b) for b in bins]
    assert max(loads) - min(loads) <= 7000  # LPT: within one largest file
    assert len(pack_bins(files[:3], 6)) == 3  # never more bins than files
