"""A new user's first builds: no --index, and a SparkSession whose workers lack skipindex."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.cli import main


def _table(root: Path, files: int = 3, rows: int = 3000) -> Path:
    root.mkdir()
    for k in range(files):
        pq.write_table(
            pa.table(
                {
                    "orderkey": pa.array(range(k * rows, (k + 1) * rows), pa.int64()),
                    "shipmode": pa.array([("AIR", "MAIL", "SHIP")[i % 3] for i in range(rows)]),
                    "shipdate": pa.array(
                        [19000 + k * 30 + i % 30 for i in range(rows)], pa.date32()
                    ),
                }
            ),
            root / f"part-{k}.parquet",
        )
    return root


def test_build_without_index_chooses_indexes_and_says_why(spark, tmp_path, capsys):
    root = _table(tmp_path / "t")
    assert main(["build", str(root), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files_indexed"] == 3
    chosen = "\n".join(report["chosen"])
    assert "bloom on orderkey: high cardinality" in chosen
    assert "equality_bitmap on shipmode: low cardinality (3 distinct" in chosen
    assert "minmax on shipdate: orderable" in chosen
    kinds = {(d["kind"], d["column"]) for d in si.describe(root).indexes}
    assert ("bloom", "orderkey") in kinds
    assert ("equality_bitmap", "shipmode") in kinds
    assert si.prune(root, "orderkey = 4500").files == [str(root / "part-1.parquet")]


_NO_SKIPINDEX_WORKERS = """
import sys
from pyspark.sql import SparkSession
import skipindex as si
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("OFF")
try:
    si.build_index(sys.argv[1], [si.MinMax("orderkey")], spark=spark)
except si.WorkerEnvironmentError as exc:
    print("ERROR:", exc)
"""


@pytest.mark.slow
def test_workers_without_skipindex_fail_with_what_to_set(spark, tmp_path):
    root = _table(tmp_path / "t", files=2, rows=100)
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)  # a Python with nothing installed
    # No PYSPARK_PYTHON: Spark's workers run `python3` from PATH, here a bare one.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = f"{bare / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    child = subprocess.run(
        [sys.executable, "-c", _NO_SKIPINDEX_WORKERS, str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    out = child.stdout
    assert "ERROR: Spark's Python workers" in out, child.stderr[-3000:]
    assert f"Set PYSPARK_PYTHON={sys.executable}" in out
    assert "Traceback" not in out
    assert not (root / "_skipindex").exists()  # nothing half-written, no _inflight left


def test_progress_lines_while_a_job_runs(spark):
    import io
    import time as clock

    from skipindex.spark.progress import spark_progress

    def slow(batches):
        for batch in batches:
            clock.sleep(0.4)
            yield batch

    out = io.StringIO()
    with spark_progress(spark, "indexing 4 files", 4_000_000, stream=out, interval=0.1):
        spark.range(4, numPartitions=4).mapInArrow(slow, "id long").collect()
    lines = out.getvalue().splitlines()
    assert lines, "no progress reported"
    assert all(line.startswith("indexing 4 files: ") for line in lines)
    assert any("/4 tasks" in line and "/4 MB" in line for line in lines)


def test_a_csv_file_beside_the_data_is_left_out_everywhere(spark, tmp_path):
    root = _table(tmp_path / "t", files=2, rows=100)
    (root / "export.csv").write_text("a,b\n1,2\n")
    si.build_index(root, [si.MinMax("orderkey")], spark=spark)
    assert si.describe(root).files_not_parquet == ["export.csv"]
    assert all(f.endswith(".parquet") for f in si.prune(root, "orderkey >= 0").files)
    assert si.read(spark, root, "orderkey >= 0").count() == 200  # plain Spark would fail here
    assert si.read(spark, root, "orderkey = 150").count() == 1
