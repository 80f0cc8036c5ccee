"""The query log: one row per prune (table, predicate, files kept of total, time).

Off unless asked for: set ``SKIPINDEX_QUERY_LOG`` to a SQLite file in the
environment of the processes that prune (``prune``, ``read`` and ``sql`` all
prune), or call :func:`use_query_log`. The maintenance service reads it to tell
when a layout's skipping has decayed; an advisor can read which predicates a
workload runs. Its schema is documented in docs/on-disk-format.md.

Appending never fails a prune and costs one small SQLite insert (WAL, no fsync
per row): a database that is busy for more than ``BUSY_MS`` or cannot be opened
loses the row, with one warning per process. The log is bounded: past
``SKIPINDEX_QUERY_LOG_ROWS`` rows (default 100,000) the oldest are deleted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENV",
    "QueryRecord",
    "SCHEMA_VERSION",
    "connect_log",
    "log_path",
    "paused",
    "queries",
    "record",
    "source",
    "use_query_log",
]

ENV = "SKIPINDEX_QUERY_LOG"
ROWS_ENV = "SKIPINDEX_QUERY_LOG_ROWS"
DEFAULT_ROWS = 100_000
SCHEMA_VERSION = 1
BUSY_MS = 200
_TRIM_EVERY = 64  # rows between two trims of the oldest entries

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    table_root TEXT NOT NULL,
    iceberg_table TEXT,
    predicate TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    columns TEXT NOT NULL,
    files_total INTEGER NOT NULL,
    files_kept INTEGER NOT NULL,
    files_covered INTEGER NOT NULL,
    index_version INTEGER,
    prune_ms REAL NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS queries_by_table ON queries (table_root, id);
"""

_explicit: list[str | None] = [None]
_source: ContextVar[str] = ContextVar("skipindex_query_source", default="prune")
_paused: ContextVar[bool] = ContextVar("skipindex_query_log_paused", default=False)
_local = threading.local()
_warned: set[str] = set()


@dataclass(frozen=True)
class QueryRecord:
    """One logged prune."""

    id: int
    at_ms: int
    table_root: str
    iceberg_table: str | None
    predicate: str
    time_zone: str
    columns: tuple[str, ...]
    files_total: int
    files_kept: int
    files_covered: int
    index_version: int | None
    prune_ms: float
    source: str

    @property
    def kept_share(self) -> float:
        return self.files_kept / self.files_total if self.files_total else 1.0


def use_query_log(path: str | os.PathLike[str] | None) -> None:
    """Log this process's prunes to ``path`` (``None``: back to ``SKIPINDEX_QUERY_LOG``)."""
    _explicit[0] = None if path is None else os.fspath(path)


def log_path() -> str | None:
    """Where prunes are logged now, or None (the default: not at all)."""
    return _explicit[0] or os.environ.get(ENV) or None


@contextmanager
def source(name: str) -> Iterator[None]:
    """Prunes in the block are logged as coming from ``name`` (``read``, ``sql``,
    ``gateway``), unless a caller already named where they come from: an
    ``si.sql`` the gateway runs is logged as the gateway's."""
    token = _source.set(name if _source.get() == "prune" else _source.get())
    try:
        yield
    finally:
        _source.reset(token)


@contextmanager
def paused() -> Iterator[None]:
    """Prunes in the block are not logged (the service replaying logged predicates)."""
    token = _paused.set(True)
    try:
        yield
    finally:
        _paused.reset(token)


def connect_log(path: str, timeout_ms: int = BUSY_MS) -> sqlite3.Connection:
    """A connection to the log at ``path``, created with its schema if new."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    connection = sqlite3.connect(path, timeout=timeout_ms / 1000, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(_SCHEMA)
    connection.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
        (str(SCHEMA_VERSION),),
    )
    return connection


def record(
    table_root: str,
    iceberg_table: str | None,
    result: Any,
) -> None:
    """Append what one prune kept (``result``: a PruneResult); never raises."""
    path = log_path()
    if path is None or _paused.get():
        return
    try:
        predicate = _predicate_text(str(result.predicate))
        if predicate.strip().upper() == "TRUE":  # a listing, not a query
            return
        row = (
            int(time.time() * 1000),
            table_root,
            iceberg_table,
            predicate,
            str(result.time_zone),
            json.dumps(list(result.columns)),
            int(result.total),
            int(result.kept),
            int(result.covered),
            result.version,
            round(float(result.seconds) * 1000, 3),
            _source.get(),
        )
        _append(path, row)
    except Exception as exc:  # a query log must never fail the query it logs
        _forget(path)
        if path not in _warned:
            _warned.add(path)
            warnings.warn(
                f"skipindex: cannot append to the query log {path} ({exc}); prunes go on "
                "unlogged where it fails",
                stacklevel=3,
            )


def _append(path: str, row: tuple[Any, ...]) -> None:
    connection = _connection(path)
    cursor = connection.execute(
        "INSERT INTO queries (at_ms, table_root, iceberg_table, predicate, time_zone, columns, "
        "files_total, files_kept, files_covered, index_version, prune_ms, source) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    rowid = cursor.lastrowid or 0
    if rowid % _TRIM_EVERY == 0:
        limit = _max_rows()
        connection.execute("DELETE FROM queries WHERE id <= ?", (rowid - limit,))


def _max_rows() -> int:
    try:
        return max(1, int(os.environ.get(ROWS_ENV, DEFAULT_ROWS)))
    except ValueError:
        return DEFAULT_ROWS


def _connection(path: str) -> sqlite3.Connection:
    """One connection per thread and log (a forked child opens its own)."""
    pid = os.getpid()
    cached: dict[str, tuple[int, sqlite3.Connection]] = getattr(_local, "connections", {})
    _local.connections = cached
    hit = cached.get(path)
    if hit is not None and hit[0] == pid:
        return hit[1]
    connection = connect_log(path)
    cached[path] = (pid, connection)
    return connection


def _forget(path: str) -> None:
    cached: dict[str, tuple[int, sqlite3.Connection]] = getattr(_local, "connections", {})
    hit = cached.pop(path, None)
    if hit is not None and hit[0] == os.getpid():
        with suppress(sqlite3.Error):
            hit[1].close()


def _predicate_text(text: str) -> str:
    """SQL text; a PySpark Column prints as ``Column<'...'>``: its SQL inside."""
    if text.startswith("Column<'") and text.endswith("'>"):
        return text[len("Column<'") : -2]
    return text


_SELECT = (
    "SELECT id, at_ms, table_root, iceberg_table, predicate, time_zone, columns, files_total, "
    "files_kept, files_covered, index_version, prune_ms, source FROM queries "
    "WHERE table_root = ? AND at_ms >= ? "
)
_NEWEST = _SELECT + "ORDER BY id DESC LIMIT ?"
_OLDEST = _SELECT + "ORDER BY id ASC LIMIT ?"


def queries(
    path: str,
    table_root: str,
    *,
    since_ms: int | None = None,
    limit: int = 1000,
    newest_first: bool = True,
) -> list[QueryRecord]:
    """Logged prunes of ``table_root`` (oldest first, or the newest ``limit``)."""
    if not os.path.exists(path):
        return []
    connection = connect_log(path, timeout_ms=5000)
    try:
        rows = connection.execute(
            _NEWEST if newest_first else _OLDEST, (table_root, since_ms or 0, limit)
        ).fetchall()
    finally:
        connection.close()
    return [_record(row) for row in rows]


def _record(row: tuple[Any, ...]) -> QueryRecord:
    fields = list(row)
    fields[6] = tuple(json.loads(fields[6]))
    return QueryRecord(*fields)
