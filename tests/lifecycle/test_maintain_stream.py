"""A writer appends a small file every few seconds (for 45 s; longer with
MAINTAIN_STREAM_SECONDS) while the maintenance service runs: every commit is
covered by the index within LAG_BOUND_S, bin-packing keeps the file count
bounded, and readers through ``si.read`` always get Spark's rows."""

from __future__ import annotations

import itertools
import os
import re
import signal
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import skipindex as si
from tests._maintain_support import (
    ROWS_PER_FILE,
    idle,
    ids_in,
    kill,
    start_service,
    wait_for,
    write_file,
    write_policy,
)

pytestmark = pytest.mark.slow

# 45 s (18 commits, several bin-packs) proves the bound; MAINTAIN_STREAM_SECONDS=120
# is the long version (tests/README.md).
WRITE_SECONDS = float(os.environ.get("MAINTAIN_STREAM_SECONDS", "45"))
EVERY_S = 2.5  # one commit (one small file) this often
LAG_BOUND_S = 45.0  # each commit is covered (or packed into a covered file) this soon
INITIAL_FILES = 5


def test_writer_readers_and_the_service(tmp_path: Path, spark: Any) -> None:
    table = tmp_path / "t"
    mirror = tmp_path / "mirror"  # the same commits, never bin-packed: Spark's oracle
    for number in range(INITIAL_FILES):
        write_file(table, number)
        write_file(mirror, number)
    policy = write_policy(tmp_path / "policy.toml", [table])
    db = tmp_path / "state.db"
    service = start_service(policy, tmp_path / "service.log")
    commits: list[tuple[float, str]] = []
    lock = threading.Lock()  # readers compare with Spark between two commits
    done = threading.Event()

    def writer() -> None:
        number = INITIAL_FILES
        end = time.monotonic() + WRITE_SECONDS
        while time.monotonic() < end:
            with lock:
                path = write_file(table, number)
                write_file(mirror, number)
                commits.append((time.monotonic(), path.name))
            number += 1
            time.sleep(EVERY_S)
        done.set()

    samples: list[tuple[float, int, int, set[str]]] = []  # time, files, covered, uncovered
    reads: list[tuple[str, int]] = []
    retried: list[str] = []  # reads run again: a swap landed while they ran
    try:
        wait_for(lambda: idle(db) and _uncovered(table) == set(), 240, 1.0, "the first refresh")
        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        next_read = time.monotonic() + 5
        while not done.is_set() or not (idle(db) and not _uncovered(table)):
            now = time.monotonic()
            result = si.prune(str(table), "id < 0")  # every covered file is skipped
            uncovered = {Path(f).name for f in result.files}
            samples.append((now, result.total, result.covered, uncovered))
            if now >= next_read:
                reads.append(_compare_with_spark(spark, table, mirror, lock, len(reads), retried))
                next_read = time.monotonic() + 8
            if now - samples[0][0] > WRITE_SECONDS + 180:
                raise AssertionError("the service did not catch up 180 s after the writer")
            time.sleep(0.5)
        thread.join()
        # The state the loop ended on (all covered) is a sample too: a file covered
        # between the last sample and the loop's own check has its lag end here.
        final = si.prune(str(table), "id < 0")
        samples.append(
            (time.monotonic(), final.total, final.covered, {Path(f).name for f in final.files})
        )
    finally:
        kill(service, signal.SIGTERM)

    # Every file is uncovered from its commit (or, for a bin-pack's output, from the
    # first listing that shows it) until the index covers it: that span is the lag.
    committed = {name: at for at, name in commits}
    start: dict[str, float] = {}
    lag: dict[str, float] = {}
    for at, _, _, uncovered in samples:
        for name in uncovered:
            start.setdefault(name, committed.get(name, at))
        for name in set(start) - uncovered - set(lag):
            lag[name] = at - start[name]
    for name, at in committed.items():  # covered before any sample saw it uncovered
        if name not in start:
            later = [s[0] for s in samples if s[0] >= at]
            lag[name] = later[0] - at if later else 0.0
    assert set(start) <= set(lag), f"never covered: {sorted(set(start) - set(lag))}"
    commit_lags = [lag[name] for name in committed]
    packed_lags = [v for name, v in lag.items() if name not in committed] or [0.0]
    files = [s[1] for s in samples]
    share = [s[2] / s[1] for s in samples]
    below = sum(b[0] - a[0] for a, b in itertools.pairwise(samples) if a[2] < 0.99 * a[1])
    written = INITIAL_FILES + len(commits)
    print(
        f"\n{len(commits)} commits in {WRITE_SECONDS:.0f} s; index lag per commit: "
        f"median {statistics.median(commit_lags):.1f} s, max {max(commit_lags):.1f} s; "
        f"bin-packed files uncovered for at most {max(packed_lags):.1f} s after their swap "
        f"(bound {LAG_BOUND_S:.0f} s); covered share: mean {statistics.fmean(share):.1%}, "
        f"under 99 % for {below:.0f} s of {samples[-1][0] - samples[0][0]:.0f} s; "
        f"files: max {max(files)}, last {files[-1]} ({written} written); "
        f"{len(reads)} reads equal to Spark's: {reads}; run again after a swap: {retried}"
    )
    # within the bound of its commit (or its swap) every file is covered: the share of
    # files older than the bound that the index covers is 100 % (>= 99 %)
    assert max(commit_lags) <= LAG_BOUND_S
    assert max(packed_lags) <= LAG_BOUND_S
    assert max(files) <= written // 2, "bin-packing did not bound the file count"
    assert files[-1] <= written // 3
    assert len(reads) >= WRITE_SECONDS // 15
    ids = ids_in(table)
    assert len(ids) == len(set(ids.tolist())) == written * ROWS_PER_FILE


