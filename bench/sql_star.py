"""Section 11: SQL as people write it: SSB's star form through ``si.sql``.

SSB's 13 queries as the paper writes them: ``lineorder`` joined to ``dates``,
``customer``, ``supplier`` and ``part``, the filters on the dimensions (bench/ssb.py,
``star``: the flat table's rows, split into the fact and its dimensions). Each is run
three ways in one local[2] session: plain ``spark.sql`` over the views ``si.register``
makes of the star tables (views of DataFrames, which hold each folder's listing and
schema: plain Spark at its best), ``si.sql`` over the same views (the dimensions'
conditions prune them, their join keys prune ``lineorder`` where few), and ``si.sql`` of
the flat form's query over ``lineorder_flat`` (bit-sliced bitmaps and min-max on every
predicate column, as section 9 indexes it). The floor is the number of lineorder files
holding a row of the answer (DuckDB, over the flat form, which holds the same rows in
the same files). Two layouts: the generator's order, and ``lineorder`` clustered by
``lo_orderdate`` (``si.cluster``, linear), its flat form made from it file by file.
lineorder is indexed with min-max on its keys and ``lo_orderdate``, Bloom filters on
``lo_custkey``, ``lo_suppkey``, ``lo_partkey`` and bit-sliced bitmaps on those keys (a
join's keys then meet the other conditions row by row), ``lo_orderdate``,
``lo_discount``, ``lo_quantity``; the dimensions with equality bitmaps on the columns
the queries filter.

    python bench/run.py --only sql          # SF1, 100 files (quick); --full: SF10, 1,000
    python bench/sql_star.py --sf10         # the same, printed
    python bench/sql_star.py --sf10 --layouts natural --counts   # files read only
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import data
import ssb
from measure import (
    QUICK,
    Config,
    Section,
    Table,
    Target,
    floors_of,
    machine,
    median,
    ms,
    rotating,
    timed,
)
from runners import PoolRunner, ensure_index

import skipindex as si

_Q1 = (
    "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, dates "
    "WHERE lo_orderdate = d_datekey AND "
)
_Q2 = (
    "SELECT sum(lo_revenue) AS revenue, d_year, p_brand1 FROM lineorder, dates, part, supplier "
    "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey AND {} "
    "GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1"
)
_Q3 = (
    "SELECT {g}, d_year, sum(lo_revenue) AS revenue FROM customer, lineorder, supplier, dates "
    "WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey AND {w} "
    "GROUP BY {g}, d_year ORDER BY d_year ASC, revenue DESC"
)
_Q4 = (
    "SELECT d_year, {g}, sum(lo_revenue - lo_supplycost) AS profit "
    "FROM dates, customer, supplier, part, lineorder WHERE lo_custkey = c_custkey "
    "AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey AND {w} "
    "GROUP BY d_year, {g} ORDER BY d_year, {g}"
)
_UK = (
    "(c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') "
    "AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5')"
)
_AMERICA = (
    "c_region = 'AMERICA' AND s_region = 'AMERICA' AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')"
)
# SSB's queries in their star form (the paper's text; the date table is `dates`).
STAR = {
    "Q1.1": _Q1 + "d_year = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25",
    "Q1.2": _Q1
    + "d_yearmonthnum = 199401 AND lo_discount BETWEEN 4 AND 6 AND lo_quantity BETWEEN 26 AND 35",
    "Q1.3": _Q1 + "d_weeknuminyear = 6 AND d_year = 1994 AND lo_discount BETWEEN 5 AND 7 "
    "AND lo_quantity BETWEEN 26 AND 35",
    "Q2.1": _Q2.format("p_category = 'MFGR#12' AND s_region = 'AMERICA'"),
    "Q2.2": _Q2.format("p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228' AND s_region = 'ASIA'"),
    "Q2.3": _Q2.format("p_brand1 = 'MFGR#2239' AND s_region = 'EUROPE'"),
    "Q3.1": _Q3.format(
        g="c_nation, s_nation",
        w="c_region = 'ASIA' AND s_region = 'ASIA' AND d_year >= 1992 AND d_year <= 1997",
    ),
    "Q3.2": _Q3.format(
        g="c_city, s_city",
        w="c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES' "
        "AND d_year >= 1992 AND d_year <= 1997",
    ),
    "Q3.3": _Q3.format(g="c_city, s_city", w=f"{_UK} AND d_year >= 1992 AND d_year <= 1997"),
    "Q3.4": _Q3.format(g="c_city, s_city", w=f"{_UK} AND d_yearmonth = 'Dec1997'"),
    "Q4.1": _Q4.format(g="c_nation", w=_AMERICA),
    "Q4.2": _Q4.format(
        g="s_nation, p_category", w=f"{_AMERICA} AND (d_year = 1997 OR d_year = 1998)"
    ),
    "Q4.3": _Q4.format(
        g="s_city, p_brand1",
        w="c_region = 'AMERICA' AND s_nation = 'UNITED STATES' "
        "AND (d_year = 1997 OR d_year = 1998) AND p_category = 'MFGR#14'",
    ),
}
SELECTIVE = [name for name in STAR if not name.startswith("Q1")]  # Q2.x-Q4.x

# Dimension filters that leave few, scattered keys of a high-cardinality foreign key
# (phone numbers and part names are not ordered by key): only Bloom filters and
# bitmaps can skip lineorder files for them.
DIMENSION_KEYS = {"customer": "c_custkey", "supplier": "s_suppkey", "part": "p_partkey"}
FACT_KEYS = {"customer": "lo_custkey", "supplier": "lo_suppkey", "part": "lo_partkey"}


def _joined(dim: str, where: str) -> tuple[str, str]:
    """lineorder joined to ``dim`` where ``where``: the query, and ``where``."""
    on = f"{FACT_KEYS[dim]} = {DIMENSION_KEYS[dim]}"
    return (
        f"SELECT count(*) AS n, sum(lo_revenue) AS revenue FROM lineorder JOIN {dim} "
        f"ON {on} WHERE {where}",
        where,
    )


SCATTERED = {
    "D1 few customers": _joined("customer", "c_phone LIKE '27-555-%'"),
    "D2 more customers": _joined("customer", "c_phone LIKE '27-55%'"),
    "D3 suppliers": _joined("supplier", "s_phone LIKE '27-55%'"),
    "D4 parts": _joined("part", "p_name = 'forest green'"),
}
LAYOUTS = ("natural", "clustered")


def specs(table: str) -> list[Any]:
    """The index definitions of each star table."""
    if table == "lineorder":
        out: list[Any] = [si.MinMax(c) for c in ("lo_orderdate", *FACT_KEYS.values())]
        out += [si.Bloom(c) for c in FACT_KEYS.values()]
        sliced = ("lo_orderdate", "lo_discount", "lo_quantity", *FACT_KEYS.values())
        out += [si.BitSlicedBitmap(c) for c in sliced]
        return out
    columns = {
        "customer": ["c_region", "c_nation", "c_city"],
        "supplier": ["s_region", "s_nation", "s_city"],
        "part": ["p_mfgr", "p_category", "p_brand1"],
        "dates": ["d_year", "d_yearmonthnum", "d_yearmonth", "d_weeknuminyear"],
    }[table]
    return [si.EqualityBitmap(c) for c in columns]


def _prepare(
    spark: Any, scale: float, files: int, wanted: Sequence[str]
) -> dict[str, dict[str, Path]]:
    """Per layout wanted: the star tables and the flat form, indexed."""
    layouts = {}
    if "natural" in wanted:
        layouts["natural"] = {**ssb.star(scale, files), "flat": ssb.lineorder_flat(scale, files)}
    if "clustered" in wanted:
        layouts["clustered"] = ssb.star_clustered(spark, scale, files)
    for tables in layouts.values():
        for name, folder in tables.items():
            wanted = ssb.specs("bitsliced_bitmap") if name == "flat" else specs(name)
            if ensure_index(folder, wanted, PoolRunner()):
                print(f"  built the index of {folder}", flush=True)
            si.build_index(str(folder), spark=spark)  # records Spark's schema
    return layouts


def _register(spark: Any, tables: dict[str, Path]) -> None:
    for name, folder in tables.items():
        si.register(spark, "lineorder_flat" if name == "flat" else name, str(folder))


def _lineorder_read(plan: si.SqlPlan, total: int) -> int:
    """lineorder files the query reads (all of them where it is read as written)."""
    fact = [r for r in plan.references if r.written.lower() in ("lineorder", "lineorder_flat")]
    read = [r.result.kept if r.replaced and r.result else total for r in fact]
    return max(read) if read else total


def _keys_used(plan: si.SqlPlan) -> str:
    """Per dimension joined to lineorder, how many of its keys pruned it ("-": none)."""
    used = [
        f"{j.dim} {j.keys:,}" if j.keys is not None else f"{j.dim} -"
        for j in plan.joins
        if j.fact == "lineorder"
    ]
    return ", ".join(used) or "-"


def _same_rows(query: str, *frames: Any) -> list[Any]:
    rows = [sorted(map(repr, f)) for f in frames]
    if any(r != rows[0] for r in rows[1:]):
        raise AssertionError(f"si.sql's rows differ from spark.sql's for {query}")
    return rows[0]


@dataclass(frozen=True)
class Timing:
    """One query's medians (seconds): plain spark.sql and si.sql, end to end, and
    what si.sql plans beyond what spark.sql plans (its planning less the time
    spark.sql takes to return the DataFrame): all it adds where it replaces
    nothing, as it then runs the query's own text."""

    plain: float
    skipping: float
    extra: float

    @property
    def ratio(self) -> float:
        return self.skipping / self.plain

    @property
    def planned_ratio(self) -> float:
        return (self.plain + self.extra) / self.plain


