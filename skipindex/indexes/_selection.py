"""Which codes a leaf selects in every file at once.

For a comparison or a short IN list, the code ranges of all files come from
a few numpy passes (:mod:`skipindex.indexes._code_search`). That decides many
files without touching a bitmap: a file whose ranges are empty has no matching
row; one whose ranges cover every code matches on all its non-null rows. Only
the rest need their bitmaps. The share of codes selected also estimates how
many rows match (see :func:`skipindex.pruning.evaluate.evaluate`).

``!=``, NOT IN and long IN lists have no :class:`Selection`; the kinds answer
them file by file with :func:`~skipindex.indexes._bitmap_query.select_ranges`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from skipindex.expressions.nodes import BoundComparison, BoundIn, BoundLeaf, Op
from skipindex.indexes._bitmap_query import Range, merge
from skipindex.indexes._code_search import CodeCounts

__all__ = ["MAX_IN_VALUES", "Selection", "select"]

# An IN list longer than this is answered file by file: its arrays would hold
# values x files code counts.
MAX_IN_VALUES = 32


@dataclass(frozen=True)
class Selection:
    """Per file ``i``: code ranges ``[starts[r, i], ends[r, i])`` of ``sizes[i]`` codes."""

    starts: np.ndarray  # (ranges, files)
    ends: np.ndarray
    sizes: np.ndarray

    def ranges(self, file: int) -> list[Range]:
        return merge(zip(self.starts[:, file].tolist(), self.ends[:, file].tolist(), strict=True))

    @cached_property
    def empty(self) -> np.ndarray:
        """Per file: no code is selected (no row can match)."""
        return np.asarray(np.all(self.ends <= self.starts, axis=0))

    @cached_property
    def everything(self) -> np.ndarray:
        """Per file: every code is selected (every non-null row matches)."""
        return np.asarray(np.any((self.starts <= 0) & (self.ends >= self.sizes), axis=0))

    def __and__(self, other: Selection) -> Selection:
        """The codes both select: every range of one intersected with every
        range of the other (the intersection of two unions of ranges)."""
        files = self.starts.shape[1]
        starts = np.maximum(self.starts[:, None, :], other.starts[None, :, :])
        ends = np.minimum(self.ends[:, None, :], other.ends[None, :, :])
        return Selection(starts.reshape(-1, files), ends.reshape(-1, files), self.sizes)

    def fraction(self) -> np.ndarray:
        """Per file, the share of its codes selected (overlaps counted twice, at most 1)."""
        width = np.maximum(self.ends - self.starts, 0).sum(axis=0)
        return np.asarray(np.minimum(width / np.maximum(self.sizes, 1), 1.0))


def select(
    leaf: BoundLeaf, lows: CodeCounts, highs: CodeCounts, sizes: np.ndarray
) -> Selection | None:
    """The selection of a comparison (not ``!=``) or a short IN list, else None.
    Same ranges as :func:`~skipindex.indexes._bitmap_query.select_ranges`."""
    zero = np.zeros_like(sizes)
    if isinstance(leaf, BoundIn):
        if leaf.negated or len(leaf.values) > MAX_IN_VALUES:
            return None
        starts = [highs.lt(v) for v in leaf.values]
        ends = [lows.le(v) for v in leaf.values]
        return Selection(
            np.array(starts).reshape(-1, len(sizes)), np.array(ends).reshape(-1, len(sizes)), sizes
        )
    if not isinstance(leaf, BoundComparison) or leaf.op is Op.NE:
        return None
    v, op = leaf.value, leaf.op
    if op is Op.EQ:
        a, b = highs.lt(v), lows.le(v)
    elif op in (Op.LT, Op.LE):
        a, b = zero, lows.lt(v) if op is Op.LT else lows.le(v)
    else:
        a, b = highs.le(v) if op is Op.GT else highs.lt(v), sizes
    return Selection(a[np.newaxis, :], b[np.newaxis, :], sizes)
