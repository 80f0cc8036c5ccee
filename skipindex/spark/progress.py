"""Progress of a long Spark job on stderr: tasks done, bytes, rate.

A bar rewritten in place on a terminal, a plain line every ``interval`` seconds
otherwise (logs, CI). Polls Spark's status tracker from a daemon thread, so the
job itself is untouched; on Spark Connect (no status tracker) it stays silent.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["spark_progress"]


@contextmanager
def spark_progress(
    spark: Any,
    what: str,
    total_bytes: int,
    *,
    stream: TextIO | None = None,
    interval: float | None = None,
) -> Iterator[None]:
    """Report the progress of the Spark jobs run in the block as ``what``."""
    out = stream or sys.stderr
    try:
        tracker = spark.sparkContext.statusTracker()
    except Exception:  # Spark Connect: no SparkContext on the client
        yield
        return
    terminal = out.isatty()
    period = interval if interval is not None else (0.5 if terminal else 10.0)
    stop = threading.Event()
    started = time.monotonic()
    seen_jobs = set(tracker.getActiveJobsIds())

    def poll() -> None:
        while not stop.wait(period):
            done, total = _tasks(tracker, seen_jobs)
            if total:
                _show(out, what, done, total, total_bytes, time.monotonic() - started, terminal)

    thread = threading.Thread(target=poll, name="skipindex-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        if terminal:
            out.write("\n" if time.monotonic() - started > period else "")
            out.flush()


def _tasks(tracker: Any, ignore: set[int]) -> tuple[int, int]:
    done = total = 0
    for job in tracker.getActiveJobsIds():
        if job in ignore:
            continue
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info else ():
            stage_info = tracker.getStageInfo(stage)
            if stage_info:
                done += stage_info.numCompletedTasks
                total += stage_info.numTasks
    return done, total


def _show(
    out: TextIO, what: str, done: int, total: int, total_bytes: int, seconds: float, bar: bool
) -> None:
    share = done / total
    read = total_bytes * share
    rate = read / seconds / 1e6 if seconds > 0 else 0.0
    text = (
        f"{what}: {done}/{total} tasks, {read / 1e6:,.0f}/{total_bytes / 1e6:,.0f} MB, "
        f"{rate:,.0f} MB/s"
    )
    if bar:
        filled = int(share * 24)
        out.write(f"\r[{'#' * filled}{'.' * (24 - filled)}] {text}")
    else:
        out.write(text + "\n")
    out.flush()
