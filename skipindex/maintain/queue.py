"""The durable job queue and the per-table leases.

A job is ``queued`` (at most one of each kind per table), ``running`` (under
its table's lease), then ``done`` or ``failed``. A service *claims* the most
urgent due job of a table nobody holds — refresh before bin-packing before
re-clustering, then the oldest — and takes that table's lease in the same
transaction; it renews the lease while the job runs and gives it back when the
job ends. A lease whose holder stopped renewing it (past ``expires_ms``), or
whose holder is a dead process on this host, is taken back: its job is queued
again and the next claim runs it, resuming from what the table's own crash-safe
state says (see :mod:`skipindex.maintain.jobs`). A holder that lost its lease
cannot record an outcome: the one who took over records it.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skipindex.maintain.database import transaction
from skipindex.store.vacuum import pid_alive

__all__ = [
    "JOB_KINDS",
    "PRIORITY",
    "Job",
    "Owner",
    "claim",
    "enqueue",
    "fail",
    "finish",
    "heartbeat",
    "observe",
    "reclaim",
    "release",
]

PRIORITY = {"refresh": 0, "binpack": 1, "recluster": 2}
_TABLE_NOTES = {  # what a finished job may note on its table
    column: f"UPDATE tables SET {column} = ? WHERE name = ?"  # noqa: S608 - fixed names
    for column in ("clustered_ms", "baseline", "decay_checked_ms", "decay_note")
}
JOB_KINDS = tuple(PRIORITY)


@dataclass(frozen=True)
class Owner:
    """A service process: ``host:pid:token``."""

    id: str
    host: str
    pid: int

    @classmethod
    def here(cls) -> Owner:
        """A new owner in this process (alive until :meth:`retire`)."""
        host, pid = socket.gethostname(), os.getpid()
        owner = cls(f"{host}:{pid}:{uuid.uuid4().hex[:8]}", host, pid)
        _LIVE_HERE.add(owner.id)
        return owner

    def retire(self) -> None:
        _LIVE_HERE.discard(self.id)


_LIVE_HERE: set[str] = set()  # the owners this process runs


@dataclass(frozen=True)
class Job:
    id: int
    table_name: str
    kind: str
    priority: int
    state: str
    reason: str
    attempts: int
    created_ms: int
    next_run_ms: int
    first_started_ms: int | None
    started_ms: int | None
    finished_ms: int | None
    owner: str | None
    progress: str | None
    outcome: str | None
    error: str | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> Job:
        return cls(**dict(row))

    def outcome_doc(self) -> dict[str, Any]:
        return dict(json.loads(self.outcome)) if self.outcome else {}


def enqueue(
    db: sqlite3.Connection, table: str, kind: str, reason: str, now: int, delay_ms: int = 0
) -> int:
    """Queue ``kind`` on ``table`` (or keep the one already queued); its id."""
    with transaction(db):
        db.execute("INSERT OR IGNORE INTO tables (name) VALUES (?)", (table,))
        db.execute(
            "INSERT OR IGNORE INTO jobs (table_name, kind, priority, state, reason, created_ms, "
            "next_run_ms) VALUES (?, ?, ?, 'queued', ?, ?, ?)",
            (table, kind, PRIORITY[kind], reason, now, now + delay_ms),
        )
        row = db.execute(
            "SELECT id FROM jobs WHERE table_name = ? AND kind = ? AND state = 'queued'",
            (table, kind),
        ).fetchone()
    return int(row[0])


def observe(
    db: sqlite3.Connection,
    table: str,
    commit_id: str | None,
    note: str,
    now: int,
    error: str | None = None,
) -> bool:
    """Record ``table``'s latest commit; a new one queues a refresh. True if new."""
    with transaction(db):
        row = db.execute("SELECT commit_id FROM tables WHERE name = ?", (table,)).fetchone()
        if row is None:
            db.execute("INSERT INTO tables (name) VALUES (?)", (table,))
        if error is not None or commit_id is None or (row is not None and row[0] == commit_id):
            db.execute(
                "UPDATE tables SET checked_ms = ?, check_error = ? WHERE name = ?",
                (now, error, table),
            )
            return False
        db.execute(
            "UPDATE tables SET commit_id = ?, commit_note = ?, commit_seen_ms = ?, "
            "checked_ms = ?, check_error = NULL WHERE name = ?",
            (commit_id, note, now, now, table),
        )
        enqueue(db, table, "refresh", f"new commit: {note}", now)
    return True


