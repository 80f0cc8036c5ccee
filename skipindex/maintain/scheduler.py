"""The service: notice commits, claim jobs, run them one at a time, say so.

One :class:`Service` is one owner of leases (``host:pid:token``). Its loop polls
each table for a new commit every ``poll_seconds`` (a new one queues a refresh),
then claims the most urgent due job of a table no one holds and runs it on
Spark, while a heartbeat thread renews the table's lease and records the job's
phase and Spark's task counts. Jobs of one service run one after the other;
more services (on one machine or several sharing the state database's file
system) share the tables, each table worked by one at a time.

Everything it does goes to the ``skipindex.maintain`` logger, one line per
event, for a person to follow.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from skipindex.maintain.changes import latest_commit
from skipindex.maintain.database import Clock, connect, now_ms, transaction
from skipindex.maintain.jobs import Context, Outcome, run_job
from skipindex.maintain.policy import Policy, TablePolicy
from skipindex.maintain.queue import Job, Owner, claim, fail, finish, heartbeat, observe, release

__all__ = ["Finished", "Service", "log"]

log = logging.getLogger("skipindex.maintain")


@dataclass(frozen=True)
class Finished:
    """A job this service ran: ``done``, ``retry``, ``failed`` or ``lost``."""

    job: Job
    result: str
    summary: str
    seconds: float


class Service:
    """The tables of ``policy`` (or those named in ``tables``), worked by this process."""

    def __init__(
        self,
        policy: Policy,
        *,
        tables: Sequence[str] | None = None,
        spark: Any = None,
        clock: Clock = now_ms,
    ) -> None:
        self.policy = policy
        chosen = [policy.table(t) for t in tables] if tables else list(policy.tables)
        self.tables = {t.name: t for t in chosen}
        self.clock = clock
        self.owner = Owner.here()
        self.db = connect(policy.service.state)
        self._spark = spark
        self._own_spark = False
        self._checked: dict[str, int] = {}
        self._beat_ms = 0

    @property
    def lease_ms(self) -> int:
        return int(self.policy.service.lease_seconds * 1000)

    def spark(self) -> Any:
        """The session jobs run on, started on first use from the policy's master."""
        if self._spark is None:
            from skipindex.spark.session import session_for

            service = self.policy.service
            log.info("starting Spark on %s", service.spark_master)
            self._spark = session_for(
                service.spark_master, service.spark_conf, app_name="skipindex maintain"
            )
            self._own_spark = True
        return self._spark

    def poll(self, force: bool = False) -> list[str]:
        """Look for new commits (each table at most every ``poll_seconds``
        unless ``force``); the tables that had one, whose refresh is now queued."""
        changed = []
        every = self.policy.service.poll_seconds * 1000
        for name, table in self.tables.items():
            now = self.clock()
            if not force and now - self._checked.get(name, -every) < every:
                continue
            self._checked[name] = now
            try:
                commit = latest_commit(table)
            except Exception as exc:  # a table that cannot be read now: say so, go on
                observe(self.db, name, None, "", now, error=f"{type(exc).__name__}: {exc}")
                log.warning("%s: cannot read its latest commit: %s", name, exc)
                continue
            if observe(self.db, name, commit.id, commit.note, now):
                changed.append(name)
                log.info("%s: new commit (%s); refresh queued", name, commit.note)
        return changed

    def step(self) -> Finished | None:
        """Claim and run the most urgent due job; None if there is none."""
        job = claim(self.db, self.owner, self.clock(), self.lease_ms, tables=self.tables)
        return None if job is None else self._run(job)

    def run_once(self) -> list[Finished]:
        """One pass: look for commits, then run every due job (and what they
        queue) of tables no other service holds."""
        self.poll(force=True)
        finished = []
        while (done := self.step()) is not None:
            finished.append(done)
        return finished

    def run_forever(self, stop: threading.Event, idle_seconds: float = 1.0) -> None:
        """Poll and work until ``stop`` is set (a running job is finished first)."""
        self._register()
        log.info(
            "service %s started on %d table(s), state in %s",
            self.owner.id,
            len(self.tables),
            self.policy.service.state,
        )
        try:
            while not stop.is_set():
                self.poll()
                self._service_beat()
                if self.step() is None:
                    stop.wait(min(idle_seconds, self.policy.service.poll_seconds))
        finally:
            with transaction(self.db):
                self.db.execute(
                    "UPDATE services SET stopped_ms = ? WHERE owner = ?",
                    (self.clock(), self.owner.id),
                )
            log.info("service %s stopped", self.owner.id)

    def close(self) -> None:
        """Release what this service holds (and stop the Spark it started)."""
        self.owner.retire()
        self.db.close()
        if self._own_spark and self._spark is not None:
            self._spark.stop()
            self._spark = None

    def _register(self) -> None:
        now = self.clock()
        with transaction(self.db):
            self.db.execute(
                "INSERT OR REPLACE INTO services (owner, host, pid, started_ms, heartbeat_ms) "
                "VALUES (?, ?, ?, ?, ?)",
                (self.owner.id, self.owner.host, self.owner.pid, now, now),
            )

    def _service_beat(self) -> None:
        now = self.clock()
        if now - self._beat_ms >= 5000:
            self._beat_ms = now
            with transaction(self.db):
                self.db.execute(
                    "UPDATE services SET heartbeat_ms = ? WHERE owner = ?", (now, self.owner.id)
                )

    def _run(self, job: Job) -> Finished:
        table = self.tables[job.table_name]
        started = time.perf_counter()
        label = f"job {job.id} {job.kind} {table.name}"
        log.info("%s: started (attempt %d): %s", label, job.attempts, job.reason)
        beat = _Heartbeat(self, job)
        beat.start()
        try:
            outcome = run_job(job.kind, self._context(table, job, beat))
        except Exception as exc:
            beat.finish()
            error = f"{type(exc).__name__}: {exc}"
            service = self.policy.service
            result = fail(
                self.db,
                self.owner,
                job,
                self.clock(),
                error,
                service.max_attempts,
                int(service.retry_seconds * 1000),
                int(service.retry_max_seconds * 1000),
            )
            log.warning("%s: %s after %.1f s: %s", label, _said(result), _since(started), error)
            return Finished(job, result, error, _since(started))
        except BaseException:
            beat.finish()
            release(self.db, self.owner, job, self.clock(), "the service was interrupted")
            log.warning("%s: interrupted; queued again", label)
            raise
        beat.finish()
        return self._record(job, label, outcome, started)

    def _record(self, job: Job, label: str, outcome: Outcome, started: float) -> Finished:
        document = {"summary": outcome.summary, **outcome.details}
        recorded = finish(
            self.db,
            self.owner,
            job,
            self.clock(),
            document,
            outcome.followups,
            self.policy.service.history,
            outcome.table_updates,
        )
        if not recorded:
            log.warning("%s: finished, but its lease had been taken over; not recorded", label)
            return Finished(job, "lost", outcome.summary, _since(started))
        log.info("%s: done in %.1f s: %s", label, _since(started), outcome.summary)
        for kind, reason in outcome.followups:
            log.info("%s: %s queued: %s", job.table_name, kind, reason)
        return Finished(job, "done", outcome.summary, _since(started))

    def _context(self, table: TablePolicy, job: Job, beat: _Heartbeat) -> Context:
        row = self.db.execute("SELECT * FROM tables WHERE name = ?", (table.name,)).fetchone()
        baseline = json.loads(row["baseline"]) if row is not None and row["baseline"] else {}
        return Context(
            table=table,
            service=self.policy.service,
            spark=self.spark,
            phase=beat.set_phase,
            first_started_ms=job.first_started_ms or self.clock(),
            clustered_ms=row["clustered_ms"] if row is not None else None,
            baseline={str(k): float(v) for k, v in baseline.items()},
            decay_checked_ms=row["decay_checked_ms"] if row is not None else None,
            now=self.clock,
            last_advice=self._last_advice(table) if table.advise else None,
        )

    def _last_advice(self, table: TablePolicy) -> dict[str, Any] | None:
        """The advice the table's latest refresh recorded (in its outcome), if any."""
        row = self.db.execute(
            "SELECT outcome FROM jobs WHERE table_name = ? AND kind = 'refresh' "
            "AND state = 'done' AND outcome LIKE '%\"advice\": {%' ORDER BY id DESC LIMIT 1",
            (table.name,),
        ).fetchone()
        advice = json.loads(row[0]).get("advice") if row is not None else None
        return advice if isinstance(advice, dict) else None


