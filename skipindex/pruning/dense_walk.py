"""The row-level pass of :mod:`skipindex.pruning.evaluate` over words (see
:mod:`skipindex.indexes._dense`): every file's row set is a row of one 2-D
array, so AND, OR and "is any row left" are one numpy operation for all files
checked. Used when every bitmap leaf has a dense answer within the memory
bounds; otherwise the per-file Roaring walk answers, with the same result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from skipindex.expressions.nodes import (
    And,
    AnyPredicate,
    BoundLeaf,
    BoundPredicate,
    Or,
    children_of,
)
from skipindex.expressions.visitors import fold
from skipindex.indexes._dense import MAX_WORDS, shared_full_words, to_bitmaps, words_for

if TYPE_CHECKING:
    from collections import Counter

    from pyroaring import AbstractBitMap

    from skipindex.indexes.base import FileBatch, RowLevelKind


class _Report(Protocol):
    ruled_out: Counter[str]


class Run(Protocol):
    """What the walk needs of the evaluation it serves (:mod:`.evaluate`'s run):
    the files' row counts, each leaf's file-level mask and row-level index, and
    where to credit the files a leaf ruled out."""

    num_rows: np.ndarray

    def leaf_mask(self, node: BoundPredicate) -> np.ndarray: ...

    def row_kind(self, node: BoundPredicate) -> tuple[RowLevelKind, FileBatch] | None: ...

    def report_of(self, node: BoundPredicate) -> _Report: ...


__all__ = ["Run", "dense_row_sets", "sampled_matches"]


class _NoDenseAnswerError(Exception):
    """A leaf has only a per-file answer."""


def dense_row_sets(
    run: Run, predicate: BoundPredicate, positions: np.ndarray
) -> dict[int, AbstractBitMap | None] | None:
    """Row sets of the files at ``positions`` that may still match (None per
    file: every row might), or None when some leaf needs the per-file walk."""
    walk = _Walk(run, positions, None)
    words = walk.words(predicate)
    if words is None:
        return None
    walk.report()
    full = walk.full
    alive = words.any(axis=1)
    whole = alive & (words == full).all(axis=1)
    narrowed = alive & ~whole
    result: dict[int, AbstractBitMap | None] = dict.fromkeys(positions[whole].tolist())
    result.update(zip(positions[narrowed].tolist(), to_bitmaps(words[narrowed]), strict=True))
    return result


def sampled_matches(
    run: Run, predicate: BoundPredicate, positions: np.ndarray, words: slice
) -> np.ndarray | None:
    """The walk at the word columns ``words`` of every file only (a sample of its
    rows): per file at ``positions``, about how many of its rows the full walk
    keeps (the share of sampled rows kept, times its rows), and above 0 exactly
    where a sampled row is kept, which the full walk keeps too (it computes the
    same bits there). None when some leaf needs the per-file walk."""
    walk = _Walk(run, positions, words)
    kept = walk.words(predicate)
    if kept is None:
        return None
    sampled = np.bitwise_count(walk.full).sum(axis=1)
    found = np.bitwise_count(kept).sum(axis=1)
    share = found / np.maximum(sampled, 1)
    return np.asarray(share * run.num_rows[positions])


class _Walk:
    """One fold of a predicate over words of the files at ``positions``: all of
    their words, or the word columns ``sample``."""

    def __init__(self, run: Run, positions: np.ndarray, sample: slice | None) -> None:
        self.run = run
        self.positions = positions
        self.sample = sample
        all_words = words_for(int(run.num_rows.max(initial=0)))
        self.width = all_words if sample is None else len(range(all_words)[sample])
        self.full = shared_full_words(run.num_rows[positions], all_words)
        if sample is not None:
            self.full = self.full[:, sample]
        self.ruled_out: list[tuple[BoundPredicate, str, int]] = []

    def words(self, predicate: BoundPredicate) -> np.ndarray | None:
        """The rows of each file that may match ``predicate``, as words."""
        if len(self.positions) * self.width > MAX_WORDS:
            return None
        try:
            return fold(cast(AnyPredicate, predicate), self._children, self._visit)
        except _NoDenseAnswerError:
            return None

    def report(self) -> None:
        """Credit each leaf's kind with the files it ruled out (for explain())."""
        for leaf, kind, count in self.ruled_out:
            self.run.report_of(leaf).ruled_out[kind] += count

    def _leaf_words(self, leaves: tuple[BoundLeaf, ...], within: np.ndarray | None) -> np.ndarray:
        run, positions = self.run, self.positions
        might = np.logical_and.reduce([run.leaf_mask(leaf)[positions] for leaf in leaves])
        found = run.row_kind(leaves[0])
        if found is None:
            return np.where(might[:, None], self.full, np.uint64(0))
        if not might.any():  # no file's min-max lets it match (a key range past the data)
            return np.zeros_like(self.full)
        kind, files = found
        words = kind.dense_rows(leaves, files, positions, within, self.sample)
        if words is None or words.shape != self.full.shape:
            raise _NoDenseAnswerError
        words[~might] = 0
        # Files these leaves rule out (among those the conditions before them left).
        left = might if within is None else might & within.any(axis=1)
        count = int(np.count_nonzero(left & ~words.any(axis=1)))
        self.ruled_out.extend((leaf, kind.kind, count) for leaf in leaves)
        return words

    @staticmethod
    def _children(node: AnyPredicate) -> tuple[AnyPredicate, ...]:
        if isinstance(node, And):  # its leaves are answered in _visit(), narrowing
            return tuple(child for child in node.children if isinstance(child, And | Or))
        return children_of(node)

    def _visit(self, node: AnyPredicate, parts: list[np.ndarray]) -> np.ndarray:
        if isinstance(node, Or):
            out = parts[0]
            for part in parts[1:]:
                out = np.bitwise_or(out, part, out=out)
            return out
        if not isinstance(node, And):
            return self._leaf_words((cast(BoundLeaf, node),), None)
        narrowed: np.ndarray | None = None
        for part in parts:
            narrowed = part if narrowed is None else np.bitwise_and(narrowed, part, out=narrowed)
        for leaves in _conjuncts(self.run, node.children, self.positions):
            words = self._leaf_words(leaves, narrowed)
            narrowed = words if narrowed is None else np.bitwise_and(narrowed, words, out=narrowed)
        assert narrowed is not None  # an AND has children
        return narrowed


def _conjuncts(
    run: Run, children: tuple[AnyPredicate, ...], positions: np.ndarray
) -> list[tuple[BoundLeaf, ...]]:
    """An AND's leaves, in the order they narrow the rows best: those without a
    row-level index first (they clear whole files for one pass), then the rest
    by the share of rows they are expected to keep, the most selective first,
    so that the later ones work only on the words left (see ``within`` in
    :meth:`~skipindex.indexes.base.RowLevelKind.dense_rows`). Leaves one index
    answers together (:meth:`~skipindex.indexes.base.RowLevelKind.combines`:
    ``a >= 1000 AND a <= 1020``, where each half alone keeps most rows) are one."""
    by_kind: dict[int, list[BoundLeaf]] = {}
    shares: list[tuple[float, int, tuple[BoundLeaf, ...]]] = []
    for child in children:
        if isinstance(child, And | Or):
            continue
        leaf = cast(BoundLeaf, child)
        found = run.row_kind(leaf)
        if found is None:
            shares.append((-1.0, len(shares), (leaf,)))
        else:
            by_kind.setdefault(id(found[0]), []).append(leaf)
    for leaves in by_kind.values():
        kind, files = cast("tuple[RowLevelKind, FileBatch]", run.row_kind(leaves[0]))
        together = tuple(x for x in leaves if kind.combines((x,), files))
        if len(together) < 2 or not kind.combines(together, files):
            together = ()
        groups = [(x,) for x in leaves if x not in together] + ([together] if together else [])
        for group in groups:
            kept = kind.joint_selectivity(group, files, positions)
            shares.append((float(kept.mean()) if len(kept) else 1.0, len(shares), group))
    return [group for _, _, group in sorted(shares, key=lambda s: s[:2])]
