"""The Star Schema Benchmark's flattened fact table, ``lineorder_flat``, and its 13 queries.

SSB (P. O'Neil, E. O'Neil, X. Chen, S. Revilak, "The Star Schema Benchmark and
Augmented Fact Table Indexing", TPCTC 2009) turns TPC-H into a star: one fact
table ``lineorder`` (TPC-H's lineitem joined with its order) and the dimensions
``customer``, ``supplier``, ``part`` and ``date``. The flattened variant
(``lineorder_flat``, as ClickHouse's and StarRocks' SSB benchmarks define it)
joins every dimension into the fact table once, so each query is a filter and
an aggregation over one wide table, with the date dimension replaced by
functions of ``lo_orderdate`` (``year(lo_orderdate) = 1993`` for
``d_year = 1993``).

Here the table is derived from tpchgen-cli's TPC-H tables (not ssb-dbgen) by
the paper's mapping from TPC-H:

* ``lo_orderkey``, ``lo_linenumber``, ``lo_partkey``, ``lo_suppkey``,
  ``lo_quantity``, ``lo_commitdate``, ``lo_shipmode`` from lineitem;
  ``lo_custkey``, ``lo_orderdate`` (a DATE), ``lo_orderpriority``,
  ``lo_shippriority`` and ``lo_ordtotalprice`` from orders;
  ``lo_supplycost`` from partsupp (``ps_supplycost`` of the line's part and supplier);
* money as whole cents (``int64``: ``lo_extendedprice``, ``lo_ordtotalprice``,
  ``lo_supplycost``, ``lo_revenue``), ``lo_discount`` and ``lo_tax`` as whole
  percents (0-10, 0-8), ``lo_quantity`` as an integer (1-50), as ssb-dbgen
  writes them; ``lo_revenue = lo_extendedprice * (100 - lo_discount) / 100``
  rounded down. (TPC-H's first line becomes SSB's first line: extended price
  2116823, discount 4, revenue 2032150.)
* customer and supplier: name, address, phone (and ``c_mktsegment``) as in
  TPC-H; ``*_nation`` and ``*_region`` are TPC-H's nation and region names;
  ``*_city`` is SSB's: the nation name cut or padded to 9 characters and one
  digit, ``'UNITED KI1'`` (the digit a fixed hash of the key, where ssb-dbgen
  draws it at random);
* part: ``p_mfgr`` ``'MFGR#1'``-``'MFGR#5'`` from TPC-H's manufacturer,
  ``p_category`` ``'MFGR#11'``-``'MFGR#55'`` from TPC-H's brand (manufacturer
  and brand digit), ``p_brand1`` the category and two digits 01-40
  (``'MFGR#2239'``, a fixed hash of the key), ``p_name`` the first two of the
  five colour words of TPC-H's name and ``p_color`` the last, ``p_type``,
  ``p_size``, ``p_container`` as in TPC-H;
* the date dimension's attributes the queries name, as columns too:
  ``d_year``, ``d_yearmonthnum`` (199401), ``d_yearmonth`` (``'Jan1994'``),
  ``d_weeknuminyear`` (ISO week, Spark's ``weekofyear``).

The cardinalities are TPC-H's (150,000 customers and 10,000 suppliers per scale
factor, where SSB scales them down to 30,000 and 2,000); the fact table has
TPC-H's 6,001,215 lines at SF1. Rows stay in the generator's order (by
``lo_orderkey``, ``lo_linenumber``), cut into contiguous files: ``lo_orderdate``
and every dimension attribute are spread over every file, so min-max skips
nothing and only row-level bitmaps can tell files apart.

    table = ssb.lineorder_flat()                    # bench/data/ssb-sf1-100/lineorder_flat
    folder = ssb.indexed("bitsliced_bitmap")        # hard links, indexed with that kind
    for query in ssb.QUERIES:
        spark.sql(query.sql(view_name))             # the whole query
        si.read(spark, folder, query.where)         # only its predicate
"""

from __future__ import annotations

import datetime
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import data
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

