"""The service's state: one SQLite database (WAL) holding the tables' last
commits, the job queue, the per-table leases, the services and the history.

Every change is one ``BEGIN IMMEDIATE`` transaction: SQLite takes the write lock
first, so two services deciding on the same rows never both act on what they
read. Times are milliseconds since the epoch (one host's clock, or clocks kept
in step: leases compare them). The schema is documented in
docs/on-disk-format.md.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from skipindex.errors import InvalidSpecError

__all__ = ["Clock", "SCHEMA_VERSION", "connect", "now_ms", "transaction"]

SCHEMA_VERSION = 1
Clock = Callable[[], int]  # milliseconds since the epoch

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    name TEXT PRIMARY KEY,
    commit_id TEXT,
    commit_note TEXT,
    commit_seen_ms INTEGER,
    checked_ms INTEGER,
    check_error TEXT,
    clustered_ms INTEGER,
    baseline TEXT,
    decay_checked_ms INTEGER,
    decay_note TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('refresh', 'binpack', 'recluster')),
    priority INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    reason TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    next_run_ms INTEGER NOT NULL,
    first_started_ms INTEGER,
    started_ms INTEGER,
    finished_ms INTEGER,
    owner TEXT,
    progress TEXT,
    outcome TEXT,
    error TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_one_queued ON jobs (table_name, kind)
    WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, priority, next_run_ms);
CREATE TABLE IF NOT EXISTS leases (
    table_name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    job_id INTEGER NOT NULL,
    acquired_ms INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL,
    table_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER,
    result TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs (job_id);
CREATE TABLE IF NOT EXISTS services (
    owner TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_ms INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL,
    stopped_ms INTEGER
);
"""


def now_ms() -> int:
    return int(time.time() * 1000)


def connect(path: str) -> sqlite3.Connection:
    """A connection to the state database at ``path``, created if new. Each
    thread uses its own connection."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")  # a job's outcome survives a power cut
        connection.execute("PRAGMA busy_timeout=30000")
        connection.row_factory = sqlite3.Row
        connection.executescript(_SCHEMA)  # idempotent; executescript commits by itself
        with transaction(connection):
            found = connection.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
            if found is None:
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif int(found[0]) > SCHEMA_VERSION:
                raise InvalidSpecError(
                    f"{path} was written by a newer skipindex (state schema {found[0]}); "
                    "upgrade skipindex"
                )
    except sqlite3.Error as exc:
        raise InvalidSpecError(f"cannot open the maintenance state database {path}: {exc}") from exc
    return connection


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error)."""
    if connection.in_transaction:  # nested: the outer transaction decides
        yield connection
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
