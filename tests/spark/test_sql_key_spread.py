"""A join's keys are not looked for where both sides' min-max say they fall in
every file of the side they would prune (sql/key_spread.py), and still are where
they say the keys bunch: orders and their lines, both in order-number order, the
orders filtered once by a grade spread over every order number and once by days
that follow it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import exact_rows, files_holding

pytestmark = pytest.mark.spark

FILES, ORDERS = 8, 400  # orders 0..3,199 in number order, 400 a file; 4 lines each


@pytest.fixture(scope="module")
def shop(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("spread")
    rng = np.random.default_rng(5)
    orders, lines = root / "orders", root / "lines"
    orders.mkdir()
    lines.mkdir()
    for f in range(FILES):
        numbers = np.arange(f * ORDERS, (f + 1) * ORDERS, dtype=np.int64)
        grade = rng.integers(0, 10, ORDERS).astype(np.int32)  # no order to it
        day = (numbers // 40).astype(np.int32)  # 10 days a file: follows the number
        table = pa.table({"order_no": numbers, "grade": grade, "day": day})
        pq.write_table(table, orders / f"part-{f}.parquet")
        line_orders = np.repeat(numbers, 4)
        quantity = rng.integers(1, 50, len(line_orders)).astype(np.int32)
        pq.write_table(
            pa.table({"order_no": line_orders, "quantity": quantity}), lines / f"part-{f}.parquet"
        )
    keyed = [si.MinMax("order_no"), si.BitSlicedBitmap("order_no")]
    specs = [*keyed, si.BitSlicedBitmap("grade"), si.BitSlicedBitmap("day")]
    si.build_index(str(orders), specs, spark=spark)
    si.build_index(str(lines), keyed, spark=spark)
    si.register(spark, "spread_orders", str(orders))
    si.register(spark, "spread_lines", str(lines))
    return {"orders": orders, "lines": lines}


QUERY = (
    "SELECT count(*) AS n, sum(l.quantity) AS total FROM spread_lines l "
    "JOIN spread_orders o ON l.order_no = o.order_no WHERE {where}"
)


def _planned(spark: Any, where: str, **options: Any) -> tuple[si.SqlPlan, Any]:
    """The plan of QUERY (its rows Spark's) and the word on the orders' keys for the lines."""
    query = QUERY.format(where=where)
    plan = si.sql_plan(spark, query, **options)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    (keys, *_) = [j for j in plan.joins if j.fact == "spread_lines" and j.dim == "spread_orders"]
    return plan, keys


def test_keys_spread_over_every_file_are_not_read(spark, shop):
    plan, keys = _planned(spark, "o.grade = 3")
    assert keys.keys is None, plan.explain()
    assert "expected in every file" in keys.note
    (lines,) = [r for r in plan.references if r.written == "spread_lines"]
    graded = pq.read_table(shop["orders"]).filter(pc.equal(pc.field("grade"), 3))
    holding = files_holding(shop["lines"], "order_no", graded["order_no"].to_pylist())
    assert len(holding) == FILES  # as expected: the keys were worth nothing
    assert lines.result is None or set(lines.result.files) >= holding
    # Asked to look for keys however few files they are expected to skip, it reads
    # them, and they skip none.
    plan, keys = _planned(spark, "o.grade = 3", policy=si.PlanningPolicy(least_skips=0.0))
    (lines,) = [r for r in plan.references if r.written == "spread_lines"]
    assert keys.keys is not None, plan.explain()
    assert lines.result is not None
    assert lines.result.kept == FILES


def test_keys_that_follow_the_days_are_read_and_skip(spark, shop):
    plan, keys = _planned(spark, "o.day BETWEEN 25 AND 34")
    assert keys.keys is not None or keys.ranges is not None, plan.explain()
    (lines,) = [r for r in plan.references if r.written == "spread_lines"]
    days = pq.read_table(shop["orders"]).filter((pc.field("day") >= 25) & (pc.field("day") <= 34))
    holding = files_holding(shop["lines"], "order_no", days["order_no"].to_pylist())
    assert lines.result is not None
    assert set(lines.result.files) >= holding
    assert lines.result.kept < FILES, plan.explain()