class _Heartbeat(threading.Thread):
    """Renews a running job's lease and records its progress, on its own connection."""

    def __init__(self, service: Service, job: Job) -> None:
        super().__init__(name=f"skipindex-heartbeat-{job.id}", daemon=True)
        self.service, self.job = service, job
        self.phase = "starting"
        self.lost = False
        self._stop_event = threading.Event()
        self.every = min(service.policy.service.lease_seconds / 3, 2.0)

    def set_phase(self, phase: str) -> None:
        self.phase = phase
        log.info("job %d %s %s: %s", self.job.id, self.job.kind, self.job.table_name, phase)

    def finish(self) -> None:
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        service = self.service
        db = connect(service.policy.service.state)
        try:
            while True:
                try:
                    renewed = heartbeat(
                        db,
                        service.owner,
                        self.job,
                        service.clock(),
                        service.lease_ms,
                        self._progress(),
                    )
                except sqlite3.Error as exc:  # busy past its timeout: try again next beat
                    log.warning("job %d: cannot renew its lease now: %s", self.job.id, exc)
                    renewed = True  # not known to be lost; the lease runs on until it lapses
                if not renewed and not self.lost:
                    self.lost = True
                    log.warning(
                        "job %d on %s: its lease was taken over (this service was too slow to "
                        "renew it); its outcome will not be recorded",
                        self.job.id,
                        self.job.table_name,
                    )
                if self._stop_event.wait(self.every):
                    return
        finally:
            db.close()

    def _progress(self) -> str:
        spark = self.service._spark
        if spark is None:
            return self.phase
        try:
            tracker = spark.sparkContext.statusTracker()
            stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
        except Exception:  # Spark Connect, or a session stopping: the phase will do
            return self.phase
        tasks = [
            f"stage {s.stageId}: {s.numCompletedTasks}/{s.numTasks} tasks"
            for s in stages
            if s is not None
        ]
        return f"{self.phase} ({'; '.join(tasks)})" if tasks else self.phase


def _since(started: float) -> float:
    return time.perf_counter() - started


def _said(result: str) -> str:
    return {"retry": "failed, will retry", "failed": "failed for good", "lost": "failed"}.get(
        result, result
    )