def reclaim(db: sqlite3.Connection, now: int) -> list[Job]:
    """Take back the leases of holders that stopped renewing them or died; their
    jobs are queued again. Returns those jobs."""
    with transaction(db):
        taken = []
        for lease in db.execute("SELECT * FROM leases").fetchall():
            if lease["expires_ms"] > now and _alive(lease["owner"]):
                continue
            why = "lease expired" if lease["expires_ms"] <= now else "holder died"
            db.execute("DELETE FROM leases WHERE table_name = ?", (lease["table_name"],))
            _requeue(db, lease["job_id"], now)
            _end_run(db, lease["job_id"], lease["owner"], now, "lost", why)
            row = db.execute("SELECT * FROM jobs WHERE id = ?", (lease["job_id"],)).fetchone()
            if row is not None:
                taken.append(Job.of(row))
        # A running job without a lease cannot outlive the transaction that took it;
        # queue any such job again all the same.
        for row in db.execute(
            "SELECT id FROM jobs WHERE state = 'running' AND id NOT IN (SELECT job_id FROM leases)"
        ).fetchall():
            _requeue(db, row[0], now)
    return taken


def _requeue(db: sqlite3.Connection, job_id: int, now: int) -> None:
    """A running job queued again, due now. It takes the place of a twin queued
    meanwhile (a commit seen while it ran): one queued job per kind and table,
    and this one keeps its first start (a cluster adopts the plan it completed)."""
    row = db.execute(
        "SELECT table_name, kind FROM jobs WHERE id = ? AND state = 'running'", (job_id,)
    ).fetchone()
    if row is None:
        return
    db.execute(
        "DELETE FROM jobs WHERE table_name = ? AND kind = ? AND state = 'queued'", tuple(row)
    )
    db.execute(
        "UPDATE jobs SET state = 'queued', next_run_ms = ?, owner = NULL, progress = NULL "
        "WHERE id = ?",
        (now, job_id),
    )


def claim(
    db: sqlite3.Connection,
    owner: Owner,
    now: int,
    lease_ms: int,
    tables: Collection[str] | None = None,
) -> Job | None:
    """The most urgent due job of a table no one holds, now running under this
    owner's lease; None if there is none."""
    reclaim(db, now)
    names = None if tables is None else json.dumps(sorted(tables))
    with transaction(db):
        row = db.execute(
            "SELECT j.* FROM jobs j WHERE j.state = 'queued' AND j.next_run_ms <= ? "
            "AND (? IS NULL OR j.table_name IN (SELECT value FROM json_each(?))) "
            "AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.table_name = j.table_name) "
            "ORDER BY j.priority, j.next_run_ms, j.id LIMIT 1",
            (now, names, names),
        ).fetchone()
        if row is None:
            return None
        job = Job.of(row)
        db.execute(
            "INSERT INTO leases (table_name, owner, job_id, acquired_ms, heartbeat_ms, expires_ms) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (job.table_name, owner.id, job.id, now, now, now + lease_ms),
        )
        db.execute(
            "UPDATE jobs SET state = 'running', owner = ?, attempts = attempts + 1, "
            "started_ms = ?, first_started_ms = COALESCE(first_started_ms, ?), progress = NULL "
            "WHERE id = ?",
            (owner.id, now, now, job.id),
        )
        db.execute(
            "INSERT INTO runs (job_id, table_name, kind, owner, started_ms) VALUES (?, ?, ?, ?, ?)",
            (job.id, job.table_name, job.kind, owner.id, now),
        )
        return Job.of(db.execute("SELECT * FROM jobs WHERE id = ?", (job.id,)).fetchone())


def heartbeat(
    db: sqlite3.Connection,
    owner: Owner,
    job: Job,
    now: int,
    lease_ms: int,
    progress: str | None = None,
) -> bool:
    """Renew the lease (and say how far the job is); False if it was lost."""
    with transaction(db):
        renewed = db.execute(
            "UPDATE leases SET heartbeat_ms = ?, expires_ms = ? "
            "WHERE table_name = ? AND owner = ? AND job_id = ?",
            (now, now + lease_ms, job.table_name, owner.id, job.id),
        ).rowcount
        if renewed and progress is not None:
            db.execute("UPDATE jobs SET progress = ? WHERE id = ?", (progress, job.id))
        db.execute("UPDATE services SET heartbeat_ms = ? WHERE owner = ?", (now, owner.id))
    return bool(renewed)


