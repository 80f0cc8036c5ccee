"""Section 6: layout. Files min-max keeps after ``si.cluster`` against delta-rs.

TPC-H SF1 lineitem shuffled into 100 files (every file spans every value) is
laid out five ways into about 100 files, by (``l_shipdate``, ``l_partkey``,
``l_quantity``): left as it is, ``si.cluster`` linear / Z-order / Hilbert, and
delta-rs ``optimize.z_order`` on a Delta copy. Each result gets min-max indexes on
the three columns, and ``si.prune`` counts the files kept per query. Cluster
time is compared with a plain Spark rewrite of the same rows into 100 files
(``repartition(100).write.parquet``), in the same session.

A second table puts the curve on a string with a 45-character shared prefix:
``url`` (prefix + zero-padded ``l_partkey``) and ``l_shipdate``, into 100 files.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import data
import pyarrow.parquet as pq
from measure import Config, Section, Table, Target, ratio, secs

import skipindex as si

BY = ["l_shipdate", "l_partkey", "l_quantity"]
QUERIES = {
    "3-day l_shipdate": "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03'",
    "l_partkey 1000-1020": "l_partkey BETWEEN 1000 AND 1020",
    "l_quantity = 50": "l_quantity = 50",
}
PREFIX = "http://www.example.com/products/catalogue/id/"
PREFIX_QUERIES = {
    "url range": f"url BETWEEN '{PREFIX}0001000' AND '{PREFIX}0001020'",
    "3-day l_shipdate": QUERIES["3-day l_shipdate"],
}
FILES = 100


def _fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def _kept(folder: Path, queries: dict[str, str]) -> list[int]:
    return [si.prune(str(folder), q).kept for q in queries.values()]


def _total(folder: Path) -> int:
    return si.describe(str(folder)).files_listed


def _cluster(spark: Any, table: Path, out: Path, by: list[str], curve: str) -> float:
    target = sum(p.stat().st_size for p in data.data_files(table)) // FILES
    started = time.perf_counter()
    si.cluster(
        str(table),
        str(_fresh(out)),
        by=by,
        curve=curve,
        target_file_bytes=target,
        spark=spark,
        indexes=[si.MinMax(c) for c in by],
    )
    return time.perf_counter() - started


def _spark_rewrite(spark: Any, table: Path, out: Path) -> float:
    started = time.perf_counter()
    spark.read.parquet(str(table)).repartition(FILES).write.parquet(str(_fresh(out)))
    return time.perf_counter() - started


def _delta_rs(source_delta: Path, out: Path, by: list[str], table: Path) -> float:
    from deltalake import DeltaTable

    shutil.copytree(source_delta, _fresh(out))
    target = sum(p.stat().st_size for p in data.data_files(table)) // FILES
    started = time.perf_counter()
    DeltaTable(str(out)).optimize.z_order(by, target_size=target)
    seconds = time.perf_counter() - started
    si.build_index(str(out), [si.MinMax(c) for c in by])
    return seconds


def _prefix_table(spark: Any, table: Path, out: Path) -> Path:
    ready = out.parent / f"{out.name}.READY"  # not inside: Spark would read it as data
    if ready.exists():
        return out
    frame = spark.read.parquet(str(table)).selectExpr(
        f"concat('{PREFIX}', lpad(cast(l_partkey AS STRING), 7, '0')) AS url", "l_shipdate"
    )
    frame.repartition(FILES).write.parquet(str(_fresh(out)))
    ready.write_text("ok\n")
    return out


def _row(name: str, kept: list[int], total: int, seconds: float | None, base: float) -> list[str]:
    shares = [k / total for k in kept]
    cells = [f"{k} / {total}" for k in kept]
    timing = "" if seconds is None else f"{secs(seconds)} s ({ratio(seconds / base)} of Spark)"
    return [name, *cells, f"{100 * sum(shares) / len(shares):.1f}%", timing]


def run(config: Config) -> Section:
    from skipindex.spark.session import local_session

    table = data.lineitem(1, "shuffled", FILES)
    work = table.parent / "layout"
    spark = local_session(2)
    shares: dict[str, list[float]] = {}
    rows = []
    # Warm the JVM first, or the baseline (the first job) would pay for it alone.
    spark.read.parquet(str(table)).write.format("noop").mode("overwrite").save()
    base = _spark_rewrite(spark, table, work / "spark-rewrite")
    none = data.index_copy(table, "layout-none")
    si.build_index(str(none), [si.MinMax(c) for c in BY], spark=spark)
    layouts: list[tuple[str, Path, float | None]] = [("none (shuffled)", none, None)]
    for curve in ("linear", "zorder", "hilbert"):
        out = work / curve
        layouts.append((f"si.cluster {curve}", out, _cluster(spark, table, out, BY, curve)))
    delta = work / "delta-rs"
    layouts.append(("delta-rs z_order", delta, _delta_rs(data.delta_copy(table), delta, BY, table)))
    for name, folder, seconds in layouts:
        kept, total = _kept(folder, QUERIES), _total(folder)
        shares[name] = [k / total for k in kept]
        rows.append(_row(name, kept, total, seconds, base))

    prefix = _prefix_table(spark, table, work / "prefix-source")
    by2 = ["url", "l_shipdate"]
    prefix_rows, prefix_shares = [], {}
    for curve in ("zorder", "hilbert"):
        out = work / f"prefix-{curve}"
        seconds = _cluster(spark, prefix, out, by2, curve)
        kept, total = _kept(out, PREFIX_QUERIES), _total(out)
        prefix_shares[curve] = [k / total for k in kept]
        prefix_rows.append(_row(f"si.cluster {curve}", kept, total, seconds, base))
    delta2 = work / "prefix-delta-rs"
    from deltalake import write_deltalake

    prefix_delta = work / "prefix-delta-source"
    if not (prefix_delta / "_delta_log").exists():
        for part in data.data_files(prefix):
            write_deltalake(str(prefix_delta), pq.read_table(part), mode="append")
    seconds = _delta_rs(prefix_delta, delta2, by2, prefix)
    kept, total = _kept(delta2, PREFIX_QUERIES), _total(delta2)
    prefix_shares["delta-rs"] = [k / total for k in kept]
    prefix_rows.append(_row("delta-rs z_order", kept, total, seconds, base))
    spark.stop()

    def average(name: str) -> float:
        return sum(shares[name]) / len(shares[name])

    hilbert, zorder = average("si.cluster hilbert"), average("si.cluster zorder")
    delta_rs = average("delta-rs z_order")
    targets = [
        Target(
            "layout",
            "Hilbert: min-max keeps <= 25 % of the files for each query",
            ", ".join(f"{100 * s:.0f}%" for s in shares["si.cluster hilbert"]),
            max(shares["si.cluster hilbert"]) <= 0.25,
        ),
        Target(
            "layout",
            "Hilbert and Z-order: average share below delta-rs z_order's",
            f"Hilbert {100 * hilbert:.1f}%, Z-order {100 * zorder:.1f}%, "
            f"delta-rs {100 * delta_rs:.1f}%",
            max(hilbert, zorder) < delta_rs,
        ),
        Target(
            "layout",
            "Hilbert no worse than Z-order on average",
            f"{100 * hilbert:.1f}% vs {100 * zorder:.1f}%",
            hilbert <= zorder,
        ),
        Target(
            "layout",
            "shared 45-character prefix: both columns skip (<= 25 % kept) with Hilbert",
            ", ".join(f"{100 * s:.0f}%" for s in prefix_shares["hilbert"]),
            max(prefix_shares["hilbert"]) <= 0.25,
        ),
    ]
    headers = ["layout", *QUERIES, "average kept", "layout time (vs Spark rewrite)"]
    return Section(
        key="layout",
        title="6. Layout: files min-max keeps after clustering (SF1, 100 files)",
        intro=__doc__ or "",
        tables=[
            Table(
                f"lineitem SF1 shuffled, by {', '.join(BY)}; plain Spark rewrite "
                f"into {FILES} files took {secs(base)} s",
                headers,
                rows,
            ),
            Table(
                "url (45-character shared prefix) and l_shipdate",
                ["layout", *PREFIX_QUERIES, "average kept", "layout time (vs Spark rewrite)"],
                prefix_rows,
            ),
        ],
        targets=targets,
        plot={"queries": list(QUERIES), "shares": shares},
    )
