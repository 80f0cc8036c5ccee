"""The durable queue: one queued job per kind and table, priorities, leases that
keep a table to one holder, retries with doubling backoff, and leases taken back
from holders that stopped renewing them or died."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skipindex.maintain.database import connect
from skipindex.maintain.queue import (
    Owner,
    claim,
    enqueue,
    fail,
    finish,
    heartbeat,
    observe,
    reclaim,
    release,
)

LEASE = 10_000


@pytest.fixture
def db(tmp_path: Path):
    connection = connect(str(tmp_path / "state.db"))
    yield connection
    connection.close()


@pytest.fixture
def owners():
    made = [Owner.here(), Owner.here()]
    yield made
    for owner in made:
        owner.retire()


def _dead_owner() -> Owner:
    """An owner whose process has exited (and been reaped)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(child.stdout)
    return Owner(f"{Owner.here().host}:{pid}:deadbeef", Owner.here().host, pid)


def test_one_queued_job_per_kind_and_table(db) -> None:
    first = enqueue(db, "/t", "refresh", "commit 1", 0)
    assert enqueue(db, "/t", "refresh", "commit 2", 5) == first
    assert enqueue(db, "/t", "binpack", "small files", 5) != first
    assert enqueue(db, "/u", "refresh", "commit 1", 5) != first
    assert db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 3


def test_refresh_before_binpack_before_recluster_then_oldest(db, owners) -> None:
    enqueue(db, "/a", "recluster", "decayed", 0)
    enqueue(db, "/b", "binpack", "small", 1)
    enqueue(db, "/c", "refresh", "commit", 2)
    enqueue(db, "/d", "refresh", "commit", 1)
    order = []
    while (job := claim(db, owners[0], 100, LEASE)) is not None:
        order.append((job.kind, job.table_name))
        assert finish(db, owners[0], job, 101, {"summary": "ok"})
    assert order == [("refresh", "/d"), ("refresh", "/c"), ("binpack", "/b"), ("recluster", "/a")]


def test_a_held_table_is_not_claimed_by_another(db, owners) -> None:
    a, b = owners
    enqueue(db, "/t", "refresh", "commit", 0)
    enqueue(db, "/t", "binpack", "small", 0)
    enqueue(db, "/u", "refresh", "commit", 0)
    job = claim(db, a, 10, LEASE)
    assert job is not None
    assert (job.table_name, job.kind, job.state) == ("/t", "refresh", "running")
    other = claim(db, b, 11, LEASE)
    assert other is not None
    assert other.table_name == "/u"
    assert claim(db, b, 12, LEASE) is None
    assert heartbeat(db, a, job, 5_000, LEASE, progress="indexing 3 files")
    row = db.execute("SELECT progress FROM jobs WHERE id = ?", (job.id,)).fetchone()
    assert row[0] == "indexing 3 files"
    assert finish(db, a, job, 6_000, {"summary": "indexed"}, followups=[("binpack", "again")])
    nxt = claim(db, b, 6_001, LEASE)
    assert nxt is not None
    assert (nxt.table_name, nxt.kind) == ("/t", "binpack")
    # the follow-up joined the binpack already queued instead of queueing a second one
    assert db.execute("SELECT count(*) FROM jobs WHERE kind = 'binpack'").fetchone()[0] == 1


def test_table_filter(db, owners) -> None:
    enqueue(db, "/t", "refresh", "commit", 0)
    assert claim(db, owners[0], 1, LEASE, tables=["/u"]) is None
    assert claim(db, owners[0], 1, LEASE, tables=["/t"]) is not None


def test_retry_backoff_doubles_up_to_its_maximum_then_fails(db, owners) -> None:
    owner = owners[0]
    enqueue(db, "/t", "refresh", "commit", 0)
    now, delays = 0, []
    for attempt in range(1, 6):
        job = claim(db, owner, now, LEASE)
        assert job is not None
        assert job.attempts == attempt
        result = fail(db, owner, job, now, "boom", max_attempts=5, retry_ms=1000, retry_max_ms=5000)
        if attempt < 5:
            assert result == "retry"
            due = db.execute("SELECT next_run_ms FROM jobs WHERE id = ?", (job.id,)).fetchone()[0]
            delays.append(due - now)
            assert claim(db, owner, due - 1, LEASE) is None  # not before its time
            now = due
        else:
            assert result == "failed"
    assert delays == [1000, 2000, 4000, 5000]
    row = db.execute("SELECT state, error FROM jobs").fetchone()
    assert tuple(row) == ("failed", "boom")
    runs = [r[0] for r in db.execute("SELECT result FROM runs ORDER BY id")]
    assert runs == ["retry"] * 4 + ["failed"]


