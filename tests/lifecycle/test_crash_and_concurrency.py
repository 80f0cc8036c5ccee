"""Builds killed with SIGKILL at chosen and random points, and builds racing each
other while readers prune: the last good version stays readable, prune stays
correct, and the next build completes and cleans up what the dead one left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store.location import locate
from skipindex.store.manifest import load_latest, manifest_versions
from tests._support import full_run

pytestmark = pytest.mark.slow

CHILD = Path(__file__).resolve().parents[1] / "_child_build.py"
SPECS = [si.MinMax("id"), si.BitSlicedBitmap("id"), si.Bloom("id")]
PROBES = [3, 17, 250, 999, 4321, 10_001]


def _table(root: Path, files: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    for k in range(files):
        ids = rng.integers(0, 5000, 200)
        pq.write_table(pa.table({"id": ids}), root / f"p{k:04d}.parquet")


def _churn(root: Path, seed: int) -> None:
    """Work for the next build: append, rewrite and delete files."""
    rng = np.random.default_rng(seed)
    files = sorted(root.glob("p*.parquet"))
    for path in files[:5]:
        path.unlink()
    for path in files[5:10]:
        pq.write_table(pa.table({"id": rng.integers(0, 5000, 150)}), path)
    for k in range(10):
        pq.write_table(pa.table({"id": rng.integers(0, 5000, 200)}), root / f"n{seed}-{k}.parquet")


def _truth(root: Path, value: int) -> set[str]:
    return {
        p.name
        for p in root.glob("*.parquet")
        if value in set(pq.read_table(p).column("id").to_pylist())
    }


def _assert_correct(root: Path, exact: bool = False) -> None:
    for value in PROBES:
        kept = {Path(f).name for f in si.prune(str(root), f"id = {value}").files}
        truth = _truth(root, value)
        assert truth <= kept, f"id = {value}: dropped {sorted(truth - kept)}"
        if exact:
            assert kept == truth, f"id = {value}"


def _assert_clean(root: Path) -> None:
    """Nothing left behind: no markers, no temporary manifests, no orphan segments."""
    index = root / "_skipindex"
    assert not list((index / "_inflight").glob("*")), "in-flight marker left behind"
    assert not list(index.glob(".tmp-*")), "temporary manifest left behind"
    location = locate(str(root))
    referenced = set()
    for version in manifest_versions(location)[-2:]:
        doc = json.loads((index / f"v{version}.json").read_text())
        referenced |= {s["path"].split("/")[-1] for s in doc["segments"]}
    assert {p.name for p in (index / "segments").glob("*")} == referenced


def _recover(root: Path) -> si.BuildReport:
    """After a crash: the current version is whole, and the next build completes,
    keeps exactly the matching files and leaves nothing behind."""
    _assert_correct(root)
    report = build_with(str(root), None, InProcessRunner())
    _assert_correct(root, exact=True)
    _assert_clean(root)
    return report


def _child(root: Path, crash: str, runner: str = "inprocess") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(root), runner, crash],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )


@pytest.mark.parametrize(
    "crash", ["segment:1", "segment:3", "rowgroup:2", "publish", "commit", "vacuum"]
)
def test_build_killed_at_a_chosen_point(tmp_path: Path, crash: str):
    root = tmp_path / "t"
    _table(root, 40)
    build_with(str(root), SPECS, InProcessRunner())
    _churn(root, seed=1)
    child = _child(root, crash)
    child.wait(timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    latest = load_latest(locate(str(root)))
    assert latest is not None
    assert latest.version == (2 if crash == "vacuum" else 1)
    report = _recover(root)
    assert report.files_indexed == (0 if crash == "vacuum" else 15)


def test_build_killed_at_random_moments(tmp_path: Path):
    root = tmp_path / "t"
    _table(root, 120)
    build_with(str(root), SPECS, InProcessRunner())
    rng = random.Random(11)
    for round_number in range(6 if full_run() else 1):
        _churn(root, seed=100 + round_number)
        child = _child(root, "none")
        time.sleep(rng.uniform(0.2, 2.5))
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        _assert_correct(root)  # whatever version is current, it is whole
    _recover(root)


@pytest.mark.spark
def test_spark_build_killed_while_tasks_write_segments(tmp_path: Path):
    root = tmp_path / "t"
    _table(root, 60)
    build_with(str(root), SPECS, InProcessRunner())
    _churn(root, seed=7)
    child = _child(root, "none", runner="spark")
    deadline = time.monotonic() + 120
    markers = root / "_skipindex" / "_inflight"
    while not list(markers.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the Spark build is under way
    time.sleep(random.Random(3).uniform(0.0, 1.5))
    os.killpg(child.pid, signal.SIGKILL)  # the driver, its JVM and Python workers
    child.wait(timeout=60)
    _recover(root)


def test_concurrent_builds_both_end_and_readers_see_whole_versions(tmp_path: Path):
    root = tmp_path / "t"
    _table(root, 150)
    build_with(str(root), SPECS, InProcessRunner())
    _churn(root, seed=21)
    children = [_child(root, "none"), _child(root, "none")]
    prunes = 0
    while any(c.poll() is None for c in children):
        _assert_correct(root)  # never an error, never a dropped file
        prunes += 1
    outputs = [c.communicate()[0] for c in children]
    assert [c.returncode for c in children] == [0, 0], outputs
    assert prunes > 0
    assert manifest_versions(locate(str(root)))[-1] == 3  # both committed (one re-planned)
    description = si.describe(str(root))
    assert description.files_indexed == description.files_listed
    assert (description.files_stale, description.files_unindexed) == (0, 0)
    _assert_correct(root, exact=True)
    build_with(str(root), None, InProcessRunner())
    _assert_clean(root)
