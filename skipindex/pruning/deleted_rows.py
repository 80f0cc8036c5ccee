"""Rows a table format deleted without rewriting their file.

A Delta deletion vector or an Iceberg position delete marks rows of a data file
as gone while the file stays as it was: same path, size and mtime, so the index
still covers it, and its payloads still describe every row the file holds. A
deleted row can only make the index keep more, never less; but with exact
(bitmap) indexes the default prune keeps exactly the files that hold a *live*
match, so prune ANDs one more row-level leaf into the predicate: "this row is
not deleted", answered per file from the deleted positions. A file whose only
matching rows are deleted is then skipped, like any file whose row set ends
empty; files without deletions cost nothing (every row is live).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import Domain
from skipindex.expressions.nodes import And, BoundColumn, BoundIsNull, BoundLeaf, BoundPredicate
from skipindex.indexes._dense import full_words, words_for
from skipindex.indexes.base import FileBatch, IndexSpec, RowLevelKind
from skipindex.pruning.evaluate import IndexColumn

__all__ = ["DELETED", "live_rows"]

# The leaf's column: no table column has this key (a NUL cannot be in a name Spark reads).
DELETED = BoundColumn("\0deleted", pa.bool_(), expression="deleted_row")
_LIVE = BoundIsNull(DELETED)  # "deleted_row IS NULL": the row is live (explain() shows it)
_PAYLOAD = pa.struct([("deleted", pa.binary())])


class _DeletedRowsSpec(IndexSpec):
    kind = "deletion_vectors"


class _DeletedRows(RowLevelKind):
    """Which rows of each file are live: all but its deleted positions."""

    spec = _DeletedRowsSpec
    domains: ClassVar[frozenset[Domain]] = frozenset({Domain.BOOLEAN})

    def __init__(self) -> None:
        super().__init__(DELETED.name, DELETED.type, {})

    def _options(self, column: str, params: dict[str, Any]) -> IndexSpec:
        return _DeletedRowsSpec(column)

    def payload_type(self) -> pa.StructType:
        return _PAYLOAD

    def build(self, values: pa.Array, work: Any = None) -> dict[str, Any]:
        raise NotImplementedError("deleted rows come from the table's log, never from a build")

    def answers(self, leaf: BoundLeaf) -> bool:
        return leaf == _LIVE

    def _deleted(self, files: FileBatch, position: int) -> BitMap | None:
        blob = files.payloads.field(0)[position].as_py()
        return None if blob is None else BitMap.deserialize(blob)

    def selectivity(self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray) -> np.ndarray:
        counts = np.array([len(self._deleted(files, p) or ()) for p in positions.tolist()])
        return np.asarray(1.0 - counts / np.maximum(files.num_rows[positions], 1))

    def matching_rows(
        self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray
    ) -> list[AbstractBitMap | None]:
        out: list[AbstractBitMap | None] = []
        for position in positions.tolist():
            deleted = self._deleted(files, position)
            if deleted is None:
                out.append(None)
                continue
            live = BitMap(range(int(files.num_rows[position])))
            live.difference_update(deleted)
            out.append(live)
        return out

    def dense_rows(
        self,
        leaves: Sequence[BoundLeaf],
        files: FileBatch,
        positions: np.ndarray,
        within: np.ndarray | None = None,
        words: slice | None = None,
    ) -> np.ndarray | None:
        width = words_for(int(files.num_rows.max(initial=0)))
        out = full_words(files.num_rows[positions], width)
        for at, position in enumerate(positions.tolist()):
            deleted = self._deleted(files, position)
            if deleted is None:
                continue
            rows = np.asarray(deleted.to_array(), dtype=np.int64)
            bits = np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64))
            np.bitwise_and.at(out[at], rows >> 6, ~bits)
        return out if words is None else np.ascontiguousarray(out[:, words])


def live_rows(
    bound: BoundPredicate,
    deleted: Mapping[str, np.ndarray],
    paths: Sequence[str | None],
    num_rows: np.ndarray,
) -> tuple[BoundPredicate, IndexColumn] | None:
    """``bound`` AND "the row is not deleted", and the index that answers the
    latter, for files whose deleted positions ``deleted`` holds by path;
    ``paths[i]`` is the path of the index's file i (None: not listed). None
    where no indexed file has deletions."""
    blobs: list[bytes | None] = []
    for path in paths:
        rows = deleted.get(path) if path is not None else None
        blobs.append(None if rows is None or not len(rows) else BitMap(rows).serialize())
    if all(blob is None for blob in blobs):
        return None
    payloads = pa.StructArray.from_arrays([pa.array(blobs, pa.binary())], fields=list(_PAYLOAD))
    index = IndexColumn(_DeletedRows(), FileBatch(num_rows, payloads), "deletion vectors")
    both = And(cast("tuple[Any, ...]", (bound, _LIVE)))  # And nodes are shared with bound trees
    return cast(BoundPredicate, both), index
