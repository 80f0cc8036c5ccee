"""si.Table: a table listed once and pruned many times, answering what prune
answers over the files as they were listed, until refresh() lists them again."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import examples


def _write(path: Path, start: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"a": np.arange(start, start + 10)}), path)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("held")
    for day in range(3):
        for part in range(4):
            _write(root / f"day={day}" / f"p{part}.parquet", (day * 4 + part) * 10)
    build_with(str(root), [si.MinMax("a"), si.EqualityBitmap("a")], InProcessRunner())
    return root


@settings(max_examples=examples(40), deadline=None)
@given(low=st.integers(-5, 125), width=st.integers(0, 40), day=st.integers(-1, 3))
def test_a_held_table_answers_what_prune_answers(indexed: Path, low, width, day):
    table = si.Table(indexed)
    for where in (f"a BETWEEN {low} AND {low + width}", f"a = {low} OR day = {day}"):
        held, listed = table.prune(where), si.prune(indexed, where)
        assert held.files == listed.files, where
        assert sorted(held.skipped_files) == sorted(listed.skipped_files)
        assert held.total == listed.total == len(table) == 12


def test_files_added_or_removed_are_seen_after_a_refresh(tmp_path: Path):
    for part in range(3):
        _write(tmp_path / f"p{part}.parquet", part * 10)
    build_with(str(tmp_path), [si.MinMax("a")], InProcessRunner())
    table = si.Table(tmp_path)
    assert table.prune("a = 5").files == [str(tmp_path / "p0.parquet")]
    _write(tmp_path / "p3.parquet", 0)  # added: not indexed, so kept once listed
    os.remove(tmp_path / "p0.parquet")
    assert table.prune("a = 5").files == [str(tmp_path / "p0.parquet")]  # as listed
    assert table.refresh() is table
    assert len(table) == 3
    assert table.prune("a = 5").files == [str(tmp_path / "p3.parquet")]
    assert table.prune("a = 5").files == si.prune(tmp_path, "a = 5").files


def test_a_held_table_refuses_what_prune_refuses(indexed: Path):
    table = si.Table(indexed)
    with pytest.raises(ValueError, match="row_level"):
        table.prune("a = 1", row_level="sometimes")  # type: ignore[arg-type]
    with pytest.raises(si.UnknownColumnError, match="nope"):
        table.prune("nope = 1")
    assert repr(table) == f"Table({str(indexed)!r}, files=12)"
