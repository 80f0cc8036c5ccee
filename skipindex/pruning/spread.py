"""How much of a column's range each file spans, from its min-max index.

A list of keys can skip a file only where the file's values miss every key. On
a column only min-max answers, a file is skipped where its [min, max] falls
between the keys; where every file spans most of the column's range (the table
is not clustered by it: TPC-DS's demographics keys over date-sorted sales),
scattered keys, or their covering range, skip nothing, and computing them is
planning for nothing. The spread is the median file's share of the whole
range: near 0 for a column the files are sorted by, near 1 for one they are not.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.errors import SkipIndexError
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, load_latest
from skipindex.store.segments import read_segments

__all__ = ["UNCLUSTERED", "clustered_by", "column_spread"]

# A column whose median file spans more than this share of its range is not one
# the table is clustered by: keys on it skip no file by min-max alone.
UNCLUSTERED = 0.5


# (table, its segments, min-max field) -> the spread: segment files are written once
# under unique names, and si.sql asks for each join column of each reference (q88: 120
# times a query, 1.5 s of reading segments where nothing is kept).
_SPREADS: OrderedDict[tuple[str, tuple[str, ...], str], float | None] = OrderedDict()
_KEPT = 1024
_lock = threading.Lock()


def column_spread(location: TableLocation, column: str) -> float | None:
    """The median share of ``column``'s range one file spans (None: no min-max
    index on a numeric column, or nothing indexed)."""
    try:
        manifest = load_latest(location)
    except (SkipIndexError, OSError):
        return None
    found = [
        d.field
        for d in (manifest.indexes if manifest is not None else ())
        if d.kind == "minmax" and d.expression is None and d.column.lower() == column.lower()
    ]
    if manifest is None or not found:
        return None
    key = (str(location.user_root), tuple(s.path for s in manifest.segments), found[0])
    with _lock:
        if key in _SPREADS:
            _SPREADS.move_to_end(key)
            return _SPREADS[key]
    spread = _measured(location, manifest, found[0])
    with _lock:
        _SPREADS[key] = spread
        while len(_SPREADS) > _KEPT:
            _SPREADS.popitem(last=False)
    return spread


def clustered_by(location: TableLocation, column: str) -> bool | None:
    """Whether the table's files are clustered by ``column``: its median file spans
    at most :data:`UNCLUSTERED` of the column's range (None: not measured)."""
    spread = column_spread(location, column)
    return None if spread is None else spread <= UNCLUSTERED


def _measured(location: TableLocation, manifest: Manifest, field: str) -> float | None:
    try:
        segments = read_segments(location, manifest, [field])
    except (SkipIndexError, OSError):
        return None
    payloads = segments.column(field).combine_chunks()
    if payloads.null_count == len(payloads) or not len(payloads):
        return None
    low, high = payloads.field("min"), payloads.field("max")
    if pa.types.is_date(low.type) or pa.types.is_timestamp(low.type):
        low, high = low.cast(pa.int64()), high.cast(pa.int64())
    if not (pa.types.is_integer(low.type) or pa.types.is_floating(low.type)):
        return None  # strings, decimals: not measured
    lows = np.asarray(pc.fill_null(low, 0).to_numpy(zero_copy_only=False), dtype=np.float64)
    highs = np.asarray(pc.fill_null(high, 0).to_numpy(zero_copy_only=False), dtype=np.float64)
    known = np.asarray(low.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if not known.any():
        return None
    span = highs[known].max() - lows[known].min()
    if span <= 0:
        return 1.0
    return float(np.median((highs[known] - lows[known]) / span))