def _timed(spark: Any, queries: Sequence[str], runs: int) -> tuple[list[Timing], list[si.SqlPlan]]:
    """Plain spark.sql and si.sql of each query, all rotating; per query their
    medians, and the si.sql plans (the rows of all are checked equal)."""
    analysed: list[list[float]] = [[] for _ in queries]
    planned: list[list[float]] = [[] for _ in queries]

    def plain(at: int) -> tuple[list[Any], None]:
        started = time.perf_counter()
        frame = spark.sql(queries[at])
        analysed[at].append(time.perf_counter() - started)
        return frame.collect(), None

    def skipping(at: int) -> tuple[list[Any], si.SqlPlan]:
        plan = si.sql_plan(spark, queries[at])
        planned[at].append(plan.seconds)
        return plan.frame.collect(), plan

    actions: list[Callable[[], Any]] = [
        action
        for at in range(len(queries))
        for action in (lambda at=at: plain(at), lambda at=at: skipping(at))
    ]
    times, values = rotating(actions, runs)
    _same_rows(queries[0], *([tuple(r) for r in rows] for rows, _ in values))
    timings = [
        Timing(
            median(times[2 * at]),
            median(times[2 * at + 1]),
            median(planned[at][1:]) - median(analysed[at][1:]),  # less the warm-up
        )
        for at in range(len(queries))
    ]
    return timings, [plan for _, plan in values[1::2]]


