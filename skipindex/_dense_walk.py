"""The row-level pass of :mod:`skipindex.evaluate` over words (see
:mod:`skipindex.indexes._dense`): every file's row set is a row of one 2-D
array, so AND, OR and "is any row left" are one numpy operation for all files
checked. Used when every bitmap leaf has a dense answer within the memory
bounds; otherwise the per-file Roaring walk answers, with the same result."""

from __future__ import annotations

from collections.abc import Callable
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

    def leaf_words(leaf: BoundPredicate) -> np.ndarray:
        might = run.leaf_mask(leaf)[positions]
        found = run.row_kind(leaf)
        if found is None:
            return np.where(might[:, None], full, np.uint64(0))
        kind, files = found
        assert isinstance(leaf, BoundLeaf)
        words = kind.dense_rows(leaf, files, positions)
        if words is None or words.shape != full.shape:
            raise _NoDenseAnswerError
        words[~might] = 0
        ruled_out.append((leaf, kind.kind, int(np.count_nonzero(might & ~words.any(axis=1)))))
        return words

    def visit(node: AnyPredicate, parts: list[np.ndarray]) -> np.ndarray:
        if isinstance(node, And | Or):
            combine: Callable[..., np.ndarray] = (
                np.bitwise_and if isinstance(node, And) else np.bitwise_or
            )
            out = parts[0]
            for part in parts[1:]:
                out = combine(out, part, out=out)
            return out
        return leaf_words(cast(BoundPredicate, node))

    try:
        words = fold(cast(AnyPredicate, predicate), children_of, visit)
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
