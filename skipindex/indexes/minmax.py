"""Min-max statistics per file: min, max, null count, NaN count.

Computed from the rows themselves, never from Parquet footers: Arrow leaves NaN
out of footer min/max, and Spark orders NaN above every other value.
Strings are kept as UTF-8 bytes truncated to ``MAX_STRING_BYTES``: a truncated
min is a prefix (still a lower bound); a truncated max is rounded up to the next
prefix, or dropped (null) when it cannot be, which means "no upper bound".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._types import Domain, physical_type, to_physical, to_scalar
from skipindex.expressions.nodes import (
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    BoundMatch,
    Op,
)
from skipindex.indexes import _zones
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes.base import FileBatch, FileLevelKind, IndexSpec

__all__ = ["MinMax", "MinMaxKind"]

MAX_STRING_BYTES = 64
Mask = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
_FEW_VALUES = 16
_STATS = "minmax-stats"


@dataclass(frozen=True)
class MinMax(IndexSpec):
    """Per-file min, max, null count and NaN count of a column."""

    kind: ClassVar[str] = "minmax"


class MinMaxKind(FileLevelKind):
    spec = MinMax
    values_only = True

    def _bound_type(self) -> pa.DataType:
        if self.domain in (Domain.STRING, Domain.BINARY):
            return pa.binary()
        if pa.types.is_decimal32(self.arrow_type) or pa.types.is_decimal64(self.arrow_type):
            return pa.decimal128(self.arrow_type.precision, self.arrow_type.scale)
        return physical_type(self.arrow_type)

    def payload_type(self) -> pa.StructType:
        bound = self._bound_type()
        return pa.struct(
            [
                ("min", bound),
                ("max", bound),
                ("null_count", pa.int64()),
                ("nan_count", pa.int64()),
            ]
        )

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        null_count = values.null_count
        nan_count = 0
        if self.domain is Domain.FLOAT:
            is_nan = pc.fill_null(pc.is_nan(values), False)
            nan_count = int(pc.sum(is_nan).as_py() or 0)
            if nan_count:
                values = values.filter(pc.invert(is_nan))
        if self.domain in (Domain.STRING, Domain.BINARY):
            values = values.cast(pa.binary())
        if pa.types.is_decimal32(values.type) or pa.types.is_decimal64(values.type):
            values = values.cast(self._bound_type())  # min_max has no kernel for these
        stats = pc.min_max(values)
        low, high = stats["min"].as_py(), stats["max"].as_py()
        if self.domain is Domain.FLOAT and low is not None:
            low, high = low + 0.0, high + 0.0  # -0.0 -> 0.0
        if isinstance(low, bytes):
            low, high = low[:MAX_STRING_BYTES], _round_up(high)
        return {"min": low, "max": high, "null_count": null_count, "nan_count": nan_count}

    def constant_payloads(self, values: pa.Array, num_rows: np.ndarray) -> pa.StructArray:
        """Payloads of files that each hold one value ``num_rows[i]`` times (a
        partition column): min = max = the value, or all NULL, or all NaN."""
        is_null = np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        nan = np.zeros(len(values), dtype=bool)
        if self.domain is Domain.FLOAT:
            nan_flags = pc.fill_null(pc.is_nan(values), False)
            nan = np.asarray(nan_flags.to_numpy(zero_copy_only=False), dtype=bool)
            values = pc.if_else(pa.array(nan), pa.scalar(None, values.type), values)
        bounds = to_physical(values).cast(self._bound_type())
        counts = [pa.array(np.where(flags, num_rows, 0), pa.int64()) for flags in (is_null, nan)]
        return pa.StructArray.from_arrays(
            [bounds, bounds, *counts], fields=list(self.payload_type())
        )

    def answers(self, leaf: BoundLeaf) -> bool:
        # a pattern's prefix reaches min-max as a range of its own (binding)
        return leaf.column.name == self.column and not isinstance(
            leaf, BoundMatch | BoundHasElement
        )

    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> Mask:
        if len(files) >= _zones.ZONED_FROM:  # ask the blocks of files first
            zones = _zones.zones_of(files)
            blocks = self._verdict(leaf, zones)
            if np.count_nonzero(blocks) <= _zones.ASK_BLOCKS_UP_TO * len(blocks):
                asked = _zones.block_files(zones, blocks)
                out = np.zeros(len(files), dtype=bool)
                out[asked] = self._verdict(leaf, files.take(asked))
                return out
        return self._verdict(leaf, files)

    def _verdict(self, leaf: BoundLeaf, files: FileBatch) -> Mask:
        stats = files.memo.get(_STATS)  # a batch prune keeps: its arrays, made once
        if not isinstance(stats, _Stats):
            stats = files.memo[_STATS] = _Stats(files, self._bound_type())
        try:
            verdict = _decide(leaf, stats, self.arrow_type)
        except (pa.ArrowInvalid, OverflowError):
            # A literal the column type cannot hold; bind() normally folds these
            # away, and here "might match" is always a safe answer.
            return np.ones(len(files), dtype=bool)
        return np.asarray(verdict | ~files.known(), dtype=bool)


class _Stats:
    """Per-file statistics as numpy arrays, with the bounds left in Arrow."""

    def __init__(self, files: FileBatch, bound_type: pa.DataType) -> None:
        payloads = files.payloads
        self.rows: Ints = files.num_rows.astype(np.int64)
        self.nulls: Ints = _ints(payloads.field("null_count"))
        self.nans: Ints = _ints(payloads.field("nan_count"))
        self.non_null: Ints = self.rows - self.nulls
        self.regular: Ints = self.non_null - self.nans  # non-null, non-NaN values
        self.min = payloads.field("min").cast(bound_type)
        self.max = payloads.field("max").cast(bound_type)

    @property
    def nbytes(self) -> int:
        counts = (self.rows, self.nulls, self.nans, self.non_null, self.regular)
        return sum(int(a.nbytes) for a in counts) + int(self.min.nbytes + self.max.nbytes)

    def compare(self, bound: str, op: str, scalar: pa.Scalar, if_null: bool) -> Mask:
        array = self.min if bound == "min" else self.max
        result = pc.fill_null(getattr(pc, op)(array, scalar), if_null)
        return np.asarray(result.to_numpy(zero_copy_only=False), dtype=bool)


def _decide(leaf: BoundLeaf, stats: _Stats, arrow_type: pa.DataType) -> Mask:
    if isinstance(leaf, BoundIsNull):
        return (stats.non_null > 0) if leaf.negated else (stats.nulls > 0)
    if isinstance(leaf, BoundIn):
        if leaf.negated:
            return _not_in(leaf, stats, arrow_type)
        if len(leaf.values) <= _FEW_VALUES:
            hits = np.zeros(len(stats.rows), dtype=bool)
            for value in leaf.values:  # per literal, vectorised over files
                hits |= _compare(Op.EQ, value, stats, arrow_type)
            return hits
        return _in_many(leaf.values, stats)
    if isinstance(leaf, BoundMatch | BoundHasElement):  # not answered (answers): might match
        return np.ones(len(stats.rows), dtype=bool)
    return _compare(leaf.op, leaf.value, stats, arrow_type)


def _compare(op: Op, value: Any, stats: _Stats, arrow_type: pa.DataType) -> Mask:
    if isinstance(value, float) and math.isnan(value):
        return _compare_nan(op, stats)
    scalar = _scalar(value, arrow_type)
    has_regular = stats.regular > 0
    has_nan = stats.nans > 0
    # A null max with regular values means "unbounded above" (an untruncatable string).
    if op is Op.EQ:
        return (
            has_regular
            & stats.compare("min", "less_equal", scalar, False)
            & stats.compare("max", "greater_equal", scalar, True)
        )
    if op is Op.LT:
        return has_regular & stats.compare("min", "less", scalar, False)
    if op is Op.LE:
        return has_regular & stats.compare("min", "less_equal", scalar, False)
    if op is Op.GT:
        return (has_regular & stats.compare("max", "greater", scalar, True)) | has_nan
    if op is Op.GE:
        return (has_regular & stats.compare("max", "greater_equal", scalar, True)) | has_nan
    # NE: skip only a file whose every non-null value is exactly the literal.
    only_value = stats.compare("min", "equal", scalar, False) & stats.compare(
        "max", "equal", scalar, False
    )
    return (has_regular & ~only_value) | has_nan


def _compare_nan(op: Op, stats: _Stats) -> Mask:
    """Comparisons with NaN, which Spark orders above every other value."""
    has_nan, has_regular = stats.nans > 0, stats.regular > 0
    return {
        Op.EQ: has_nan,
        Op.GE: has_nan,
        Op.GT: np.zeros_like(has_nan),
        Op.LT: has_regular,
        Op.LE: has_regular | has_nan,
        Op.NE: has_regular,
    }[op]


def _in_many(values: tuple[Any, ...], stats: _Stats) -> Mask:
    """IN with a long list: does any listed value fall in [min, max]? One
    ``searchsorted`` per file bound instead of one pass over files per value."""
    regular = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    hits = (stats.nans > 0) if len(regular) < len(values) else np.zeros(len(stats.rows), bool)
    if not regular:
        return hits
    # Bytes keys stay Python objects: numpy's fixed-width "S" dtype drops trailing
    # NUL bytes, and b"b\x00" would become b"b".
    textual = isinstance(regular[0], str | bytes)
    keys = np.array(
        [v.encode("utf-8") if isinstance(v, str) else v for v in regular],
        dtype=object if textual else None,
    )
    low_known: Mask = np.asarray(stats.min.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    high_known: Mask = np.asarray(stats.max.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    # Filter before to_numpy: an int64 array with nulls would come back as float64.
    lows = stats.min.filter(low_known).to_numpy(zero_copy_only=False)
    highs = stats.max.filter(high_known).to_numpy(zero_copy_only=False)
    first = np.zeros(len(low_known), dtype=np.int64)
    first[low_known] = np.searchsorted(keys, lows, side="left")
    past = np.full(len(high_known), len(keys), dtype=np.int64)  # unknown max: unbounded
    past[high_known] = np.searchsorted(keys, highs, side="right")
    return hits | ((stats.regular > 0) & low_known & (past > first))


def _not_in(leaf: BoundIn, stats: _Stats, arrow_type: pa.DataType) -> Mask:
    """NOT IN skips a file only when all its non-null values are in the list."""
    nan_listed = any(isinstance(v, float) and math.isnan(v) for v in leaf.values)
    regular_all_listed: Mask = stats.regular == 0
    for value in leaf.values:
        if isinstance(value, float) and math.isnan(value):
            continue
        scalar = _scalar(value, arrow_type)
        single = stats.compare("min", "equal", scalar, False) & stats.compare(
            "max", "equal", scalar, False
        )
        regular_all_listed = regular_all_listed | single
    nan_all_listed: Mask = (stats.nans == 0) | np.bool_(nan_listed)
    has_values: Mask = stats.non_null > 0
    return has_values & ~(regular_all_listed & nan_all_listed)


def _scalar(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    if isinstance(value, str):
        return pa.scalar(value.encode("utf-8"), pa.binary())
    if isinstance(value, bytes):
        return pa.scalar(value, pa.binary())
    return to_scalar(value, arrow_type)


def _ints(array: pa.Array) -> Ints:
    return np.asarray(pc.fill_null(array, 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _round_up(high: bytes | None) -> bytes | None:
    """The smallest MAX_STRING_BYTES-long prefix >= ``high``; None if unbounded."""
    if high is None or len(high) <= MAX_STRING_BYTES:
        return high
    prefix = bytearray(high[:MAX_STRING_BYTES])
    while prefix and prefix[-1] == 0xFF:
        prefix.pop()
    if not prefix:
        return None
    prefix[-1] += 1
    return bytes(prefix)
