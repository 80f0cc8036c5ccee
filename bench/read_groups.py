"""Section 8: ``skipindex.read`` reading only the row groups that can match.

TPC-H lineitem in the generator's order, cut into 10 files (quick: SF1 with
100,000-row row groups; full: SF10 with 1M-row row groups, about 250 MB a file),
bitmaps configuration. File skipping keeps every file for these queries; read()
still opens only the row groups the bitmaps leave, decodes in them only the pages
holding candidate rows, and passes on only those rows. Timed three ways with Spark
local[2]: plain Spark, read() with ``row_groups=False`` (whole kept files), and
read() (prune included). Each side writes every column to Spark's ``noop`` sink,
as a reader of rows pays; a ``count()`` would let Spark read only the predicate's
columns, while the Python data source behind read()'s row groups reads every
column of those groups.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import data
import pyarrow.parquet as pq
from measure import Config, Section, Table, Target, median, ms, ratio, rotating
from queries import BY_NAME, specs
from row_groups import floor_groups
from runners import ensure_index
from skipping import floor

import skipindex as si
from skipindex.indexing.runners import SparkRunner

FILES = 10
SELECTIVE = ("Q1 point", "Q4 range+eq", "Q7 or", "Q8 not")
FAST_FACTOR = 3.0
# Rows per row group larger than any file: one row group per file.
ONE_GROUP = 100_000_000


def _layout(config: Config) -> tuple[float, int]:
    return (10, 1_000_000) if config.mode == "full" else (1, 100_000)


def _write_all(frame: Any) -> None:
    """Every column of every row, to a sink that discards them."""
    frame.write.format("noop").mode("overwrite").save()


def run(config: Config) -> Section:
    from skipindex.spark.session import local_session

    scale, group_rows = _layout(config)
    spark = local_session(2)
    section = Section(
        key="readgroups",
        title="8. skipindex.read by row groups",
        intro=(
            f"TPC-H SF{scale:g} lineitem in the generator's order, {FILES} files with row "
            f"groups of {group_rows:,} rows, then the same rows with one row group per file "
            "(as Spark writes files under 128 MB: no row group to skip, only pages), bitmaps "
            "configuration, Spark local[2]. Each side "
            "writes every column of the matching rows to Spark's `noop` sink: plain Spark "
            "(`spark.read.parquet(dir).filter(q)`), `skipindex.read(..., row_groups=False)` "
            "(whole kept files), and `skipindex.read` (only the row groups that can match, "
            "prune included). Medians of rotating runs (5; 3 at SF10) after a warm-up; "
            "row counts asserted equal to DuckDB's. Row groups: read by `read()` / holding a "
            "match (DuckDB's `file_row_number`) / all; the best a reader of whole row groups can "
            "do is all / holding a match (the 'row-group bound'): read() passes it by "
            "decoding, in those row groups, only the pages that hold candidate rows."
        ),
    )
    layouts = [
        (group_rows, "readgroups-fast", ""),
        (ONE_GROUP, "readgroups-one-group", ", files of one row group"),
    ]
    for rows_per_group, key, files_of in layouts:
        table, speedups = _layout_run(spark, config, scale, rows_per_group)
        section.tables.append(table)
        goal = (
            f"skipindex.read >= {FAST_FACTOR:g}x plain Spark on selective queries that keep "
            f"every file{files_of}"
        )
        section.targets.append(
            Target(
                key,
                goal,
                ", ".join(f"{n} {ratio(s)}" for n, s in speedups),
                min(s for _, s in speedups) >= FAST_FACTOR,
            )
        )
        if rows_per_group != ONE_GROUP:
            section.plot = {
                "queries": [n for n, _ in speedups],
                "speedup": [s for _, s in speedups],
            }
    spark.stop()
    return section


def _layout_run(
    spark: Any, config: Config, scale: float, group_rows: int
) -> tuple[Table, list[tuple[str, float]]]:
    """One layout's table, and read()'s speedup over plain Spark per query."""
    folder = data.lineitem(scale, "natural", FILES, row_group=group_rows)
    if ensure_index(folder, specs("bitmaps"), SparkRunner(spark)):
        print(f"  built the bitmaps index on {folder} with Spark", flush=True)
    si.build_index(str(folder), spark=spark)  # records Spark's schema for read()
    rows: list[list[str]] = []
    speedups: list[tuple[str, float]] = []
    per_file = {str(f): pq.ParquetFile(f).metadata.num_row_groups for f in data.data_files(folder)}
    total_groups = sum(per_file.values())
    for name in SELECTIVE:
        query = BY_NAME[name]
        _, expected = floor(folder, query)
        needed = sum(len(g) for g in floor_groups(folder, query, group_rows).values())
        result = si.prune(str(folder), query.sql)
        named = sum(
            len(result.row_groups_of(f) or range(per_file[str(Path(f))])) for f in result.files
        )

        frames = [
            lambda q=query.sql: spark.read.parquet(str(folder)).filter(q),
            lambda q=query.sql: si.read(spark, str(folder), q, row_groups=False),
            lambda q=query.sql: si.read(spark, str(folder), q),
        ]
        counts = [int(frame().count()) for frame in frames]
        assert counts == [expected] * 3, (name, counts, expected)
        sides = [lambda f=frame: _write_all(f()) for frame in frames]
        times, _ = rotating(sides, min(config.runs, 3) if scale > 1 else config.runs)
        plain, whole, groups = (median(t) for t in times)
        speedups.append((name, plain / groups))
        print(f"  {name}: Spark {plain:.2f} s, read() {groups:.2f} s", flush=True)
        rows.append(
            [
                f"{name}: `{query.sql}`",
                f"{result.kept} / {FILES}",
                f"{named} / {needed} / {total_groups}",
                f"{expected:,}",
                ms(plain),
                ms(whole),
                ms(groups),
                ratio(plain / groups),
                ratio(total_groups / max(needed, 1)),
            ]
        )
    shape = (
        "one row group per file" if group_rows == ONE_GROUP else f"{group_rows:,}-row row groups"
    )
    table = Table(
        f"SF{scale:g}, generator order, {FILES} files, {shape}",
        [
            "query",
            "files kept",
            "row groups read / holding a match / all",
            "rows",
            "Spark ms",
            "read(row_groups=False) ms",
            "read() ms",
            "speedup",
            "row-group bound",
        ],
        rows,
    )
    return table, speedups