TABLE = "lineorder_flat"
FILES = 100
# The tables lineorder_flat is derived from (lineitem comes from data.tpch_source).
TPCH_TABLES = ("orders", "customer", "supplier", "part", "partsupp", "nation", "region")


@dataclass(frozen=True)
class Query:
    """One SSB query over ``lineorder_flat``: its predicate (``where``, Spark SQL, what
    ``skipindex.prune`` and ``read`` take) and the rest of the statement."""

    name: str  # "Q1.1"
    select: str
    where: str
    group_by: str = ""
    order_by: str = ""

    def sql(self, table: str = TABLE) -> str:
        """The whole statement, over the table or view named ``table``."""
        text = f"SELECT {self.select} FROM {table} WHERE {self.where}"
        if self.group_by:
            text += f" GROUP BY {self.group_by}"
        if self.order_by:
            text += f" ORDER BY {self.order_by}"
        return text


_YEAR = "year(lo_orderdate)"
_YEARMONTHNUM = "year(lo_orderdate) * 100 + month(lo_orderdate)"
_PROFIT = "sum(lo_revenue - lo_supplycost) AS profit"
_UK = (
    "(c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') "
    "AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5')"
)

# SSB's 13 queries, their conditions as the paper writes them (Q4.3 keeps
# c_region = 'AMERICA', which ClickHouse's flat variant drops); the date
# dimension's d_year, d_yearmonthnum, d_yearmonth and d_weeknuminyear become
# year(), year() * 100 + month() and weekofyear() of lo_orderdate.
QUERIES = [
    Query(
        "Q1.1",
        "sum(lo_extendedprice * lo_discount) AS revenue",
        f"{_YEAR} = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    ),
    Query(
        "Q1.2",
        "sum(lo_extendedprice * lo_discount) AS revenue",
        f"{_YEARMONTHNUM} = 199401 AND lo_discount BETWEEN 4 AND 6 "
        "AND lo_quantity BETWEEN 26 AND 35",
    ),
    Query(
        "Q1.3",
        "sum(lo_extendedprice * lo_discount) AS revenue",
        f"weekofyear(lo_orderdate) = 6 AND {_YEAR} = 1994 AND lo_discount BETWEEN 5 AND 7 "
        "AND lo_quantity BETWEEN 26 AND 35",
    ),
    Query(
        "Q2.1",
        f"sum(lo_revenue) AS revenue, {_YEAR} AS year, p_brand1",
        "p_category = 'MFGR#12' AND s_region = 'AMERICA'",
        f"{_YEAR}, p_brand1",
        "year, p_brand1",
    ),
    Query(
        "Q2.2",
        f"sum(lo_revenue) AS revenue, {_YEAR} AS year, p_brand1",
        "p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'ASIA'",
        f"{_YEAR}, p_brand1",
        "year, p_brand1",
    ),
    Query(
        "Q2.3",
        f"sum(lo_revenue) AS revenue, {_YEAR} AS year, p_brand1",
        "p_brand1 = 'MFGR#2239' AND s_region = 'EUROPE'",
        f"{_YEAR}, p_brand1",
        "year, p_brand1",
    ),
    Query(
        "Q3.1",
        f"c_nation, s_nation, {_YEAR} AS year, sum(lo_revenue) AS revenue",
        f"c_region = 'ASIA' AND s_region = 'ASIA' AND {_YEAR} >= 1992 AND {_YEAR} <= 1997",
        f"c_nation, s_nation, {_YEAR}",
        "year ASC, revenue DESC",
    ),
    Query(
        "Q3.2",
        f"c_city, s_city, {_YEAR} AS year, sum(lo_revenue) AS revenue",
        f"c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES' "
        f"AND {_YEAR} >= 1992 AND {_YEAR} <= 1997",
        f"c_city, s_city, {_YEAR}",
        "year ASC, revenue DESC",
    ),
    Query(
        "Q3.3",
        f"c_city, s_city, {_YEAR} AS year, sum(lo_revenue) AS revenue",
        f"{_UK} AND {_YEAR} >= 1992 AND {_YEAR} <= 1997",
        f"c_city, s_city, {_YEAR}",
        "year ASC, revenue DESC",
    ),
    Query(
        "Q3.4",
        f"c_city, s_city, {_YEAR} AS year, sum(lo_revenue) AS revenue",
        f"{_UK} AND {_YEARMONTHNUM} = 199712",
        f"c_city, s_city, {_YEAR}",
        "year ASC, revenue DESC",
    ),
    Query(
        "Q4.1",
        f"{_YEAR} AS year, c_nation, {_PROFIT}",
        "c_region = 'AMERICA' AND s_region = 'AMERICA' "
        "AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')",
        f"{_YEAR}, c_nation",
        "year, c_nation",
    ),
    Query(
        "Q4.2",
        f"{_YEAR} AS year, s_nation, p_category, {_PROFIT}",
        f"c_region = 'AMERICA' AND s_region = 'AMERICA' AND ({_YEAR} = 1997 OR {_YEAR} = 1998) "
        "AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')",
        f"{_YEAR}, s_nation, p_category",
        "year, s_nation, p_category",
    ),
    Query(
        "Q4.3",
        f"{_YEAR} AS year, s_city, p_brand1, {_PROFIT}",
        f"c_region = 'AMERICA' AND s_nation = 'UNITED STATES' "
        f"AND ({_YEAR} = 1997 OR {_YEAR} = 1998) AND p_category = 'MFGR#14'",
        f"{_YEAR}, s_city, p_brand1",
        "year, s_city, p_brand1",
    ),
]
BY_NAME = {q.name: q for q in QUERIES}

# The columns the 13 queries' conditions name; what the index configurations cover.
PREDICATE_COLUMNS = (
    "lo_orderdate",
    "lo_discount",
    "lo_quantity",
    "p_category",
    "p_brand1",
    "p_mfgr",
    "c_region",
    "c_nation",
    "c_city",
    "s_region",
    "s_nation",
    "s_city",
)
BITMAP_KINDS = ("equality_bitmap", "range_bitmap", "bitsliced_bitmap")


# ------------------------------------------------------------------ the data


def tpch_tables(scale: float = 1) -> Path:
    """The folder of tpchgen-cli's ``TPCH_TABLES`` at ``scale`` (one Parquet file each)."""
    folder = data.DATA / f"tpch-{data._scale_name(scale)}-tables"
    if data._ready(folder):
        return folder
    started = time.perf_counter()
    data._fresh(folder)
    tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    print(f"  generating TPC-H {', '.join(TPCH_TABLES)} SF{scale:g} with tpchgen-cli", flush=True)
    subprocess.run(
        [tool, "parquet", "-s", f"{scale:g}", "--tables", ",".join(TPCH_TABLES), "-o", str(folder)],
        check=True,
        capture_output=True,
    )
    data._mark_ready(folder, started)
    return folder


def lineorder_flat(scale: float = 1, files: int = FILES) -> Path:
    """The folder of ``lineorder_flat`` at ``scale`` as ``files`` contiguous Parquet
    files in the generator's order (row groups of ``data.ROW_GROUP`` rows), made
    once under ``bench/data/ssb-sf<scale>-<files>/``."""
    folder = data.DATA / f"ssb-{data._scale_name(scale)}-{files}"
    table = folder / TABLE
    if data._ready(folder):
        return table
    lineitem = data.tpch_source(scale)
    dimensions = _Dimensions.load(tpch_tables(scale))
    started = time.perf_counter()
    print(f"  writing {files} files of {TABLE} SF{scale:g} to {table}", flush=True)
    data._fresh(table)
    total = pq.read_metadata(lineitem).num_rows
    batches = (dimensions.flatten(batch) for batch in _lineitem_batches(lineitem))
    data.split_contiguous(batches, total, SCHEMA, table, files)
    if scale == 1:
        _check_first_line(table)
    data._mark_ready(folder, started)
    return table


_LINEITEM_COLUMNS = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_linenumber",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_commitdate",
    "l_shipmode",
]

