"""How many join keys dynamic pruning should hand prune: time against list length.

    python bench/sql_keys.py            # SSB star lineorder, SF10 natural (1,000 files)
    python bench/sql_keys.py --sf1      # SF1 (100 files)

``si.sql`` adds ``fk IN (keys)`` to a fact reference's predicate when the other
side of an equi-join yields at most ``dynamic_keys`` distinct keys. Per index kind
alone (hard links to the same files, one index each), this prunes with lists of
n random keys, as ``si.sql`` writes them (SQL text: parsing and binding count),
both as a plain IN list and as ``si.sql`` writes it (runs of consecutive keys as
ranges; a long scattered list as one covering range for equality and range
bitmaps, which answer lists key by key, and for bit-sliced bitmaps where it is
expected to skip no file: sql/key_use.py), and reports the median of warm prunes
and the files kept:

* ``lo_custkey`` (1.5M customers at SF10, scattered over every file): Bloom
  filter, min-max, bit-sliced bitmap;
* ``lo_orderdate`` (2,406 distinct days): equality bitmap, bit-sliced bitmap,
  min-max; keys are whole runs of days, as a date dimension's filters give.

The bound is where a list still prunes in well under the cost of the key query
itself (one Spark scan of a dimension, 0.2-1 s here).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

import data
import pyarrow.parquet as pq
import ssb
from measure import Table, machine
from report import markdown_table
from runners import PoolRunner, ensure_index

import skipindex as si
from skipindex.sql.conjuncts import render
from skipindex.sql.dynamic import in_node, key_condition
from skipindex.sql.key_use import KeyList, key_form
from skipindex.sql.local_keys import ROW_LEVEL

SIZES = (10, 100, 1000, 2000, 4096, 8192)
DAYS = 2406  # distinct lo_orderdate values
SLOW = 10.0  # seconds: longer lists are not tried on a kind that took this long
KINDS = {
    "lo_custkey": [si.Bloom, si.MinMax, si.BitSlicedBitmap],
    "lo_orderdate": [si.EqualityBitmap, si.BitSlicedBitmap, si.MinMax],
}


def _keys(column: str, n: int, customers: int) -> list[Any]:
    """n keys, the same for every kind (seeded by the column and n)."""
    rnd = random.Random(f"{column}-{n}")
    if column == "lo_custkey":
        return sorted(rnd.sample(range(1, customers + 1), n))
    first = date(1992, 1, 1) + timedelta(days=rnd.randint(0, max(0, 2405 - n)))
    return [first + timedelta(days=d) for d in range(min(n, 2406))]


def _as_sql_writes_it(kind: str, column: str, keys: list[Any], share_per_key: float) -> Any:
    """The condition si.sql gives lineorder for these keys of a dimension, on
    a column with this one kind (the lists alone: no other join's)."""
    row_level = kind in ROW_LEVEL
    form = key_form({kind}, [KeyList(len(keys), len(keys) * share_per_key, row_level)], 0, 1.0)
    return key_condition("t", column, keys, form.collapse, form.ranges, form.one_list)


def _median_prune(folder: str, where: str, runs: int = 3) -> tuple[float, int]:
    started = time.perf_counter()
    kept = si.prune(folder, where).kept  # warm the caches
    if time.perf_counter() - started > SLOW:
        return time.perf_counter() - started, kept
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        si.prune(folder, where)
        times.append(time.perf_counter() - started)
    return statistics.median(times), kept


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf1", action="store_true", help="SF1 in 100 files (else SF10, 1,000)")
    args = parser.parse_args(argv)
    scale, files = (1, 100) if args.sf1 else (10, 1000)
    lineorder = ssb.star(scale, files)["lineorder"]
    customers = 150_000 * scale
    paths = data.data_files(lineorder, "*.parquet")
    rows_per_file = sum(pq.ParquetFile(p).metadata.num_rows for p in paths) / len(paths)
    out = [f"{k}: {v}" for k, v in machine().items()]
    for column, kinds in KINDS.items():
        rows = []
        for kind in kinds:
            spec = kind(column)
            folder = data.index_copy(lineorder, f"keys-{spec.kind}-{column}")
            if ensure_index(folder, [spec], PoolRunner()):
                print(f"  built {spec.kind} on {column} in {folder}", flush=True)
            domain = customers if column == "lo_custkey" else DAYS
            for form in ("IN list", "as si.sql writes it"):
                cells = [f"{spec.kind}, {form}"]
                for n in SIZES:
                    if cells[-1].startswith(("over", "skipped")):
                        cells.append("skipped")  # the smaller list took too long already
                        continue
                    keys = _keys(column, n, customers)
                    node = (
                        in_node("t", column, keys)
                        if form == "IN list"
                        else _as_sql_writes_it(spec.kind, column, keys, rows_per_file / domain)
                    )
                    seconds, kept = _median_prune(str(folder), render(node))
                    cells.append(f"{seconds * 1000:.0f} ms, {kept}")
                    print(f"  {spec.kind} on {column} ({form}), n = {n}: {cells[-1]}", flush=True)
                    if seconds > SLOW:
                        cells[-1] = f"over {SLOW:.0f} s ({seconds:.0f} s), {kept}"
                rows.append(cells)
        title = (
            f"prune with `{column} IN (n keys)` on SSB lineorder SF{scale:g}, natural, "
            f"{files} files: median warm prune, files kept"
        )
        out += ["", *markdown_table(Table(title, ["index", *(f"n = {n}" for n in SIZES)], rows))]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
