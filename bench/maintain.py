"""Section 12: the maintenance service: index lag and files per query over a
stream of commits, with and without it.

A writer commits one small file (2,000 rows, ids in commit order, a random
``v``) at a time to a plain Parquet table of 8 such files that a first pass
of the service indexed (min-max on ``id``, Bloom on ``v``) and packed into
one, in both streams. Without the service the index then stays as it was:
every new file is kept by every query. With it, each commit is
followed by one pass of the service (``si.maintain``'s loop on one Spark
session: the refresh the commit queues, and bin-packing once 8 small files
pile up). Per commit: the files listed, the files each query keeps (an id
range of 2,000 rows at a random place, ``v = 17``), the files the index does
not cover, and the index lag: the seconds from the commit until every file is
covered (a pass's wall time; without the service it never comes).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from measure import Config, Section, Table, Target

import skipindex as si

ROWS = 2000
START_FILES = 8


def _commit(table: Path, number: int) -> None:
    rng = np.random.default_rng(number)
    ids = np.arange(number * ROWS, (number + 1) * ROWS, dtype=np.int64)
    data = pa.table({"id": ids, "v": rng.integers(0, 5000, ROWS)})
    pq.write_table(data, table / f".c{number:05d}.parquet")
    (table / f".c{number:05d}.parquet").rename(table / f"c{number:05d}.parquet")


def _policy(folder: Path, table: Path) -> Path:
    path = folder / f"{table.name}.toml"
    path.write_text(
        f'[service]\nstate = "{folder / table.name}.db"\n'
        f'[[table]]\npath = "{table}"\n'
        'indexes = [{kind = "minmax", column = "id"}, {kind = "bloom", column = "v"}]\n'
        "target_file_mb = 0.2\nbinpack_min_small_files = 8\n"
    )
    return path


def _queries(commit: int, rng: np.random.Generator) -> list[str]:
    start = int(rng.integers(0, (commit + 1) * ROWS))
    return [f"id BETWEEN {start} AND {start + ROWS - 1}", "v = 17"]


def _stream(folder: Path, commits: int, service: bool, spark: Any) -> list[dict[str, float]]:
    from skipindex.maintain.policy import load_policy
    from skipindex.maintain.scheduler import Service

    table = folder / ("with" if service else "without")
    table.mkdir(parents=True)
    for number in range(START_FILES):
        _commit(table, number)
    policy = load_policy(_policy(folder, table))
    runner = Service(policy, spark=spark)
    try:
        runner.run_once()  # the first build, in both streams
        rng = np.random.default_rng(7)
        rows = []
        for number in range(START_FILES, START_FILES + commits):
            _commit(table, number)
            lag = float("nan")
            if service:
                began = time.perf_counter()
                runner.run_once()
                lag = time.perf_counter() - began
            kept = [si.prune(str(table), q).kept for q in _queries(number, rng)]
            listing = si.prune(str(table), "TRUE")
            rows.append(
                {
                    "commit": number - START_FILES + 1,
                    "files": listing.total,
                    "uncovered": listing.total - listing.covered,
                    "kept_range": kept[0],
                    "kept_eq": kept[1],
                    "lag": lag,
                }
            )
    finally:
        runner.close()
    return rows


def run(config: Config) -> Section:
    from skipindex.spark.session import local_session

    commits = 24 if config.mode == "quick" else 80
    spark = local_session(2)
    folder = Path(tempfile.mkdtemp(prefix="skipindex-bench-maintain-"))
    try:
        without = _stream(folder, commits, False, spark)
        with_service = _stream(folder, commits, True, spark)
    finally:
        spark.stop()
        shutil.rmtree(folder, ignore_errors=True)
    section = Section(
        key="maintain",
        title="12. The maintenance service: index lag and files per query",
        intro=__doc__.split("\n\n", 1)[1].replace("\n", " ").strip(),
    )
    marks = sorted({max(1, commits * k // 4) for k in range(1, 5)})
    rows = []
    for mark in marks:
        a, b = without[mark - 1], with_service[mark - 1]
        rows.append(
            [
                f"{mark}",
                f"{a['files']} / {b['files']}",
                f"{a['uncovered']} / {b['uncovered']}",
                f"{a['kept_range']} / {b['kept_range']}",
                f"{a['kept_eq']} / {b['kept_eq']}",
                f"never / {b['lag']:.1f} s",
            ]
        )
    lags = [r["lag"] for r in with_service]
    mean = {
        name: (
            statistics.fmean(r["kept_range"] for r in stream),
            statistics.fmean(r["files"] for r in stream),
        )
        for name, stream in (("without", without), ("with", with_service))
    }
    rows.append(
        [
            f"mean of {commits}",
            f"{mean['without'][1]:.1f} / {mean['with'][1]:.1f}",
            f"{statistics.fmean(r['uncovered'] for r in without):.1f} / "
            f"{statistics.fmean(r['uncovered'] for r in with_service):.1f}",
            f"{mean['without'][0]:.1f} / {mean['with'][0]:.1f}",
            f"{statistics.fmean(r['kept_eq'] for r in without):.1f} / "
            f"{statistics.fmean(r['kept_eq'] for r in with_service):.1f}",
            f"lag median {statistics.median(lags):.1f} s, max {max(lags):.1f} s",
        ]
    )
    section.tables.append(
        Table(
            f"{commits} commits of one {ROWS:,}-row file each (without the service / with it)",
            ["after commit", "files", "not covered", "kept: id range", "kept: v = 17", "index lag"],
            rows,
            notes=[
                "index lag with the service: the wall time of the pass after the commit "
                "(refresh, and bin-packing when due), on a warm local[2] session",
                "the id range matches the rows of one commit: its floor is 1 or 2 files",
            ],
        )
    )
    last_without, last_with = without[-1], with_service[-1]
    section.targets.append(
        Target(
            "maintain-fresh",
            "with the service every commit is covered after its pass, and an id range "
            "keeps at most 3 files however many commits landed",
            f"{max(r['uncovered'] for r in with_service)} files left uncovered at worst; "
            f"id range keeps {max(r['kept_range'] for r in with_service)} at worst "
            f"(without: {last_without['kept_range']} after {commits} commits)",
            max(r["uncovered"] for r in with_service) == 0
            and max(r["kept_range"] for r in with_service) <= 3,
        )
    )
    section.plot = {"files_with": [r["files"] for r in with_service], "files": last_with["files"]}
    return section


if __name__ == "__main__":  # python bench/maintain.py: print the table (not saved)
    from measure import QUICK
    from report import markdown_table

    result = run(QUICK)
    for table in result.tables:
        print("\n".join(markdown_table(table)))
    for target in result.targets:
        print(f"{target.goal}: {target.measured} ({'met' if target.met else 'missed'})")
    sys.exit(0)