SCHEMA = pa.schema(
    [
        ("lo_orderkey", pa.int64()),
        ("lo_linenumber", pa.int32()),
        ("lo_custkey", pa.int64()),
        ("lo_partkey", pa.int64()),
        ("lo_suppkey", pa.int64()),
        ("lo_orderdate", pa.date32()),
        ("lo_orderpriority", pa.string()),
        ("lo_shippriority", pa.int32()),
        ("lo_quantity", pa.int32()),
        ("lo_extendedprice", pa.int64()),
        ("lo_ordtotalprice", pa.int64()),
        ("lo_discount", pa.int32()),
        ("lo_revenue", pa.int64()),
        ("lo_supplycost", pa.int64()),
        ("lo_tax", pa.int32()),
        ("lo_commitdate", pa.date32()),
        ("lo_shipmode", pa.string()),
        ("c_name", pa.string()),
        ("c_address", pa.string()),
        ("c_city", pa.string()),
        ("c_nation", pa.string()),
        ("c_region", pa.string()),
        ("c_phone", pa.string()),
        ("c_mktsegment", pa.string()),
        ("s_name", pa.string()),
        ("s_address", pa.string()),
        ("s_city", pa.string()),
        ("s_nation", pa.string()),
        ("s_region", pa.string()),
        ("s_phone", pa.string()),
        ("p_name", pa.string()),
        ("p_mfgr", pa.string()),
        ("p_category", pa.string()),
        ("p_brand1", pa.string()),
        ("p_color", pa.string()),
        ("p_type", pa.string()),
        ("p_size", pa.int32()),
        ("p_container", pa.string()),
        ("d_year", pa.int32()),
        ("d_yearmonthnum", pa.int32()),
        ("d_yearmonth", pa.string()),
        ("d_weeknuminyear", pa.int32()),
    ]
)


