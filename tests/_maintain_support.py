"""Support for the maintenance service's process tests: small Parquet tables
with unique ids, a policy file, the service as a child process (in its own
process group, so a SIGKILL takes its Spark JVM with it) and the state
database's history."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
ROWS_PER_FILE = 250


def write_file(table: Path, number: int, rows: int = ROWS_PER_FILE) -> Path:
    """Data file ``number``: ids ``number * rows ...`` (unique over the table),
    written under a hidden name and renamed: a listing never sees half a file."""
    table.mkdir(parents=True, exist_ok=True)
    ids = np.arange(number * rows, (number + 1) * rows, dtype=np.int64)
    rng = np.random.default_rng(number)
    data = pa.table({"id": ids, "v": rng.integers(0, 1000, rows), "k": ids % 97})
    hidden = table / f".w-{number:06d}.parquet"
    pq.write_table(data, hidden)
    final = table / f"w-{number:06d}.parquet"
    os.replace(hidden, final)
    return final


def write_policy(path: Path, tables: list[Path], master: str = "local[1]", **service: Any) -> Path:
    settings = {"poll_seconds": 1, "lease_seconds": 10, "retry_seconds": 1, **service}
    lines = ["[service]", f'state = "{path.parent / "state.db"}"', f'spark_master = "{master}"']
    lines += [
        f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in settings.items()
    ]
    lines += [
        'spark_conf = {"spark.driver.memory" = "512m", "spark.sql.shuffle.partitions" = "2"}',
        "[defaults]",
        'indexes = [{kind = "minmax", column = "id"}, {kind = "bloom", column = "v"}]',
        "target_file_mb = 0.05",  # ~15 small files make one
        "binpack_min_small_files = 6",
    ]
    for table in tables:
        lines += ["[[table]]", f'path = "{table}"']
    path.write_text("\n".join(lines) + "\n")
    return path


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYTHONPATH"] = str(ROOT)
    return env


def start_service(policy: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skipindex.cli",
                "maintain",
                "run",
                "--policy",
                str(policy),
                *extra,
            ],
            cwd=ROOT,
            env=child_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the JVM dies with it
        )


def kill(process: subprocess.Popen[bytes], sig: int = signal.SIGKILL, wait: float = 60) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    if sig != signal.SIGKILL:  # a stopped service's Spark children go with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


def rows_of(db: Path, query: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    connection = sqlite3.connect(db, timeout=30)
    connection.row_factory = sqlite3.Row
    try:
        return connection.execute(query, params).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        connection.close()


def idle(db: Path) -> bool:
    """Nothing queued (due or not) and nothing running."""
    rows = rows_of(db, "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
    return bool(rows) and rows[0][0] == 0


def wait_for(predicate: Any, timeout: float, every: float = 0.5, what: str = "") -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or predicate}")


def ids_in(table: Path) -> np.ndarray:
    """Every id in the table's data files (pyarrow, the files Spark would list)."""
    files = [
        p
        for p in table.rglob("*.parquet")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(table).parts)
    ]
    if not files:
        return np.array([], dtype=np.int64)
    return np.concatenate([pq.read_table(p, columns=["id"]).column("id").to_numpy() for p in files])


def overlapping_runs(db: Path) -> list[tuple[Any, ...]]:
    """Pairs of runs on one table whose times overlap (there must be none)."""
    found = []
    runs = rows_of(db, "SELECT * FROM runs ORDER BY table_name, started_ms, id")
    for before, after in itertools.pairwise(runs):
        if before["table_name"] != after["table_name"]:
            continue
        if before["ended_ms"] is None or after["started_ms"] < before["ended_ms"]:
            found.append((dict(before), dict(after)))
    return found
