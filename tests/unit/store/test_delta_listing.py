"""A Delta table's files come from its log and are kept per log version: a
version never changes, so a later prune reuses what an earlier one read, and a
commit (a new version) is read afresh."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store.delta import latest_version
from skipindex.store.location import locate
from tests._support import examples


def test_a_version_is_read_once_and_a_commit_is_seen(tmp_path: Path):
    write_deltalake(str(tmp_path), pa.table({"a": [1, 2, 3]}))
    write_deltalake(str(tmp_path), pa.table({"a": [10, 20]}), mode="append")
    build_with(str(tmp_path), [si.MinMax("a")], InProcessRunner())
    location = locate(tmp_path)
    assert latest_version(location.fs, location.root) == 1
    first = location.list_table()
    assert location.list_table() is first
    assert len(first) == 2
    assert si.prune(tmp_path, "a = 20").kept == 1
    write_deltalake(str(tmp_path), pa.table({"a": [20]}), mode="append")  # not indexed
    assert latest_version(location.fs, location.root) == 2
    assert len(location.list_table()) == 3
    assert si.prune(tmp_path, "a = 20").kept == 2  # the new file is kept: not covered
    write_deltalake(str(tmp_path), pa.table({"a": [5]}), mode="overwrite")
    after = si.prune(tmp_path, "a = 20")  # the overwritten files left the snapshot
    assert (after.total, after.covered, after.kept) == (1, 0, 1)


def test_a_log_that_cannot_be_listed_has_no_version(tmp_path: Path):
    location = locate(tmp_path)
    assert latest_version(location.fs, location.root) is None


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(alphabet="a/.\\%", max_size=8), min_size=1, max_size=6))
def test_paths_are_refused_at_once_as_one_by_one(paths: list[str]):
    """A log's paths are checked as one array: a path escaping the table root is
    refused exactly where the check of one path refuses it, and named."""
    from skipindex.store.location import _all_contained, _contained

    refused = []
    for path in paths:
        try:
            _contained(path)
        except si.IndexCorruptError:
            refused.append(path)
    if refused:
        with pytest.raises(si.IndexCorruptError, match=re.escape(repr(refused[0]))):
            _all_contained(pa.array(paths, pa.string()))
    else:
        _all_contained(pa.array(paths, pa.string()))


def test_escaped_paths_are_decoded_and_the_others_kept_as_they_are():
    from skipindex.store.delta import _decoded

    paths = pa.array(["a%20b/part-0.parquet", "c/part-1.parquet", "d%25e.parquet"])
    assert _decoded(paths).to_pylist() == ["a b/part-0.parquet", "c/part-1.parquet", "d%e.parquet"]
    plain = pa.array(["x/part-0.parquet"])
    assert _decoded(plain) is plain