def _lineitem_batches(source: Path) -> Iterator[pa.Table]:
    parquet = pq.ParquetFile(source)
    for group in range(parquet.num_row_groups):
        yield parquet.read_row_group(group, columns=_LINEITEM_COLUMNS)


@dataclass(frozen=True)
class _Dimensions:
    """Orders, partsupp and the SSB dimensions, each row found by one ``take``:
    customer, supplier and part by key - 1 (TPC-H keys are 1..N), orders and
    partsupp by a binary search over their sorted keys."""

    order_keys: np.ndarray
    orders: (
        pa.Table
    )  # lo_custkey, lo_orderdate, lo_orderpriority, lo_shippriority, lo_ordtotalprice
    partsupp_keys: np.ndarray  # partkey * _SUPPLIERS_BELOW + suppkey, sorted
    supplycost: np.ndarray  # cents, in partsupp_keys' order
    customer: pa.Table  # c_* columns, row k - 1 for key k
    supplier: pa.Table
    part: pa.Table

    @classmethod
    def load(cls, folder: Path) -> _Dimensions:
        def read(name: str) -> pa.Table:
            return _plain(pq.read_table(folder / f"{name}.parquet"))

        nation, region = read("nation"), read("region")
        region_names = _by_key(region, "r_regionkey", "r_name")
        nation_names = _by_key(nation, "n_nationkey", "n_name")
        nation_regions = region_names[_by_key(nation, "n_nationkey", "n_regionkey").astype(int)]
        orders = read("orders")
        order_keys = orders["o_orderkey"].to_numpy()
        if np.any(np.diff(order_keys) <= 0):
            raise ValueError("tpchgen-cli's orders are not sorted by o_orderkey")
        partsupp = read("partsupp")
        keys = _pair(partsupp["ps_partkey"].to_numpy(), partsupp["ps_suppkey"].to_numpy())
        order = np.argsort(keys)
        return cls(
            order_keys=order_keys,
            orders=pa.table(
                {
                    "lo_custkey": orders["o_custkey"],
                    "lo_orderdate": orders["o_orderdate"],
                    "lo_orderpriority": orders["o_orderpriority"],
                    "lo_shippriority": orders["o_shippriority"],
                    "lo_ordtotalprice": _cents(orders["o_totalprice"]),
                }
            ),
            partsupp_keys=keys[order],
            supplycost=_cents(partsupp["ps_supplycost"]).to_numpy()[order],
            customer=_people(read("customer"), "c", nation_names, nation_regions),
            supplier=_people(read("supplier"), "s", nation_names, nation_regions),
            part=_parts(read("part")),
        )

    def flatten(self, lines: pa.Table) -> pa.Table:
        """``lineorder_flat`` rows of these lineitem rows, in their order."""
        lines = _plain(lines)
        at_order = np.searchsorted(self.order_keys, lines["l_orderkey"].to_numpy())
        partkey, suppkey = lines["l_partkey"].to_numpy(), lines["l_suppkey"].to_numpy()
        at_partsupp = np.searchsorted(self.partsupp_keys, _pair(partkey, suppkey))
        if not np.array_equal(self.partsupp_keys[at_partsupp], _pair(partkey, suppkey)):
            raise ValueError("a lineitem's part and supplier are not in partsupp")
        order = self.orders.take(pa.array(at_order))
        extended = _cents(lines["l_extendedprice"])
        discount = _hundredths(lines["l_discount"])
        revenue = extended.to_numpy() * (100 - discount.to_numpy()) // 100
        columns: dict[str, Any] = {
            "lo_orderkey": lines["l_orderkey"],
            "lo_linenumber": lines["l_linenumber"],
            "lo_custkey": order["lo_custkey"],
            "lo_partkey": lines["l_partkey"],
            "lo_suppkey": lines["l_suppkey"],
            "lo_orderdate": order["lo_orderdate"],
            "lo_orderpriority": order["lo_orderpriority"],
            "lo_shippriority": order["lo_shippriority"],
            "lo_quantity": _hundredths(lines["l_quantity"], scale=1),
            "lo_extendedprice": extended,
            "lo_ordtotalprice": order["lo_ordtotalprice"],
            "lo_discount": discount,
            "lo_revenue": revenue,
            "lo_supplycost": self.supplycost[at_partsupp],
            "lo_tax": _hundredths(lines["l_tax"]),
            "lo_commitdate": lines["l_commitdate"],
            "lo_shipmode": lines["l_shipmode"],
        }
        for dimension, keys in (
            (self.customer, order["lo_custkey"]),
            (self.supplier, lines["l_suppkey"]),
            (self.part, lines["l_partkey"]),
        ):
            rows = dimension.take(pa.array(keys.to_numpy() - 1))
            columns.update((name, rows[name]) for name in dimension.column_names)
        columns.update(_date_attributes(order["lo_orderdate"]))
        return pa.table({name: columns[name] for name in SCHEMA.names}).cast(SCHEMA)


