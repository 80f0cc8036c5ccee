"""A string column Spark compares by a collation (Spark 4 writes it into the
file): ``s = 'ABC'`` holds for ``'abc'`` under UTF8_LCASE, so an index built on
the bytes must not answer for it. Such a column is not indexed in that file;
every other column still is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import skipindex as si

pytestmark = pytest.mark.spark


def test_a_collated_column_is_never_answered_by_its_bytes(spark: Any, tmp_path: Path):
    root = tmp_path / "t"
    spark.sql(
        "SELECT CAST(s AS STRING COLLATE UTF8_LCASE) AS s, CAST(s AS STRING) AS plain, n "
        "FROM VALUES ('abc', 1), ('xyz', 2) AS t(s, n)"
    ).repartition(2, "n").write.parquet(str(root))
    kinds = [si.MinMax, si.Bloom, si.NgramBloom, si.EqualityBitmap]
    si.build_index(str(root), [k(c) for k in kinds for c in ("s", "plain")], spark=spark)
    read = spark.read.parquet(str(root))
    for where in ["s = 'ABC'", "s LIKE 'AB%'", "s LIKE '%BC'", "s IN ('ABC', 'q')", "s > 'ABC'"]:
        matching = read.where(where).count()
        assert matching >= 1, where
        assert si.prune(str(root), where).kept == 2, where  # both files: not answered
    assert si.prune(str(root), "plain = 'ABC'").kept == 0  # byte order: answered
    assert si.prune(str(root), "plain = 'abc'").kept == 1
    described = si.describe(str(root))
    assert described.files_indexed == 2
