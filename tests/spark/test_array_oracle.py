"""Array conditions against Spark's own answers: files Spark writes with random
arrays (NULL arrays, empty arrays, NULL elements, unicode), random
``array_contains``, ``arrays_overlap`` and ``exists`` conditions (alone, negated,
two of them ANDed), in two session zones. Element Bloom filters keep every file
Spark finds a match in; element bitmaps exactly those files."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from tests._support import exact_rows, examples, files_matching, kept_files

pytestmark = pytest.mark.spark

ZONES = ["UTC", "America/Los_Angeles"]
_WORDS = ["urgent", "bug", "ünï", "😀", "", "a'b"]


def _array(rng: random.Random, pool: list[Any]) -> list[Any] | None:
    if rng.random() < 0.1:
        return None
    return [None if rng.random() < 0.1 else rng.choice(pool) for _ in range(rng.randint(0, 3))]


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    rng = random.Random(65)
    rows = [(n, _array(rng, _WORDS), _array(rng, list(range(-2, 40)))) for n in range(400)]
    blooms = tmp_path_factory.mktemp("arrays") / "blooms"
    frame = spark.createDataFrame(rows, "n INT, tags ARRAY<STRING>, ids ARRAY<INT>")
    frame.repartition(6, "n").write.parquet(str(blooms))
    bitmaps = blooms.parent / "bitmaps"
    shutil.copytree(blooms, bitmaps)
    si.build_index(str(blooms), [si.ElementBloom("tags"), si.ElementBloom("ids")], spark=spark)
    si.build_index(str(bitmaps), [si.ElementBitmap("tags"), si.ElementBitmap("ids")], spark=spark)
    return blooms, bitmaps


def _literal(value: Any) -> str:
    return "'" + value.replace("'", "\\'") + "'" if isinstance(value, str) else str(value)


@st.composite
def conditions(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["tags", "ids"]))
    pool = st.sampled_from(_WORDS) if column == "tags" else st.integers(-3, 45)
    values = [_literal(v) for v in draw(st.lists(pool, min_size=1, max_size=3))]
    shape = draw(st.sampled_from(["contains", "overlap", "exists"]))
    found = {
        "contains": f"array_contains({column}, {values[0]})",
        "exists": f"exists({column}, x -> x = {values[0]})",
        "overlap": f"arrays_overlap({column}, array({', '.join(values)}))",
    }[shape]
    return f"NOT {found}" if draw(st.integers(0, 5)) == 0 else found


predicates = st.one_of(conditions(), st.tuples(conditions(), conditions()).map(" AND ".join))


def _spark_files(spark: Any, table: Path, wheres: list[str]) -> list[set[str]]:
    return files_matching(spark.read.parquet(str(table)), wheres)


@pytest.mark.parametrize("zone", ZONES)
def test_array_conditions_keep_what_spark_finds(spark, tables, zone):
    blooms, bitmaps = tables
    spark.conf.set("spark.sql.session.timeZone", zone)

    @settings(max_examples=examples(16))
    @given(wheres=st.lists(predicates, min_size=1, max_size=10))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, blooms, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            assert matching <= kept_files(blooms, where, zone), where
            exact = kept_files(bitmaps, where, zone)
            assert matching <= exact, where
            if not where.startswith("NOT") and " AND NOT" not in where:
                assert exact == matching, f"{where}: not exact"

    try:
        check()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_si_sql_prunes_by_array_conditions_as_written(spark, tables):
    _, bitmaps = tables
    si.register(spark, "events", str(bitmaps))
    query = (
        "SELECT e.n FROM events e WHERE array_contains(e.tags, 'zzz') OR exists(e.ids, x -> x = 99)"
    )
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    (reference,) = plan.references
    assert reference.result is not None, plan.explain()
    assert reference.result.kept == 0, plan.explain()