def _uncovered(table: Path) -> set[str]:
    return {Path(f).name for f in si.prune(str(table), "id < 0").files}


def _collect(action: Any, table: Path, retried: list[str]) -> list[tuple[Any, ...]]:
    """The rows; again (at most twice) when a bin-pack moved out a file the running
    query had listed. Spark reports that as a missing file or, when the move lands
    between its footer read and its row-group read, as a failed read of that file:
    either way the file it names is no longer in the table. Any other failure, or
    a failed read of a file still in place, is raised."""
    for attempt in range(3):
        try:
            return sorted(map(tuple, action().collect()))
        except Exception as exc:
            gone = _files_moved_out(str(exc), table)
            if attempt == 2 or not gone:
                raise
            retried.append(f"{', '.join(gone)}: {type(exc).__name__}")
    raise AssertionError("unreachable")


def _files_moved_out(message: str, table: Path) -> list[str]:
    """The data files an error message names (the writer's ``w-NNNNNN`` or a
    bin-pack's ``si-cluster-...``) that are gone from the table."""
    named = set(re.findall(r"\b(w-\d{6}\.parquet|si-cluster-[\w-]+?-\d{5}\.parquet)", message))
    return sorted(name for name in named if not (table / name).exists())


def _compare_with_spark(
    spark: Any, table: Path, mirror: Path, lock: threading.Lock, n: int, retried: list[str]
) -> tuple[str, int]:
    """si.read's rows = Spark's rows of the same commits (none in between). The
    service may bin-pack the table meanwhile, which moves rows but changes none;
    a plain Spark listing of a folder mid-swap can see a group twice or not at
    all (docs/contract.md), so Spark reads the mirror, which nothing swaps."""
    predicates = ["v = 17", "id BETWEEN 1000 AND 1400", "k = 5 AND v < 500", "id % 250 = 3"]
    where = predicates[n % len(predicates)]
    with lock:
        ours = _collect(lambda: si.read(spark, str(table), where), table, retried)
        theirs = sorted(map(tuple, spark.read.parquet(str(mirror)).where(where).collect()))
    assert ours == theirs, f"{where}: si.read gave {len(ours)} rows, Spark {len(theirs)}"
    return where, len(ours)
