"""Rows deleted without rewriting their file (Delta deletion vectors, Iceberg
position deletes): with exact kinds on every column the default prune keeps
exactly the files holding a *live* matching row, and each kept file's rows are
live matches only; any kind keeps at least those (DuckDB is the oracle of which
rows match, the drawn deletions of which are live)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning import evaluate
from skipindex.store.location import TableLocation
from tests._support import (
    SCHEMA,
    duckdb_matching_row_groups,
    examples,
    files_strategy,
    predicate_strategy,
    write_files,
)


@st.composite
def deletions(draw: st.DrawFn, tables: list) -> dict[str, np.ndarray]:
    """Some rows of some files, by file name."""
    out = {}
    for number, table in enumerate(tables):
        if table.num_rows and draw(st.booleans()):
            rows = draw(st.sets(st.integers(0, table.num_rows - 1), max_size=table.num_rows))
            out[f"part-{number:03d}.parquet"] = np.array(sorted(rows), dtype=np.int64)
    return out


@settings(max_examples=examples(60))
@given(
    data=st.data(),
    tables=files_strategy(),
    predicates=st.lists(predicate_strategy(), min_size=1, max_size=6),
    kind=st.sampled_from([si.BitSlicedBitmap, si.EqualityBitmap, si.MinMax]),
    row_level=st.sampled_from(["auto", "always"]),
    dense=st.booleans(),
)
def test_deleted_rows_never_match(data, tables, predicates, kind, row_level, dense):
    deleted = data.draw(deletions(tables))
    root = Path(tempfile.mkdtemp(prefix="deleted-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), [kind(c) for c in SCHEMA.names], InProcessRunner())
        listed = TableLocation.list_table

        def with_deletions(location: TableLocation):  # as a Delta or Iceberg listing has them
            return replace(listed(location), deleted=deleted)

        truth = duckdb_matching_row_groups(paths, predicates, group_rows=1)
        for predicate, rows_by_file in zip(predicates, truth, strict=True):
            live = {
                name
                for name, rows in rows_by_file.items()
                if rows - set(deleted.get(name, np.array([], np.int64)).tolist())
            }
            with (
                mock.patch.object(TableLocation, "list_table", with_deletions),
                mock.patch.object(evaluate, "DENSE_WALK", dense),
            ):
                result = si.prune(str(root / "t"), predicate, row_level=row_level)
            kept = {Path(f).name for f in result.files}
            assert live <= kept, predicate
            if kind is not si.MinMax:  # exact kinds: no file without a live match
                assert kept == live, predicate
            for file in result.files:
                rows = result.rows_of(file)
                gone = set(deleted.get(Path(file).name, np.array([], np.int64)).tolist())
                if rows is not None:  # narrowed rows never include a deleted one
                    assert not set(rows) & gone, predicate
    finally:
        shutil.rmtree(root, ignore_errors=True)
