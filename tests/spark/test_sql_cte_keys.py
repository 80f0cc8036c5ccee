"""A CTE read by several references, each joined to its own filtered side (TPC-DS
q02's weeks of two years): the tables behind the joined column are pruned by the
union of the references' keys, never by one reference's alone (sql/any_keys.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import exact_rows

pytestmark = pytest.mark.spark

FILES, DAYS_A_FILE = 12, 10
QUERY = (
    "WITH wk AS (SELECT cal.week, sum(amount) AS total FROM sales JOIN cal "
    "ON sales.day = cal.day GROUP BY cal.week) "
    "SELECT y.week, y.total AS first, z.total AS second FROM wk y "
    "JOIN cal a ON y.week = a.week JOIN wk z ON z.week = y.week + 12 "
    "JOIN cal b ON z.week = b.week WHERE a.yr = 0 AND b.yr = {second}"
)


@pytest.fixture(scope="module")
def calendar(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("calendar")
    sales, cal = root / "sales", root / "cal"
    sales.mkdir()
    cal.mkdir()
    rng = np.random.default_rng(5)
    for f in range(FILES):
        day = np.repeat(np.arange(f * DAYS_A_FILE, (f + 1) * DAYS_A_FILE, dtype=np.int32), 20)
        amount = rng.integers(1, 100, len(day)).astype(np.int64)
        pq.write_table(pa.table({"day": day, "amount": amount}), sales / f"part-{f}.parquet")
    days = np.arange(FILES * DAYS_A_FILE, dtype=np.int32)
    table = pa.table({"day": days, "week": days // 7, "yr": days // 28})
    pq.write_table(table, cal / "part-0.parquet")
    si.build_index(str(sales), [si.MinMax("day"), si.BitSlicedBitmap("day")], spark=spark)
    si.build_index(str(cal), [si.BitSlicedBitmap("week"), si.BitSlicedBitmap("yr")], spark=spark)
    si.register(spark, "sales", str(sales))
    si.register(spark, "cal", str(cal))
    return root


def test_each_reference_keeps_the_rows_its_own_keys_join(spark, calendar):
    query = QUERY.format(second=3)  # weeks 0-3 and 12-15: days 0-27 and 84-111
    plan = si.sql_plan(spark, query)
    rows = exact_rows(plan.frame)
    assert rows == exact_rows(spark.sql(query)), plan.explain()
    assert len(rows) == 4 * 7 * 7  # each week of the first year, a day of each year's week
    (sales,) = [r for r in plan.references if r.written == "sales"]
    assert sales.result is not None
    kept = sorted(int(Path(f).stem.split("-")[1]) for f in sales.result.files)
    assert kept == [0, 1, 2, 8, 9, 10, 11], plan.explain()  # both years' files, no other
    assert any("union over the CTE's 2 references" in j.note for j in plan.joins), plan.explain()


def test_a_reference_whose_side_holds_no_key_keeps_nothing_for_itself(spark, calendar):
    query = QUERY.format(second=9)  # no such year: no week joins, no row
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)) == []