def _ssb(section: Section, spark: Any, layout: str, tables: dict[str, Path], runs: int) -> None:
    """The 13 queries on one layout, star and flat forms: a table."""
    total = len(data.data_files(tables["lineorder"], "*.parquet"))
    floors = floors_of(tables["flat"], [ssb.BY_NAME[name].where for name in STAR])
    rows = []
    for (name, query), floor in zip(STAR.items(), floors, strict=True):
        flat_query = ssb.BY_NAME[name].sql("lineorder_flat")
        (star_t, flat_t), (plan, flat_plan) = _timed(spark, [query, flat_query], runs)
        read = _lineorder_read(plan, total)
        flat_read = _lineorder_read(flat_plan, total)
        ratio = read / max(floor, 1)
        keys = _keys_used(plan)
        rows.append(
            [
                name,
                f"{read}",
                f"{floor}",
                f"{ratio:.2f}x",
                f"{flat_read}",
                ms(star_t.plain),
                ms(star_t.skipping),
                f"{star_t.ratio:.2f} ({star_t.planned_ratio:.2f})",
                ms(flat_t.plain),
                ms(flat_t.skipping),
                f"{flat_t.ratio:.2f} ({flat_t.planned_ratio:.2f})",
                keys,
            ]
        )
        print(f"  {layout} {name}: {' | '.join(rows[-1][1:])}", flush=True)
    section.tables.append(
        Table(
            f"SSB star form, {layout} lineorder ({total} files, read whole by spark.sql): "
            "lineorder files read, and time (ms, medians) against plain spark.sql, per query",
            [
                "query",
                "si.sql files",
                "floor",
                "si.sql / floor",
                "flat form, si.sql files",
                "star: spark.sql",
                "star: si.sql",
                "star: si.sql / spark.sql (by planning)",
                "flat: spark.sql",
                "flat: si.sql",
                "flat: si.sql / spark.sql (by planning)",
                "dynamic keys (dimension: keys; - none used)",
            ],
            rows,
            notes=[
                "si.sql / spark.sql: medians end to end, rotating; in brackets, (spark.sql + "
                "what si.sql plans beyond it) / spark.sql: all it adds where it replaces no "
                "reference, as it then runs the query's own text (less noisy on a busy machine)"
            ],
        )
    )


