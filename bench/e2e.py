"""Section 2: Spark end to end, ``spark.read.parquet(dir).filter(q).count()`` against
``skipindex.read(spark, dir, q).count()`` (prune time included), local[2].

Both sides read the same folder (the one indexed with the "bitmaps"
configuration); runs alternate which side goes first; one warm-up round each.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import data
from measure import Config, Section, Table, Target, median, ms, ratio, repeat, rotating
from queries import BY_NAME, QUERIES, specs
from runners import ensure_index
from skipping import FILES, LAYOUTS, floor

import skipindex as si
from skipindex.indexing.runners import SparkRunner

FAST_WHEN_FLOOR_AT_MOST = 0.15  # target: >= 3x faster when the floor is at most 15% of files
FAST_FACTOR = 3.0
# target: at most 10% slower where the floor is at least half the files (the issue
# says never slower; 10% is what two identical Spark reads differ by here)
SLOW_LIMIT = 1.10
FLOOR_LIMIT = 1.10  # target: within 10% of Spark reading only the floor's files...
FLOOR_BELOW = 0.5  # ...where the floor is below half the files


def indexed_table(spark: Any, scale: float, order: str, files: int = FILES) -> Path:
    table = data.lineitem(scale, order, files)
    folder = data.index_copy(table, "idx-bitmaps")
    if ensure_index(folder, specs("bitmaps"), SparkRunner(spark)):
        print(f"  built the bitmaps index on {folder} with Spark")
    # A no-op refresh through Spark records Spark's schema in the manifest (read() uses it).
    si.build_index(str(folder), spark=spark)
    return folder


def run(config: Config) -> Section:
    from skipindex.spark.session import local_session

    spark = local_session(2)
    spark.sparkContext.setLogLevel("ERROR")
    queries = [BY_NAME[n] for n in config.e2e_queries] if config.e2e_queries else QUERIES
    section = Section(
        key="e2e",
        title="2. Spark end to end",
        intro=(
            f"`spark.read.parquet(dir).filter(q).count()` (plain Spark, which still skips row "
            f"groups by footer statistics) vs `skipindex.read(spark, dir, q).count()` (prune "
            f"included), Spark local[2], SF{config.e2e_scale:g}, bitmaps configuration "
            f"(min-max + Bloom + bit-sliced + equality, the issue's). Median of {config.runs} "
            "runs per side, alternating which side goes first, after one warm-up round; row "
            "counts asserted equal (and equal to DuckDB's). "
            "Repeated prunes reuse skipindex's in-process segment cache, as in a long-lived "
            "driver; the prune column is a separate median of warm `prune()` calls. *Floor "
            "only*: Spark handed just the files holding a match "
            "(`spark.read.parquet(*floor_files).filter(q).count()`), timed in the same "
            "rotation: what a perfect index with no prune cost would give."
        ),
    )
    fast: list[str] = []
    fast_ok = True
    slow: list[str] = []
    slow_ok = True
    near: list[str] = []
    near_ok = True
    layouts = [(order, FILES) for order in LAYOUTS] + list(config.e2e_extra_layouts)
    for order, files in layouts:
        folder = indexed_table(spark, config.e2e_scale, order, files)
        rows: list[list[str]] = []
        plot: dict[str, list[Any]] = {"queries": [], "speedup": []}
        for query in queries:
            matching, expected = floor(folder, query)
            result = si.prune(str(folder), query.sql)

            def plain(q: str = query.sql, f: Path = folder) -> int:
                return int(spark.read.parquet(str(f)).filter(q).count())

            def skipping(q: str = query.sql, f: Path = folder) -> int:
                return int(si.read(spark, str(f), q).count())

            floor_files = [str(folder / name) for name in sorted(matching)]

            def floor_only(q: str = query.sql, files: list[str] = floor_files) -> int:
                return int(spark.read.parquet(*files).filter(q).count())

            (spark_t, skip_t, floor_t), (spark_rows, skip_rows, floor_rows) = rotating(
                [plain, skipping, floor_only], config.runs
            )
            if not spark_rows == skip_rows == floor_rows == expected:
                raise AssertionError(
                    f"{query.name}: Spark {spark_rows} rows, skipindex.read {skip_rows}, "
                    f"DuckDB {expected}"
                )
            prune_t = median(repeat(partial(si.prune, str(folder), query.sql), config.runs))
            speedup = median(spark_t) / median(skip_t)
            print(
                f"  {order} {query.name}: Spark {median(spark_t):.2f} s, skipindex.read "
                f"{median(skip_t):.2f} s ({speedup:.2f}x), floor only {median(floor_t):.2f} s",
                flush=True,
            )
            share = len(matching) / result.total
            where = order if files == FILES else f"{order}-{files}"
            label = f"{where} {query.name} ({ratio(speedup)})"
            if share <= FAST_WHEN_FLOOR_AT_MOST:
                fast.append(label)
                fast_ok &= speedup >= FAST_FACTOR
            if share >= FLOOR_BELOW:
                slow.append(label)
                slow_ok &= speedup >= 1 / SLOW_LIMIT
            to_floor = median(skip_t) / median(floor_t)
            if share < FLOOR_BELOW:
                near.append(f"{where} {query.name} ({ratio(to_floor)})")
                near_ok &= to_floor <= FLOOR_LIMIT
            rows.append(
                [
                    f"{query.name}: `{query.sql}`",
                    f"{result.kept} / {len(matching)} / {result.total}",
                    f"{expected:,}",
                    ms(median(spark_t)),
                    ms(median(skip_t)),
                    ms(prune_t),
                    ratio(speedup),
                    ms(median(floor_t)),
                    ratio(to_floor),
                ]
            )
            plot["queries"].append(query.name)
            plot["speedup"].append(speedup)
        section.tables.append(
            Table(
                f"SF{config.e2e_scale:g}, {order} rows, {files} files",
                [
                    "query",
                    "kept / floor / files",
                    "rows",
                    "Spark ms",
                    "skipindex.read ms",
                    "of which prune ms",
                    "speedup",
                    "floor only ms",
                    "skipindex.read / floor only",
                ],
                rows,
            )
        )
        if files == FILES:
            section.plot[order] = plot
    spark.stop()
    section.targets.append(
        Target(
            key="e2e-fast",
            goal="skipindex.read >= 3x faster than plain Spark when the floor is <= 15% of files",
            measured=", ".join(fast) or "no such query in this mode",
            met=fast_ok if fast else None,
        )
    )
    section.targets.append(
        Target(
            key="e2e-slow",
            goal="skipindex.read at most 10% slower than plain Spark where the floor is at "
            "least half the files",
            measured=", ".join(slow) or "no such query in this mode",
            met=slow_ok if slow else None,
        )
    )
    section.targets.append(
        Target(
            key="e2e-floor",
            goal="skipindex.read within 10% of Spark reading only the floor's files where the "
            "floor is below half the files",
            measured=", ".join(near) or "no such query in this mode",
            met=near_ok if near else None,
        )
    )
    return section
