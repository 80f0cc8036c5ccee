"""An IN subquery's table pruned by the keys of the rows around it (q95): a
subquery row whose value is no kept outer row's decides nothing, so the outer
keys prune the subquery's tables, row by row on bit-sliced bitmaps (orders
whose numbers do not follow the date, whose returns follow their sale's date)."""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import exact_rows

pytestmark = pytest.mark.spark

FILES, DAYS_A_FILE, ORDERS = 8, 10, 1200
WEEK = 7  # a week is no file whole: its prune counts the rows of each kept file


@pytest.fixture(scope="module")
def orders(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("orders")
    rng = np.random.default_rng(11)
    days = FILES * DAYS_A_FILE
    # each order sold on one day, its lines together; order numbers shuffled over days
    order_day = np.sort(rng.integers(0, days, ORDERS))
    numbers = rng.permutation(ORDERS).astype(np.int64)
    lines = rng.integers(1, 4, ORDERS)
    sales = pa.table(
        {
            "ord": np.repeat(numbers, lines),
            "day": np.repeat(order_day, lines).astype(np.int32),
            "wh": rng.integers(0, 3, int(lines.sum())).astype(np.int32),
            "v": rng.integers(0, 100, int(lines.sum())).astype(np.int64),
        }
    )
    returned = rng.random(ORDERS) < 0.4  # returned within 15 days of the sale, in date order
    back = order_day[returned] + rng.integers(0, 15, int(returned.sum()))
    keep = np.argsort(back, kind="stable")
    returns = pa.table(
        {"ord": numbers[returned][keep], "rday": back[keep].astype(np.int32)}
    ).append_column("qty", pa.array(rng.integers(1, 5, int(returned.sum())), pa.int32()))
    returns = returns.set_column(
        0, "ord", pa.array(np.where(np.arange(len(returns)) % 17 == 0, None, returns["ord"]))
    )
    written = {}
    for name, table, column in (("sales", sales, "day"), ("returns", returns, "rday")):
        folder = root / name
        folder.mkdir()
        cuts = np.array_split(np.arange(len(table)), FILES)
        written[name] = [table.take(pa.array(c)) for c in cuts]
        for f, part in enumerate(written[name]):
            pq.write_table(part, folder / f"part-{f}.parquet")
        specs = [si.BitSlicedBitmap("ord"), si.BitSlicedBitmap(column), si.MinMax(column)]
        si.build_index(str(folder), specs, spark=spark)
        si.register(spark, name, str(folder))
    folder = root / "dates"
    folder.mkdir()
    pq.write_table(
        pa.table(
            {
                "sk": np.arange(days, dtype=np.int32),
                "week": (np.arange(days) // WEEK).astype(np.int32),
            }
        ),
        folder / "part-0.parquet",
    )
    si.build_index(str(folder), [si.BitSlicedBitmap("sk"), si.BitSlicedBitmap("week")], spark=spark)
    si.register(spark, "dates", str(folder))
    return written


def _same(spark: Any, query: str) -> si.SqlPlan:
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    return plan


def _kept(plan: si.SqlPlan, written: str) -> int:
    (reference,) = [r for r in plan.references if r.written == written]
    assert reference.result is not None, plan.explain()
    return reference.result.kept


def test_the_outer_rows_keys_prune_the_table_its_in_subquery_reads(spark, orders):
    query = (
        "SELECT count(*), sum(s.v) FROM sales s JOIN dates d ON s.day = d.sk "
        "WHERE d.week = 4 AND s.ord IN (SELECT r.ord FROM returns r WHERE r.qty > 1)"
    )
    plan = _same(spark, query)
    # brute force: the returns files holding an order sold in week 4 (never fewer kept)
    sold = {
        o
        for part in orders["sales"]
        for o, day in zip(part["ord"].to_pylist(), part["day"].to_pylist(), strict=True)
        if day // WEEK == 4
    }
    holding = sum(bool(sold & set(p["ord"].to_pylist())) for p in orders["returns"])
    assert 0 < holding < FILES
    # the list meets the bitmaps row by row: exactly the files holding such an order
    assert _kept(plan, "returns") == holding, plan.explain()
    assert _kept(plan, "sales") < FILES


def test_a_cte_read_by_two_in_subqueries_is_pruned_by_the_outer_keys(spark, orders):
    # q95's shape: orders shipped from two warehouses, read by two IN subqueries, one
    # joining the returns; each of the CTE's references follows the outer orders
    query = (
        "WITH two AS (SELECT a.ord FROM sales a JOIN sales b ON a.ord = b.ord AND a.wh <> b.wh) "
        "SELECT count(DISTINCT s.ord), sum(s.v) FROM sales s JOIN dates d ON s.day = d.sk "
        "WHERE d.week = 6 AND s.ord IN (SELECT ord FROM two) "
        "AND s.ord IN (SELECT r.ord FROM returns r, two WHERE r.ord = two.ord)"
    )
    plan = _same(spark, query)
    kept = [r.result.kept for r in plan.references if r.written == "sales" and r.result]
    assert len(kept) == 3, plan.explain()  # the outer sales, and the CTE's two
    assert max(kept) < FILES, plan.explain()
    assert _kept(plan, "returns") < FILES
    # NOT IN keeps its subquery whole: one NULL order there answers every row
    plan = _same(
        spark, query.replace("AND s.ord IN (SELECT r.ord", "AND s.ord NOT IN (SELECT r.ord")
    )
    (returns,) = [r for r in plan.references if r.written == "returns"]
    assert returns.result is None or returns.result.kept == FILES, plan.explain()


def _days(part: pa.Table) -> tuple[int, int]:
    days = part["day"].to_numpy()
    return int(days.min()), int(days.max())


def test_sales_files_a_date_range_spans_whole_give_their_orders_to_the_returns(spark, orders):
    # days that span sales files 2-4 whole: min-max says every row of them matches, so
    # no bitmap counts their rows, and the files' order numbers are read whole
    low, high = _days(orders["sales"][2])[0], _days(orders["sales"][4])[1]
    query = (
        "SELECT count(*), sum(s.v) FROM sales s WHERE s.day BETWEEN {low} AND {high} "
        "AND s.ord IN (SELECT r.ord FROM returns r WHERE r.rday <= {last})"
    )
    plan = _same(spark, query.format(low=low, high=high, last=10**6))
    sold = {
        o
        for part in orders["sales"]
        for o, day in zip(part["ord"].to_pylist(), part["day"].to_pylist(), strict=True)
        if low <= day <= high
    }
    holding = sum(bool(sold & set(p["ord"].to_pylist())) for p in orders["returns"])
    assert 0 < holding < FILES
    assert _kept(plan, "returns") == holding, plan.explain()
    assert "keys of sales pruned returns, read from its kept rows" in plan.explain(), plan.explain()
    # returns narrowed by a condition of their own already: the whole files are not
    # read for a long list (Spark finds the keys), and the rows are the same
    plan = _same(spark, query.format(low=low, high=high, last=high))
    assert "keys of sales pruned returns, read from its kept rows" not in plan.explain(), (
        plan.explain()
    )
    assert _kept(plan, "returns") <= holding


def test_sales_narrowed_by_a_later_round_give_their_orders_to_the_returns(
    spark, orders, monkeypatch
):
    # q49's shape: the sales are narrowed by the week's days only after the first
    # round, where all of them were too large a side to read keys from; once narrowed,
    # their orders are read from their kept rows (a condition no index answers beside
    # the days' bitmap leaves those rows a superset) and prune the returns
    policy = importlib.import_module("skipindex.reading.policy")
    sales = sum(p.nbytes for p in orders["sales"])
    monkeypatch.setattr(policy, "DEFAULT", replace(policy.DEFAULT, local_key_side_bytes=sales // 2))
    week = 3
    query = (
        "SELECT count(*), sum(r.qty) FROM sales s JOIN dates d ON s.day = d.sk "
        f"JOIN returns r ON s.ord = r.ord WHERE d.week = {week} AND s.v > 10"
    )
    plan = _same(spark, query)
    sold = {
        o
        for part in orders["sales"]
        for o, day in zip(part["ord"].to_pylist(), part["day"].to_pylist(), strict=True)
        if day // WEEK == week
    }
    holding = sum(bool(sold & set(p["ord"].to_pylist())) for p in orders["returns"])
    assert 0 < holding < FILES
    assert _kept(plan, "returns") == holding, plan.explain()
    assert "keys of sales pruned returns, read from its kept rows" in plan.explain(), plan.explain()


def test_more_keys_than_the_bound_in_whole_files_asks_no_spark_job(spark, orders, monkeypatch):
    # days spanning sales files 2-4 whole: their order numbers, read from the files,
    # are more than a bound of 12, and so are Spark's: no Spark key query is run for
    # them, and the returns are read as the query reads them
    dynamic = importlib.import_module("skipindex.sql.dynamic")
    asked: list[str] = []
    real = dynamic.join_keys

    def counted(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(dynamic, "join_keys", counted)
    monkeypatch.setattr(importlib.import_module("skipindex.sql.key_sources"), "join_keys", counted)
    low, high = _days(orders["sales"][2])[0], _days(orders["sales"][4])[1]
    query = (
        "SELECT count(*), sum(r.qty) FROM returns r JOIN sales s ON r.ord = s.ord "
        f"WHERE s.day BETWEEN {low} AND {high}"
    )
    plan = si.sql_plan(spark, query, dynamic_keys=12)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    assert "keys of sales not used for returns: more than 12 keys (its bitmaps)" in plan.explain()
    assert not asked, plan.explain()