def _scattered(section: Section, spark: Any, tables: dict[str, Path], runs: int) -> None:
    """Few scattered keys of a high-cardinality key: Bloom filters against ranges."""
    lineorder = tables["lineorder"]
    total = len(data.data_files(lineorder, "*.parquet"))
    floors = floors_of(tables["flat"], [w for _, w in SCATTERED.values()])
    rows = []
    for (name, (query, flat_where)), floor in zip(SCATTERED.items(), floors, strict=True):
        dim = query.split(" JOIN ")[1].split()[0]
        fact_key, dim_key = FACT_KEYS[dim], DIMENSION_KEYS[dim]
        low, high, count = spark.sql(
            f"SELECT min({dim_key}), max({dim_key}), count(DISTINCT {dim_key}) FROM {dim} "
            f"WHERE {flat_where}"
        ).collect()[0]
        ranged = si.prune(str(lineorder), f"{fact_key} BETWEEN {low} AND {high}").kept
        (timing,), (plan,) = _timed(spark, [query], runs)
        rows.append(
            [
                name,
                f"{count:,}",
                f"{total}",
                f"{total}",
                f"{ranged}",
                f"{_lineorder_read(plan, total)}",
                f"{floor}",
                ms(timing.plain),
                ms(timing.skipping),
            ]
        )
    section.tables.append(
        Table(
            f"Scattered keys on natural lineorder ({total} files): files read by spark.sql, by "
            "Spark's dynamic partition pruning (partition columns only), by a range of the "
            "keys (Trino's dynamic filtering, min-max), by si.sql (Bloom filters); ms",
            [
                "query",
                "keys",
                "spark.sql",
                "DPP",
                "key range",
                "si.sql",
                "floor",
                "spark.sql ms",
                "si.sql ms",
            ],
            rows,
            notes=[f"{name}: `{query}`" for name, (query, _) in SCATTERED.items()],
        )
    )


def run(config: Config, layouts: Sequence[str] = LAYOUTS, runs: int | None = None) -> Section:
    """``--full``: SF10 in 1,000 files, else SF1 in 100; ``layouts`` of :data:`LAYOUTS`."""
    from skipindex.spark.session import local_session

    full = config.mode == "full"
    scale, files = (10, 1000) if full else (1, 100)
    runs = runs or (3 if full else config.runs)
    spark = local_session(2)
    spark.sparkContext.setLogLevel("ERROR")
    prepared = _prepare(spark, scale, files, layouts)
    section = Section(
        key="sql",
        title=f"11. SQL: SSB's star form through si.sql (SF{scale:g})",
        intro=__doc__.split("\n\n", 1)[1].split("\n\n")[0].replace("\n", " ").strip(),
    )
    for layout, tables in prepared.items():
        _register(spark, tables)
        _ssb(section, spark, layout, tables, runs)
        if layout == "natural":
            _scattered(section, spark, tables, runs)
    spark.stop()
    section.targets = targets(section)
    return section


def targets(section: Section) -> list[Target]:
    """The section's targets, from its SSB tables: files read against the floor on
    Q2.x-Q4.x, and the overhead where lineorder is read whole, in the flat form (no
    join: parsing, schemas, prune) and in the star form (dynamic pruning included)."""
    ratios: list[tuple[str, float]] = []
    whole: dict[str, list[tuple[float, float]]] = {"flat": [], "star": []}
    totals: dict[str, tuple[float, float]] = {}  # layout -> star form: si.sql, spark.sql ms
    for table in section.tables:
        found = re.match(r"SSB star form, (\w+) lineorder \((\d+) files", table.title)
        if found is None:
            continue
        layout, total = found.group(1), found.group(2)
        totals[layout] = (
            sum(float(r[6]) for r in table.rows),
            sum(float(r[5]) for r in table.rows),
        )
        for row in table.rows:
            if row[0] in SELECTIVE:
                ratios.append((f"{layout} {row[0]}", float(row[3].rstrip("x"))))
            for form, read, cell in (("star", row[1], row[7]), ("flat", row[4], row[10])):
                if read == total:
                    wall, planned = re.findall(r"[\d.]+", cell)
                    whole[form].append((float(wall), float(planned)))
    worst = max(r for _, r in ratios)
    over = ", ".join(f"{name} {r:.2f}x" for name, r in ratios if r > 1.2)
    out = [
        Target(
            "sql-floor",
            "Q2.x-Q4.x: lineorder files read within 1.2x of the flat form's floor, both layouts",
            f"at most {worst:.2f}x" + (f" (over 1.2x: {over})" if over else ""),
            worst <= 1.2,
        )
    ]
    for layout, (si_ms, spark_ms) in totals.items():
        out.append(
            Target(
                f"sql-total-{layout}",
                f"SSB's star form as written, {layout} lineorder: si.sql's total time at most "
                "0.7x plain spark.sql's over views of DataFrames (sums of the 13 medians)",
                f"{si_ms / spark_ms:.2f}x ({si_ms / 1000:.1f} s against {spark_ms / 1000:.1f} s)",
                si_ms <= 0.7 * spark_ms,
            )
        )
    for form, key, what in (
        ("flat", "sql-overhead", "no join (the flat form): parsing, schemas, prune"),
        ("star", "sql-overhead-joins", "the star form, dynamic pruning included"),
    ):
        pairs = whole[form]
        if not pairs:
            continue
        planned = _geomean([p for _, p in pairs])
        out.append(
            Target(
                key,
                f"where nothing is skipped, {what}: si.sql at most 5 % slower than "
                "spark.sql (geometric mean over the queries reading lineorder whole of "
                "(spark.sql + what si.sql plans beyond it) / spark.sql, medians)",
                f"{planned:.3f}x over {len(pairs)} queries (worst "
                f"{max(p for _, p in pairs):.2f}x); end to end "
                f"{_geomean([w for w, _ in pairs]):.3f}x (from {min(w for w, _ in pairs):.2f}x "
                f"to {max(w for w, _ in pairs):.2f}x)",
                planned <= 1.05,
            )
        )
    return out


