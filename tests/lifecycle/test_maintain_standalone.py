"""The maintenance service running its jobs on a Spark standalone cluster (a
master and two one-core workers started here from pyspark's own scripts), not
in local mode: the refresh and the bin-packing run as executors on the workers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._maintain_support import (
    ROOT,
    ROWS_PER_FILE,
    child_env,
    ids_in,
    rows_of,
    wait_for,
    write_file,
    write_policy,
)

pytestmark = pytest.mark.slow


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _master_state(ui: int) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as answer:
            return dict(json.load(answer))
    except OSError:
        return {}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[str, int, list[Path]]]:
    import pyspark

    home = Path(pyspark.__file__).parent
    env = child_env() | {"SPARK_HOME": str(home), "SPARK_LOG_DIR": str(tmp_path / "logs")}
    spark_class = str(home / "bin" / "spark-class")
    port, ui = _port(), _port()
    url = f"spark://127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []

    def launch(args: list[str], log: str) -> None:
        with open(tmp_path / log, "wb") as out:
            started.append(
                subprocess.Popen(
                    [spark_class, *args],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )

    work = [tmp_path / f"worker-{n}" for n in range(2)]
    try:
        launch(
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            "master.log",
        )
        wait_for(lambda: bool(_master_state(ui)), 120, 1.0, "the master")
        for n, folder in enumerate(work):
            launch(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "768m",
                    "--webui-port",
                    str(_port()),
                    "--work-dir",
                    str(folder),
                    url,
                ],
                f"worker-{n}.log",
            )
        wait_for(lambda: _master_state(ui).get("aliveworkers") == 2, 120, 1.0, "two workers")
        yield url, ui, work
    finally:
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def test_jobs_run_on_a_standalone_cluster(
    tmp_path: Path, cluster: tuple[str, int, list[Path]]
) -> None:
    url, ui, work = cluster
    table = tmp_path / "t"
    for number in range(16):
        write_file(table, number)
    policy = write_policy(
        tmp_path / "policy.toml",
        [table],
        master="local[1]",  # the command line's --master takes its place
    )
    text = policy.read_text().replace(
        '"spark.driver.memory" = "512m"',
        '"spark.driver.memory" = "512m", "spark.executor.memory" = "512m", '
        '"spark.executor.cores" = "1", "spark.cores.max" = "2"',
    )
    policy.write_text(text)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skipindex.cli",
            "maintain",
            "once",
            "--policy",
            str(policy),
            "--master",
            url,
            "--json",
        ],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    print(
        f"\non {url} in {time.monotonic() - started:.0f} s:", json.dumps(report["jobs"], indent=1)
    )
    kinds = [(j["kind"], j["result"]) for j in report["jobs"]]
    assert ("refresh", "done") in kinds
    assert ("binpack", "done") in kinds
    assert report["coverage"][str(table)]["covered"] == report["coverage"][str(table)]["files"]
    assert report["coverage"][str(table)]["files"] < 16  # packed

    # the work ran on the cluster: the master saw the application, each worker ran an executor
    apps = _master_state(ui).get("completedapps", []) + _master_state(ui).get("activeapps", [])
    assert any(app["name"] == "skipindex maintain" for app in apps), apps
    for folder in work:
        executors = list(folder.glob("app-*/*/stderr"))
        assert executors, f"no executor ran on {folder.name}"
    owners = {r["owner"] for r in rows_of(tmp_path / "state.db", "SELECT owner FROM runs")}
    assert len(owners) == 1

    ids = np.sort(ids_in(table))
    assert np.array_equal(ids, np.arange(16 * ROWS_PER_FILE))
    kept = si.prune(str(table), "id = 1234")
    assert kept.covered == kept.total  # the index covers the packed files
    holding = [f for f in kept.files if 1234 in pq.read_table(f, columns=["id"])["id"].to_pylist()]
    assert len(holding) == 1  # kept (bin-packing keeps no order: others may be kept too)
