"""An interrupted cluster leaves the table readable and complete, and the next
one rolls it back (killed while writing) or finishes it (stopped mid-commit)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.layout import cluster as cluster_module
from skipindex.layout import commit
from skipindex.store.cluster_plan import load_plans
from skipindex.store.location import locate
from tests._support import exact_rows

CHILD = Path(__file__).resolve().parents[1] / "_child_cluster.py"


def _table(root: Path, files: int = 6, rows: int = 5000) -> Path:
    rng = np.random.default_rng(11)
    for i in range(files):
        folder = root / f"p={i % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.table({"a": rng.integers(0, 1000, rows), "b": rng.normal(size=rows)}),
            folder / f"f{i}.parquet",
        )
    return root


def _data_files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.parquet")
        if "_skipindex" not in p.parts
    )


def test_killed_while_writing_leaves_the_source_whole(spark, tmp_path):
    root = _table(tmp_path / "t")
    files, before = _data_files(root), exact_rows(spark.read.parquet(str(root)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(root)],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not list((root / "_skipindex" / "cluster").glob("*/staged/_raw")):
            assert child.poll() is None, "the child finished before it could be killed"
            assert time.monotonic() < deadline, "the child never started writing"
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the child and its JVM, mid-write
        child.wait()
    assert _data_files(root) == files
    assert exact_rows(spark.read.parquet(str(root))) == before
    assert si.read(spark, root, "a >= 0").count() == 30_000
    described = str(si.describe(root))
    assert "cluster plans not finished" in described
    assert "[inflight]" in described

    report = si.cluster(root, by=["a", "b"], target_file_bytes=20_000, indexes=[], spark=spark)
    assert any("rolled back" in line for line in report.recovered)
    assert [p.state for p in load_plans(locate(root))] == ["rolled_back", "completed"]
    assert not list((root / "_skipindex" / "cluster").glob("*/staged"))
    assert exact_rows(spark.read.parquet(str(root))) == before


def test_stopped_mid_commit_readers_see_each_row_once_then_it_finishes(
    spark, tmp_path, monkeypatch
):
    root = _table(tmp_path / "t")
    before = exact_rows(spark.read.parquet(str(root)))
    real_finish = commit.finish
    stop_after: list[int] = []

    def partial_finish(location: Any, target: Any, plan: Any) -> Any:
        moves = plan.moves[: stop_after[0]]
        for move in moves:
            target.fs.move(move.source, move.target)
        raise KeyboardInterrupt("stopped mid-commit")

    monkeypatch.setattr(cluster_module.commit, "finish", partial_finish)
    stop_after.append(3)  # three new files in, every old one still there
    with pytest.raises(KeyboardInterrupt):
        si.cluster(root, by=["a"], target_file_bytes=20_000, spark=spark)
    (plan,) = load_plans(locate(root))
    assert plan.state == "committing"
    # A plain listing now holds some rows twice; prune/read settle it.
    assert spark.read.parquet(str(root)).count() > 30_000
    assert exact_rows(si.read(spark, root, "a >= 0 OR a IS NULL")) == before
    assert si.prune(root, "a >= 0").swapping  # the new files were hidden

    arrived = sum(1 for m in plan.moves if "/replaced/" not in m.target)
    for move in plan.moves[3 : arrived + 2]:  # all new files in, two old ones out
        Path(move.target).parent.mkdir(parents=True, exist_ok=True)
        locate(root).fs.move(move.source, move.target)
    assert exact_rows(si.read(spark, root, "a >= 0 OR a IS NULL")) == before

    monkeypatch.setattr(cluster_module.commit, "finish", real_finish)
    report = si.cluster(
        root, by=["a"], target_file_bytes=20_000, where="p = 0", indexes=[], spark=spark
    )
    assert any("finished cluster plan" in line for line in report.recovered)
    assert load_plans(locate(root))[0].state == "completed"
    assert exact_rows(spark.read.parquet(str(root))) == before


def test_rows_that_differ_replace_nothing(spark, tmp_path, monkeypatch):
    root = _table(tmp_path / "t")
    files, before = _data_files(root), exact_rows(spark.read.parquet(str(root)))
    real = cluster_module.job.fingerprint
    calls: list[int] = []

    def one_row_short(frame: Any) -> Any:
        count, first, second = real(frame)
        calls.append(count)
        return (count - 1, first, second) if len(calls) == 2 else (count, first, second)

    monkeypatch.setattr(cluster_module.job, "fingerprint", one_row_short)
    with pytest.raises(si.VerificationError, match="30,000 rows before, 29,999 after"):
        si.cluster(root, by=["a"], target_file_bytes=20_000, spark=spark)
    assert _data_files(root) == files
    assert exact_rows(spark.read.parquet(str(root))) == before
    (plan,) = load_plans(locate(root))
    assert plan.state == "rolled_back"
    assert "VerificationError" in plan.message
    assert not list((root / "_skipindex" / "cluster").glob("*/staged"))
