"""Section 9: the Star Schema Benchmark's flattened table, its 13 queries as SSB
writes them (``year(lo_orderdate) = 1993``, ``year * 100 + month = 199401``,
``weekofyear(...) = 6``): the workload of the Bilibili paper.

SF1 ``lineorder_flat`` (6M rows, 100 files in the generator's order; bench/ssb.py)
and the same rows after ``si.cluster`` (Hilbert on ``lo_orderdate, s_region,
c_region, p_category``). Per query: the floor (files holding a matching row, by
DuckDB), the files min-max keeps and the files bit-sliced bitmaps on every
predicate column keep, for the query as written and for its range form
(``lo_orderdate BETWEEN ...``); and the whole query's time, plain ``spark.sql``
against the same query over ``si.read`` of its predicate, medians of rotating runs
in one local[2] session.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import data
import ssb
from measure import Config, Section, Table, Target, floors_of, median, ms, rotating
from runners import PoolRunner, ensure_index

import skipindex as si

CLUSTER_BY = ["lo_orderdate", "s_region", "c_region", "p_category"]
CLUSTER_FILES = 128
# Each query's date condition as a range on lo_orderdate (the rest as SSB writes it).
_BETWEEN = "lo_orderdate BETWEEN DATE '{}' AND DATE '{}'"
RANGE_FORMS = {
    "Q1.1": ("year(lo_orderdate) = 1993", _BETWEEN.format("1993-01-01", "1993-12-31")),
    "Q1.2": (
        "year(lo_orderdate) * 100 + month(lo_orderdate) = 199401",
        _BETWEEN.format("1994-01-01", "1994-01-31"),
    ),
    "Q1.3": (
        "weekofyear(lo_orderdate) = 6 AND year(lo_orderdate) = 1994",
        _BETWEEN.format("1994-02-07", "1994-02-13"),
    ),
    "Q3.1": (
        "year(lo_orderdate) >= 1992 AND year(lo_orderdate) <= 1997",
        _BETWEEN.format("1992-01-01", "1997-12-31"),
    ),
    "Q3.4": (
        "year(lo_orderdate) * 100 + month(lo_orderdate) = 199712",
        _BETWEEN.format("1997-12-01", "1997-12-31"),
    ),
    "Q4.2": (
        "(year(lo_orderdate) = 1997 OR year(lo_orderdate) = 1998)",
        _BETWEEN.format("1997-01-01", "1998-12-31"),
    ),
}
RANGE_FORMS["Q3.2"] = RANGE_FORMS["Q3.3"] = RANGE_FORMS["Q3.1"]
RANGE_FORMS["Q4.3"] = RANGE_FORMS["Q4.2"]
PAPER = (
    "the paper (Bilibili, on its SSB workload): bitmap indexes 1-10x faster than without, "
    "0-400x fewer files read"
)


def range_form(query: ssb.Query) -> str:
    written, ranged = RANGE_FORMS.get(query.name, ("", ""))
    return query.where.replace(written, ranged) if written else query.where


def run(config: Config) -> Section:
    from skipindex.spark.session import local_session

    spark = local_session(2)
    spark.sparkContext.setLogLevel("ERROR")
    natural = ssb.lineorder_flat()
    minmax = ssb.indexed("minmax", natural)
    bitmaps = ssb.indexed("bitsliced_bitmap", natural)
    clustered = _clustered(spark, natural)
    section = Section(
        key="ssb",
        title="9. SSB flat: the Star Schema Benchmark's queries as written",
        intro=__doc__.split("\n\n", 1)[1].replace("\n", " ").strip(),
    )
    _files_kept(section, {"natural": (natural, minmax, bitmaps), "clustered": clustered})
    by_date = _clustered(spark, natural, "date-sorted", ["lo_orderdate"], "linear")
    _expression_index(section, spark, by_date[0])
    _times(section, spark, natural, bitmaps, config.runs)
    spark.stop()
    return section


def _clustered(
    spark: Any, natural: Path, name: str = "clustered", by: list[str] | None = None,
    curve: str = "hilbert",
) -> tuple[Path, Path, Path]:  # fmt: skip
    """A clustered copy (min-max on the by columns from cluster), and two indexed
    links of it: min-max and bit-sliced bitmaps on every predicate column."""
    by = by or CLUSTER_BY
    folder = natural.parent / name
    if not (folder / "READY").exists():
        target = sum(p.stat().st_size for p in data.data_files(natural)) // CLUSTER_FILES
        print(f"  clustering {natural} ({curve} on {', '.join(by)})", flush=True)
        started = time.perf_counter()
        si.cluster(
            str(natural),
            str(folder / "lineorder_flat"),
            by=by,
            curve=curve,
            target_file_bytes=target,
            spark=spark,
        )
        (folder / "READY").write_text(f"{time.perf_counter() - started:.0f} s\n")
    table = folder / "lineorder_flat"
    copies = []
    for kind in ("minmax", "bitsliced_bitmap"):
        copy = data.index_copy(table, f"idx-{kind}", pattern="*.parquet")
        if ensure_index(copy, ssb.specs(kind), PoolRunner()):
            print(f"  built the {kind} index on {copy}", flush=True)
        copies.append(copy)
    return table, copies[0], copies[1]


def _files_kept(section: Section, layouts: dict[str, tuple[Path, Path, Path]]) -> None:
    exact_natural = True
    same_as_ranges = True
    for layout, (table, minmax, bitmaps) in layouts.items():
        total = len(data.data_files(table, "*.parquet"))
        floors = floors_of(table, [q.where for q in ssb.QUERIES])
        rows = []
        for query, floor in zip(ssb.QUERIES, floors, strict=True):
            ranged = range_form(query)
            kept = {
                (name, form): si.prune(str(folder), where).kept
                for name, folder in (("minmax", minmax), ("bitmaps", bitmaps))
                for form, where in (("written", query.where), ("ranges", ranged))
            }
            rows.append(
                [
                    query.name,
                    f"{floor}",
                    f"{kept['minmax', 'written']} / {kept['minmax', 'ranges']}",
                    f"{kept['bitmaps', 'written']} / {kept['bitmaps', 'ranges']}",
                    f"{total / max(kept['bitmaps', 'written'], 1):.1f}x",
                ]
            )
            if layout == "natural":
                exact_natural &= kept["bitmaps", "written"] == floor
            same_as_ranges &= all(
                kept[name, "written"] == kept[name, "ranges"] for name in ("minmax", "bitmaps")
            )
        section.tables.append(
            Table(
                f"SSB SF1 lineorder_flat, {layout} layout ({total} files): files kept, "
                "as written / range form",
                ["query", "floor", "min-max", "bit-sliced bitmaps", "fewer files (bitmaps)"],
                rows,
                notes=[f"{q.name}: `{q.where}`" for q in ssb.QUERIES],
            )
        )
    section.targets.append(
        Target(
            "ssb-floor",
            "bitmaps on the natural layout keep exactly the floor on all 13 queries as written",
            "yes" if exact_natural else "no",
            exact_natural,
        )
    )
    section.targets.append(
        Target(
            "ssb-as-written",
            "queries as written keep what their range forms keep, on both layouts",
            "yes" if same_as_ranges else "no",
            same_as_ranges,
        )
    )


WEEK = "weekofyear(lo_orderdate)"
WEEK_QUERIES = {
    "Q1.3 as written": ssb.BY_NAME["Q1.3"].where,
    "Q1.3, the week only": ssb.BY_NAME["Q1.3"].where.replace(" AND year(lo_orderdate) = 1994", ""),
    "week 6, any year": f"{WEEK} = 6",
    "weeks 52-53, any year": f"{WEEK} >= 52",
}


def _expression_index(section: Section, spark: Any, clustered: Path) -> None:
    """Q1.3's ``weekofyear`` with and without an expression index on it, on the
    rows sorted by date: the week within a year is a range of days, the week
    alone (every year) is not."""
    bitmaps = clustered.parent / "idx-bitsliced_bitmap"
    week = data.index_copy(clustered, "idx-bitsliced-week", pattern="*.parquet")
    if ensure_index(week, ssb.specs("bitsliced_bitmap"), PoolRunner()):
        print(f"  built the bitsliced_bitmap index on {week}", flush=True)
    described = si.describe(str(week))
    if not any(d.get("expression") for d in described.indexes):
        si.build_index(str(week), [si.EqualityBitmap(expr=WEEK)], spark=spark)
    floors = floors_of(clustered, list(WEEK_QUERIES.values()))
    rows = []
    at_floor = True
    for (name, where), floor in zip(WEEK_QUERIES.items(), floors, strict=True):
        without = si.prune(str(bitmaps), where).kept
        with_index = si.prune(str(week), where).kept
        at_floor &= with_index == floor
        rows.append([name, f"{floor}", f"{without}", f"{with_index}"])
    total = len(data.data_files(clustered, "*.parquet"))
    section.tables.append(
        Table(
            f"weekofyear on the rows sorted by lo_orderdate ({total} files): files kept by "
            f"bit-sliced bitmaps, without and with an expression index on `{WEEK}` "
            "(equality bitmap)",
            ["predicate", "floor", "without", "with the expression index"],
            rows,
            notes=[f"{k}: `{v}`" for k, v in WEEK_QUERIES.items()],
        )
    )
    section.targets.append(
        Target(
            "ssb-expression-index",
            "Q1.3's weekofyear at the floor with an expression index (also without a year)",
            "yes" if at_floor else "no",
            at_floor,
        )
    )


def _times(section: Section, spark: Any, table: Path, bitmaps: Path, runs: int) -> None:
    spark.read.parquet(str(table)).createOrReplaceTempView("ssb_plain")
    rows = []
    speedups = []
    for query in ssb.QUERIES:
        plain_sql = query.sql("ssb_plain")

        def plain(text: str = plain_sql) -> list[Any]:
            return spark.sql(text).collect()

        def skipping(q: ssb.Query = query) -> list[Any]:
            si.read(spark, str(bitmaps), q.where).createOrReplaceTempView("ssb_kept")
            return spark.sql(q.sql("ssb_kept")).collect()

        (plain_t, skip_t), (plain_rows, skip_rows) = rotating([plain, skipping], runs)
        if sorted(map(repr, plain_rows)) != sorted(map(repr, skip_rows)):
            raise AssertionError(f"{query.name}: si.read's rows differ from Spark's")
        speedup = median(plain_t) / median(skip_t)
        speedups.append(speedup)
        rows.append([query.name, ms(median(plain_t)), ms(median(skip_t)), f"{speedup:.2f}x"])
    section.tables.append(
        Table(
            "SSB SF1 lineorder_flat, natural layout: the whole query, plain spark.sql against "
            "the same query over si.read of its predicate (bit-sliced bitmaps), ms",
            ["query", "spark.sql", "over si.read", "speed-up"],
            rows,
            notes=[PAPER],
        )
    )
    section.targets.append(
        Target(
            "ssb-speed",
            "over si.read never slower than plain Spark by more than 5 %; " + PAPER,
            f"{min(speedups):.2f}x-{max(speedups):.2f}x",
            min(speedups) >= 0.95,
        )
    )
