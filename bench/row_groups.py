"""Section 7: row groups inside the files prune keeps.

TPC-H SF1 lineitem shuffled into 10 files of 100,000-row row groups (6 per
file), indexed with the bitmaps configuration. Where file skipping keeps most
files, ``PruneResult.row_groups_of`` still names the row groups that can hold a
match. Counted against the floor (row groups holding a matching row, by DuckDB's
``file_row_number``), and timed as a pyarrow user would read them: every file
with a filter, against only the named row groups with the same filter.
"""

from __future__ import annotations

from pathlib import Path

import data
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from measure import Config, Section, Table, Target, alternating, median, ms, ratio
from queries import QUERIES, Query, specs
from runners import ensure_index

import skipindex as si

FILES = 10
GROUP_ROWS = 100_000
SELECTIVE = ("Q1 point", "Q4 range+eq", "Q5 five eq", "Q7 or", "Q8 not")


def table() -> Path:
    """The shuffled SF1 rows rewritten into 10 files of 100k-row row groups."""
    folder = data.DATA / "sf1-shuffled-10-rowgroups"
    table = folder / "lineitem"  # the READY marker stays outside the table
    if (folder / "READY").exists():
        return table
    source = data.lineitem(1, "shuffled", 100)
    rows = pa.concat_tables(pq.read_table(f) for f in data.data_files(source))
    table.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(rows) // FILES)
    for number in range(FILES):
        part = rows.slice(number * per_file, per_file)
        pq.write_table(part, table / f"part-{number:05d}.parquet", row_group_size=GROUP_ROWS)
    (folder / "READY").write_text("")
    return table


def floor_groups(folder: Path, query: Query, group_rows: int = GROUP_ROWS) -> dict[str, set[int]]:
    """File name -> its row groups (of ``group_rows`` rows) holding a matching row."""
    relation = duckdb.sql(
        f"SELECT filename, file_row_number // {group_rows} FROM read_parquet("
        f"'{folder}/*.parquet', filename=true, file_row_number=true) WHERE {query.sql} "
        "GROUP BY ALL"
    )
    assert relation is not None
    out: dict[str, set[int]] = {}
    for name, group in relation.fetchall():
        out.setdefault(Path(name).name, set()).add(int(group))
    return out


def _columns(query: Query) -> list[str]:
    names = {"l_partkey", "l_suppkey", "l_orderkey", "l_quantity", "l_discount", "l_tax"}
    names |= {"l_shipdate", "l_shipmode", "l_shipinstruct", "l_returnflag", "l_linestatus"}
    return sorted(n for n in names if n in query.sql)


def _read_all(files: list[Path], query: Query) -> int:
    columns = _columns(query)
    return sum(len(pq.read_table(f, columns=columns).filter(query.arrow())) for f in files)


def _read_groups(groups: dict[str, list[int]], query: Query) -> int:
    columns = _columns(query)
    total = 0
    for file, wanted in groups.items():
        part = pq.ParquetFile(file).read_row_groups(wanted, columns=columns)
        total += len(part.filter(query.arrow()))
    return total


def run(config: Config) -> Section:
    section = Section(
        key="rowgroups",
        title="7. Row groups inside the kept files",
        intro=(
            f"TPC-H SF1 lineitem shuffled into {FILES} files with row groups of "
            f"{GROUP_ROWS:,} rows (7 per file), bitmaps configuration. "
            "Row groups: named by `PruneResult.row_groups_of` (a file without an answer counts "
            "all its row groups) against the floor (row groups holding a matching row, by "
            "DuckDB's `file_row_number`). Reads: pyarrow reading the query's columns of every "
            "file and filtering, against reading only the named row groups of the kept files "
            f"(`ParquetFile.read_row_groups`) and filtering; medians of {config.runs} "
            "alternating runs, row counts asserted equal. Prune time is not in the reads."
        ),
    )
    folder = table()
    ensure_index(folder, specs("bitmaps"))
    files = data.data_files(folder)
    per_file = {f.name: pq.ParquetFile(f).metadata.num_row_groups for f in files}
    rows = []
    exact = True
    speedups = []
    for query in (q for q in QUERIES if q.name in SELECTIVE):
        result = si.prune(str(folder), query.sql)
        named = {
            f: result.row_groups_of(f) or list(range(per_file[Path(f).name])) for f in result.files
        }
        floor = floor_groups(folder, query)
        kept = sum(len(g) for g in named.values())
        needed = sum(len(g) for g in floor.values())
        for name, groups in floor.items():
            match = [f for f in named if Path(f).name == name]
            assert match, (query.name, name)  # a file holding a match was kept
            assert groups <= set(named[match[0]]), (query.name, name)
        exact &= (not query.conjunctive) or kept == needed
        full, narrow, all_rows, group_rows = alternating(
            lambda q=query: _read_all(files, q),
            lambda q=query, n=named: _read_groups(n, q),
            config.runs,
        )
        assert all_rows == group_rows, (query.name, all_rows, group_rows)
        speedup = median(full) / median(narrow)
        speedups.append((query.name, speedup))
        rows.append(
            [
                f"{query.name}: `{query.sql}`",
                f"{result.kept} / {len(files)}",
                f"{kept} / {sum(per_file.values())}",
                str(needed),
                f"{all_rows:,}",
                ms(median(full)),
                ms(median(narrow)),
                ratio(speedup),
            ]
        )
    section.tables.append(
        Table(
            "row groups named vs the floor, and pyarrow reads",
            [
                "query",
                "files kept",
                "row groups named",
                "floor",
                "rows",
                "read all files ms",
                "read named row groups ms",
                "speedup",
            ],
            rows,
        )
    )
    section.targets.append(
        Target(
            "rowgroups-exact",
            "exact bitmaps name exactly the row groups holding a match (conjunctive queries)",
            "all at the floor" if exact else "some above the floor",
            exact,
        )
    )
    slowest = min(speedups, key=lambda s: s[1])
    section.targets.append(
        Target(
            "rowgroups-read",
            "pyarrow reading only the named row groups >= 3x faster than reading every file",
            ", ".join(f"{n} {ratio(s)}" for n, s in speedups),
            slowest[1] >= 3,
        )
    )
    section.plot = {"queries": [n for n, _ in speedups], "speedup": [s for _, s in speedups]}
    return section
