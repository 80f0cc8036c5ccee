"""How much of a column's range each file spans, from its min-max index.

A list of keys can skip a file only where the file's values miss every key. On
a column only min-max answers, a file is skipped where its [min, max] falls
between the keys; where every file spans most of the column's range (the table
is not clustered by it: demographics keys over date-sorted sales),
scattered keys, or their covering range, skip nothing, and computing them is
planning for nothing. The spread is the median file's share of the whole
range: near 0 for a column the files are sorted by, near 1 for one they are not.
The same read of the min-max gives the joined ranges of every file's values, which
si.sql's key lists are clipped to (:mod:`skipindex.sql.file_ranges`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.errors import SkipIndexError
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, load_latest
from skipindex.store.segments import read_segments

__all__ = [
    "UNCLUSTERED",
    "clustered_by",
    "column_spread",
    "field_ranges",
    "holding_ranges",
    "joined_ranges",
]

# A column whose median file spans more than this share of its range is not one
# the table is clustered by: keys on it skip no file by min-max alone.
UNCLUSTERED = 0.5


@dataclass(frozen=True)
class _Summary:
    """A min-max field over every indexed file: the median file's share of the
    range (None: not measured), and the joined ``(min, max)`` of the files
    holding a value (None: an integer column's bounds not known for every file,
    or not an integer column)."""

    spread: float | None
    ranges: tuple[tuple[int, int], ...] | None  # shared by every caller: not a list


# (table, its segments, min-max field) -> what its min-max says: segment files are
# written once under unique names, and si.sql asks for each join column of each
# reference (up to 120 times a query of many references to one fact: 1.5 s of
# reading segments where nothing is kept).
_SUMMARIES: OrderedDict[tuple[str, tuple[str, ...], str], _Summary] = OrderedDict()
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
    return _summary(location, manifest, found[0]).spread


def clustered_by(location: TableLocation, column: str) -> bool | None:
    """Whether the table's files are clustered by ``column``: its median file spans
    at most :data:`UNCLUSTERED` of the column's range (None: not measured)."""
    spread = column_spread(location, column)
    return None if spread is None else spread <= UNCLUSTERED


def field_ranges(
    location: TableLocation, manifest: Manifest, field: str
) -> list[tuple[int, int]] | None:
    """The joined ``(min, max)`` of every indexed file holding a non-NULL value in
    the integer min-max ``field`` (dates as days), as it was indexed (None: some
    file's bounds are not known)."""
    ranges = _summary(location, manifest, field).ranges
    return None if ranges is None else list(ranges)


def holding_ranges(payloads: pa.StructArray, holding: np.ndarray) -> list[tuple[int, int]] | None:
    """The joined (min, max) of the min-max ``payloads`` where ``holding`` (a file
    with a non-NULL value: one of only NULLs holds no key)."""
    mask = pa.array(holding, pa.bool_())
    lows, highs = payloads.field("min").filter(mask), payloads.field("max").filter(mask)
    if lows.null_count or highs.null_count:
        return None
    return joined_ranges(list(zip(lows.to_pylist(), highs.to_pylist(), strict=True)))


def joined_ranges(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping or adjacent ones (integers, days) joined."""
    out: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def _summary(location: TableLocation, manifest: Manifest, field: str) -> _Summary:
    key = (str(location.user_root), tuple(s.path for s in manifest.segments), field)
    with _lock:
        if key in _SUMMARIES:
            _SUMMARIES.move_to_end(key)
            return _SUMMARIES[key]
    try:
        segments = read_segments(location, manifest, [field])
    except (SkipIndexError, OSError):
        summary = _Summary(None, None)
    else:
        payloads = segments.column(field).combine_chunks()
        summary = _Summary(_spread(payloads), _ranges(payloads, segments.column("num_rows")))
    with _lock:
        _SUMMARIES[key] = summary
        while len(_SUMMARIES) > _KEPT:
            _SUMMARIES.popitem(last=False)
    return summary


def _ranges(
    payloads: pa.StructArray, num_rows: pa.ChunkedArray
) -> tuple[tuple[int, int], ...] | None:
    if payloads.null_count or not pa.types.is_integer(payloads.type.field("min").type):
        return None  # a file without this index (a failed build's): its bounds unknown
    nulls = payloads.field("null_count").to_numpy(zero_copy_only=False)
    ranges = holding_ranges(payloads, num_rows.to_numpy() != nulls)
    return None if ranges is None else tuple(ranges)


def _spread(payloads: pa.StructArray) -> float | None:
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
