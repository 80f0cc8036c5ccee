"""The advisor's plan carried out with Spark: clustered as advised, its estimates
against the files the result keeps, and handed to the maintenance service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from _advise_support import DAY_QUERIES, FILES, KEY_QUERIES, events_table

import skipindex as si
from skipindex.advise.advise import advise
from skipindex.advise.apply import apply
from skipindex.maintain.advice import to_policy


def _rows(path: str, spark: Any, where: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in si.read(spark, path, where).collect())


def test_an_advised_layout_keeps_what_was_estimated(tmp_path: Path, spark: Any) -> None:
    table = events_table(tmp_path / "events", shuffled=True)
    advice = advise(table, DAY_QUERIES, sample_files=FILES)
    assert advice.layout is not None
    applied = apply(advice, dst=str(tmp_path / "advised"), spark=spark)
    estimated = advice.totals()["planned"]
    kept = sum(
        si.prune(applied.path, e.where or "TRUE", time_zone="UTC").kept for e in advice.estimates
    )
    assert abs(estimated - kept) <= 0.2 * kept + 1, (estimated, kept)
    total_rows = sum(pq.read_metadata(p).num_rows for p in Path(applied.path).glob("*.parquet"))
    assert total_rows == sum(pq.read_metadata(p).num_rows for p in table.glob("*.parquet"))
    for estimate in advice.estimates:
        where = estimate.where or "TRUE"
        assert _rows(applied.path, spark, where) == _rows(str(table), spark, where)


def test_the_service_builds_what_was_advised(tmp_path: Path, spark: Any) -> None:
    table = events_table(tmp_path / "events")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[service]\nstate = "state.db"\n\n[[table]]\npath = "events"\nbinpack = false\n'
    )
    advice = advise(table, KEY_QUERIES, sample_files=FILES, layouts_too=False)
    to_policy(advice, policy)
    si.maintain(policy=policy, spark=spark)
    built = {(d["column"], d["kind"]) for d in si.describe(str(table)).indexes}
    assert {(c.column, c.kind) for c in advice.indexes} <= built
    for estimate in advice.estimates:
        assert si.prune(str(table), estimate.where or "TRUE").kept == estimate.planned