def test_a_retried_job_absorbs_a_twin_queued_meanwhile(db, owners) -> None:
    owner = owners[0]
    enqueue(db, "/t", "refresh", "commit 1", 0)
    job = claim(db, owner, 0, LEASE)
    assert job is not None
    enqueue(db, "/t", "refresh", "commit 2", 1)  # a commit seen while it ran
    assert fail(db, owner, job, 2, "boom", 5, 1000, 5000) == "retry"
    queued = db.execute("SELECT id FROM jobs WHERE state = 'queued'").fetchall()
    assert [r[0] for r in queued] == [job.id]


def test_an_expired_lease_is_taken_back_and_the_late_holder_records_nothing(db, owners) -> None:
    slow, other = owners
    enqueue(db, "/t", "refresh", "commit", 0)
    job = claim(db, slow, 0, LEASE)
    assert job is not None
    assert claim(db, other, LEASE - 1, LEASE) is None  # still held
    enqueue(db, "/t", "refresh", "a commit seen while it ran", 5)
    again = claim(db, other, LEASE + 1, LEASE)  # lapsed: taken back and run again
    assert again is not None
    assert again.id == job.id
    assert again.attempts == 2
    assert again.first_started_ms == 0  # the first start is kept (a cluster adopts its plan)
    assert not heartbeat(db, slow, job, LEASE + 2, LEASE)
    assert not finish(db, slow, job, LEASE + 3, {"summary": "late"})
    assert fail(db, slow, job, LEASE + 3, "late", 5, 1, 1) == "lost"
    assert finish(db, other, again, LEASE + 4, {"summary": "done once"})
    runs = db.execute("SELECT owner, result, detail FROM runs ORDER BY id").fetchall()
    assert [(r[0], r[1]) for r in runs] == [(slow.id, "lost"), (other.id, "done")]
    assert runs[0][2] == "lease expired"
    assert db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 1


def test_the_lease_of_a_dead_holder_is_taken_back_at_once(db, owners) -> None:
    dead = _dead_owner()
    enqueue(db, "/t", "binpack", "small files", 0)
    job = claim(db, dead, 0, 10 * LEASE)
    assert job is not None
    enqueue(db, "/t", "binpack", "queued again while it ran", 1)
    taken = reclaim(db, 2)  # long before the lease would lapse
    assert [t.id for t in taken] == [job.id]
    assert db.execute("SELECT count(*) FROM leases").fetchone()[0] == 0
    jobs = db.execute("SELECT id, state FROM jobs").fetchall()
    assert [tuple(r) for r in jobs] == [(job.id, "queued")]
    detail = db.execute("SELECT result, detail FROM runs").fetchone()
    assert tuple(detail) == ("lost", "holder died")
    resumed = claim(db, owners[0], 3, LEASE)
    assert resumed is not None
    assert resumed.id == job.id


def test_a_live_holder_keeps_its_lease(db, owners) -> None:
    enqueue(db, "/t", "refresh", "commit", 0)
    job = claim(db, owners[0], 0, LEASE)
    assert job is not None
    assert reclaim(db, LEASE - 1) == []
    owners[0].retire()  # this process no longer runs that owner: it is dead
    assert [t.id for t in reclaim(db, 1)] == [job.id]


def test_release_queues_the_job_again_due_now(db, owners) -> None:
    enqueue(db, "/t", "recluster", "decayed", 0)
    job = claim(db, owners[0], 0, LEASE)
    assert job is not None
    release(db, owners[0], job, 7, "stopping")
    row = db.execute("SELECT state, next_run_ms FROM jobs").fetchone()
    assert tuple(row) == ("queued", 7)
    assert db.execute("SELECT result FROM runs").fetchone()[0] == "released"


def test_observe_queues_a_refresh_on_a_new_commit_only(db) -> None:
    assert observe(db, "/t", "c1", "1 file", 0)
    assert not observe(db, "/t", "c1", "1 file", 1)
    assert not observe(db, "/t", None, "", 2, error="OSError: gone")
    row = db.execute("SELECT commit_id, check_error FROM tables").fetchone()
    assert tuple(row) == ("c1", "OSError: gone")
    assert observe(db, "/t", "c2", "2 files", 3)
    assert db.execute("SELECT count(*) FROM jobs WHERE state = 'queued'").fetchone()[0] == 1


def test_history_is_trimmed(db, owners) -> None:
    for n in range(15):
        enqueue(db, "/t", "refresh", f"commit {n}", n)
        job = claim(db, owners[0], n, LEASE)
        assert job is not None
        finish(db, owners[0], job, n, {"summary": "ok"}, history=10)
    assert db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 10
    assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 10


def test_a_newer_state_database_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "state.db")
    connect(path).execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ValueError, match="newer skipindex"):
        connect(path)
