"""Support for the advisor's tests: a small table of events and two workloads."""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

FILES = 24
ROWS = 400


def events_table(folder: Path, shuffled: bool = False, seed: int = 7) -> Path:
    """``day`` rises with the file number (unless ``shuffled``), ``cat`` is one
    of 12 values anywhere, ``k`` a unique key in random order."""
    generator = np.random.default_rng(seed)
    total = FILES * ROWS
    days = np.repeat(np.arange(FILES), ROWS) * 3 + generator.integers(0, 3, total)
    keys = generator.permutation(total)
    cats = generator.integers(0, 12, total)
    order = generator.permutation(total) if shuffled else np.arange(total)
    table = pa.table(
        {
            "k": pa.array(keys[order], pa.int64()),
            "cat": pa.array([f"c{c}" for c in cats[order]]),
            "day": pa.array(
                [datetime.date(2024, 1, 1) + datetime.timedelta(days=int(d)) for d in days[order]]
            ),
            "x": pa.array(generator.normal(size=total)),
        }
    )
    folder.mkdir()
    for number in range(FILES):
        piece = table.slice(number * ROWS, ROWS)
        pq.write_table(piece, folder / f"part-{number:05d}.parquet")
    return folder


DAY_QUERIES = {
    "week": "SELECT count(*) FROM events WHERE day BETWEEN DATE '2024-01-10' AND DATE '2024-01-16'",
    "month": "SELECT sum(x) FROM events WHERE day >= DATE '2024-02-01' AND day < DATE '2024-03-01'",
    "cat": "SELECT k FROM events WHERE cat = 'c3' AND day < DATE '2024-01-20'",
}
KEY_QUERIES = {f"key{n}": f"k = {n * 97}" for n in range(6)}
