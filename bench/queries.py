"""The benchmark queries: Spark SQL text and the same predicate as a pyarrow
expression (for Delta Lake's file skipping), translated by hand."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

DECIMAL = pa.decimal128(15, 2)


@dataclass(frozen=True)
class Query:
    name: str
    sql: str
    conjunctive: bool  # an AND of conditions on indexed columns: bitmaps must reach the floor

    def arrow(self) -> Any:
        return ARROW[self.name]()


def _f(name: str) -> Any:
    return pc.field(name)


def _d(text: str) -> Any:
    return pa.scalar(Decimal(text), DECIMAL)


def _day(text: str) -> Any:
    return pa.scalar(datetime.date.fromisoformat(text), pa.date32())


QUERIES = [
    Query("Q1 point", "l_partkey = 4242", True),
    Query("Q2 in-list", "l_suppkey IN (17, 4711, 9000)", True),
    Query("Q3 date range", "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03'", True),
    Query("Q4 range+eq", "l_partkey BETWEEN 1000 AND 1020 AND l_quantity = 50", True),
    Query(
        "Q5 five eq",
        "l_shipmode = 'AIR' AND l_shipinstruct = 'TAKE BACK RETURN' AND l_quantity = 1 "
        "AND l_discount = 0.00 AND l_tax = 0.00",
        True,
    ),
    Query(
        "Q6 TPC-H Q6",
        "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
        "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        True,
    ),
    Query("Q7 or", "l_partkey = 4242 OR l_orderkey = 3000000", False),
    Query("Q8 not", "NOT (l_returnflag = 'N') AND l_partkey = 4242", True),
    Query("Q9 key range", "l_orderkey BETWEEN 100000 AND 110000", True),
]

ARROW = {
    "Q1 point": lambda: _f("l_partkey") == 4242,
    "Q2 in-list": lambda: _f("l_suppkey").isin([17, 4711, 9000]),
    "Q3 date range": lambda: (
        (_f("l_shipdate") >= _day("1995-06-01")) & (_f("l_shipdate") <= _day("1995-06-03"))
    ),
    "Q4 range+eq": lambda: (
        (_f("l_partkey") >= 1000) & (_f("l_partkey") <= 1020) & (_f("l_quantity") == _d("50"))
    ),
    "Q5 five eq": lambda: (
        (_f("l_shipmode") == "AIR")
        & (_f("l_shipinstruct") == "TAKE BACK RETURN")
        & (_f("l_quantity") == _d("1"))
        & (_f("l_discount") == _d("0.00"))
        & (_f("l_tax") == _d("0.00"))
    ),
    "Q6 TPC-H Q6": lambda: (
        (_f("l_shipdate") >= _day("1994-01-01"))
        & (_f("l_shipdate") < _day("1995-01-01"))
        & (_f("l_discount") >= _d("0.05"))
        & (_f("l_discount") <= _d("0.07"))
        & (_f("l_quantity") < _d("24"))
    ),
    "Q7 or": lambda: (_f("l_partkey") == 4242) | (_f("l_orderkey") == 3000000),
    "Q8 not": lambda: ~(_f("l_returnflag") == "N") & (_f("l_partkey") == 4242),
    "Q9 key range": lambda: (_f("l_orderkey") >= 100000) & (_f("l_orderkey") <= 110000),
}

BY_NAME = {q.name: q for q in QUERIES}

NUMERIC = [
    "l_partkey",
    "l_suppkey",
    "l_orderkey",
    "l_quantity",
    "l_discount",
    "l_tax",
    "l_shipdate",
]
STRINGS = ["l_shipmode", "l_shipinstruct", "l_returnflag", "l_linestatus"]
BLOOM = ["l_partkey", "l_suppkey", "l_orderkey"]


def specs(config: str) -> list[Any]:
    """Index configurations: ``minmax``, ``bloom`` (min-max + Bloom), ``bitmaps``
    (min-max + Bloom + bit-sliced on numeric/date + equality on strings)."""
    import skipindex as si

    out: list[Any] = [si.MinMax(c) for c in NUMERIC + STRINGS]
    if config in ("bloom", "bitmaps"):
        out += [si.Bloom(c, fpp=0.01) for c in BLOOM]
    if config == "bitmaps":
        out += [si.BitSlicedBitmap(c) for c in NUMERIC]
        out += [si.EqualityBitmap(c) for c in STRINGS]
    return out
