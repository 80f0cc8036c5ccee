"""``si.maintain`` (one pass, for schedulers), ``si.table_changed`` (a writer's
notice) and :func:`run_service` (``skipindex maintain run``: until stopped)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from skipindex.maintain.database import connect, now_ms
from skipindex.maintain.jobs import coverage
from skipindex.maintain.policy import Policy, load_policy
from skipindex.maintain.queue import enqueue
from skipindex.maintain.scheduler import Finished, Service, log

__all__ = ["MaintainReport", "as_policy", "maintain", "run_service", "table_changed"]

PolicyLike = Policy | str | os.PathLike[str]


@dataclass(frozen=True)
class MaintainReport:
    """What one pass did: the jobs it ran (in order) and each table's coverage after."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    coverage: dict[str, dict[str, Any]] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)  # tables with a new commit

    def to_dict(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "coverage": self.coverage, "changed": self.changed}

    def __str__(self) -> str:
        lines = [
            f"job {j['id']} {j['kind']} {j['table']}: {j['result']} ({j['seconds']:.1f} s): "
            f"{j['summary']}"
            for j in self.jobs
        ] or ["nothing to do"]
        for table, found in self.coverage.items():
            if "error" in found:
                lines.append(f"{table}: {found['error']}")
            else:
                lines.append(f"{table}: {found['covered']} of {found['files']} files covered")
        return "\n".join(lines)


def as_policy(policy: PolicyLike) -> Policy:
    return policy if isinstance(policy, Policy) else load_policy(policy)


def maintain(
    tables: Sequence[str] | None = None,
    *,
    policy: PolicyLike,
    spark: Any = None,
) -> MaintainReport:
    """One pass of the maintenance service over ``tables`` (default: every table
    of the policy file): look for new commits, then run every due job — refresh
    the index, bin-pack small files, re-cluster a decayed layout — until none is
    left, skipping tables another service is working on. For schedulers (cron,
    Airflow); ``skipindex maintain run`` does the same continuously.

    Jobs run on ``spark`` (default: the active session, else one started on the
    policy's ``spark_master``). Safe to run while a service runs, and to kill:
    the next pass resumes (see the user guide, "Keep it fresh").
    """
    chosen = as_policy(policy)
    service = Service(chosen, tables=tables, spark=spark if spark is not None else _active())
    try:
        changed = service.poll(force=True)
        finished: list[Finished] = []
        while (done := service.step()) is not None:
            finished.append(done)
        covered = {name: _coverage(chosen, name) for name in service.tables}
    finally:
        service.close()
    jobs = [
        {
            "id": f.job.id,
            "kind": f.job.kind,
            "table": f.job.table_name,
            "result": f.result,
            "summary": f.summary,
            "seconds": f.seconds,
        }
        for f in finished
    ]
    return MaintainReport(jobs, covered, changed)


def table_changed(
    table: str | os.PathLike[str], *, policy: PolicyLike, reason: str = "notified by a writer"
) -> int:
    """Tell the service that ``table`` (as the policy names it) has a new commit:
    a refresh is queued now, ahead of the next poll. Returns the job's id."""
    chosen = as_policy(policy)
    name = chosen.table(os.fspath(table)).name
    db = connect(chosen.service.state)
    try:
        return enqueue(db, name, "refresh", reason, now_ms())
    finally:
        db.close()


def run_service(
    policy: PolicyLike,
    *,
    tables: Sequence[str] | None = None,
    spark: Any = None,
    stop: threading.Event | None = None,
) -> None:
    """Run the service until ``stop`` is set, or SIGTERM/SIGINT (the running job
    is finished first; a second signal interrupts it: a cluster then rolls back)."""
    chosen = as_policy(policy)
    stop = stop or threading.Event()
    service = Service(chosen, tables=tables, spark=spark)
    previous = _on_signals(stop) if threading.current_thread() is threading.main_thread() else {}
    try:
        service.run_forever(stop)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        service.close()


def _on_signals(stop: threading.Event) -> dict[int, Any]:
    def handle(number: int, _: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        log.info("signal %d: stopping after the running job (again to interrupt it)", number)
        stop.set()

    return {n: signal.signal(n, handle) for n in (signal.SIGTERM, signal.SIGINT)}


def _coverage(policy: Policy, name: str) -> dict[str, Any]:
    try:
        found = coverage(policy.table(name))
    except Exception as exc:  # a report, not a check
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"files": found.files, "covered": found.covered, "version": found.version}


def _active() -> Any:
    """The active Spark session, if pyspark is loaded and one is running."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()
