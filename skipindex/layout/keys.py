"""Which output file each row goes to, computed per Arrow batch inside Spark tasks.

A :class:`KeyModel` is fitted on the driver from a sample and shipped to the
tasks. For every row it computes the curve key over the ``by`` columns' ranks,
the group the row's source file belongs to, and the output file: the group's
key range that the row's key falls in. Ties across a split (one key value
heavier than a file) are spread at random over the files that share it: that
is the noise Delta adds against skew, applied only where it is needed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._distinct import distinct
from skipindex.layout.curves import CURVES, bits_per_column
from skipindex.layout.ranks import boundaries, rank_count, ranks

__all__ = ["HELPER_COLUMNS", "PATH", "KeyModel", "fit", "packing"]

# Columns the job adds for its own use (the frame also gets PATH); all are dropped.
GROUP, FILE, SLOT, KEY = "_si_group", "_si_file", "_si_slot", "_si_key"
PATH = "_si_path"
HELPER_COLUMNS = (GROUP, FILE, SLOT, KEY)
MAX_BOUNDARIES = 1000  # per column, as Delta's range_partition_id(col, 1000)


@dataclass(frozen=True)
class KeyModel:
    by: tuple[str, ...]
    bounds: tuple[pa.Array, ...]
    curve: str  # a name in CURVES, or "none" (bin-packing: one file per group)
    bits: int
    depth: int  # path components in a data file's path relative to the table root
    group_of_file: dict[str, int]
    splits: tuple[np.ndarray[Any, Any], ...]  # per group: sorted keys where files change
    first_output: tuple[int, ...]  # per group: number of its first output file
    slots: tuple[int, ...]  # per output file: a LONG Spark's hash sends to that partition
    noise: bool = True

    def keys(
        self, columns: Sequence[pa.Array | pa.ChunkedArray], rows: int
    ) -> np.ndarray[Any, Any]:
        if self.curve == "none":
            return np.zeros(rows, dtype=np.uint64)
        # Stretch every column's ranks over the same span of bits: a column of 50
        # values beside one of 1,000 would otherwise only use the low bits, and the
        # curve's first splits (the ones that make files) would ignore it.
        top = np.uint64((1 << self.bits) - 1)
        stretched = [
            ranks(c, b).astype(np.uint64) * top // np.uint64(rank_count(b) - 1)
            for c, b in zip(columns, self.bounds, strict=True)
        ]
        return CURVES[self.curve](stretched, self.bits)

    def groups(self, paths: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, Any]:
        """Group number per row, from Spark's ``_metadata.file_path`` (a URI with
        %-escapes): decoded once per distinct path, matched on the relative path."""
        distinct = pc.unique(paths)
        codes = np.empty(len(distinct), dtype=np.int64)
        for i, uri in enumerate(distinct.to_pylist()):
            relative = "/".join(unquote(uri).split("/")[-self.depth :])
            if relative not in self.group_of_file:
                raise RuntimeError(f"skipindex cluster: {uri} is not a file of the plan")
            codes[i] = self.group_of_file[relative]
        return codes[np.asarray(pc.index_in(paths, distinct), dtype=np.int64)]

    def outputs(
        self, groups: np.ndarray[Any, Any], keys: np.ndarray[Any, Any], seed: int
    ) -> np.ndarray[Any, Any]:
        files = np.empty(len(keys), dtype=np.int64)
        generator = np.random.default_rng(seed)
        for group in distinct(groups):
            rows = groups == group
            cuts = self.splits[group]
            low = np.searchsorted(cuts, keys[rows], side="left")
            if self.noise and len(cuts):
                high = np.searchsorted(cuts, keys[rows], side="right")
                low = low + (generator.random(len(low)) * (high - low + 1)).astype(np.int64)
            files[rows] = self.first_output[group] + low
        return files

    def assign(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """mapInArrow body: every batch with GROUP, FILE, SLOT and KEY appended."""
        slots = np.asarray(self.slots, dtype=np.int64)
        for number, batch in enumerate(batches):
            keys = self.keys([batch.column(c) for c in self.by], batch.num_rows)
            groups = self.groups(batch.column(PATH))
            files = self.outputs(groups, keys, seed=number)
            yield _append(batch, groups, files, slots[files], keys.astype(np.int64))


def _append(batch: pa.RecordBatch, *columns: np.ndarray[Any, Any]) -> pa.RecordBatch:
    arrays = [*batch.columns, *(pa.array(c, pa.int64()) for c in columns)]
    return pa.RecordBatch.from_arrays(arrays, names=[*batch.schema.names, *HELPER_COLUMNS])


def _depth(group_of_file: dict[str, int]) -> int:
    return len(next(iter(group_of_file)).split("/")) if group_of_file else 1


def _firsts(outputs: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(x) for x in np.concatenate([[0], np.cumsum(outputs)[:-1]]))


def packing(
    group_of_file: dict[str, int], outputs: Sequence[int], slots: Sequence[int]
) -> KeyModel:
    """Bin-packing: no key, every group into its own file(s) in arrival order."""
    empty = tuple(np.empty(0, np.uint64) for _ in outputs)
    return KeyModel(
        (),
        (),
        "none",
        1,
        _depth(group_of_file),
        group_of_file,
        empty,
        _firsts(outputs),
        tuple(slots),
    )


def fit(
    sample: pa.Table,
    by: Sequence[str],
    curve: str,
    group_of_file: dict[str, int],
    outputs: Sequence[int],
    slots: Sequence[int],
    *,
    noise: bool = True,
) -> KeyModel:
    """Boundaries per column, then each group's split keys at equal shares of its
    sampled rows (a sample holding ``PATH`` and the ``by`` columns)."""
    depth, first = _depth(group_of_file), _firsts(outputs)
    count = min(MAX_BOUNDARIES, (1 << (63 // len(by))) - 2)
    bounds = tuple(boundaries(sample.column(c), count) for c in by)
    bits = bits_per_column(len(by), max(len(b) for b in bounds) + 1)
    model = KeyModel(
        tuple(by), bounds, curve, bits, depth, group_of_file, (), first, tuple(slots), noise
    )
    keys = model.keys([sample.column(c) for c in by], sample.num_rows)
    groups = model.groups(sample.column(PATH)) if sample.num_rows else np.empty(0, np.int64)
    splits = []
    for group, count_out in enumerate(outputs):
        ordered = np.sort(keys[groups == group])
        picks = (np.arange(1, count_out) * len(ordered)) // count_out
        splits.append(ordered[picks] if len(ordered) else np.empty(0, np.uint64))
    return replace(model, splits=tuple(splits))
