"""The contract, against Spark itself: prune() never drops a file in which
Spark finds a row for which the predicate is TRUE (min-max and Bloom indexes)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from tests._support import (
    SCHEMA,
    examples,
    files_strategy,
    predicate_strategy,
    spark_matching_files,
    write_files,
)

pytestmark = pytest.mark.spark

FILE_LEVEL_SPECS = [si.MinMax(c) for c in SCHEMA.names] + [
    si.Bloom(c, fpp=0.05) for c in SCHEMA.names if c != "b"
]


@settings(max_examples=examples(40))
@given(tables=files_strategy(), predicates=st.lists(predicate_strategy(), min_size=1, max_size=12))
def test_prune_keeps_every_file_spark_finds_a_match_in(spark, tables, predicates):
    root = Path(tempfile.mkdtemp(prefix="oracle-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), FILE_LEVEL_SPECS, InProcessRunner())
        truth = spark_matching_files(spark, paths, predicates)
        for predicate, matching in zip(predicates, truth, strict=True):
            kept = {Path(f).name for f in si.prune(str(root / "t"), predicate).files}
            assert matching <= kept, f"{predicate}: dropped {sorted(matching - kept)}"
    finally:
        shutil.rmtree(root, ignore_errors=True)
