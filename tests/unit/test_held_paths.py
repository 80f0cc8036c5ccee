"""How Spark spells a local file in ``_metadata.file_path`` (reading/held.py): the
skipped files are named that way, and the prune result names every skipped file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.reading.held import spark_file_path


def test_paths_are_spelled_as_hadoop_spells_a_local_uri():
    # Spark 4.0's own spellings of these files (tests/spark/test_held_relation.py
    # proves the filter by them leaves exactly the skipped files out)
    assert spark_file_path("/t/ta b%c/s=x/part 0#0.parquet") == (
        "file:/t/ta%20b%25c/s=x/part%200%230.parquet"
    )
    assert spark_file_path("/t/s=é ü/p.parquet") == "file:/t/s=é%20ü/p.parquet"
    assert spark_file_path("/t/s=a%20b/p.parquet") == "file:/t/s=a%2520b/p.parquet"
    assert spark_file_path("/t/a-b_c.d!~*'(),;:$&+=@/[x]{y}") == (
        "file:/t/a-b_c.d!~*'(),;:$&+=@/%5Bx%5D%7By%7D"
    )
    assert spark_file_path("/t/tab\there\u00a0") == "file:/t/tab%09here%C2%A0"


def test_a_prune_names_every_file_it_skips(tmp_path: Path):
    for i in range(5):
        pq.write_table(pa.table({"a": np.arange(i * 10, i * 10 + 10)}), tmp_path / f"f{i}.parquet")
    build_with(str(tmp_path), [si.MinMax("a")], InProcessRunner())
    result = si.prune(tmp_path, "a < 15 OR a >= 45")
    listed = {str(tmp_path / f"f{i}.parquet") for i in range(5)}
    assert set(result.files) | set(result.skipped_files) == listed
    assert not set(result.files) & set(result.skipped_files)
    assert len(result.skipped_files) == result.skipped == 2
