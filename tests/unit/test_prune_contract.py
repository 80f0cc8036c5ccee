"""The contract without a JVM: DuckDB as the oracle, indexes built in-process
by the same task code Spark runs. (float32 is left out: DuckDB compares
``f32 = 0.1`` in float32, Spark in double; the Spark oracle test covers it.)"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import (
    duckdb_matching_files,
    examples,
    files_strategy,
    predicate_strategy,
    write_files,
)

COLUMNS = ("i", "n", "dec", "f", "s", "dt", "ts", "b")
SPECS = [si.MinMax(c) for c in COLUMNS] + [si.Bloom(c, fpp=0.05) for c in COLUMNS if c != "b"]


@settings(max_examples=examples(150))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
)
def test_prune_never_drops_a_file_duckdb_finds_a_match_in(tables, predicates):
    root = Path(tempfile.mkdtemp(prefix="contract-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), SPECS, InProcessRunner())
        truth = duckdb_matching_files(paths, predicates)
        for predicate, matching in zip(predicates, truth, strict=True):
            kept = {Path(f).name for f in si.prune(str(root / "t"), predicate).files}
            assert matching <= kept, f"{predicate}: dropped {sorted(matching - kept)}"
    finally:
        shutil.rmtree(root, ignore_errors=True)
