"""The README's first command: TPC-H lineitem, indexed and pruned, end to end.

Generates lineitem with ``tpchgen-cli``, splits it (in generator order, i.e.
clustered by ``l_orderkey`` only) into a few dozen Parquet files, builds every
index kind with a local Spark session, then prunes a handful of queries and
prints, per query, files kept by skipindex against the floor (files that really
hold a matching row, computed by Spark) and checks that ``skipindex.read``
returns exactly the rows a full scan returns. Last, it clusters a copy by a
Hilbert curve and shows what min-max alone then skips.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.errors import SkipIndexError

__all__ = ["DEMO_QUERIES", "generate_lineitem", "run_demo"]

DEMO_QUERIES = [
    "l_orderkey BETWEEN 100000 AND 110000",
    "l_partkey = 4242",
    "l_suppkey IN (17, 471, 900)",
    "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03' AND l_quantity = 50",
    "l_shipmode = 'AIR' AND l_shipinstruct = 'TAKE BACK RETURN' AND l_quantity = 1 "
    "AND l_discount = 0.00 AND l_tax = 0.00",
    "NOT (l_returnflag = 'N') AND l_partkey = 4242",
    "l_partkey = 4242 OR l_orderkey = 300000",
    "l_comment LIKE '%fluffily%'",
]


def demo_specs() -> list[Any]:
    import skipindex as si

    return [
        si.MinMax("l_orderkey"),
        si.MinMax("l_shipdate"),
        si.Bloom("l_partkey", fpp=0.01),
        si.Bloom("l_suppkey", fpp=0.01),
        si.EqualityBitmap("l_shipmode"),
        si.EqualityBitmap("l_shipinstruct"),
        si.EqualityBitmap("l_returnflag"),
        si.BitSlicedBitmap("l_partkey"),
        si.BitSlicedBitmap("l_quantity"),
        si.BitSlicedBitmap("l_discount"),
        si.BitSlicedBitmap("l_tax"),
        si.BitSlicedBitmap("l_shipdate"),
    ]


def generate_lineitem(target: Path, scale: float, files: int) -> Path:
    """Write TPC-H lineitem at ``scale`` as ``files`` Parquet files under ``target``."""
    tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    if not Path(tool).exists() and shutil.which(tool) is None:
        raise SkipIndexError("tpchgen-cli is not installed: pip install tpchgen-cli")
    table_dir = target / "lineitem"
    if table_dir.exists():
        shutil.rmtree(table_dir)
    table_dir.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(  # noqa: S603 - a fixed tool with fixed arguments
            [tool, "parquet", "-s", str(scale), "--tables", "lineitem", "--output-dir", scratch],
            check=True,
            capture_output=True,
        )
        table = pq.read_table(Path(scratch) / "lineitem.parquet")
    # tpchgen writes string_view; plain strings are what most writers produce.
    table = table.cast(
        pa.schema(
            pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
            for f in table.schema
        )
    )
    per_file = -(-table.num_rows // files)
    for number in range(files):
        chunk = table.slice(number * per_file, per_file)
        pq.write_table(chunk, table_dir / f"part-{number:05d}.parquet", row_group_size=1 << 17)
    return table_dir


def run_demo(directory: str, scale: float = 0.1, files: int = 24) -> None:
    import skipindex as si
    from skipindex.spark.session import local_session

    started = time.perf_counter()
    print(f"1. generating TPC-H lineitem (scale {scale}) into {files} files under {directory}/")
    table = generate_lineitem(Path(directory), scale, files)
    print("2. starting a local Spark session")
    spark = local_session(2)
    print("3. building indexes:", ", ".join(f"{s.kind}({s.column})" for s in demo_specs()))
    report = si.build_index(str(table), demo_specs(), spark=spark)
    print(f"   {report}")
    print("4. pruning; 'floor' = files that really hold a matching row (a full Spark scan)\n")
    from pyspark.sql import functions as F  # noqa: N812

    full = spark.read.parquet(str(table))
    header = f"{'query':<72} {'kept':>5} {'floor':>5} {'total':>5} {'ms':>6}  rows ok"
    print(header)
    print("-" * len(header))
    for query in DEMO_QUERIES:
        result = si.prune(str(table), query)
        matching = full.where(query)
        floor = matching.select(F.input_file_name()).distinct().count()
        expected = matching.count()
        got = si.read(spark, str(table), query).count()
        shown = query if len(query) <= 72 else query[:69] + "..."
        print(
            f"{shown:<72} {result.kept:>5} {floor:>5} {result.total:>5} "
            f"{result.seconds * 1000:>6.1f}  {expected} {'yes' if got == expected else 'NO'}"
        )
        if got != expected:
            raise SkipIndexError(f"read() returned {got} rows, a full scan {expected}: {query}")
    print("\nexplain() for the multi-condition query:\n")
    print(si.prune(str(table), DEMO_QUERIES[4]).explain())
    print()
    print(si.describe(str(table)))
    _cluster_step(spark, table, files)
    print(f"\ndone in {time.perf_counter() - started:.0f} s")


LAYOUT_BY = ["l_shipdate", "l_partkey", "l_quantity"]
LAYOUT_QUERIES = [
    "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03'",
    "l_partkey BETWEEN 1000 AND 1020",
    "l_quantity = 50",
]


def _cluster_step(spark: Any, table: Path, files: int) -> None:
    """Lay a copy out by a Hilbert curve: min-max alone then skips on three columns."""
    import skipindex as si

    clustered = table.parent / f"{table.name}_clustered"
    if clustered.exists():
        shutil.rmtree(clustered)
    size = sum(p.stat().st_size for p in table.glob("*.parquet"))
    print(f"\n5. clustering a copy by {', '.join(LAYOUT_BY)} (Hilbert curve) into {clustered}/")
    report = si.cluster(
        table, clustered, by=LAYOUT_BY, target_file_bytes=size // files, spark=spark
    )
    print("   " + str(report).replace("\n", "\n   "))
    header = f"{'query':<60} {'original, all indexes':>22} {'clustered, min-max':>19}"
    print(f"\n{header}\n{'-' * len(header)}")
    for query in LAYOUT_QUERIES:
        before, after = si.prune(str(table), query), si.prune(str(clustered), query)
        expected = spark.read.parquet(str(table)).where(query).count()
        if si.read(spark, str(clustered), query).count() != expected:
            raise SkipIndexError(f"the clustered copy lost rows matching {query}")
        print(
            f"{query:<60} {f'{before.kept} of {before.total}':>22} "
            f"{f'{after.kept} of {after.total}':>19}"
        )
