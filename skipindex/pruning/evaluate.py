"""Evaluate a bound predicate (negation normal form) against index payloads.

Two passes, cheapest first:

1. **File level**, vectorised over every covered file: each leaf is answered by
   the file-level kinds on its column (min-max, Bloom). AND and OR combine the
   boolean masks. A file is alive if it *might* hold a matching row.
2. **Row level**, only for files still alive and only if a leaf has a row-level
   kind (bitmaps): each node yields, per file, the set of rows that might match
   (``None`` = all rows). AND intersects child by child and stops for a file as
   soon as its set is empty; OR unions. A file whose set ends empty is skipped:
   that is how a conjunction skips a file where every condition matches some
   row but no row matches them all.

Between the two, files the row-level pass would certainly keep are kept
without it, where it would cost the most for the least: the pass is first run
on a sample of every file's words (:func:`~skipindex.pruning.dense_walk.sampled_matches`),
and a file where a sampled row satisfies the whole predicate holds a match; where
the sample also shows many such rows (at least ``LIKELY_ROWS``, so its row set
would narrow little), the full pass is left out for it. Every other file gets
the full pass, so the files kept are exactly those the full pass keeps
(``row_level="auto"``, the default; ``"always"`` runs the full pass everywhere,
for the row sets of every file). Estimates (the conditions' value ranges, as if
the columns were independent: :meth:`_Run.expected_rows`) only choose which
files are worth sampling. ``row_level="estimate"`` is the opt-in that trusts them:
a file predicted to hold ``LIKELY_ROWS`` matches is kept unexamined, cheaper,
and it may keep files that hold no match.

The file-level pass is a fold (:mod:`skipindex.expressions.visitors`); the
row-level pass narrows candidates on the way down, with its own explicit stack.
Both are iterative: 1,000-deep predicates are fine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, cast

import numpy as np

from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    AnyPredicate,
    BoundLeaf,
    BoundPredicate,
    Or,
    Unsupported,
    children_of,
)
from skipindex.expressions.visitors import fold
from skipindex.indexes._dense import words_for
from skipindex.indexes.base import FileBatch, FileLevelKind, IndexKind, RowLevelKind
from skipindex.pruning.dense_walk import dense_row_sets, sampled_matches
from skipindex.pruning.row_walk import LEAF_TYPES, RowSets, RowWalk

__all__ = ["LIKELY_ROWS", "ROW_LEVELS", "Evaluation", "LeafReport", "RowLevel", "evaluate"]

# Matching rows from which a file's row set is not worth narrowing.
LIKELY_ROWS = 256.0
# The sample of a file's rows: its first words (1,024 rows).
SAMPLE_WORDS = 16
# Files predicted to hold at least this many matches are sampled: below, a
# sample would rarely show LIKELY_ROWS.
SAMPLE_FROM_ROWS = LIKELY_ROWS / 4
# The row-level pass works on the files still alive alone when they are fewer
# than one in this many (taking their payloads costs a pass over those only).
RESTRICT_BELOW = 8
# Combine row sets across files as words where every leaf allows it (the tests
# turn it off to hold the per-file walk to the same answers).
DENSE_WALK = True
# How hard prune looks at row level (see the module doc).
RowLevel = Literal["auto", "always", "estimate"]
ROW_LEVELS: tuple[RowLevel, ...] = ("auto", "always", "estimate")


@dataclass
class LeafReport:
    """What the indexes could say about one condition, for ``explain()``."""

    condition: str
    kinds: list[str] = field(default_factory=list)
    note: str = ""
    ruled_out: Counter[str] = field(default_factory=Counter)  # kind -> files it excluded


@dataclass
class Evaluation:
    might_match: np.ndarray  # per covered file
    leaves: list[LeafReport]
    row_level_files: int = 0  # files that needed bitmaps
    row_level_skipped: int = 0  # of those, files whose combined row set was empty
    row_level_sampled: int = 0  # files kept as certain matches from a sample of rows
    row_level_likely: int = 0  # files kept as predicted matches ("estimate"), unexamined
    # Surviving files the row-level pass narrowed: file position -> rows that might match.
    row_sets: RowSets = field(default_factory=dict)


@dataclass(frozen=True)
class IndexColumn:
    """An index available at prune time: its kind and its payloads per file."""

    kind: IndexKind
    files: FileBatch
    label: str = ""  # what explain() credits; the kind's name unless set

    @property
    def name(self) -> str:
        return self.label or self.kind.kind


def evaluate(
    predicate: BoundPredicate,
    num_rows: np.ndarray,
    indexes: Mapping[str, Sequence[IndexColumn]],
    row_level: RowLevel = "auto",
) -> Evaluation:
    """Which files might hold a row for which ``predicate`` is TRUE."""
    run = _Run(num_rows, indexes)
    alive = run.file_level(predicate) & (num_rows > 0)
    if not (run.row_level_leaves(predicate) and alive.any()):
        return Evaluation(alive, run.report_list())
    positions = np.flatnonzero(alive)
    at = np.arange(len(alive))  # a position in the run -> the file's in the batch
    local = run
    if len(positions) * RESTRICT_BELOW < len(alive):
        # Few files left: the row-level pass works on those alone, not on every
        # file's payloads (which it walks as words across files).
        local, at, positions = run.restricted(positions), positions, np.arange(len(positions))
    sampled = np.zeros(len(positions), dtype=bool)
    likely = np.zeros(len(positions), dtype=bool)
    if row_level == "estimate":
        likely = local.expected_rows(predicate, positions) >= LIKELY_ROWS
    elif row_level == "auto":
        sampled = local.certainly_many(predicate, positions)
    settled = sampled | likely
    checked = positions[~settled]
    survivors = local.rows(predicate, checked) if len(checked) else {}
    alive = np.zeros_like(alive)
    alive[at[positions[settled]]] = True
    alive[at[np.fromiter(survivors, dtype=np.int64, count=len(survivors))]] = True
    narrowed: RowSets = {int(at[p]): rows for p, rows in survivors.items() if rows is not None}
    return Evaluation(
        alive,
        run.report_list(),
        row_level_files=len(checked),
        row_level_skipped=len(checked) - len(survivors),
        row_level_sampled=int(sampled.sum()),
        row_level_likely=int(likely.sum()),
        row_sets=narrowed,
    )


class _Run:
    def __init__(self, num_rows: np.ndarray, indexes: Mapping[str, Sequence[IndexColumn]]) -> None:
        self.num_rows = num_rows
        self.indexes = indexes
        self.masks: dict[BoundLeaf, np.ndarray] = {}
        self.reports: dict[object, LeafReport] = {}

    def restricted(self, positions: np.ndarray) -> _Run:
        """This run over the files at ``positions`` only, renumbered from 0; the
        leaves' masks and reports carry over (reports are shared)."""
        taken = {
            column: [replace(index, files=index.files.take(positions)) for index in found]
            for column, found in self.indexes.items()
        }
        local = _Run(self.num_rows[positions], taken)
        local.masks = {leaf: mask[positions] for leaf, mask in self.masks.items()}
        local.reports = self.reports
        return local

    # ------------------------------------------------------------ file level
    def file_level(self, predicate: BoundPredicate) -> np.ndarray:
        def visit(node: AnyPredicate, parts: list[np.ndarray]) -> np.ndarray:
            if isinstance(node, And | Or):
                combine = np.logical_and if isinstance(node, And) else np.logical_or
                return np.asarray(combine.reduce(parts), dtype=bool)
            return self.leaf_mask(cast(BoundPredicate, node))

        return fold(cast(AnyPredicate, predicate), children_of, visit)

    def leaf_mask(self, node: BoundPredicate) -> np.ndarray:
        count = len(self.num_rows)
        if isinstance(node, AlwaysFalse):
            return np.zeros(count, dtype=bool)
        if isinstance(node, AlwaysTrue):
            return np.ones(count, dtype=bool)
        if isinstance(node, Unsupported):
            self._report(node, note=f"not indexable ({node.reason}): might match")
            return np.ones(count, dtype=bool)
        assert isinstance(node, LEAF_TYPES)
        if node in self.masks:
            return self.masks[node]
        mask = np.ones(count, dtype=bool)
        answering = [i for i in self.indexes.get(node.column.name, ()) if i.kind.answers(node)]
        report = self._report(node, kinds=[i.name for i in answering])
        if not answering:
            report.note = f"no index on {node.column} can answer this: might match"
        for index in answering:
            if not isinstance(index.kind, FileLevelKind):
                continue
            verdict = index.kind.might_match(node, index.files)
            report.ruled_out[index.name] += int(np.count_nonzero(mask & ~verdict))
            mask &= verdict
        self.masks[node] = mask
        return mask

    def _report(self, node: object, kinds: list[str] | None = None, note: str = "") -> LeafReport:
        if node not in self.reports:
            self.reports[node] = LeafReport(str(node), kinds or [], note)
        return self.reports[node]

    def report_list(self) -> list[LeafReport]:
        return list(self.reports.values())

    # ------------------------------------------------------------- row level
    def row_kind(self, node: BoundPredicate) -> tuple[RowLevelKind, FileBatch] | None:
        """The most precise row-level index that answers ``node``, if any."""
        if not isinstance(node, LEAF_TYPES):
            return None
        candidates = [
            (i.kind, i.files)
            for i in self.indexes.get(node.column.name, ())
            if isinstance(i.kind, RowLevelKind) and i.kind.answers(node)
        ]
        return max(candidates, key=lambda c: c[0].precision, default=None)

    def row_level_leaves(self, predicate: BoundPredicate) -> bool:
        def visit(node: AnyPredicate, parts: list[bool]) -> bool:
            if isinstance(node, And | Or):
                return any(parts)
            return self.row_kind(cast(BoundPredicate, node)) is not None

        return fold(cast(AnyPredicate, predicate), children_of, visit)

    def expected_rows(self, predicate: BoundPredicate, positions: np.ndarray) -> np.ndarray:
        """Per file at ``positions``, about how many rows match (see the module doc)."""

        def visit(node: AnyPredicate, parts: list[np.ndarray]) -> np.ndarray:
            if isinstance(node, And):
                return _and_share(node, parts)
            if isinstance(node, Or):
                return np.asarray(np.minimum(np.sum(parts, axis=0), 1.0))
            leaf = cast(BoundPredicate, node)
            share = self.leaf_mask(leaf)[positions].astype(np.float64)
            found = self.row_kind(leaf)
            if found is not None:
                assert isinstance(leaf, LEAF_TYPES)
                share *= found[0].selectivity(leaf, found[1], positions)
            return np.asarray(share)

        share = fold(cast(AnyPredicate, predicate), children_of, visit)
        return np.asarray(share * self.num_rows[positions])

    def certainly_many(self, predicate: BoundPredicate, positions: np.ndarray) -> np.ndarray:
        """Per file at ``positions``: True where the row-level pass, run on a
        sample of its rows, finds a match (so the full pass keeps the file) and
        about ``LIKELY_ROWS`` or more (so its row set would narrow little)."""
        out = np.zeros(len(positions), dtype=bool)
        width = words_for(int(self.num_rows[positions].max(initial=0)))
        if not DENSE_WALK or width < 4 * SAMPLE_WORDS:  # the full pass costs little more
            return out
        worth = self.expected_rows(predicate, positions) >= SAMPLE_FROM_ROWS
        if not worth.any():
            return out
        # The first words of each file: contiguous, so the sample costs its share
        # of a full pass (words spread over the file cost a cache line each).
        found = sampled_matches(self, predicate, positions[worth], slice(0, SAMPLE_WORDS))
        if found is not None:
            out[worth] = found >= LIKELY_ROWS
        return out

    def rows(self, predicate: BoundPredicate, positions: np.ndarray) -> RowSets:
        """Row sets of the files at ``positions`` that may still match: across
        files as words where every leaf allows it, else file by file."""
        dense = dense_row_sets(self, predicate, positions) if DENSE_WALK else None
        return dense if dense is not None else RowWalk(self).run(predicate, positions)

    def report_of(self, node: BoundPredicate) -> LeafReport:
        return self._report(node)

    def leaf_rows(self, node: BoundPredicate, positions: np.ndarray) -> RowSets:
        positions = positions[self.leaf_mask(node)[positions]]
        found = self.row_kind(node)
        if found is None:
            return dict.fromkeys(positions.tolist())
        assert isinstance(node, LEAF_TYPES)
        kind, files = found
        answers = kind.matching_rows(node, files, positions)
        result: RowSets = {}
        for position, rows in zip(positions.tolist(), answers, strict=True):
            if rows is None or rows:
                result[position] = rows
        report = self._report(node)
        report.ruled_out[kind.kind] += len(positions) - len(result)
        return result


def _and_share(node: And, parts: list[np.ndarray]) -> np.ndarray:
    """The share of rows an AND is expected to match, per file. Columns count as
    independent (shares multiply); conditions on one column do not (``x >= a AND
    x <= b``: 0.5 and 0.3 would predict 15 % of the rows where the range may
    hold none), so they take the least share they can have together (Fréchet:
    the sum less one per extra condition), which is exact for a range's ends."""
    by_column: dict[str, list[np.ndarray]] = {}
    shares: list[np.ndarray] = []
    for child, part in zip(children_of(node), parts, strict=True):
        if isinstance(child, LEAF_TYPES):
            by_column.setdefault(child.column.name, []).append(part)
        else:
            shares.append(part)
    shares.extend(
        np.maximum(np.sum(same, axis=0) - (len(same) - 1), 0.0) for same in by_column.values()
    )
    return np.asarray(np.prod(shares, axis=0))