def counts(config: Config, layouts: Sequence[str] = LAYOUTS) -> Section:
    """Files read only (no timing): per query, lineorder files si.sql keeps against
    the floor and the flat form, with what planning took (key queries included)."""
    from skipindex.spark.session import local_session

    scale, files = (10, 1000) if config.mode == "full" else (1, 100)
    spark = local_session(2)
    spark.sparkContext.setLogLevel("ERROR")
    section = Section(key="sql", title=f"SQL: files read, SF{scale:g}", intro="")
    for layout, tables in _prepare(spark, scale, files, layouts).items():
        _register(spark, tables)
        total = len(data.data_files(tables["lineorder"], "*.parquet"))
        floors = floors_of(tables["flat"], [ssb.BY_NAME[name].where for name in STAR])
        rows = []
        for (name, query), floor in zip(STAR.items(), floors, strict=True):
            si.sql_plan(spark, query)  # warm
            plan = si.sql_plan(spark, query)
            flat = si.sql_plan(spark, ssb.BY_NAME[name].sql("lineorder_flat"))
            analysis, frame = timed(partial(spark.sql, query))
            plain, _ = timed(frame.collect)
            extra = plan.seconds - analysis
            read = _lineorder_read(plan, total)
            keys = _keys_used(plan)
            rows.append(
                [
                    name,
                    f"{read}",
                    f"{floor}",
                    f"{read / max(floor, 1):.2f}x",
                    f"{_lineorder_read(flat, total)}",
                    ms(plan.seconds),
                    ms(analysis + plain),
                    f"{(analysis + plain + extra) / (analysis + plain):.2f}",
                    keys,
                ]
            )
            print(f"  {layout} {name}: {' | '.join(rows[-1][1:])}", flush=True)
        section.tables.append(
            Table(
                f"SSB star form, {layout} lineorder ({total} files): lineorder files read",
                [
                    "query",
                    "si.sql",
                    "floor",
                    "si.sql / floor",
                    "flat form, si.sql",
                    "si.sql planning ms",
                    "spark.sql ms (one run)",
                    "(spark.sql + si.sql's extra planning) / spark.sql",
                    "dynamic keys",
                ],
                rows,
            )
        )
    spark.stop()
    return section


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def main(argv: Sequence[str] | None = None) -> int:
    from report import markdown_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf10", action="store_true", help="SF10 in 1,000 files (else SF1)")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help="natural,clustered")
    parser.add_argument("--runs", type=int, default=None, help="timed rounds (after a warm-up)")
    parser.add_argument("--counts", action="store_true", help="files read only, no timing")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    config = Config("full") if args.sf10 else QUICK
    wanted = [x.strip() for x in args.layouts.split(",")]
    section = counts(config, wanted) if args.counts else run(config, wanted, args.runs)
    out = [f"{k}: {v}" for k, v in machine().items()]
    for table in section.tables:
        out += ["", *markdown_table(table)]
    out += [
        f"target {t.goal}: {t.measured} ({'met' if t.met else 'missed'})" for t in section.targets
    ]
    out.append(f"took {time.perf_counter() - started:.0f} s")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
