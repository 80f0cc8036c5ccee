"""The row-level pass of :mod:`skipindex.evaluate` over words (see
:mod:`skipindex.indexes._dense`): every file's row set is a row of one 2-D
array, so AND, OR and "is any row left" are one numpy operation for all files
checked. Used when every bitmap leaf has a dense answer within the memory
bounds; otherwise the per-file Roaring walk answers, with the same result."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

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
    from pyroaring import AbstractBitMap

    from skipindex.evaluate import _Run
    from skipindex.indexes.base import FileBatch, RowLevelKind

__all__ = ["dense_row_sets"]


class _NoDenseAnswerError(Exception):
    """A leaf has only a per-file answer."""


def dense_row_sets(
    run: _Run, predicate: BoundPredicate, positions: np.ndarray
) -> dict[int, AbstractBitMap | None] | None:
    """Row sets of the files at ``positions`` that may still match (None per
    file: every row might), or None when some leaf needs the per-file walk."""
    width = words_for(int(run.num_rows.max(initial=0)))
    if len(positions) * width > MAX_WORDS:
        return None
    full = shared_full_words(run.num_rows[positions], width)
    ruled_out: list[tuple[BoundPredicate, str, int]] = []

    def leaf_words(leaves: tuple[BoundLeaf, ...], within: np.ndarray | None) -> np.ndarray:
        might = np.logical_and.reduce([run.leaf_mask(leaf)[positions] for leaf in leaves])
        found = run.row_kind(leaves[0])
        if found is None:
            return np.where(might[:, None], full, np.uint64(0))
        kind, files = found
        words = kind.dense_rows(leaves, files, positions, within)
        if words is None or words.shape != full.shape:
            raise _NoDenseAnswerError
        words[~might] = 0
        # Files these leaves rule out (among those the conditions before them left).
        left = might if within is None else might & within.any(axis=1)
        count = int(np.count_nonzero(left & ~words.any(axis=1)))
        ruled_out.extend((leaf, kind.kind, count) for leaf in leaves)
        return words

    def children(node: AnyPredicate) -> tuple[AnyPredicate, ...]:
        if isinstance(node, And):  # its leaves are answered in visit(), narrowing
            return tuple(child for child in node.children if isinstance(child, And | Or))
        return children_of(node)

    def visit(node: AnyPredicate, parts: list[np.ndarray]) -> np.ndarray:
        if isinstance(node, Or):
            out = parts[0]
            for part in parts[1:]:
                out = np.bitwise_or(out, part, out=out)
            return out
        if not isinstance(node, And):
            return leaf_words((cast(BoundLeaf, node),), None)
        narrowed: np.ndarray | None = None
        for part in parts:
            narrowed = part if narrowed is None else np.bitwise_and(narrowed, part, out=narrowed)
        for leaves in _conjuncts(run, node.children, positions):
            words = leaf_words(leaves, narrowed)
            narrowed = words if narrowed is None else np.bitwise_and(narrowed, words, out=narrowed)
        assert narrowed is not None  # an AND has children
        return narrowed

    try:
        words = fold(cast(AnyPredicate, predicate), children, visit)
    except _NoDenseAnswerError:
        return None
    for leaf, kind, count in ruled_out:
        run.report_of(leaf).ruled_out[kind] += count
    alive = words.any(axis=1)
    whole = alive & (words == full).all(axis=1)
    narrowed = alive & ~whole
    result: dict[int, AbstractBitMap | None] = dict.fromkeys(positions[whole].tolist())
    result.update(zip(positions[narrowed].tolist(), to_bitmaps(words[narrowed]), strict=True))
    return result


def _conjuncts(
    run: _Run, children: tuple[AnyPredicate, ...], positions: np.ndarray
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
