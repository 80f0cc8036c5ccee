"""Long lists of join keys on a fact with bit-sliced bitmaps: listed where they
are expected to skip (they then meet the other conditions row by row and keep
exactly the files holding a joined row), one covering range where they are not
(sql/key_use.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlglot import exp

import skipindex as si
from tests._support import exact_rows

pytestmark = pytest.mark.spark

FILES, ROWS, KEYS = 8, 2000, 3000
CITIES = 90  # 2 cities: about 67 scattered keys of 3,000 (2.2 %), past the policy's bitmap_keys


@pytest.fixture(scope="module")
def star(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("star")
    rng = np.random.default_rng(7)
    tables: dict[str, Any] = {}
    for name in ("cust", "supp"):
        folder = root / name
        folder.mkdir()
        cities = rng.integers(0, CITIES, KEYS)
        table = pa.table({"key": np.arange(KEYS, dtype=np.int32), "city": cities.astype(np.int32)})
        pq.write_table(table, folder / "part-0.parquet")
        si.build_index(str(folder), [si.EqualityBitmap("city")], spark=spark)
        si.register(spark, name, str(folder))
        tables[name] = table
    folder = root / "fact"
    folder.mkdir()
    parts = []
    for f in range(FILES):
        part = pa.table(
            {
                "c": rng.integers(0, KEYS, ROWS).astype(np.int32),
                "s": rng.integers(0, KEYS, ROWS).astype(np.int32),
                "d": rng.integers(0, 100, ROWS).astype(np.int32),
                "v": rng.integers(0, 1000, ROWS).astype(np.int64),
            }
        )
        pq.write_table(part, folder / f"part-{f}.parquet")
        parts.append(part)
    specs = [si.BitSlicedBitmap(c) for c in ("c", "s", "d")]
    si.build_index(str(folder), specs, spark=spark)
    si.register(spark, "fact", str(folder))
    return {"tables": tables, "parts": parts}


def _holding(star: dict[str, Any], cust: set[int] | None, supp: set[int] | None, days: int) -> int:
    """Fact files holding a row of the join (brute force)."""
    keys = {
        name: np.flatnonzero(np.isin(star["tables"][name]["city"].to_numpy(), sorted(cities)))
        for name, cities in (("cust", cust), ("supp", supp))
        if cities is not None
    }
    held = 0
    for part in star["parts"]:
        hit = part["d"].to_numpy() < days
        if "cust" in keys:
            hit &= np.isin(part["c"].to_numpy(), keys["cust"])
        if "supp" in keys:
            hit &= np.isin(part["s"].to_numpy(), keys["supp"])
        held += bool(hit.any())
    return held


def _plan(spark: Any, query: str) -> tuple[si.SqlPlan, Any]:
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    (fact,) = [r for r in plan.references if r.written == "fact"]
    return plan, fact


def test_key_lists_expected_to_skip_meet_row_by_row_and_keep_exactly(spark, star):
    query = (
        "SELECT sum(v) AS total, count(*) AS n FROM fact JOIN cust ON c = cust.key "
        "JOIN supp ON s = supp.key WHERE cust.city IN (1, 2) AND supp.city IN (3, 4) AND d < 20"
    )
    plan, fact = _plan(spark, query)
    dynamic = [c for c in fact.conditions if c.origin == "dynamic"]
    assert len(dynamic) == 2, plan.explain()
    assert not any("as one range" in c.note for c in dynamic), plan.explain()
    # 2,000 rows x 2.2 % x 2.2 % = 1 row a file (at most 3 expected): listed
    floor = _holding(star, {1, 2}, {3, 4}, 20)
    assert floor < FILES
    assert fact.result is not None
    assert fact.result.kept == floor, plan.explain()


def test_a_key_list_expected_to_skip_nothing_is_one_range(spark, star):
    query = "SELECT count(*) AS n FROM fact JOIN cust ON c = cust.key WHERE cust.city IN (1, 2)"
    plan, fact = _plan(spark, query)
    (dynamic,) = [c for c in fact.conditions if c.origin == "dynamic"]
    # 2,000 rows x 2.2 %: about 44 matching rows a file, so no file can be skipped
    assert "as one range" in dynamic.note, plan.explain()
    assert isinstance(dynamic.node, exp.Between), plan.explain()  # c BETWEEN low AND high
    assert "(c >= " in (fact.where or "")  # pruned with it, as a predicate (not its text)
    assert fact.result is not None
    assert fact.result.kept == _holding(star, {1, 2}, None, 100)
