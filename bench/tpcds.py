"""Section 13: TPC-DS, the workload warehouses are judged by, through ``si.sql``.

DuckDB's tpcds extension generates the data and the 99 queries (tests/_tpcds.py:
a helper venv holds the DuckDB version the extension pairs with); each fact table
is sorted by its date key, as a warehouse loads it, and cut into 40 files (400 at
SF10), each dimension one file. Indexes are generic, no query in mind: min-max
on every key (each ``_sk`` column, and the facts' order and ticket numbers, which
join sales to returns), bit-sliced bitmaps on the facts' date, item and customer
keys and order and ticket numbers, equality bitmaps on dimension strings and
bit-sliced bitmaps on dimension numbers and dates. Every table is a view
``si.register`` made: a view of a DataFrame (``spark.read.parquet(folder)``),
which holds the folder's listing and schema as a user's own DataFrame view or
catalog table does. So ``spark.sql(q)`` is plain Spark at its best over those
views, and ``si.sql(spark, q)`` the same query pruned, in the same session.

Per query: the fact files read of those its fact references list (and the files
the index kept: a reference whose saving is too small to pay for naming its kept
files is read whole), the planning time ``si.sql`` adds, and both sides' time to
the last row, warm, in one local[2] session: each side's better of at least three
runs (``--runs``), alternating which goes first. A query under 2 s runs more rounds (up to
six, until each side has spent about ``--budget`` seconds: 6 s), chosen by its
duration alone, never by which side is ahead: the better of two short runs is a
coin toss on a shared machine (q34, q73 and q79 each took turns as the slowest
query at 0.81-0.93x in one run and 1.2-2.0x in the next; q24, 2 s and nothing to
skip, 0.92x from two runs and 1.10x from five; q23, 5 s, 0.92x and 1.19x from two
runs in two full runs).

    ./dev python bench/tpcds.py                    # SF1, every query
    ./dev python bench/tpcds.py --queries q72,q04  # some queries
    ./dev python bench/tpcds.py --sf10 --top 20    # SF10: the 20 with the most fact bytes
    ./dev python bench/tpcds.py --plot             # also bench/tpcds.png
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests._tpcds: the generator the TPC-DS test uses too

import skipindex as si  # noqa: E402
from skipindex.spark.session import local_session  # noqa: E402
from tests._tpcds import FACTS, queries, register, tpcds, tpcds_indexes  # noqa: E402

DATA = HERE / "data"
# The targets against plain Spark over DataFrame views (the issue "Faster than plain
# Spark at its best"); fact files read stays the earlier issue's 30 %.
TARGETS = {"total": 0.75, "geomean": 1.35, "worst": 0.95, "facts read": 0.30, "added ms": 30.0}


@dataclass
class QueryRun:
    name: str
    fact_files: int  # listed, over the query's fact references
    fact_read: int  # read by si.sql
    fact_kept: int  # kept by the index (read, were every fact reference read from its kept files)
    planning: float  # seconds si.sql_plan took
    si_seconds: float  # best of the timed runs, planning included
    spark_seconds: float
    rows: int
    same_rows: bool
    runs: int  # timed runs per side
    speedup_of_two: float  # the same ratio from the first two runs alone
    replaced: int = 0  # references read from their kept files (0: every one as written)

    @property
    def speedup(self) -> float:
        return _speedup(self.si_seconds, self.spark_seconds)

    def line(self) -> str:
        """One line of progress, as the run goes."""
        return (
            f"{self.name}: {self.speedup:.2f}x (si.sql {self.si_seconds:.2f} s, spark.sql "
            f"{self.spark_seconds:.2f} s, planning {self.planning * 1000:.0f} ms), "
            f"facts {self.fact_read}/{self.fact_files}, same rows: {self.same_rows}"
        )


def _speedup(si_seconds: float, spark_seconds: float) -> float:
    return spark_seconds / max(si_seconds, 1e-9)


def _fact_files(plan: Any, facts: Any = FACTS) -> tuple[int, int, int]:
    """(files listed, files read, files the index kept) over the fact references of a
    planned query: a reference read whole (its saving too small to pay for naming
    the kept files) reads every file its prune kept and the rest."""
    listed = read = kept = 0
    for reference in plan.references:
        if reference.table is None or Path(reference.table).name not in facts:
            continue
        result = reference.result
        total = result.total if result is not None else _listed(reference.table)
        listed += total
        read += result.kept if (result is not None and reference.replaced) else total
        kept += result.kept if result is not None else total
    return listed, read, kept


def _listed(table: str) -> int:
    return len(list(Path(table).glob("*.parquet")))


def _timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


MAX_RUNS = 6


def rounds_for(slower_best: float, runs: int, budget: float) -> int:
    """How many rounds a query runs: ``runs``, or more for a short query, so the
    slower side's best run times the rounds reaches ``budget`` (at most
    :data:`MAX_RUNS`). It depends on the duration alone, not on who is ahead.
    Always even: the sides alternate who goes first, and a machine still warming
    up (a long query's runs fall 20 % and more from the first to the third) gives
    the last slot the best time; with an odd count plain Spark held it twice in
    three rounds."""
    wanted = math.ceil(budget / max(slower_best, 1e-3))
    return _even(max(runs, min(MAX_RUNS, wanted)))


def _even(rounds: int) -> int:
    return rounds + rounds % 2


def run_query(
    spark: Any, name: str, query: str, runs: int, budget: float = 0.0, facts: Any = FACTS
) -> QueryRun:
    def plain() -> list[Any]:
        return spark.sql(query).collect()

    def pruned() -> tuple[Any, list[Any]]:
        plan = si.sql_plan(spark, query)
        return plan, plan.frame.collect()

    si_times, spark_times = [], []
    plan, rows, expected = None, [], []

    def one_round(round_: int) -> None:
        nonlocal plan, rows, expected
        order = [("si", pruned), ("spark", plain)]
        for side, action in order if round_ % 2 == 0 else order[::-1]:
            seconds, value = _timed(action)
            if side == "si":
                si_times.append(seconds)
                plan, rows = value
            else:
                spark_times.append(seconds)
                expected = value

    first = _even(runs)  # see rounds_for
    for round_ in range(first):
        one_round(round_)
    for round_ in range(first, rounds_for(max(min(si_times), min(spark_times)), runs, budget)):
        one_round(round_)
    assert plan is not None
    listed, read, kept = _fact_files(plan, facts)
    same = sorted(map(repr, rows)) == sorted(map(repr, expected))
    return QueryRun(
        name,
        listed,
        read,
        kept,
        plan.seconds,
        min(si_times),
        min(spark_times),
        len(rows),
        same,
        len(si_times),
        _speedup(min(si_times[:2]), min(spark_times[:2])),
        sum(1 for reference in plan.references if reference.replaced),
    )


def summary(results: list[QueryRun]) -> dict[str, float]:
    si_total = sum(r.si_seconds for r in results)
    spark_total = sum(r.spark_seconds for r in results)
    listed = sum(r.fact_files for r in results)
    return {
        "queries": len(results),
        "si.sql seconds": si_total,
        "spark.sql seconds": spark_total,
        "total": si_total / spark_total,
        "geomean": math.exp(sum(math.log(r.speedup) for r in results) / len(results)),
        "worst": min(r.speedup for r in results),
        "worst of two": min(r.speedup_of_two for r in results),
        "slower than 0.95x, first two runs": sum(r.speedup_of_two < 0.95 for r in results),
        "facts read": sum(r.fact_read for r in results) / max(listed, 1),
        "facts kept": sum(r.fact_kept for r in results) / max(listed, 1),
        "2x or more": sum(r.speedup >= 2 for r in results),
        "slower than 0.95x": sum(r.speedup < 0.95 for r in results),
        "same rows": sum(r.same_rows for r in results),
        "planning seconds": sum(r.planning for r in results),
        **_added(results),
    }


def _added(results: list[QueryRun]) -> dict[str, float]:
    """What si.sql adds to a query none of whose references it replaces (each read
    as written): its time less plain Spark's, median and most, in milliseconds."""
    written = [r for r in results if not r.replaced]
    if not written:
        return {"as written": 0}
    added = sorted((r.si_seconds - r.spark_seconds) * 1000 for r in written)
    planning = sorted(r.planning * 1000 for r in written)
    return {
        "as written": len(written),
        "added ms": planning[len(planning) // 2],
        "added ms, most": planning[-1],
        "timed difference ms": added[len(added) // 2],
    }


def render(results: list[QueryRun], totals: dict[str, float], title: str) -> str:
    lines = [
        f"## {title}",
        "",
        "Plain Spark (spark.sql) over views of DataFrames, which hold each folder's "
        "listing and schema; si.sql over the same views, in the same session.",
        "",
        "| query | fact files read | kept by the index | of | si.sql planning (ms) | si.sql (s) "
        "| spark.sql (s) | speedup | runs | speedup, first two runs | rows | same rows |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {r.name} | {r.fact_read} | {r.fact_kept} | {r.fact_files} | {r.planning * 1000:.0f} | "
        f"{r.si_seconds:.2f} | {r.spark_seconds:.2f} | {r.speedup:.2f}x | {r.runs} | "
        f"{r.speedup_of_two:.2f}x | {r.rows} | "
        f"{'yes' if r.same_rows else '**no**'} |"
        for r in results
    )
    met = {
        "total": totals["total"] <= TARGETS["total"],
        "geomean": totals["geomean"] >= TARGETS["geomean"],
        "worst": totals["worst"] >= TARGETS["worst"],
        "facts read": totals["facts read"] <= TARGETS["facts read"],
    }
    lines += [
        "",
        f"Totals: si.sql {totals['si.sql seconds']:.1f} s, spark.sql "
        f"{totals['spark.sql seconds']:.1f} s over {totals['queries']:.0f} queries "
        f"(si.sql planning {totals['planning seconds']:.1f} s); same rows on "
        f"{totals['same rows']:.0f}; {totals['2x or more']:.0f} queries at 2x or more, "
        f"{totals['slower than 0.95x']:.0f} slower than 0.95x. The index kept "
        f"{totals['facts kept']:.1%} of the fact files referenced: what si.sql would read "
        "were no reference read whole because its saving was too small to pay. "
        "From each side's first two runs alone (a short query runs more): slowest "
        f"{totals['worst of two']:.2f}x ({min(results, key=lambda r: r.speedup_of_two).name}), "
        f"{totals['slower than 0.95x, first two runs']:.0f} slower than 0.95x. "
        f"{_added_text(totals)}",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---|---|",
        f"| total time, si.sql / spark.sql | <= {TARGETS['total']} | {totals['total']:.2f} "
        f"| {'yes' if met['total'] else 'no'} |",
        f"| geometric mean of per-query speedups | >= {TARGETS['geomean']} | "
        f"{totals['geomean']:.2f} | {'yes' if met['geomean'] else 'no'} |",
        f"| slowest query's speedup | >= {TARGETS['worst']} | {totals['worst']:.2f} | "
        f"{'yes' if met['worst'] else 'no'} |",
        f"| fact files read, of those referenced | <= {TARGETS['facts read']:.0%} | "
        f"{totals['facts read']:.1%} | {'yes' if met['facts read'] else 'no'} |",
    ]
    if totals.get("as written"):
        added = totals["added ms"]
        lines.append(
            f"| planning added where no reference is replaced (median) | <= "
            f"{TARGETS['added ms']:.0f} ms | {added:.0f} ms | "
            f"{'yes' if added <= TARGETS['added ms'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def _added_text(totals: dict[str, float]) -> str:
    if not totals.get("as written"):
        return "Every query had a reference read from its kept files."
    return (
        f"{totals['as written']:.0f} queries had every reference read as written: Spark runs "
        "the same plan for both sides there, so si.sql adds its planning, "
        f"{totals['added ms']:.0f} ms (median; {totals['added ms, most']:.0f} ms at most). "
        f"Their timed difference, noise included: {totals['timed difference ms']:.0f} ms "
        "(median)."
    )


def plot(results: list[QueryRun], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ordered = sorted(results, key=lambda r: r.speedup)
    figure, axis = plt.subplots(figsize=(14, 4))
    axis.bar([r.name for r in ordered], [r.speedup for r in ordered], color="tab:blue")
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.axhline(TARGETS["worst"], color="tab:red", linewidth=0.8, linestyle="--")
    axis.set_ylabel("spark.sql time / si.sql time")
    runs = sorted({r.runs for r in results})
    axis.set_title(
        "TPC-DS per query: speedup of si.sql over spark.sql "
        f"(warm, better of {runs[0]}-{runs[-1]} runs a side)"
    )
    axis.tick_params(axis="x", labelrotation=90, labelsize=6)
    figure.tight_layout()
    figure.savefig(target, dpi=120)


def data_folder(scale: float, files: int) -> Path:
    """The data (generated once, kept under bench/data)."""
    return tpcds(DATA / f"tpcds-sf{scale:g}-{files}".replace(".", "_"), scale, files)


def prepare(
    spark: Any,
    scale: float,
    files: int,
    folder: Path | None = None,
    indexes: Callable[[Path], list[Any]] = tpcds_indexes,
) -> tuple[Path, dict[str, str]]:
    """The data (generated once) or ``folder``, indexed with ``indexes`` (incremental:
    a second run only lists), registered; the queries in Spark's dialect."""
    folder = folder or data_folder(scale, files)
    for table in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "queries"):
        si.build_index(str(table), indexes(table), spark=spark)
    register(spark, folder)
    return folder, queries(folder, spark)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf10", action="store_true", help="SF10, facts in 400 files")
    parser.add_argument("--queries", default="", help="q01,q72,... (default: every query)")
    parser.add_argument("--top", type=int, default=0, help="only the N with most fact bytes")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side, at least")
    parser.add_argument(
        "--budget",
        type=float,
        default=6.0,
        help="seconds per side a short query runs for (more rounds, at most 6); 0: --runs only",
    )
    parser.add_argument("--plot", action="store_true", help="draw bench/tpcds.png")
    args = parser.parse_args(argv)
    scale, files = (10.0, 400) if args.sf10 else (1.0, 40)
    spark = local_session(cores=2, app_name="skipindex-bench-tpcds")
    _, texts = prepare(spark, scale, files)
    wanted = [q for q in args.queries.split(",") if q] or sorted(texts)
    if args.top:
        wanted = _most_fact_bytes(spark, texts, wanted, args.top)
    results = []
    for name in wanted:
        _collect_garbage(spark)  # between queries, outside the timings: both sides alike
        result = run_query(spark, name, texts[name], args.runs, args.budget)
        results.append(result)
        print(result.line(), flush=True)
    totals = summary(results)
    title = f"TPC-DS SF{scale:g}, facts in {files} files ({len(results)} queries)"
    text = render(results, totals, title)
    print(text)
    suffix = "sf10" if args.sf10 else "sf1"
    if (not args.queries and not args.top) or args.sf10:
        (HERE / f"TPCDS-{suffix}.md").write_text(text)
        (HERE / f"tpcds-{suffix}.json").write_text(
            json.dumps({"totals": totals, "queries": [asdict(r) for r in results]}, indent=1)
        )
    if args.plot:
        plot(results, HERE / f"tpcds-{suffix}.png")
    return 0


def _collect_garbage(spark: Any) -> None:
    """Python's garbage, then the driver JVM's: DataFrames Python no longer holds
    release their JVM plans (file listings, broadcast relations) only when Python
    collects them, and 99 queries' worth in a 4 GB driver once left too little heap
    for q35's broadcast."""
    gc.collect()
    spark._jvm.java.lang.System.gc()


def _most_fact_bytes(spark: Any, texts: dict[str, str], names: list[str], top: int) -> list[str]:
    """The ``top`` queries whose fact references list the most bytes."""
    sizes = {}
    for name in names:
        plan = si.sql_plan(spark, texts[name], dynamic_keys=0)
        tables = {r.table for r in plan.references if r.table and Path(r.table).name in FACTS}
        sizes[name] = sum(p.stat().st_size for t in tables for p in Path(t).glob("*.parquet"))
    return sorted(sorted(names, key=lambda n: -sizes[n])[:top])


if __name__ == "__main__":
    raise SystemExit(main())
