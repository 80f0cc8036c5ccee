"""An interrupted cluster leaves the table readable and complete, and the next
one rolls it back (killed while writing) or finishes it (stopped mid-commit)."""

from __future__ import annotations

import os
import shutil
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
from skipindex.reading import read as read_module
from skipindex.sql import catalog as catalog_module
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


def test_a_kept_file_moved_out_while_spark_lists_it_is_read_again(spark, tmp_path, monkeypatch):
    """Spark drops without a word a path that is gone between its check that the
    path exists and its listing of it. A swap moving a kept file out in that
    instant must not take the file's rows out of read()'s answer: read() finds
    the file gone once Spark has listed, and reads the table again."""
    root = tmp_path / "t"
    root.mkdir()
    for i in range(6):  # file i holds a = i*1000 ... i*1000 + 999: "a < 1500" keeps two
        pq.write_table(pa.table({"a": np.arange(i * 1000, (i + 1) * 1000)}), root / f"f{i}.parquet")
    si.build_index(root, [si.MinMax("a")], spark=spark)
    (root / "_skipindex" / "cluster").mkdir()  # the table has had in-place clusters
    where = "a < 1500"
    before = exact_rows(spark.read.parquet(str(root)).where(where))
    real = read_module.read_parquet_paths
    calls: list[int] = []

    def swap_while_spark_lists(session: Any, reader: Any, paths: list[str]) -> Any:
        calls.append(len(paths))
        if len(calls) > 1:
            return real(session, reader, paths)
        moved = Path(paths[0])  # a bin-pack's new file in, then the old one out
        shutil.copy(moved, moved.with_name(f"new-{moved.name}"))
        moved.rename(tmp_path / moved.name)
        return real(session, reader, paths[1:])  # what Spark listed: all but the gone one

    monkeypatch.setattr(read_module, "read_parquet_paths", swap_while_spark_lists)
    # the kept files named (no relation holding the folder's listing: Spark Connect,
    # or a folder that changed while Spark listed it)
    monkeypatch.setattr(read_module, "held_folder", lambda *_: None)
    monkeypatch.setattr(catalog_module, "held_folder", lambda *_: None)
    assert exact_rows(si.read(spark, root, where, row_groups=False)) == before
    assert len(calls) == 2, "read() did not notice the file Spark's listing lost"

    calls.clear()  # si.sql reads its references the same way, and prunes again too
    query = f"SELECT a FROM parquet.`{root}` WHERE {where}"
    assert exact_rows(si.sql(spark, query, row_groups=False)) == before
    assert len(calls) == 2, "si.sql did not notice the file Spark's listing lost"
