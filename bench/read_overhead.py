"""``skipindex.read`` against plain Spark where prune keeps every file: what read() adds.

    python bench/read_overhead.py                 # SF1 lineitem (100 files), SSB lineorder_flat SF1
    python bench/read_overhead.py --sf10          # also SF10 lineitem, natural order, 1,000 files
    python bench/read_overhead.py --tables ssb --kinds bitsliced_bitmap --runs 9

Where every file is kept, read() can only add time: it prunes, maybe plans reads
by row groups, then hands Spark the same scan plain Spark makes. Per predicate
that prune keeps every file for (the others are listed as left out), in one
Spark session (local[2]), rotating which side goes first, after one warm-up round:

* plain:     ``spark.read.parquet(dir).where(p).agg(sum(c)).collect()``
* skipindex: ``skipindex.read(spark, dir, p).agg(sum(c)).collect()``

with the sums asserted equal. *plain / read* is the ratio of the medians: the
target is at least 0.95 (read() at most 5 % slower); *paired* is the median of
each round's own ratio (the two sides run back to back, so a burst of load
elsewhere on the machine moves both). Timed apart, as medians of
warm calls rotated the same way: prune alone, and the driver time to build each
side's DataFrame (read(): prune, planning and Spark's DataFrame; plain: Spark's
DataFrame, which lists the folder and infers the schema with a Spark job).
*first read()* is the driver time of the predicate's first read() in the
session, before the warm-up: segments, decoded bitmaps and footers not yet
cached for its columns (earlier predicates may have cached some).

Tables: ``lineitem-sf1`` (SF1, shuffled, 100 files) and ``lineitem-sf10`` (SF10,
natural order, 1,000 files), both with the bench's "bitmaps" configuration and
the queries of ``queries.py``, summing ``l_extendedprice``; ``ssb`` (the Star
Schema Benchmark's ``lineorder_flat`` at SF1, 100 files, see ``ssb.py``) once per
bitmap kind, with the 13 SSB queries' predicates, summing ``lo_revenue``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import data
import ssb
from measure import Table, machine, median, ms, ratio, rotating
from queries import QUERIES, specs
from report import markdown_table
from runners import PoolRunner, ensure_index

import skipindex as si

TARGET = 0.95  # plain / read: read() at most 5 % slower
RUNS = 5


@dataclass(frozen=True)
class Workload:
    """A table folder, the predicates to try on it and the column to sum."""

    name: str
    folder: Path
    predicates: list[tuple[str, str]]  # (name, Spark SQL predicate)
    column: str


def lineitem(spark: Any, scale: float, order: str, files: int) -> Workload:
    """The lineitem layout, indexed with the "bitmaps" configuration (by worker
    processes; a refresh through ``spark`` records Spark's schema for read())."""
    folder = data.index_copy(data.lineitem(scale, order, files), "idx-bitmaps")
    if ensure_index(folder, specs("bitmaps"), PoolRunner()):
        print(f"  built the bitmaps index on {folder}", flush=True)
    si.build_index(str(folder), spark=spark)
    predicates = [(q.name, q.sql) for q in QUERIES]
    name = f"lineitem SF{scale:g}, {order}, {files} files, bitmaps configuration"
    return Workload(name, folder, predicates, "l_extendedprice")


def ssb_flat(spark: Any, kind: str) -> Workload:
    folder = ssb.indexed(kind, spark=spark)
    predicates = [(q.name, q.where) for q in ssb.QUERIES]
    name = f"SSB lineorder_flat SF1, {ssb.FILES} files, min-max + {kind} on the predicate columns"
    return Workload(name, folder, predicates, "lo_revenue")


def measure(spark: Any, workload: Workload, runs: int) -> Table:
    from pyspark.sql import functions as F  # noqa: N812

    rows: list[list[str]] = []
    left_out: list[str] = []
    low: list[str] = []
    root = str(workload.folder)
    for name, where in workload.predicates:
        pruned = si.prune(root, where)
        if pruned.kept < pruned.total:
            left_out.append(f"{name} ({pruned.kept} of {pruned.total})")
            continue

        def plain_frame(w: str = where) -> Any:
            return spark.read.parquet(root).where(w)

        def read_frame(w: str = where) -> Any:
            return si.read(spark, root, w)

        def total(frame: Callable[[], Any]) -> Callable[[], Any]:
            return lambda: frame().agg(F.sum(workload.column)).collect()[0][0]

        first, _ = _timed(read_frame)
        (plain_t, read_t), (plain_sum, read_sum) = rotating(
            [total(plain_frame), total(read_frame)], runs
        )
        if plain_sum != read_sum:
            raise AssertionError(f"{name}: plain Spark sums {plain_sum}, skipindex.read {read_sum}")
        (plain_df, read_df, prune_t), _ = rotating(
            [plain_frame, read_frame, lambda w=where: si.prune(root, w)], runs
        )
        speed = median(plain_t) / median(read_t)
        paired = median([p / r for p, r in zip(plain_t, read_t, strict=True)])
        if speed < TARGET:
            low.append(f"{name} {ratio(speed)}")
        print(
            f"  {name}: plain {ms(median(plain_t))} ms, read {ms(median(read_t))} ms "
            f"({ratio(speed)}), prune {ms(median(prune_t))} ms",
            flush=True,
        )
        rows.append(
            [
                f"{name}: `{where}`",
                f"{pruned.kept} / {pruned.total}",
                "yes" if pruned.rows else "no",
                ms(median(plain_t)),
                ms(median(read_t)),
                ratio(speed),
                ratio(paired),
                ms(median(prune_t)),
                ms(median(read_df)),
                ms(median(plain_df)),
                ms(first),
            ]
        )
    notes = [f"left out (prune skips files): {', '.join(left_out)}"] if left_out else []
    notes.append(
        f"below {TARGET:.2f}x: {', '.join(low)}" if low else f"every ratio at least {TARGET:.2f}x"
    )
    return Table(
        workload.name,
        [
            "predicate",
            "kept / files",
            "rows narrowed",
            "plain ms",
            "read ms",
            "plain / read",
            "paired",
            "prune ms",
            "read() DataFrame ms",
            "plain DataFrame ms",
            "first read() ms",
        ],
        rows,
        notes,
    )


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tables",
        default="lineitem-sf1,ssb",
        help="comma-separated: lineitem-sf1, ssb, lineitem-sf10 (default: the first two)",
    )
    parser.add_argument("--sf10", action="store_true", help="add lineitem-sf10")
    parser.add_argument(
        "--kinds",
        default=",".join(ssb.BITMAP_KINDS),
        help=f"bitmap kinds to index the SSB table with (default: {','.join(ssb.BITMAP_KINDS)})",
    )
    parser.add_argument("--only", default="", help="comma-separated predicate names to run")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs per side (default {RUNS})")
    args = parser.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    if args.sf10 and "lineitem-sf10" not in tables:
        tables.append("lineitem-sf10")
    unknown = set(tables) - {"lineitem-sf1", "ssb", "lineitem-sf10"}
    if unknown:
        parser.error(f"unknown table(s): {', '.join(sorted(unknown))}")

    from skipindex.spark.session import local_session

    spark = local_session(2)
    workloads: list[Callable[[], Workload]] = []
    for table in tables:
        if table == "lineitem-sf1":
            workloads.append(lambda: lineitem(spark, 1, "shuffled", 100))
        elif table == "lineitem-sf10":
            workloads.append(lambda: lineitem(spark, 10, "natural", 1000))
        else:
            kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
            workloads += [lambda k=kind: ssb_flat(spark, k) for kind in kinds]
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    env = machine()
    out = [
        f"# skipindex.read where every file is kept, against plain Spark ({env['date']})",
        "",
        f"`python bench/read_overhead.py {' '.join(sys.argv[1:] if argv is None else argv)}`; "
        f"{env['machine']}; pyspark {env['pyspark']}; load average at start "
        f"{env['load average at start (1/5/15 min)']}. Medians of {args.runs} rotating runs "
        "per side after one warm-up round, one Spark session (local[2]).",
        "",
    ]
    for make in workloads:
        workload = make()
        if only:
            chosen = [p for p in workload.predicates if p[0] in only]
            workload = Workload(workload.name, workload.folder, chosen, workload.column)
        print(f"== {workload.name}", flush=True)
        out += markdown_table(measure(spark, workload, args.runs))
    spark.stop()
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
