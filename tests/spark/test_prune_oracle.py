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
from skipindex.indexing.build import InProcessRunner, build_with
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


@settings(max_examples=examples(30))
@given(
    tables=files_strategy(),
    predicates=st.lists(predicate_strategy(), min_size=1, max_size=12),
    exact_kind=st.sampled_from([si.BitSlicedBitmap, si.EqualityBitmap]),
)
def test_default_prune_keeps_exactly_the_files_spark_finds_a_match_in(
    spark, tables, predicates, exact_kind
):
    """Exact kinds on every column: the default call keeps no file without a match."""
    root = Path(tempfile.mkdtemp(prefix="oracle-exact-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), [exact_kind(c) for c in SCHEMA.names], InProcessRunner())
        truth = spark_matching_files(spark, paths, predicates)
        for predicate, matching in zip(predicates, truth, strict=True):
            kept = {Path(f).name for f in si.prune(str(root / "t"), predicate).files}
            assert kept == matching, predicate
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_correlated_conditions_in_large_files_keep_exactly_sparks_files(spark, tmp_path):
    """Conditions whose value ranges predict many joint matches (as if independent)
    where Spark finds few or none: the default keeps exactly Spark's files."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F  # noqa: N812

    rows = 12000
    tables = {
        "apart.parquet": pa.table(
            {"a": [1] * (rows // 2) + [0] * (rows // 2), "b": [0] * (rows // 2) + [2] * (rows // 2)}
        ),
        "one.parquet": pa.table(
            {
                "a": [1] * (rows // 2) + [0] * (rows // 2),
                "b": [0] * (rows // 2 - 1) + [2] * (rows // 2 + 1),
            }
        ),
        "many.parquet": pa.table(
            {"a": [r % 2 for r in range(rows)], "b": [2 * (r % 3 == 1) for r in range(rows)]}
        ),
    }
    root = tmp_path / "t"
    root.mkdir()
    for name, table in tables.items():
        pq.write_table(table, root / name)
    build_with(str(root), [si.BitSlicedBitmap("a"), si.EqualityBitmap("b")], InProcessRunner())
    where = "a = 1 AND b = 2"
    found = spark.read.parquet(str(root)).where(where).select(F.input_file_name()).distinct()
    truth = {Path(row[0]).name for row in found.collect()}
    assert truth == {"one.parquet", "many.parquet"}
    assert {Path(f).name for f in si.prune(str(root), where).files} == truth
