"""Pricing reads by row groups for many files at once (``_read_costs``), against
the one-chunk model of :func:`skipindex.reading.pages.expected_bytes` walked file
by file, and the footer arrays it prices from, cached per file version."""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.reading import footers as _footers
from skipindex.reading import pages as page_read
from skipindex.reading.costs import costs
from skipindex.reading.costs import where_bytes as predicate_bytes
from skipindex.reading.footers import FooterLayout, footer_layout
from tests._support import examples


@st.composite
def _files(draw: st.DrawFn) -> list[tuple[pa.Table, int, list[int]]]:
    """Files of a few row groups and page sizes, each with sorted candidate rows."""
    out = []
    for k in range(draw(st.integers(1, 4))):
        rows = draw(st.integers(1, 400))
        ids = np.arange(rows, dtype=np.int64) + 1000 * k
        table = pa.table({"id": ids, "Note": pa.array([f"n{i % 13}" for i in ids]), "x": ids % 7})
        group_rows = draw(st.integers(1, rows))
        candidates = sorted(draw(st.sets(st.integers(0, rows - 1), max_size=40)))
        out.append((table, group_rows, candidates))
    return out


def _per_file(meta: pq.FileMetaData, rows: np.ndarray, where: set[str]) -> tuple:
    """What one file costs, chunk by chunk through expected_bytes."""
    starts = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    groups, group_rows, read, where_bytes, total = [], 0, 0.0, 0, 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        wanted = rows[(rows >= starts[g]) & (rows < starts[g + 1])] - starts[g]
        if len(wanted):
            groups.append(g)
            group_rows += group.num_rows
        for i in range(group.num_columns):
            chunk = group.column(i)
            read += page_read.expected_bytes(chunk, wanted)
            total += chunk.total_compressed_size
            if chunk.path_in_schema.split(".")[0].lower() in where:
                where_bytes += chunk.total_compressed_size
    return tuple(groups), group_rows, read, total, where_bytes


@settings(max_examples=examples(100), deadline=None)
@given(files=_files(), pages=st.sampled_from([None, 1, 40, 256]))
def test_costs_of_many_files_match_the_chunk_model_file_by_file(tmp_path_factory, files, pages):
    root = tmp_path_factory.mktemp("costs")
    layouts, rows, expected = [], [], []
    # Small pages and page limits, so chunks count several pages planning-wise.
    with mock.patch.object(page_read, "PAGE_ROWS", pages or page_read.PAGE_ROWS):
        for k, (table, group_rows, candidates) in enumerate(files):
            path = root / f"{k}.parquet"
            pq.write_table(table, path, row_group_size=group_rows)
            meta = pq.read_metadata(path)
            wanted = np.array(candidates, dtype=np.int64)
            layouts.append(FooterLayout.of(meta))
            rows.append(wanted)
            expected.append(_per_file(meta, wanted, {"note"}))
        found = costs(layouts, rows, {"note"})
    for k, (groups, group_rows, read, total, where_bytes) in enumerate(expected):
        assert found.groups[k] == groups
        assert found.group_rows[k] == group_rows
        assert np.isclose(found.read_bytes[k], read)
        assert found.file_bytes[k] == total
        assert found.where_bytes[k] == where_bytes
    # the bound taken before candidate rows are priced: the predicate columns' bytes
    assert predicate_bytes(layouts, {"note"}) == sum(per_file[4] for per_file in expected)
    assert predicate_bytes(layouts, set()) == 0


def test_a_footer_is_read_once_per_file_version(tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path)
    stat = os.stat(path)
    listed = (stat.st_size, stat.st_mtime_ns // 1_000_000)
    opened = []
    real_read = _footers.read_metadata
    with mock.patch.object(_footers, "read_metadata", lambda p: opened.append(p) or real_read(p)):
        first = footer_layout(str(path), *listed)
        assert footer_layout(str(path), *listed) is first
        assert opened == [str(path)]
        # Another version (as a later listing would record it): read again, or
        # refused where the file on disk is not that version.
        assert footer_layout(str(path), listed[0] + 1, listed[1]) is None
        pq.write_table(pa.table({"a": [1, 2, 3, 4]}), path)
        stat = os.stat(path)
        second = footer_layout(str(path), stat.st_size, stat.st_mtime_ns // 1_000_000)
    assert second is not None
    assert (first.num_rows, second.num_rows) == (3, 4)
    assert len(opened) == 2