def finish(
    db: sqlite3.Connection,
    owner: Owner,
    job: Job,
    now: int,
    outcome: dict[str, Any],
    followups: Sequence[tuple[str, str]] = (),
    history: int = 1000,
    table_updates: Mapping[str, Any] | None = None,
) -> bool:
    """Record the job done, give the lease back, note ``table_updates`` (its
    layout's time and baseline, its last decay check) and queue ``followups``
    (kind, reason). False (nothing recorded) if this owner no longer holds the lease."""
    with transaction(db):
        if not _holds(db, owner, job):
            return False
        for column, value in (table_updates or {}).items():
            stored = json.dumps(value) if isinstance(value, dict) else value
            db.execute(_TABLE_NOTES[column], (stored, job.table_name))
        db.execute(
            "UPDATE jobs SET state = 'done', finished_ms = ?, outcome = ?, progress = NULL, "
            "error = NULL WHERE id = ?",
            (now, json.dumps(outcome, default=str), job.id),
        )
        db.execute("DELETE FROM leases WHERE table_name = ?", (job.table_name,))
        _end_run(db, job.id, owner.id, now, "done", outcome.get("summary"))
        for kind, reason in followups:
            enqueue(db, job.table_name, kind, reason, now)
        _trim(db, history)
    return True


def fail(
    db: sqlite3.Connection,
    owner: Owner,
    job: Job,
    now: int,
    error: str,
    max_attempts: int,
    retry_ms: int,
    retry_max_ms: int,
) -> str:
    """After an error: queued again with backoff (``retry``), or ``failed`` after
    ``max_attempts``; ``lost`` if the lease had already been taken back."""
    with transaction(db):
        if not _holds(db, owner, job):
            return "lost"
        if job.attempts >= max_attempts:
            result = "failed"
            db.execute(
                "UPDATE jobs SET state = 'failed', finished_ms = ?, error = ?, progress = NULL "
                "WHERE id = ?",
                (now, error, job.id),
            )
        else:
            result = "retry"
            delay = min(retry_ms * 2 ** (job.attempts - 1), retry_max_ms)
            later = db.execute(  # a newer queued twin takes this one's place
                "SELECT id FROM jobs WHERE table_name = ? AND kind = ? AND state = 'queued'",
                (job.table_name, job.kind),
            ).fetchone()
            if later is not None:
                db.execute("DELETE FROM jobs WHERE id = ?", (later[0],))
            db.execute(
                "UPDATE jobs SET state = 'queued', owner = NULL, next_run_ms = ?, error = ?, "
                "progress = NULL WHERE id = ?",
                (now + delay, error, job.id),
            )
        db.execute("DELETE FROM leases WHERE table_name = ?", (job.table_name,))
        _end_run(db, job.id, owner.id, now, result, error)
    return result


def release(db: sqlite3.Connection, owner: Owner, job: Job, now: int, why: str) -> None:
    """Give a job back unfinished (the service is stopping): queued, due now."""
    with transaction(db):
        if not _holds(db, owner, job):
            return
        twin = db.execute(
            "SELECT id FROM jobs WHERE table_name = ? AND kind = ? AND state = 'queued'",
            (job.table_name, job.kind),
        ).fetchone()
        if twin is not None:
            db.execute("DELETE FROM jobs WHERE id = ?", (twin[0],))
        db.execute(
            "UPDATE jobs SET state = 'queued', owner = NULL, next_run_ms = ?, progress = NULL "
            "WHERE id = ?",
            (now, job.id),
        )
        db.execute("DELETE FROM leases WHERE table_name = ?", (job.table_name,))
        _end_run(db, job.id, owner.id, now, "released", why)


def _holds(db: sqlite3.Connection, owner: Owner, job: Job) -> bool:
    lease = db.execute(
        "SELECT owner, job_id FROM leases WHERE table_name = ?", (job.table_name,)
    ).fetchone()
    return lease is not None and lease[0] == owner.id and lease[1] == job.id


def _end_run(
    db: sqlite3.Connection, job_id: int, owner: str, now: int, result: str, detail: Any
) -> None:
    db.execute(
        "UPDATE runs SET ended_ms = ?, result = ?, detail = ? "
        "WHERE job_id = ? AND owner = ? AND ended_ms IS NULL",
        (now, result, None if detail is None else str(detail)[:2000], job_id, owner),
    )


def _trim(db: sqlite3.Connection, keep: int) -> None:
    """Keep the newest ``keep`` finished jobs (and their runs)."""
    db.execute(
        "DELETE FROM jobs WHERE state IN ('done', 'failed') AND id NOT IN (SELECT id FROM jobs "
        "WHERE state IN ('done', 'failed') ORDER BY id DESC LIMIT ?)",
        (keep,),
    )
    db.execute("DELETE FROM runs WHERE job_id NOT IN (SELECT id FROM jobs)")


def _alive(owner: str) -> bool:
    """Whether the service ``host:pid:token`` may still run: on another host, or
    while its process exists here (a lease from elsewhere lapses by its expiry)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():  # this process: alive while it runs that owner
        return owner in _LIVE_HERE
    return pid_alive(pid)
