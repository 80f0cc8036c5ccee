"""The maintenance service SIGKILLed mid-job at random points and restarted:
no row lost or duplicated, the index readable and complete, each job finished
(and each layout done) once; and two services on the same tables, each table
worked by one of them at a time."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import numpy as np
import pytest

import skipindex as si
from skipindex.store.cluster_plan import load_plans
from skipindex.store.location import locate
from tests._maintain_support import (
    ROWS_PER_FILE,
    idle,
    ids_in,
    kill,
    overlapping_runs,
    rows_of,
    start_service,
    wait_for,
    write_file,
    write_policy,
)

pytestmark = pytest.mark.slow

# Kills, alternately in a refresh and in a bin-packing (an in-place cluster), the
# first half early in the job: 2 land one of each (each round restarts the service,
# and with it Spark: 15 s); MAINTAIN_KILLS=8 for a longer run.
KILLS = int(os.environ.get("MAINTAIN_KILLS", "2"))


def _running(db: Path, pid: int | None = None, kind: str | None = None) -> list[str]:
    """The running jobs (of ``kind``, run by process ``pid``) and their phases."""
    rows = rows_of(
        db,
        "SELECT kind, progress FROM jobs WHERE state = 'running' AND owner LIKE ? AND kind LIKE ?",
        (f"%:{pid}:%" if pid is not None else "%", kind or "%"),
    )
    return [f"{r['kind']}: {r['progress']}" for r in rows]


def _check_table(table: Path, files_written: int) -> None:
    ids = np.sort(ids_in(table))
    expected = np.arange(files_written * ROWS_PER_FILE)
    assert len(ids) == len(expected), f"{len(ids)} rows, {len(expected)} written"
    assert np.array_equal(ids, expected), "a row was lost or duplicated"
    result = si.prune(str(table), "TRUE")
    assert result.covered == result.total, f"{result.covered} of {result.total} covered"
    for value in (0, 777, len(expected) - 1):
        files = si.prune(str(table), f"id = {value}").files
        holding = [f for f in files if value in set(ids_in_file(f))]
        assert len(holding) == 1, f"id {value} is in {len(holding)} kept files"
    si.describe(str(table))  # readable


def ids_in_file(path: str) -> list[int]:
    import pyarrow.parquet as pq

    return pq.read_table(path.removeprefix("file:"), columns=["id"]).column("id").to_pylist()


def _check_once(db: Path, tables: list[Path]) -> None:
    """Each job has at most one 'done' run (exactly one if done); each completed
    layout is the outcome of exactly one done job."""
    for job in rows_of(db, "SELECT * FROM jobs"):
        done = rows_of(
            db, "SELECT count(*) FROM runs WHERE job_id = ? AND result = 'done'", (job["id"],)
        )[0][0]
        assert done == (1 if job["state"] == "done" else 0), dict(job)
    plans_of_jobs = [
        json.loads(job["outcome"])["plan"]
        for job in rows_of(db, "SELECT * FROM jobs WHERE state = 'done' AND kind = 'binpack'")
    ]
    assert len(plans_of_jobs) == len(set(plans_of_jobs)), "a layout was adopted by two jobs"
    completed = {
        p.plan_id
        for table in tables
        for p in load_plans(locate(str(table)))
        if p.state == "completed" and p.groups
    }
    assert completed <= set(plans_of_jobs), "a layout was done that no finished job owns"


def test_sigkill_at_random_points_then_restart(tmp_path: Path) -> None:
    seed = int(os.environ.get("MAINTAIN_KILL_SEED", random.randrange(10**6)))
    rng = random.Random(seed)
    print(f"seed {seed} (MAINTAIN_KILL_SEED={seed} repeats this run)")
    table = tmp_path / "t"
    written = 0
    for _ in range(20):
        write_file(table, written)
        written += 1
    policy = write_policy(tmp_path / "policy.toml", [table])
    db, log = tmp_path / "state.db", tmp_path / "service.log"
    killed_in = []
    for round_ in range(KILLS):
        service = start_service(policy, log)
        try:
            kind = ("refresh", "binpack")[round_ % 2]
            pid = service.pid
            wait_for(
                lambda pid=pid, kind=kind: bool(_running(db, pid, kind)),
                180,
                0.2,
                f"{kind} running",
            )
            # Half the kills early in the job (a new service starts Spark first: seconds,
            # so they land in it even on a fast machine), half anywhere in it or after.
            time.sleep(rng.uniform(0, 3) if round_ < KILLS // 2 else rng.uniform(0, 12))
            killed_in.append(_running(db, pid) or ["between jobs"])
        finally:
            kill(service)
        for _ in range(rng.randrange(1, 8)):  # commits while it is down: a refresh to do
            write_file(table, written)
            written += 1
        print(f"round {round_}: killed in {killed_in[-1]}; {written} files written")
    service = start_service(policy, log)
    try:
        wait_for(
            lambda: idle(db) and (r := si.prune(str(table), "TRUE")).covered == r.total,
            300,
            1.0,
            "the service to finish",
        )
    finally:
        kill(service, signal.SIGTERM)
    print("killed in:", killed_in)
    runs = rows_of(db, "SELECT job_id, kind, result, detail FROM runs ORDER BY id")
    print("\n".join(f"{r['job_id']} {r['kind']} {r['result']}: {r['detail']}" for r in runs))
    lost = [r for r in runs if r["result"] == "lost"]
    assert len(lost) >= KILLS // 2, "the kills did not land in jobs"
    _check_table(table, written)
    _check_once(db, [table])
    assert overlapping_runs(db) == []


def test_two_services_work_each_table_one_at_a_time(tmp_path: Path) -> None:
    tables = [tmp_path / "a", tmp_path / "b"]
    written = dict.fromkeys(tables, 0)
    for table in tables:
        for _ in range(14):
            write_file(table, written[table])
            written[table] += 1
    policy = write_policy(tmp_path / "policy.toml", tables)
    db = tmp_path / "state.db"
    services = [start_service(policy, tmp_path / f"service-{n}.log") for n in range(2)]
    seen_running: list[dict[str, int]] = []
    try:
        deadline = time.monotonic() + 240
        commits = 0
        while time.monotonic() < deadline:
            running = rows_of(
                db,
                "SELECT table_name, count(*) AS n FROM jobs WHERE state = 'running' "
                "GROUP BY table_name",
            )
            seen_running.append({r["table_name"]: r["n"] for r in running})
            # Six commits 5 s apart from the 10th second on, as the services start
            # their jobs: enough for both to find work while the other holds a table.
            if commits < 6 and time.monotonic() > deadline - 230 + 5 * commits:
                table = tables[commits % 2]
                for _ in range(3):
                    write_file(table, written[table])
                    written[table] += 1
                commits += 1
            elif (
                commits == 6
                and idle(db)
                and all((r := si.prune(str(t), "TRUE")).covered == r.total for t in tables)
            ):
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the services did not catch up in 240 s")
    finally:
        for service in services:
            kill(service, signal.SIGTERM)
    runs = rows_of(db, "SELECT table_name, owner, kind, started_ms, ended_ms, result FROM runs")
    print("\n".join(str(tuple(r)) for r in runs))
    assert all(n == 1 for sample in seen_running for n in sample.values())
    assert overlapping_runs(db) == []
    owners = {r["owner"] for r in runs}
    assert len(owners) == 2, f"only {owners} worked"
    for table in tables:
        _check_table(table, written[table])
    _check_once(db, tables)