def _plain(table: pa.Table) -> pa.Table:
    """string_view -> string, no field metadata (tpchgen-cli writes both)."""
    return table.cast(data._plain_schema(table.schema))


_SUPPLIERS_BELOW = 1 << 32  # suppkey < 2**32 at any scale tpchgen-cli makes


def _pair(partkey: np.ndarray, suppkey: np.ndarray) -> np.ndarray:
    return partkey.astype(np.int64) * _SUPPLIERS_BELOW + suppkey.astype(np.int64)


def _cents(money: pa.ChunkedArray) -> pa.ChunkedArray:
    """decimal(15, 2) -> whole cents as int64."""
    return _hundredths(money, scale=100, to=pa.int64())


def _hundredths(
    value: pa.ChunkedArray, scale: int = 100, to: pa.DataType | None = None
) -> pa.ChunkedArray:
    """A decimal times ``scale`` as an integer, int32 unless ``to`` (exact: TPC-H
    has two decimals, so the cast refuses nothing it should keep)."""
    scaled = pc.multiply(value, pa.scalar(Decimal(scale), pa.decimal128(4, 0)))
    return pc.cast(scaled, to or pa.int32())


def _by_key(table: pa.Table, key: str, column: str) -> np.ndarray:
    """``column`` by key, for keys 0..n-1 (TPC-H's nations and regions)."""
    keys = table[key].to_numpy()
    if sorted(keys.tolist()) != list(range(len(keys))):
        raise ValueError(f"{key} is not 0..{len(keys) - 1}")
    values = np.empty(len(keys), dtype=object)
    values[keys] = table[column].to_pylist()
    return values


