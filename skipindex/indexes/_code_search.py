"""Literal -> code counts for every file of a batch at once.

The vectorised twin of :class:`~skipindex.indexes._bitmap_query.Searcher`: for a
literal ``v``, ``lt(v)[i]`` / ``le(v)[i]`` count the codes of file ``i`` that sort
strictly below / at or below ``v``. One numpy pass over all files' sorted values
(or their offset-code minimums) replaces a search per file, and the literal is
converted once, not once per file. The answers equal the per-file searchers'
(the oracle tests compare both).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._types import Domain
from skipindex.expressions.nodes import BoundValue
from skipindex.indexes._bitmap_build import NUMERIC_DOMAINS
from skipindex.indexes._bitmap_query import floor_ceil
from skipindex.indexes._payloads import ListColumn

__all__ = ["CodeCounts", "Codes", "Either", "OffsetMinimums", "SortedLists"]


class CodeCounts(Protocol):
    def lt(self, value: BoundValue) -> np.ndarray: ...
    def le(self, value: BoundValue) -> np.ndarray: ...


@dataclass(frozen=True)
class Codes:
    """A bitmap index's codes over a batch: bucket j of file i holds values in
    ``[lows_j, highs_j]`` (one searcher twice when each holds one value); file i
    has ``sizes[i]`` codes; ``usable[i]`` False means its payload tells nothing."""

    lows: CodeCounts
    highs: CodeCounts
    sizes: np.ndarray
    usable: np.ndarray


class Either:
    """Per file, the first searcher's counts where ``use_first``, else the second's."""

    def __init__(self, use_first: np.ndarray, first: CodeCounts, second: CodeCounts) -> None:
        self._use_first = use_first
        self._first = first
        self._second = second

    def lt(self, value: BoundValue) -> np.ndarray:
        return self._pick(lambda side: side.lt(value))

    def le(self, value: BoundValue) -> np.ndarray:
        return self._pick(lambda side: side.le(value))

    def _pick(self, count: Callable[[CodeCounts], np.ndarray]) -> np.ndarray:
        # A side no file uses is not asked: its literal may not even convert.
        if self._use_first.all():
            return count(self._first)
        if not self._use_first.any():
            return count(self._second)
        return np.where(self._use_first, count(self._first), count(self._second))


class SortedLists:
    """Per file, a sorted list of distinct values (``values``, ``lows``, ``bounds``)."""

    def __init__(self, column: ListColumn, domain: Domain) -> None:
        self._column = column
        self._domain = domain
        flat = column.flat
        self._flat = flat
        self._np: np.ndarray | None = None
        if domain is Domain.FLOAT:
            self._np = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float64)
        elif domain is Domain.BOOLEAN:
            self._np = np.asarray(flat.to_numpy(zero_copy_only=False)).astype(np.int8)
        elif domain in NUMERIC_DOMAINS:  # native width: uint64 above 2**63 stays exact
            self._np = np.asarray(flat.to_numpy(zero_copy_only=False))
        elif domain not in (Domain.STRING, Domain.BINARY):  # decimals: Python comparisons
            self._np = np.array(flat.to_pylist(), dtype=object)

    def lt(self, value: BoundValue) -> np.ndarray:
        return self._count(value, strict=True)

    def le(self, value: BoundValue) -> np.ndarray:
        return self._count(value, strict=False)

    def _count(self, value: BoundValue, strict: bool) -> np.ndarray:
        below = self._below(value, strict)
        if isinstance(below, bool):
            return self._column.lengths.copy() if below else np.zeros_like(self._column.lengths)
        running = np.concatenate([[0], np.cumsum(below, dtype=np.int64)])
        counts = running[self._column.ends] - running[self._column.starts]
        return np.where(self._column.valid, counts, 0)

    def _below(self, value: BoundValue, strict: bool) -> np.ndarray | bool:
        """Per flat value: does it sort below (or at, unless ``strict``) ``value``?
        A bool answers for every value at once."""
        arr = self._np
        if self._domain is Domain.FLOAT:
            assert arr is not None
            v = float(value)
            if math.isnan(v):  # NaN sorts last: below it are the non-NaN values
                return ~np.isnan(arr) if strict else True
            return arr < v if strict else arr <= v
        if self._domain in NUMERIC_DOMAINS:
            assert arr is not None
            low, high = floor_ceil(int(value) if isinstance(value, bool) else value)
            probe = high if strict else low
            info = np.iinfo(arr.dtype)
            if probe > info.max or (not strict and probe == info.max):
                return True
            if probe < info.min or (strict and probe == info.min):
                return False
            return arr < int(probe) if strict else arr <= int(probe)
        if arr is not None:  # decimals
            return np.asarray(arr < value if strict else arr <= value, dtype=bool)
        scalar = pa.scalar(value, type=self._flat.type)
        compare = pc.less if strict else pc.less_equal
        return np.asarray(compare(self._flat, scalar).to_numpy(zero_copy_only=False), dtype=bool)


class OffsetMinimums:
    """Offset codes ``value - min`` (decimals unscaled) over ``sizes[i]`` codes."""

    def __init__(self, minimums: np.ndarray | list[int], sizes: np.ndarray, scale: int) -> None:
        self._sizes = sizes
        self._scale = scale
        # A probe outside [low, high] counts like the nearest edge in every file, so
        # it is clamped there; then differences fit in int64 when the span is small.
        if (
            isinstance(minimums, np.ndarray)
            and len(minimums)
            and _small(minimums)
            and _small(sizes)
        ):
            # in numpy: a Python int per file cost a second at a million files
            self._low = int(minimums.min()) - 1
            self._high = int((minimums + sizes).max()) + 1
            self._min = minimums.astype(np.int64)
            return
        ints = [int(m) for m in minimums]
        self._low = min(ints, default=0) - 1
        self._high = max((m + int(s) for m, s in zip(ints, sizes, strict=True)), default=0) + 1
        small = self._high - self._low < 2**62 and -(2**62) < self._low < 2**62
        self._min = np.array(ints, dtype=np.int64 if small else object)

    def lt(self, value: BoundValue) -> np.ndarray:
        return self._count(floor_ceil(value, self._scale)[1], 0)

    def le(self, value: BoundValue) -> np.ndarray:
        return self._count(floor_ceil(value, self._scale)[0], 1)

    def _count(self, probe: float, plus: int) -> np.ndarray:
        bounded = self._low if probe < self._low else self._high if probe > self._high else probe
        counts = int(bounded) - self._min + plus
        return np.asarray(np.minimum(np.maximum(counts, 0), self._sizes), dtype=np.int64)


def _small(numbers: np.ndarray) -> bool:
    """Integers (at least one) whose sums and differences stay far inside int64."""
    if numbers.dtype.kind not in "iu":
        return False
    return int(numbers.min()) > -(2**60) and int(numbers.max()) < 2**60
