"""One pass of the service without Spark (index tasks in process): commits
noticed, refreshes run once, failures retried, and what ``status`` says."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.maintain import jobs, scheduler
from skipindex.maintain.command import run_step
from skipindex.maintain.policy import load_policy
from skipindex.maintain.scheduler import Service
from skipindex.maintain.status import status


def _add(root: Path, start: int, files: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for k in range(start, start + files):
        pq.write_table(
            pa.table({"id": list(range(k * 10, k * 10 + 10))}), root / f"p{k:03d}.parquet"
        )


@pytest.fixture
def policy_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    def in_process(path: Any, specs: Any = None, *, spark: Any = None, catalog: Any = None) -> Any:
        return build_with(path, specs, InProcessRunner(), catalog=catalog)

    monkeypatch.setattr(jobs, "build_index", in_process)
    monkeypatch.setattr(Service, "spark", lambda self: None)  # no JVM in unit tests
    _add(tmp_path / "lake" / "a", 0, 3)
    _add(tmp_path / "lake" / "b", 0, 2)
    path = tmp_path / "policy.toml"
    path.write_text(
        """
[service]
state = "state.db"
retry_seconds = 0
[defaults]
binpack_min_small_files = 100
indexes = [{kind = "minmax", column = "id"}]
[[table]]
path = "lake/a"
[[table]]
path = "lake/b"
"""
    )
    return path


def test_a_pass_indexes_every_table_and_a_second_does_nothing(
    policy_file: Path, tmp_path: Path
) -> None:
    report = si.maintain(policy=policy_file)
    assert sorted(report.changed) == [f"{tmp_path}/lake/a", f"{tmp_path}/lake/b"]
    assert [(j["kind"], j["result"]) for j in report.jobs] == [("refresh", "done")] * 2
    assert report.coverage[f"{tmp_path}/lake/a"] == {"files": 3, "covered": 3, "version": 1}
    assert "3 of 3 files covered" in str(report)
    again = si.maintain(policy=policy_file)
    assert (again.jobs, again.changed) == ([], [])
    assert str(again).startswith("nothing to do")

    _add(tmp_path / "lake" / "a", 3, 2)  # a commit
    third = si.maintain(["lake/a"], policy=policy_file)  # one table, named as in the policy
    assert third.changed == [f"{tmp_path}/lake/a"]
    assert third.coverage == {f"{tmp_path}/lake/a": {"files": 5, "covered": 5, "version": 2}}
    assert "indexed 2 files" in third.jobs[0]["summary"]


def test_a_writers_notice_queues_a_refresh(policy_file: Path, tmp_path: Path) -> None:
    si.maintain(policy=policy_file)
    job = si.table_changed("lake/b", policy=policy_file)  # relative to the policy file
    assert si.table_changed(tmp_path / "lake" / "b", policy=policy_file) == job  # one queued
    found = status(load_policy(policy_file))
    queued = found.tables[1].queued
    assert [(q["id"], q["kind"], q["reason"]) for q in queued] == [
        (job, "refresh", "notified by a writer")
    ]
    report = si.maintain(policy=policy_file)
    assert [(j["id"], j["summary"]) for j in report.jobs] == [
        (job, "nothing to index; 2 of 2 files covered (index version 1)")
    ]


def test_a_failing_job_is_retried_then_fails_and_status_says_so(
    policy_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def broken(kind: str, ctx: jobs.Context) -> jobs.Outcome:
        calls.append((kind, ctx.table.name))
        raise OSError("disk on fire")

    monkeypatch.setattr(scheduler, "run_job", broken)
    text = policy_file.read_text().replace(
        "retry_seconds = 0", "retry_seconds = 0\nmax_attempts = 2"
    )
    policy_file.write_text(text)
    report = si.maintain(["lake/a"], policy=policy_file)
    assert [j["result"] for j in report.jobs] == ["retry", "failed"]
    assert len(calls) == 2
    assert run_step("once", str(policy_file), tables=["lake/a"]) == 0  # nothing left to fail

    table = status(load_policy(policy_file)).tables[0]
    assert table.recent[0]["state"] == "failed"
    assert table.recent[0]["error"] == "OSError: disk on fire"
    assert table.files == 3
    assert table.covered == 0
    lines = "\n".join(table.lines(table.checked_ms or 0))
    assert "index: 0 of 3 files covered, 3 not yet (no index yet)" in lines
    assert "failed: job 1 refresh" in lines
    assert "OSError: disk on fire" in lines


def test_an_interrupted_job_is_given_back(
    policy_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(kind: str, ctx: jobs.Context) -> jobs.Outcome:
        raise KeyboardInterrupt

    monkeypatch.setattr(scheduler, "run_job", interrupted)
    service = Service(load_policy(policy_file), tables=["lake/a"])
    try:
        service.poll(force=True)
        with pytest.raises(KeyboardInterrupt):
            service.step()
        row = service.db.execute("SELECT state, attempts FROM jobs").fetchone()
        assert tuple(row) == ("queued", 1)
        assert service.db.execute("SELECT count(*) FROM leases").fetchone()[0] == 0
    finally:
        service.close()


def test_status_before_any_service_and_as_json(
    policy_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_step("status", str(policy_file)) == 0
    text = capsys.readouterr().out
    assert "services running: none" in text
    assert "last commit: not seen yet" in text
    assert "index: 0 of 3 files covered, 3 not yet (no index yet)" in text
    si.maintain(policy=policy_file)
    assert run_step("status", str(policy_file), as_json=True) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["tables"][0]
    assert (first["files"], first["covered"], first["uncovered"]) == (3, 3, 0)
    assert first["recent"][0]["summary"].startswith("indexed 3 files")
    assert first["commit"].startswith("3 files")


def test_the_command_line(policy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from skipindex.cli import main

    assert main(["maintain", "notify", "lake/a", "--policy", str(policy_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["job"] == 1
    assert main(["maintain", "status", "--policy", str(policy_file)]) == 0
    assert "queued: job 1 refresh (due now): notified by a writer" in capsys.readouterr().out
    assert (
        main(["maintain", "once", "--policy", str(policy_file), "--json", "--table", "lake/a"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["jobs"][0]["id"] == 1


def test_a_heartbeat_that_cannot_write_once_does_not_end_the_job(
    policy_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beats: list[int] = []
    real = scheduler.heartbeat

    def flaky(*args: Any, **kwargs: Any) -> bool:
        beats.append(1)
        if len(beats) == 1:
            raise sqlite3.OperationalError("database is locked")
        return real(*args, **kwargs)

    def slow(kind: str, ctx: jobs.Context) -> jobs.Outcome:
        time.sleep(1.5)  # a heartbeat (every second with a 3 s lease) comes and goes
        return jobs.Outcome("ok")

    monkeypatch.setattr(scheduler, "heartbeat", flaky)
    monkeypatch.setattr(scheduler, "run_job", slow)
    policy_file.write_text(
        policy_file.read_text().replace("retry_seconds = 0", "retry_seconds = 0\nlease_seconds = 3")
    )
    report = si.maintain(["lake/a"], policy=policy_file)
    assert [(j["result"], j["summary"]) for j in report.jobs] == [("done", "ok")]
    assert len(beats) >= 2
