"""A prune whose payloads exceed what the cache may hold evaluates the files a
group of PruneOptions.working_bytes at a time (pruning/streamed.py): the same files,
row groups, rows and per-condition counts as evaluating them all at once."""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning import batches
from skipindex.pruning.batches import units_of
from skipindex.pruning.options import using
from skipindex.pruning.streamed import groups_of
from skipindex.store.cache import batch_cache, segment_cache
from skipindex.store.location import locate
from skipindex.store.manifest import load_latest

PREDICATES = [
    "a BETWEEN 130 AND 460 AND b = 'x3'",
    "b IN ('x1', 'x5') OR a < 40",
    "a % 7 = 3 AND c > 0.5",  # a function nothing answers: might match
    "b = 'x2' AND c <= 0.1",
    "year = 2 AND b != 'x0'",
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("streamed")
    rng = np.random.default_rng(11)
    for number in range(24):
        folder = root / f"year={number % 3}"
        folder.mkdir(exist_ok=True)
        rows = pa.table(
            {
                "a": np.arange(number * 25, number * 25 + 40),
                "b": [f"x{v}" for v in rng.integers(0, 6, 40)],
                "c": rng.random(40),
            }
        )
        pq.write_table(rows, folder / f"part-{number:03d}.parquet", row_group_size=8)
    specs = [si.MinMax("a"), si.EqualityBitmap("b"), si.BitSlicedBitmap("c"), si.Bloom("b")]
    build_with(str(root), specs, InProcessRunner())  # four bins: four segments
    return root


def _prune(table: Path, where: str, grouped: bool) -> si.PruneResult:
    segment_cache.clear()
    batch_cache.clear()
    room = 0 if grouped else batch_cache.max_bytes  # no room: every payload too large
    with mock.patch.object(batch_cache, "max_bytes", room):
        # working_bytes 0: a row group at a time
        return si.prune(table, where, row_level="always", options=si.PruneOptions(working_bytes=0))


@pytest.mark.parametrize("where", PREDICATES)
def test_groups_keep_what_one_pass_keeps(table: Path, where: str):
    whole = _prune(table, where, grouped=False)
    grouped = _prune(table, where, grouped=True)
    assert grouped.files == whole.files
    assert grouped.row_groups == whole.row_groups
    assert {f: list(r) for f, r in grouped.rows.items()} == {
        f: list(r) for f, r in whole.rows.items()
    }
    assert grouped.row_level_skipped == whole.row_level_skipped
    assert [(c.condition, dict(c.ruled_out)) for c in grouped.leaves] == [
        (c.condition, dict(c.ruled_out)) for c in whole.leaves
    ]


def test_groups_hold_at_most_the_budget(table: Path):
    location = locate(table)
    manifest = load_latest(location)
    assert manifest is not None
    fields = [d.field for d in manifest.indexes]
    units = units_of(manifest, si.PruneOptions().unit_bytes)
    fits = groups_of(location, manifest, units, fields, 1 << 40, 0)
    assert fits.fields == ()  # one pass per unit
    assert [g.unit for g in fits.groups] == list(units)
    streaming = groups_of(location, manifest, units, fields, 0, 0)
    assert streaming.fields == tuple(fields)
    one_each = streaming.groups
    assert len(one_each) > len(units)
    assert [g.start for g in one_each] == list(np.cumsum([0] + [g.rows for g in one_each[:-1]]))
    assert sum(g.rows for g in one_each) == sum(ref.files for ref in manifest.segments) == 24


def test_units_hold_consecutive_segments_up_to_their_bytes(table: Path):
    manifest = load_latest(locate(table))
    assert manifest is not None
    assert len(manifest.segments) == 4
    largest = max(ref.bytes for ref in manifest.segments)
    for limit in (0, largest, 2 * largest, 1 << 40):
        units = units_of(manifest, limit)
        assert [ref for unit in units for ref in unit.refs] == list(manifest.segments)
        assert [u.start for u in units] == list(np.cumsum([0] + [u.files for u in units[:-1]]))
        assert all(len(u.refs) == 1 or sum(r.bytes for r in u.refs) <= limit for u in units)
    assert len(units_of(manifest, 0)) == 4
    assert len(units_of(manifest, 1 << 40)) == 1


@pytest.mark.parametrize("where", PREDICATES)
def test_units_on_threads_keep_what_one_unit_keeps(table: Path, where: str):
    """Payloads are cached and evaluated per unit of segments, and the units on
    threads where a table is large: the answers depend on neither."""
    answers = []
    for limit, threads in ((1 << 40, 1), (0, 1), (0, 3)):  # one unit; one per segment
        options = si.PruneOptions(unit_bytes=limit, threads=threads, threaded_files=0)
        manifest = load_latest(locate(table))
        assert manifest is not None
        assert len(batches.units_of(manifest, limit)) == (4 if limit == 0 else 1)
        segment_cache.clear()
        batch_cache.clear()
        if threads == 1:  # the options of a block, as read() and sql() prune in it
            with using(options):
                answers.append(si.prune(table, where, row_level="always"))
        else:
            answers.append(si.Table(table).prune(where, row_level="always", options=options))
    one, *others = answers
    for other in others:
        assert other.files == one.files
        assert other.row_groups == one.row_groups
        assert {f: list(r) for f, r in other.rows.items()} == {
            f: list(r) for f, r in one.rows.items()
        }
        assert [(c.condition, dict(c.ruled_out)) for c in other.leaves] == [
            (c.condition, dict(c.ruled_out)) for c in one.leaves
        ]


def test_threads_work_out_each_groups_selection_once(table: Path, monkeypatch: pytest.MonkeyPatch):
    """A kind's memo of which values a condition selects is per thread: groups on
    threads at once do not take each other's entry and work it out again."""
    from skipindex.indexes import _bitmap_kind

    made = []
    real = _bitmap_kind.select

    def slow_select(*args):  # long enough that both threads are inside a group at once
        made.append(args[0])
        time.sleep(0.05)
        return real(*args)

    monkeypatch.setattr(_bitmap_kind, "select", slow_select)
    segment_cache.clear()
    batch_cache.clear()
    options = si.PruneOptions(unit_bytes=0, threads=2, threaded_files=0)  # 4 units
    si.Table(table).prune("b = 'x2' AND c <= 0.1", row_level="always", options=options)
    assert len(made) == 2 * 4  # two conditions on bitmaps, once per unit each
