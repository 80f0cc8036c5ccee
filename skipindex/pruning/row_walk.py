"""The row-level pass file by file: AND/OR over each file's row sets.

Where the dense walk (:mod:`skipindex.pruning.dense_walk`) cannot combine a
predicate's row sets as words across files, they are combined per file here,
with an explicit stack (1,000-deep predicates are fine); AND narrows the
candidate files as it goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

import numpy as np
from pyroaring import AbstractBitMap

from skipindex.expressions.nodes import (
    And,
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundMatch,
    BoundPredicate,
    Or,
)
from skipindex.indexes.base import FileBatch, RowLevelKind

__all__ = ["LEAF_TYPES", "RowSets", "RowState", "RowWalk"]

LEAF_TYPES = (BoundComparison, BoundIn, BoundIsNull, BoundMatch, BoundHasElement)

RowSets = dict[int, AbstractBitMap | None]  # file position -> rows that might match (None: all)


class RowState(Protocol):
    """What the walk asks of an evaluation: the row-level index of a leaf, and
    a leaf's row sets over some files."""

    def row_kind(self, node: BoundPredicate) -> tuple[RowLevelKind, FileBatch] | None: ...

    def leaf_rows(self, node: BoundPredicate, positions: np.ndarray) -> RowSets: ...


class RowWalk:
    """AND/OR over row sets with an explicit stack; AND narrows as it goes."""

    def __init__(self, state: RowState) -> None:
        self.state = state

    def run_order(self, children: Sequence[BoundPredicate]) -> list[BoundPredicate]:
        # Children without bitmaps are free (their file masks are computed): first.
        # Then the most selective: under AND, a file it empties needs no more leaves.
        return sorted(children, key=lambda c: (self.state.row_kind(c) is not None, self.share(c)))

    def share(self, node: BoundPredicate) -> float:
        """About which share of all rows a bitmap leaf selects (1.0 otherwise)."""
        found = self.state.row_kind(node)
        if found is None:
            return 1.0
        assert isinstance(node, LEAF_TYPES)
        kind, files = found
        everywhere = np.arange(len(files))
        return float(np.mean(kind.selectivity(node, files, everywhere))) if len(files) else 1.0

    def run(self, predicate: BoundPredicate, positions: np.ndarray) -> RowSets:
        # Frame: [node, candidate positions, pending children, accumulated row sets]
        frames: list[list[object]] = []
        result: RowSets | None = None

        def push(node: BoundPredicate, candidates: np.ndarray) -> RowSets | None:
            if isinstance(node, And | Or):
                start: RowSets = dict.fromkeys(candidates.tolist()) if isinstance(node, And) else {}
                frames.append([node, candidates, self.run_order(_children(node)), start])
                return None
            return self.state.leaf_rows(node, candidates)

        result = push(predicate, positions)
        while frames:
            frame = frames[-1]
            node, candidates, pending, acc = frame
            assert isinstance(node, And | Or)
            assert isinstance(acc, dict)
            assert isinstance(pending, list)
            assert isinstance(candidates, np.ndarray)
            if result is not None:  # a child just finished
                acc = _and(acc, result) if isinstance(node, And) else _or(acc, result)
                frame[3] = acc
                result = None
            if not pending or (isinstance(node, And) and not acc):
                frames.pop()
                result = acc
                continue
            child = pending.pop(0)
            if isinstance(node, And):
                next_candidates = np.fromiter(acc.keys(), dtype=np.int64, count=len(acc))
            else:  # files already known to match entirely need no more OR branches
                complete = [p for p, rows in acc.items() if rows is None]
                next_candidates = np.setdiff1d(candidates, complete, assume_unique=True)
            result = push(child, next_candidates)
        assert result is not None
        return result


def _children(node: And | Or) -> Sequence[BoundPredicate]:
    """The children of a node in a *bound* tree (And/Or are shared with unbound trees)."""
    return cast("Sequence[BoundPredicate]", node.children)


def _and(left: RowSets, right: RowSets) -> RowSets:
    out: RowSets = {}
    for position, rows in right.items():
        if position not in left:
            continue
        mine = left[position]
        both = rows if mine is None else (mine if rows is None else mine & rows)
        if both is None or both:
            out[position] = both
    return out


def _or(left: RowSets, right: RowSets) -> RowSets:
    out = dict(left)
    for position, rows in right.items():
        if position not in out:
            out[position] = rows
        else:
            mine = out[position]
            out[position] = None if mine is None or rows is None else mine | rows
    return out
