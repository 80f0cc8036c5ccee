"""Section 1: files kept per query and layout, against the floor and Delta Lake.

* floor: files holding at least one matching row (DuckDB over the real rows);
* Delta: the same files appended one by one to a Delta table, kept fragments of
  ``DeltaTable.to_pyarrow_dataset().get_fragments(filter=...)`` (per-file min-max);
* skipindex with min-max only, min-max + Bloom, and with bitmaps.

Indexes are built with skipindex's Spark task code run in a local process pool
(``bench.runners.PoolRunner``), not with Spark: same segments, no JVM.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import data
import duckdb
from measure import Config, Section, Table, Target, median, ms, repeat
from queries import QUERIES, Query, specs
from runners import ensure_index

import skipindex as si

CONFIGS = ("minmax", "bloom", "bitmaps")
LAYOUTS = ("shuffled", "natural")
FILES = 100


def floor(table: Path, query: Query) -> tuple[set[str], int]:
    """Names of the files with a matching row, and the number of matching rows."""
    glob = str(table / "*.parquet")
    relation = duckdb.sql(
        f"SELECT filename, count(*) FROM read_parquet('{glob}', filename=true) "
        f"WHERE {query.sql} GROUP BY filename"
    )
    assert relation is not None
    rows = relation.fetchall()
    return {Path(name).name for name, _ in rows}, sum(int(n) for _, n in rows)


def delta_kept(dataset: Any, query: Query) -> int:
    return len(list(dataset.get_fragments(filter=query.arrow())))


def prepare(scale: float, order: str) -> tuple[Path, Path, dict[str, Path]]:
    table = data.lineitem(scale, order, FILES)
    delta = data.delta_copy(table)
    indexed = {}
    for config in CONFIGS:
        folder = data.index_copy(table, f"idx-{config}")
        started = time.perf_counter()
        if ensure_index(folder, specs(config)):
            print(f"  built {config} index on {folder} in {time.perf_counter() - started:.1f} s")
        indexed[config] = folder
    return table, delta, indexed


def measure_layout(config: Config, order: str) -> tuple[Table, dict[str, Any], list[str]]:
    from deltalake import DeltaTable

    table, delta, indexed = prepare(config.skipping_scale, order)
    dataset = DeltaTable(str(delta)).to_pyarrow_dataset()
    rows: list[list[str]] = []
    plot: dict[str, Any] = {"queries": [], "floor": [], "delta": [], **{c: [] for c in CONFIGS}}
    misses: list[str] = []
    for query in QUERIES:
        matching, row_count = floor(table, query)
        checked = dataset.count_rows(filter=query.arrow())
        if checked != row_count:
            raise AssertionError(
                f"{query.name}: pyarrow expression finds {checked} rows, "
                f"DuckDB {row_count}: fix the translation in queries.py"
            )
        kept_delta = delta_kept(dataset, query)
        kept: dict[str, int] = {}
        times: dict[str, float] = {}
        for name, folder in indexed.items():
            result = si.prune(str(folder), query.sql)
            names = {Path(f).name for f in result.files}
            if not matching <= names:
                raise AssertionError(f"{query.name}: skipindex ({name}) dropped a matching file")
            kept[name] = result.kept
            times[name] = median(repeat(partial(si.prune, str(folder), query.sql), config.runs))
        exact = kept["bitmaps"] == len(matching)
        if query.conjunctive and not exact:
            misses.append(
                f"{order} {query.name}: bitmaps keep {kept['bitmaps']}, floor {len(matching)}"
            )
        mark = "✓" if exact else "✗"
        rows.append(
            [
                f"{query.name}: `{query.sql}`",
                str(result.total),
                f"{len(matching)} ({row_count:,} rows)",
                str(kept_delta),
                str(kept["minmax"]),
                str(kept["bloom"]),
                str(kept["bitmaps"]),
                mark if query.conjunctive else f"{mark} (OR: not required)",
                " / ".join(ms(times[c]) for c in CONFIGS),
            ]
        )
        plot["queries"].append(query.name)
        plot["floor"].append(len(matching))
        plot["delta"].append(kept_delta)
        for c in CONFIGS:
            plot[c].append(kept[c])
    headers = [
        "query",
        "files",
        "floor",
        "Delta",
        "min-max",
        "+Bloom",
        "+bitmaps",
        "bitmaps = floor",
        "prune ms (min-max / +Bloom / +bitmaps)",
    ]
    title = f"SF{config.skipping_scale:g}, {order} rows, {FILES} files"
    return Table(title, headers, rows), plot, misses


def run(config: Config) -> Section:
    section = Section(
        key="skipping",
        title="1. Files kept per query",
        intro=(
            "Files kept (of 100) by each method; *floor* = files holding at least one "
            "matching row (DuckDB over the rows). *Delta* = Delta Lake's per-file min-max "
            "stats (same 100 files appended one by one with `write_deltalake`, kept fragments "
            "of `to_pyarrow_dataset().get_fragments(filter=...)`). skipindex configurations: "
            "min-max on the 11 query columns; + Bloom (fpp 0.01) on l_partkey, l_suppkey, "
            "l_orderkey; + bit-sliced bitmaps on l_partkey, l_suppkey, l_orderkey, l_quantity, "
            "l_discount, l_tax, l_shipdate and equality bitmaps on l_shipmode, l_shipinstruct, "
            "l_returnflag, l_linestatus. Indexes built with skipindex's task code in a "
            "2-process pool (no Spark). Prune time: median of "
            f"{config.runs} warm `prune()` calls after a warm-up call (listing, manifest, "
            "segment columns from skipindex's in-process cache, evaluation)."
        ),
    )
    all_misses: list[str] = []
    for order in LAYOUTS:
        table, plot, misses = measure_layout(config, order)
        section.tables.append(table)
        section.plot[order] = plot
        all_misses += misses
    section.targets.append(
        Target(
            key="skipping-floor",
            goal="exact bitmaps keep exactly the floor for conjunctive queries",
            measured="all conjunctive queries at the floor"
            if not all_misses
            else "; ".join(all_misses),
            met=not all_misses,
        )
    )
    return section
