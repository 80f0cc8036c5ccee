"""A Delta table's files come from its log and are kept per log version: a
version never changes, so a later prune reuses what an earlier one read, and a
commit (a new version) is read afresh."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store.delta import latest_version
from skipindex.store.location import locate


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
