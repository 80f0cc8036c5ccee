"""The base of the row-level bitmap kinds (equality, range, bit-sliced), and the
skeleton the two bucketed kinds (equality, range-encoded) share."""

from __future__ import annotations

import functools
import math
import operator
import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, cast

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import physical_type
from skipindex.errors import InvalidSpecError
from skipindex.expressions.nodes import (
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    BoundMatch,
)
from skipindex.indexes._bitmap_build import bucketize, list_value
from skipindex.indexes._bitmap_query import Range, SortedValues, select_ranges
from skipindex.indexes._code_search import Codes, Either, SortedLists
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._dense import DenseColumns
from skipindex.indexes._payloads import EMPTY, FileView, PayloadColumns
from skipindex.indexes._roaring import bitmap_of, to_bytes
from skipindex.indexes._selection import MAX_IN_VALUES, Selection, select
from skipindex.indexes.base import FileBatch, RowLevelKind


def check_int_param(kind: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidSpecError(f"{kind}: '{name}' must be an integer >= {minimum}, got {value!r}")
    return value


class BitmapKind(RowLevelKind):
    """Base of the row-level bitmap kinds: null handling, payload access, and the
    per-leaf selection shared by estimating and answering."""

    # Whether the kind answers LIKE patterns (BoundMatch) from the values it stores.
    matches_patterns: ClassVar[bool] = False

    def __init__(self, column: str, arrow_type: pa.DataType, params: dict[str, Any]) -> None:
        super().__init__(column, arrow_type, params)
        # Kinds are made per prune, so this memo lives for one prune; a prune may
        # ask about several batches (groups of files, the files left alive), so
        # each answer remembers the batch it is about. An entry per thread: a
        # large table's groups are evaluated on several threads at once, which
        # would otherwise take each other's entry and compute it again.
        self._selections: dict[tuple[int, BoundLeaf], tuple[FileBatch, Selection | None]] = {}

    def value_type(self) -> pa.DataType:
        return physical_type(self.arrow_type)

    def answers(self, leaf: BoundLeaf) -> bool:
        # every comparison, [NOT] IN, IS [NOT] NULL; patterns where a kind reads values
        if isinstance(leaf, BoundHasElement):
            return False
        return leaf.column.name == self.column and (
            not isinstance(leaf, BoundMatch) or self.matches_patterns
        )

    @abstractmethod
    def codes(self, columns: PayloadColumns) -> Codes:
        """Searchers over every file's codes, and how many codes each file has."""

    @abstractmethod
    def rows(self, leaf: BoundComparison | BoundIn | BoundMatch, file: FileView) -> AbstractBitMap:
        """The rows of one file satisfying a comparison, [NOT] IN or (where the kind
        ``matches_patterns``) [NOT] LIKE leaf."""

    @abstractmethod
    def rows_of_ranges(self, ranges: list[Range], k: int, file: FileView) -> AbstractBitMap:
        """The rows of one file whose codes fall in ``ranges`` (of ``k`` codes)."""

    def file_codes(self, files: FileBatch) -> Codes:
        columns = payload_columns(files)
        found = columns.memo.get("codes")
        if found is None:
            found = columns.memo.setdefault("codes", self.codes(columns))
        assert isinstance(found, Codes)
        return found

    def selection(self, leaf: BoundLeaf, files: FileBatch) -> Selection | None:
        key = (threading.get_ident(), leaf)
        found = self._selections.get(key)
        if found is None or found[0] is not files:
            codes = self.file_codes(files)
            found = (files, select(leaf, codes.lows, codes.highs, codes.sizes))
            self._selections[key] = found
        return found[1]

    def selectivity(self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray) -> np.ndarray:
        columns = payload_columns(files)
        share = np.ones(len(positions))
        if isinstance(leaf, BoundIsNull):
            if not leaf.negated:  # no null rows: IS NULL matches none
                share[~columns.has_nulls[positions] & columns.known[positions]] = 0.0
            return share
        chosen = self.selection(leaf, files)
        if chosen is not None:
            share = chosen.fraction()[positions]
        share[~self.file_codes(files).usable[positions]] = 1.0
        return share

    def matching_rows(
        self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray
    ) -> list[AbstractBitMap | None]:
        columns = payload_columns(files)
        if isinstance(leaf, BoundIsNull):
            return [
                None if not known else file.nonnull if leaf.negated else file.nulls
                for file, known in self._views(columns, positions, columns.known)
            ]
        if isinstance(leaf, BoundHasElement):  # no array column has these kinds
            return [None] * len(positions)
        usable = self.file_codes(files).usable
        chosen = self.selection(leaf, files)
        if chosen is None:  # != , NOT IN, long IN lists: file by file
            return [
                self.rows(leaf, file) if ok else None
                for file, ok in self._views(columns, positions, usable)
            ]
        # Decided without bitmaps: no payload (all might match), no code selected
        # (none), every code selected (every non-null row); the rest read bitmaps.
        answers: list[AbstractBitMap | None] = [None] * len(positions)
        empty, every, some = _triage(chosen, usable, positions)
        for at in np.flatnonzero(empty).tolist():
            answers[at] = EMPTY
        for at in np.flatnonzero(every & columns.has_nulls[positions]).tolist():
            answers[at] = columns.nonnull(int(positions[at]))
        work = np.flatnonzero(some)
        for at, i in zip(work.tolist(), positions[work].tolist(), strict=True):
            file = FileView(columns, i)
            answers[at] = self.rows_of_ranges(chosen.ranges(i), int(chosen.sizes[i]), file)
        return answers

    def joint_selection(self, leaves: Sequence[BoundLeaf], files: FileBatch) -> Selection | None:
        """The codes every one of ``leaves`` selects (None: some leaf has no selection)."""
        selections = [self.selection(leaf, files) for leaf in leaves]
        if any(chosen is None for chosen in selections):
            return None
        return functools.reduce(operator.and_, cast(list[Selection], selections))

    def joint_selectivity(
        self, leaves: Sequence[BoundLeaf], files: FileBatch, positions: np.ndarray
    ) -> np.ndarray:
        if len(leaves) == 1 or not self.combines(leaves, files):
            return super().joint_selectivity(leaves, files, positions)
        chosen = self.joint_selection(leaves, files)
        assert chosen is not None  # combines() says every leaf has one
        share: np.ndarray = chosen.fraction()[positions]
        share[~self.file_codes(files).usable[positions]] = 1.0
        return share

    def combines(self, leaves: Sequence[BoundLeaf], files: FileBatch) -> bool:
        # Ranges multiply when they intersect: two IN lists at most as long as one.
        counts = [self._range_count(leaf, files) for leaf in leaves]
        return all(counts) and math.prod(counts) <= MAX_IN_VALUES

    def _range_count(self, leaf: BoundLeaf, files: FileBatch) -> int:
        chosen = self.selection(leaf, files)
        return 0 if chosen is None else len(chosen.starts)

    def dense_rows(
        self,
        leaves: Sequence[BoundLeaf],
        files: FileBatch,
        positions: np.ndarray,
        within: np.ndarray | None = None,
        words: slice | None = None,
    ) -> np.ndarray | None:
        """What :meth:`matching_rows` says (of every one of ``leaves``), as words
        (see :mod:`._dense`): all rows set where a file's payload tells nothing.
        None where only the per-file path can answer (``!=``, NOT IN, long IN
        lists, a kind without a dense form, or arrays the cache's budget does
        not allow)."""
        columns = payload_columns(files)
        dense = columns.dense if words is None else columns.dense.sampled(words)
        every_full = dense.full() if dense.fits else None
        every_nonnull = dense.nonnull() if every_full is not None else None
        if every_full is None or every_nonnull is None:
            return None
        leaf = leaves[0]
        if isinstance(leaf, BoundIsNull) and len(leaves) == 1:
            known = columns.known[positions]
            out: np.ndarray = every_nonnull[positions]
            if not leaf.negated:
                np.bitwise_xor(out, every_full[positions], out=out)  # the null rows
            out[~known] = every_full[positions[~known]]
            return out
        chosen = self.joint_selection(leaves, files)
        if chosen is None:
            if len(leaves) == 1 and isinstance(leaf, BoundIn) and not leaf.negated:
                return self.dense_members(leaf, files, positions, dense, within)
            return None
        usable = self.file_codes(files).usable
        _, every, work = _triage(chosen, usable, positions)
        usable = usable[positions]
        at = positions[work]
        if len(at):
            starts = chosen.starts[:, at].astype(np.int64)
            ends = chosen.ends[:, at].astype(np.int64)
            sizes = chosen.sizes[at].astype(np.int64)
            narrowed = None if within is None else within[work]
            part = self.dense_ranges(starts, ends, sizes, at, columns, dense, narrowed)
            if part is None:
                return None
            if len(at) == len(positions):
                return part
        out = np.zeros((len(positions), dense.width), dtype=np.uint64)
        if len(at):
            out[work] = part
        out[every] = every_nonnull[positions[every]]
        out[~usable] = every_full[positions[~usable]]
        return out

    def dense_ranges(
        self,
        starts: np.ndarray,
        ends: np.ndarray,
        sizes: np.ndarray,
        positions: np.ndarray,
        columns: PayloadColumns,
        dense: DenseColumns,
        within: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """Per file in ``positions``, the (non-null) rows whose codes fall in the
        ranges ``[starts[r], ends[r])`` (of ``sizes`` codes) as words of
        ``dense`` (``columns.dense``, or a sample of its words); None: no dense
        form. ``within``: as in :meth:`dense_rows`, for these files."""
        return None

    def dense_members(
        self,
        leaf: BoundIn,
        files: FileBatch,
        positions: np.ndarray,
        dense: DenseColumns,
        within: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """A long IN list (no :class:`Selection`) as :meth:`dense_rows` would
        answer it; None: this kind has no such form."""
        return None

    @staticmethod
    def _views(
        columns: PayloadColumns, positions: np.ndarray, usable: np.ndarray
    ) -> list[tuple[FileView, bool]]:
        return [(FileView(columns, i), bool(usable[i])) for i in positions.tolist()]

    def searcher(self, values: pa.Array | None) -> SortedValues | None:
        return None if values is None else SortedValues(values, self.domain)


def _triage(
    chosen: Selection, usable: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per file at ``positions`` with a usable payload: no code selected (no row
    matches), every code selected (every non-null row does), or some (its bitmaps
    say which). A file without a usable payload is in none: all rows might."""
    known = usable[positions]
    empty = known & chosen.empty[positions]
    every = known & ~empty & chosen.everything[positions]
    return empty, every, known & ~empty & ~every


def payload_columns(files: FileBatch) -> PayloadColumns:
    """The batch's decoded view, made once per batch (prune keeps batches)."""
    found = files.memo.get("payload-columns")
    if found is None:
        found = files.memo.setdefault(
            "payload-columns", PayloadColumns(files.payloads, files.num_rows, files.decode_budget)
        )
    assert isinstance(found, PayloadColumns)
    return found


class BucketedBitmapKind(BitmapKind):
    """Equality and range-encoded bitmaps: a file's values grouped into sorted
    buckets (one value each, or equi-depth), each kind storing the buckets'
    bitmaps its own way. Payload: ``<highs_field>``, ``lows``, ``bitmaps``, the
    kind's ``extra_fields``, ``nulls``."""

    highs_field: ClassVar[str]
    extra_fields: ClassVar[tuple[tuple[str, pa.DataType], ...]] = ()
    dictionary_rows = True  # strings are ranked through a dictionary anyway

    @abstractmethod
    def bucket_limit(self) -> int:
        """At most this many buckets per file."""

    @abstractmethod
    def store(self, per_bucket: list[BitMap], non_null: int) -> dict[str, Any]:
        """``bitmaps`` (and the extra fields) from one bitmap per bucket."""

    @abstractmethod
    def cover_ranges(self, ranges: list[Range], buckets: int, file: FileView) -> AbstractBitMap:
        """The rows of the buckets in ``ranges`` (half-open bucket index ranges)."""

    def payload_type(self) -> pa.StructType:
        values = pa.list_(self.value_type())
        return pa.struct(
            [
                (self.highs_field, values),
                ("lows", values),
                ("bitmaps", pa.list_(pa.binary())),
                *self.extra_fields,
                ("nulls", pa.binary()),
            ]
        )

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        work = work or ColumnWork(values, self.domain)
        col = work.encoded
        buckets = bucketize(col, work.ranked, self.bucket_limit())
        return {
            self.highs_field: list_value(buckets.highs),
            "lows": None if buckets.lows is None else list_value(buckets.lows),
            **self.store(buckets.bitmaps, len(col.positions)),
            "nulls": to_bytes(bitmap_of(col.nulls)) if len(col.nulls) else None,
        }

    def codes(self, columns: PayloadColumns) -> Codes:
        highs_lists = columns.lists(self.highs_field)
        lows_lists = columns.lists("lows")
        highs = SortedLists(highs_lists, self.domain)
        lows = Either(lows_lists.valid, SortedLists(lows_lists, self.domain), highs)
        usable = columns.known & highs_lists.valid  # a payload without values knows nothing
        return Codes(lows, highs, highs_lists.lengths, usable)

    def rows(self, leaf: BoundComparison | BoundIn | BoundMatch, file: FileView) -> AbstractBitMap:
        assert not isinstance(leaf, BoundMatch)  # answered where matches_patterns
        highs = self.searcher(file.values(self.highs_field))
        assert highs is not None  # files without values are not usable
        lows = self.searcher(file.values("lows")) or highs
        return self.cover_ranges(select_ranges(leaf, lows, highs, highs.size), highs.size, file)

    def rows_of_ranges(self, ranges: list[Range], k: int, file: FileView) -> AbstractBitMap:
        return self.cover_ranges(ranges, k, file)
