"""``indexes = "advise"``: the service builds what the logged workload asks for,
follows the workload when it changes, and does not advise the same one twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from _advise_support import FILES, events_table

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.maintain import advised, jobs
from skipindex.maintain.scheduler import Service
from skipindex.store import query_log


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    def in_process(path: Any, specs: Any = None, *, spark: Any = None, catalog: Any = None) -> Any:
        return build_with(path, specs, InProcessRunner(), catalog=catalog)

    monkeypatch.setattr(jobs, "build_index", in_process)
    monkeypatch.setattr(Service, "spark", lambda self: None)  # no JVM in unit tests
    calls: list[str] = []
    real = advised.advise

    def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(advised, "advise", counted)
    table = events_table(tmp_path / "events")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        '[service]\nstate = "state.db"\nquery_log = "queries.db"\n\n'
        '[[table]]\npath = "events"\nindexes = "advise"\nbinpack = false\n'
    )
    return {"table": table, "policy": policy, "log": str(tmp_path / "queries.db"), "calls": calls}


def _run(setup: dict[str, Any], *predicates: str) -> None:
    query_log.use_query_log(setup["log"])
    try:
        for where in predicates:
            si.prune(str(setup["table"]), where, time_zone="UTC")
    finally:
        query_log.use_query_log(None)


def _built(table: Path) -> set[tuple[str, str]]:
    return {(d["column"], d["kind"]) for d in si.describe(str(table)).indexes}


def _commit(table: Path) -> None:
    """A writer appends one more file."""
    files = sorted(table.glob("*.parquet"))
    pq.write_table(pq.read_table(files[0]), table / f"new-{len(files):05d}.parquet")


def test_the_service_builds_and_follows_the_logged_workload(setup: dict[str, Any]) -> None:
    table = setup["table"]
    si.maintain(policy=setup["policy"])  # too few queries yet: suggested from the schema
    assert setup["calls"] == []
    _run(setup, *(f"k = {n * 97}" for n in range(6)))
    _commit(table)
    si.maintain(policy=setup["policy"])
    assert len(setup["calls"]) == 1
    by_key = _built(table)
    assert {("k", "bloom"), ("k", "equality_bitmap")} & by_key
    for n in range(6):  # what the advice promised, the table now keeps
        assert si.prune(str(table), f"k = {n * 97}").kept <= 2

    _commit(table)  # the same workload: the recorded advice is reused
    si.maintain(policy=setup["policy"])
    assert len(setup["calls"]) == 1

    _run(setup, *(f"cat = 'c{n}' AND day = DATE '2024-01-0{n + 1}'" for n in range(6)))
    _commit(table)  # queries on other columns arrive: advised again, more indexes built
    si.maintain(policy=setup["policy"])
    assert len(setup["calls"]) == 2
    assert {c for c, _ in _built(table) - by_key} & {"cat", "day"}
    assert si.describe(str(table)).files_indexed == FILES + 3
