"""Iceberg-style planning of the same files, by pyiceberg: the peer for lake_scale.

The small-file tables of bench/lake_scale.py (10,000 and 100,000 files of 100
lineitem rows) are registered once in an Iceberg table (pyiceberg's SQL catalog
on SQLite, ``add_files``: no data copied; pyiceberg reads each file's footer for
its column metrics, as an Iceberg writer records them). Then, per predicate,
what Iceberg's own planning does for a reader: ``table.scan(row_filter).plan_files()``
prunes by the manifests' column metrics (lower and upper bounds, null counts),
the min-max of every column but with no Bloom filter and no row-level bitmap.

* warm: the table loaded once, planned again and again (its manifests cached
  in the process, as pyiceberg caches them);
* cold: a fresh process, ``import pyiceberg``, load the catalog and the table,
  plan: the seconds and the peak RSS.

The files kept are printed beside skipindex's, which prunes the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import data
from measure import median

# The lake_scale predicates as pyiceberg parses them (dates and decimals as text,
# cast to the column's type as Iceberg binds them).
ROW_FILTERS = {
    "min-max": "l_shipdate >= '1995-06-01' AND l_shipdate <= '1995-06-03'",
    "min-max + equality bitmap": (
        "l_shipdate >= '1995-06-01' AND l_shipdate <= '1995-06-03' AND l_shipmode = 'AIR'"
    ),
    "Bloom": "l_partkey = 4242",
    "3-condition bitmaps": "l_shipmode = 'AIR' AND l_quantity = 1 AND l_discount = '0.00'",
}
_ADD_BATCH = 10_000  # files per add_files commit while the table is made

COLD = """
import json, sys, time
started = time.perf_counter()
from pyiceberg.catalog import load_catalog
options = json.loads(sys.argv[1])
table = load_catalog(options.pop("name"), **options).load_table("lake.lineitem")
kept = len(table.scan(row_filter=sys.argv[2]).plan_files())
done = time.perf_counter()
with open("/proc/self/status") as f:
    hwm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM"))
print(json.dumps({"seconds": done - started, "hwm": hwm, "kept": kept}))
"""


def iceberg_table(table: Path) -> dict[str, str]:
    """An Iceberg table of ``table``'s files (registered once): its catalog's properties."""
    import pyarrow.parquet as pq

    folder = table.parent.parent / f"{table.parent.name}-iceberg"
    properties = data.iceberg_catalog(folder, "lake")
    if (folder / "READY").exists():
        return properties
    started = time.perf_counter()
    data._fresh(folder)
    catalog = data.open_catalog(properties)
    catalog.create_namespace("lake")
    files = [str(f) for f in sorted(table.glob("*.parquet"))]
    iceberg = catalog.create_table("lake.lineitem", schema=pq.read_schema(files[0]))
    print(f"  registering {len(files):,} files in an Iceberg table at {folder}", flush=True)
    for at in range(0, len(files), _ADD_BATCH):
        iceberg.add_files(file_paths=files[at : at + _ADD_BATCH])
    (folder / "READY").write_text(f"{time.perf_counter() - started:.0f} s\n")
    return properties


def plan(properties: dict[str, str], name: str, runs: int) -> dict[str, Any]:
    """pyiceberg's planning of one lake_scale predicate: files kept, warm and cold."""
    table = data.open_catalog(properties).load_table("lake.lineitem")
    row_filter = ROW_FILTERS[name]
    kept = len(table.scan(row_filter=row_filter).plan_files())  # and warms its caches
    warm = []
    for _ in range(runs):
        started = time.perf_counter()
        table.scan(row_filter=row_filter).plan_files()
        warm.append(time.perf_counter() - started)
    colds = [_cold(properties, row_filter) for _ in range(2)]
    assert all(c["kept"] == kept for c in colds), f"{name}: pyiceberg answered otherwise cold"
    return {
        "kept": kept,
        "warm_s": median(warm),
        "cold_s": median([c["seconds"] for c in colds]),
        "cold_hwm": int(median([c["hwm"] for c in colds])),
    }


def _cold(properties: dict[str, str], row_filter: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", COLD, json.dumps(properties), row_filter],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))