def _digit(keys: np.ndarray, salt: int, count: int = 10) -> np.ndarray:
    """A fixed, evenly spread number in 0..count-1 per key (Fibonacci hashing)."""
    mixed = (keys.astype(np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)
    return ((mixed >> np.uint64(32)) % np.uint64(count)).astype(np.int64)


def _city(nations: np.ndarray, keys: np.ndarray, salt: int) -> np.ndarray:
    """SSB's city: the nation name cut or padded to 9 characters, then a digit."""
    digits = _digit(keys, salt)
    return np.array([f"{n[:9]:<9}{d}" for n, d in zip(nations, digits, strict=True)], dtype=object)


def _people(
    table: pa.Table, prefix: str, nation_names: np.ndarray, nation_regions: np.ndarray
) -> pa.Table:
    """The customer (``prefix`` c) or supplier (s) dimension, row k - 1 for key k."""
    key = f"{prefix}_{'custkey' if prefix == 'c' else 'suppkey'}"
    keys = table[key].to_numpy()
    if not np.array_equal(keys, np.arange(1, len(keys) + 1)):
        raise ValueError(f"{key} is not 1..{len(keys)} in order")
    nation_keys = table[f"{prefix}_nationkey"].to_numpy()
    nations = nation_names[nation_keys]
    columns = {
        f"{prefix}_name": table[f"{prefix}_name"],
        f"{prefix}_address": table[f"{prefix}_address"],
        f"{prefix}_city": pa.array(_city(nations, keys, salt=ord(prefix)), pa.string()),
        f"{prefix}_nation": pa.array(nations, pa.string()),
        f"{prefix}_region": pa.array(nation_regions[nation_keys], pa.string()),
        f"{prefix}_phone": table[f"{prefix}_phone"],
    }
    if prefix == "c":
        columns["c_mktsegment"] = table["c_mktsegment"]
    return pa.table(columns)


def _parts(table: pa.Table) -> pa.Table:
    """The part dimension, row k - 1 for key k."""
    keys = table["p_partkey"].to_numpy()
    if not np.array_equal(keys, np.arange(1, len(keys) + 1)):
        raise ValueError(f"p_partkey is not 1..{len(keys)} in order")
    manufacturer = pc.replace_substring(table["p_mfgr"], "Manufacturer#", "MFGR#")
    category = pc.replace_substring(table["p_brand"], "Brand#", "MFGR#")  # Brand#MN -> MFGR#MN
    brand = pc.binary_join_element_wise(
        category, pa.array([f"{n:02d}" for n in _digit(keys, salt=7, count=40) + 1]), ""
    )
    words = pc.split_pattern(table["p_name"], " ")
    return pa.table(
        {
            "p_name": pc.binary_join(pc.list_slice(words, 0, 2), " "),
            "p_mfgr": manufacturer,
            "p_category": category,
            "p_brand1": brand,
            "p_color": _last(words),
            "p_type": table["p_type"],
            "p_size": table["p_size"],
            "p_container": table["p_container"],
        }
    )


def _last(lists: pa.ChunkedArray) -> pa.Array:
    values = lists.combine_chunks()
    return values.flatten().take(pa.array(values.offsets.to_numpy()[1:] - 1))


def _date_attributes(dates: pa.ChunkedArray) -> dict[str, pa.ChunkedArray]:
    year, month = pc.year(dates), pc.month(dates)
    return {
        "d_year": year,
        "d_yearmonthnum": pc.add(pc.multiply(year, 100), month),
        "d_yearmonth": pc.strftime(dates, "%b%Y", locale="C"),
        "d_weeknuminyear": pc.iso_week(dates),
    }


# ------------------------------------------------------------------ indexes


def specs(kind: str, columns: Sequence[str] = PREDICATE_COLUMNS) -> list[Any]:
    """Min-max on ``columns`` plus, unless ``kind`` is ``"minmax"``, one bitmap
    index of ``kind`` (one of ``BITMAP_KINDS``) on each."""
    import skipindex as si

    bitmap = {
        "equality_bitmap": si.EqualityBitmap,
        "range_bitmap": si.RangeBitmap,
        "bitsliced_bitmap": si.BitSlicedBitmap,
    }
    if kind != "minmax" and kind not in bitmap:
        raise ValueError(f"kind must be minmax or one of {', '.join(BITMAP_KINDS)}, not {kind!r}")
    out: list[Any] = [si.MinMax(c) for c in columns]
    if kind in bitmap:
        out += [bitmap[kind](c) for c in columns]
    return out


def indexed(kind: str, table: Path | None = None, spark: Any = None) -> Path:
    """``<ssb folder>/idx-<kind>``: hard links to ``table``'s files (default: SF1,
    ``FILES`` files), indexed with :func:`specs` of ``kind`` by worker processes
    (skipindex's own task code, no JVM; built again only when the definitions
    differ). With ``spark``, a refresh through that session then records Spark's
    schema in the manifest, which ``skipindex.read`` uses."""
    from runners import PoolRunner, ensure_index

    import skipindex as si

    folder = data.index_copy(table or lineorder_flat(), f"idx-{kind}")
    if ensure_index(folder, specs(kind), PoolRunner()):
        print(f"  built the {kind} index on {folder}", flush=True)
    if spark is not None:
        si.build_index(str(folder), spark=spark)  # indexes nothing: no file changed
    return folder


def index_every_kind(table: Path | None = None, spark: Any = None) -> dict[str, Path]:
    """:func:`indexed` for each of ``BITMAP_KINDS``: kind -> its folder."""
    return {kind: indexed(kind, table, spark) for kind in BITMAP_KINDS}


def _check_first_line(table: Path) -> None:
    """The first line is SSB's own (ssb-dbgen, SF1) wherever the mapping fixes it
    (not the keys SSB scales down, nor the supply cost ssb-dbgen draws itself)."""
    first = pq.ParquetFile(data.data_files(table)[0]).read_row_group(0).slice(0, 1).to_pylist()[0]
    expected = {
        "lo_orderkey": 1,
        "lo_linenumber": 1,
        "lo_partkey": 155190,
        "lo_orderdate": datetime.date(1996, 1, 2),
        "lo_orderpriority": "5-LOW",
        "lo_shippriority": 0,
        "lo_quantity": 17,
        "lo_extendedprice": 2116823,
        "lo_ordtotalprice": 17366547,
        "lo_discount": 4,
        "lo_revenue": 2032150,
        "lo_tax": 2,
        "lo_commitdate": datetime.date(1996, 2, 12),
        "lo_shipmode": "TRUCK",
    }
    wrong = {k: (first[k], v) for k, v in expected.items() if first[k] != v}
    if wrong:
        raise AssertionError(f"{table}: first line differs from SSB's: {wrong}")


# ------------------------------------------------------------------ the star form

# SSB's star: lineorder (the flat table's lo_ columns) and its four dimensions.
# The date dimension is named ``dates`` (``date`` is a type name in Spark SQL);
# its key ``d_datekey`` is a DATE, as ``lo_orderdate`` is here.
LINEORDER_COLUMNS = SCHEMA.names[:17]
DIMENSION_FILES = {"customer": 8, "supplier": 2, "part": 8, "dates": 1}


def star(scale: float = 10, files: int = 1000) -> dict[str, Path]:
    """SSB's star form, natural order: ``lineorder`` as ``files`` files holding
    exactly the rows of :func:`lineorder_flat`'s files of the same names (its
    ``lo_`` columns), and ``customer``, ``supplier``, ``part``, ``dates``; made
    once under ``bench/data/ssb-sf<scale>-<files>/star/``. Name -> folder."""
    flat = lineorder_flat(scale, files)
    folder = flat.parent / "star"
    tables = {name: folder / name for name in ("lineorder", *DIMENSION_FILES)}
    if data._ready(folder):
        return tables
    started = time.perf_counter()
    print(f"  writing SSB's star form SF{scale:g} to {folder}", flush=True)
    data._fresh(folder)
    tables["lineorder"].mkdir()
    for source in data.data_files(flat):
        table = pq.read_table(source, columns=LINEORDER_COLUMNS)
        pq.write_table(table, tables["lineorder"] / source.name, row_group_size=data.ROW_GROUP)
    for name, table in _star_dimensions(tpch_tables(scale)).items():
        tables[name].mkdir()
        count = DIMENSION_FILES[name]
        step = -(-len(table) // count)
        for number in range(count):
            piece = table.slice(number * step, step)
            pq.write_table(piece, tables[name] / f"part-{number:05d}.parquet")
    data._mark_ready(folder, started)
    return tables


def _star_dimensions(folder: Path) -> dict[str, pa.Table]:
    dims = _Dimensions.load(folder)
    out = {}
    for name, table, key in (
        ("customer", dims.customer, "c_custkey"),
        ("supplier", dims.supplier, "s_suppkey"),
        ("part", dims.part, "p_partkey"),
    ):
        keys = pa.array(np.arange(1, len(table) + 1, dtype=np.int64))
        out[name] = table.add_column(0, key, keys)
    days = pa.array(
        np.arange(np.datetime64("1992-01-01"), np.datetime64("1999-01-01")), pa.date32()
    )
    out["dates"] = pa.table({"d_datekey": days, **_date_attributes(pa.chunked_array([days]))})
    return out


def flat_of(lineorder: Path, folder: Path, scale: float = 10) -> Path:
    """``folder``: the flat form of the star ``lineorder`` at ``folder``, file by file
    (same rows, same order, same names): every dimension joined in by key."""
    if data._ready(folder):
        return folder / TABLE
    started = time.perf_counter()
    data._fresh(folder)
    dims = _star_dimensions(tpch_tables(scale))
    table_folder = folder / TABLE
    table_folder.mkdir()
    for source in sorted(lineorder.glob("*.parquet")):
        lines = pq.read_table(source)
        columns = {name: lines[name] for name in LINEORDER_COLUMNS}
        for name, key in (
            ("customer", "lo_custkey"),
            ("supplier", "lo_suppkey"),
            ("part", "lo_partkey"),
        ):
            rows = dims[name].take(pa.array(lines[key].to_numpy() - 1))
            columns.update((c, rows[c]) for c in rows.column_names[1:])
        columns.update(_date_attributes(lines["lo_orderdate"]))
        flat = pa.table({name: columns[name] for name in SCHEMA.names}).cast(SCHEMA)
        pq.write_table(flat, table_folder / source.name, row_group_size=data.ROW_GROUP)
    data._mark_ready(folder, started)
    return table_folder


def star_clustered(spark: Any, scale: float = 10, files: int = 1000) -> dict[str, Path]:
    """The star form with ``lineorder`` clustered by ``lo_orderdate`` (``si.cluster``,
    linear, about ``files`` files), the dimensions shared with :func:`star`, and its
    flat form beside it (``flat_of``): name -> folder, plus ``"flat"``."""
    import skipindex as si

    natural = star(scale, files)
    folder = natural["lineorder"].parent.parent / "star-clustered"
    lineorder = folder / "lineorder"
    if not data._ready(folder):
        started = time.perf_counter()
        data._fresh(folder)
        target = sum(p.stat().st_size for p in data.data_files(natural["lineorder"])) // files
        print(f"  clustering {natural['lineorder']} by lo_orderdate", flush=True)
        si.cluster(
            str(natural["lineorder"]),
            str(lineorder),
            by=["lo_orderdate"],
            curve="linear",
            target_file_bytes=target,
            spark=spark,
        )
        data._mark_ready(folder, started)
    flat = flat_of(lineorder, folder.parent / "flat-clustered", scale)
    return {**natural, "lineorder": lineorder, "flat": flat}


if __name__ == "__main__":
    flat = lineorder_flat()
    print(flat, sum(pq.read_metadata(f).num_rows for f in data.data_files(flat)), "rows")
