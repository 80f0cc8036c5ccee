"""``skipindex maintain status``: per table, what the service has seen and done.

The last commit seen, the files the index does not cover yet (asked now, from
the listing and the index: no Spark), the queue, the running job and how far it
is, the last outcomes; and the services that share the state database.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

from skipindex.maintain.database import connect, now_ms
from skipindex.maintain.jobs import coverage
from skipindex.maintain.policy import Policy

__all__ = ["Status", "TableStatus", "status"]

RECENT = 5


@dataclass(frozen=True)
class TableStatus:
    name: str
    commit: str | None = None  # the last commit seen, as a person reads it
    commit_seen_ms: int | None = None
    checked_ms: int | None = None
    check_error: str | None = None
    files: int | None = None
    covered: int | None = None
    index_version: int | None = None
    coverage_error: str | None = None
    running: dict[str, Any] | None = None
    queued: list[dict[str, Any]] = field(default_factory=list)
    recent: list[dict[str, Any]] = field(default_factory=list)
    clustered_ms: int | None = None
    decay: str | None = None

    @property
    def uncovered(self) -> int | None:
        return None if self.files is None or self.covered is None else self.files - self.covered

    def lines(self, now: int) -> list[str]:
        out = [self.name]
        if self.commit is not None:
            out.append(
                f"  last commit: {self.commit} (seen {_ago(self.commit_seen_ms, now)}; "
                f"checked {_ago(self.checked_ms, now)})"
            )
        else:
            out.append("  last commit: not seen yet (is a service running?)")
        if self.check_error:
            out.append(f"  cannot read the table: {self.check_error}")
        if self.coverage_error:
            out.append(f"  index: cannot tell ({self.coverage_error})")
        elif self.files is not None:
            version = (
                "no index yet"
                if self.index_version is None
                else (f"index version {self.index_version}")
            )
            out.append(
                f"  index: {self.covered} of {self.files} files covered, {self.uncovered} not yet "
                f"({version})"
            )
        if self.running:
            r = self.running
            out.append(
                f"  running: job {r['id']} {r['kind']} (attempt {r['attempts']}, "
                f"{_seconds(r['started_ms'], now)}) by {r['owner']}: {r['progress'] or 'starting'}"
            )
        for q in self.queued:
            wait = _seconds(now, q["next_run_ms"])
            due = "due now" if q["next_run_ms"] <= now else f"due in {wait}"
            retry = f", attempt {q['attempts'] + 1}, last error: {q['error']}" if q["error"] else ""
            out.append(f"  queued: job {q['id']} {q['kind']} ({due}{retry}): {q['reason']}")
        for r in self.recent:
            took = _seconds(r["started_ms"], r["finished_ms"]) if r["started_ms"] else "?"
            what = r["summary"] if r["state"] == "done" else r["error"]
            out.append(
                f"  {r['state']}: job {r['id']} {r['kind']} {_clock(r['finished_ms'])} "
                f"({took}): {what}"
            )
        if self.decay:
            when = f"clustered {_ago(self.clustered_ms, now)}; " if self.clustered_ms else ""
            out.append(f"  layout: {when}{self.decay}")
        return out


@dataclass(frozen=True)
class Status:
    state: str
    services: list[dict[str, Any]]
    tables: list[TableStatus]
    at_ms: int

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        for table, status in zip(doc["tables"], self.tables, strict=True):
            table["uncovered"] = status.uncovered
        return doc

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self) -> str:
        alive = [s for s in self.services if s["alive"]]
        names = ", ".join(
            f"{s['owner']} (heartbeat {_ago(s['heartbeat_ms'], self.at_ms)})" for s in alive
        )
        lines = [f"state: {self.state}", f"services running: {names or 'none'}"]
        for table in self.tables:
            lines.extend(table.lines(self.at_ms))
        return "\n".join(lines)


def status(policy: Policy, *, live: bool = True) -> Status:
    """What the state database says of each table of ``policy`` (and, with
    ``live``, how many of its files the index covers right now)."""
    db = connect(policy.service.state)
    now = now_ms()
    try:
        services = [
            _service(dict(row), now, policy)
            for row in db.execute(
                "SELECT * FROM services WHERE stopped_ms IS NULL ORDER BY started_ms"
            )
        ]
        tables = [_table(db, t.name, now) for t in policy.tables]
    finally:
        db.close()
    if live:
        tables = [_with_coverage(t, policy) for t in tables]
    return Status(policy.service.state, services, tables, now)


def _service(row: dict[str, Any], now: int, policy: Policy) -> dict[str, Any]:
    stale = now - row["heartbeat_ms"] > max(3 * policy.service.lease_seconds * 1000, 30_000)
    return {**row, "alive": not stale}


def _table(db: sqlite3.Connection, name: str, now: int) -> TableStatus:
    row = db.execute("SELECT * FROM tables WHERE name = ?", (name,)).fetchone()
    jobs = [
        dict(r)
        for r in db.execute(
            "SELECT * FROM jobs WHERE table_name = ? AND state IN ('queued', 'running') "
            "ORDER BY priority, next_run_ms, id",
            (name,),
        )
    ]
    recent = [
        {**dict(r), "summary": json.loads(r["outcome"]).get("summary") if r["outcome"] else None}
        for r in db.execute(
            "SELECT * FROM jobs WHERE table_name = ? AND state IN ('done', 'failed') "
            "ORDER BY finished_ms DESC, id DESC LIMIT ?",
            (name, RECENT),
        )
    ]
    for r in recent:
        r.pop("outcome", None)
    running = next((j for j in jobs if j["state"] == "running"), None)
    return TableStatus(
        name=name,
        commit=row["commit_note"] if row is not None else None,
        commit_seen_ms=row["commit_seen_ms"] if row is not None else None,
        checked_ms=row["checked_ms"] if row is not None else None,
        check_error=row["check_error"] if row is not None else None,
        running=running,
        queued=[j for j in jobs if j["state"] == "queued"],
        recent=recent,
        clustered_ms=row["clustered_ms"] if row is not None else None,
        decay=row["decay_note"] if row is not None else None,
    )


def _with_coverage(table: TableStatus, policy: Policy) -> TableStatus:
    try:
        found = coverage(policy.table(table.name))
    except Exception as exc:  # status reports; it never fails on one table
        return _replace(table, coverage_error=f"{type(exc).__name__}: {exc}")
    return _replace(table, files=found.files, covered=found.covered, index_version=found.version)


def _replace(table: TableStatus, **changes: Any) -> TableStatus:
    return TableStatus(**{**asdict(table), **changes})


def _clock(ms: int | None) -> str:
    if ms is None:
        return "?"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%H:%M:%S UTC")


def _ago(ms: int | None, now: int) -> str:
    return "never" if ms is None else f"{_clock(ms)}, {_seconds(ms, now)} ago"


def _seconds(start: int | None, end: int | None) -> str:
    if start is None or end is None:
        return "?"
    seconds = max(0.0, (end - start) / 1000)
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
