"""The re-clustering decision: logged predicates asked again keep more files
than they did right after the last layout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.maintain import decay
from skipindex.maintain.policy import TablePolicy
from skipindex.store import query_log
from skipindex.store.location import locate

PROBES = [5, 130, 260, 390, 520, 650, 780]


@pytest.fixture(autouse=True)
def log(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "queries.db"
    query_log.use_query_log(path)
    yield path
    query_log.use_query_log(None)


def _table(root: Path) -> TablePolicy:
    root.mkdir()
    for k in range(8):  # laid out: each file one range of ids
        pq.write_table(pa.table({"id": np.arange(k * 100, k * 100 + 100)}), root / f"p{k}.parquet")
    build_with(str(root), [si.MinMax("id")], InProcessRunner())
    return TablePolicy(
        name=str(root),
        path=str(root),
        cluster_by=("id",),
        recluster_min_seconds=0,
        recluster_min_queries=5,
        recluster_decay=1.5,
    )


def test_decay_is_measured_from_the_queries_logged_after_the_layout(
    tmp_path: Path, log: Path
) -> None:
    table = _table(tmp_path / "t")
    location = locate(table.path)
    clustered = query_log.queries(str(log), table.path)  # nothing logged yet
    assert clustered == []
    since = 0  # the layout's time (a Delta OPTIMIZE records only a time)
    verdict = decay.recluster_due(table, location, str(log), since + 1, {}, now_ms=10**13)
    assert not verdict.due
    assert "0 logged predicates" in verdict.reason
    for value in PROBES:
        si.prune(table.path, f"id = {value}")  # each keeps 1 of 8 files
    verdict = decay.recluster_due(table, location, str(log), since + 1, {}, now_ms=10**13)
    assert not verdict.due
    assert verdict.reason.startswith("skipping holds: 7 logged predicates keep 12.5% of files")

    rng = np.random.default_rng(0)
    for k in range(8):  # appended in arrival order: every file spans every id
        ids = rng.permutation(800)[:100]
        pq.write_table(pa.table({"id": ids}), tmp_path / "t" / f"z{k}.parquet")
    build_with(table.path, None, InProcessRunner())
    verdict = decay.recluster_due(table, location, str(log), since + 1, {}, now_ms=10**13)
    assert verdict.due, verdict.reason
    assert verdict.baseline_share == pytest.approx(0.125)
    assert verdict.current_share is not None
    assert verdict.current_share > 0.5
    assert "skipping decayed" in verdict.reason
    # the replays were not logged
    assert len(query_log.queries(str(log), table.path)) == len(PROBES)


def test_a_recorded_baseline_and_the_minimum_wait(tmp_path: Path) -> None:
    table = _table(tmp_path / "t")
    location = locate(table.path)
    recorded = {f"id = {v}": 0.01 for v in PROBES}  # far better right after the layout
    for value in PROBES:
        si.prune(table.path, f"id = {value}")
    verdict = decay.recluster_due(table, location, "x", None, recorded)
    assert (verdict.due, verdict.reason) == (True, "no layout by (id) yet")
    log_path = str(query_log.log_path())
    assert decay.recluster_due(table, location, log_path, 1, recorded, now_ms=10**13).due
    waiting = TablePolicy(**{**table.__dict__, "recluster_min_seconds": 3600.0})
    now = 10**13
    verdict = decay.recluster_due(waiting, location, log_path, now - 1000, recorded, now_ms=now)
    assert not verdict.due
    assert verdict.reason == "clustered 1 s ago (minimum 3600 s)"
    no_keys = TablePolicy(name=table.name, path=table.path)
    assert not decay.recluster_due(no_keys, location, log_path, None, {}).due
