"""Which candidate indexes to build: greedy by files saved per byte, within budget.

The measure is the workload's files read: the sum over queries of the files
each keeps, weighted by how often it runs. From no index at all, each step
adds the candidate that saves the most files per byte of index among those
that still fit the budgets (bytes, build seconds) and save at least
``min_saving`` files; then each chosen index is dropped again if the others
do as well without it (a Bloom filter made useless by an equality bitmap
chosen later, say). Every number is a simulation's (:mod:`.simulate`), so
indexes that help only together (bitmaps combined row by row across
conditions) are judged together. What each kept index is said to save is
its step when the kept ones are added in the order chosen: the steps add up
to the plan's saving over no index at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from skipindex.advise.simulate import Candidate, Simulation
from skipindex.pruning.simulate import IndexKey

__all__ = ["Choice", "Step", "choose"]


@dataclass(frozen=True)
class Step:
    """One index added: the workload's files read before and after."""

    candidate: Candidate
    before: float
    after: float


@dataclass(frozen=True)
class Choice:
    """The chosen indexes, how they were reached, and files kept per query."""

    chosen: tuple[Candidate, ...]
    steps: tuple[Step, ...]
    kept: np.ndarray  # per query, with the chosen indexes
    none: np.ndarray  # per query, with no index
    left_out: tuple[str, ...] = field(default_factory=tuple)  # what the budget ruled out

    @property
    def keys(self) -> frozenset[IndexKey]:
        return frozenset(c.key for c in self.chosen)

    @property
    def bytes(self) -> float:
        return sum(c.bytes for c in self.chosen)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.chosen)


def choose(
    simulation: Simulation,
    weights: Sequence[float],
    *,
    budget_bytes: float | None = None,
    budget_seconds: float | None = None,
    min_saving: float = 0.5,
) -> Choice:
    weight = np.asarray(weights, dtype=float)

    def total(config: frozenset[IndexKey]) -> float:
        return float(weight @ simulation.kept(config))

    chosen: list[Candidate] = []
    steps: list[Step] = []
    left_out: list[str] = []
    current = total(frozenset())
    none = simulation.kept(frozenset())
    remaining = list(simulation.candidates)
    while remaining:
        keys = frozenset(c.key for c in chosen)
        best: tuple[float, Candidate, float] | None = None
        for candidate in remaining:
            after = total(keys | {candidate.key})
            saving = current - after
            if saving < min_saving:
                continue
            rate = saving / max(candidate.bytes, 1.0)
            if best is None or rate > best[0]:
                best = (rate, candidate, after)
        if best is None:
            break
        _, candidate, after = best
        remaining.remove(candidate)
        if not _fits(chosen, candidate, budget_bytes, budget_seconds):
            left_out.append(f"{candidate} (saves {current - after:.1f} files; over budget)")
            continue
        chosen.append(candidate)
        steps.append(Step(candidate, current, after))
        current = after
    chosen = _pruned(chosen, total, current, min_saving)
    # Each kept index's saving, added in the order chosen: they sum to the plan's.
    steps, before = [], total(frozenset())
    for number, candidate in enumerate(chosen):
        after = total(frozenset(c.key for c in chosen[: number + 1]))
        steps.append(Step(candidate, before, after))
        before = after
    keys = frozenset(c.key for c in chosen)
    return Choice(tuple(chosen), tuple(steps), simulation.kept(keys), none, tuple(left_out))


def _fits(
    chosen: list[Candidate],
    candidate: Candidate,
    budget_bytes: float | None,
    budget_seconds: float | None,
) -> bool:
    size = sum(c.bytes for c in chosen) + candidate.bytes
    spent = sum(c.seconds for c in chosen) + candidate.seconds
    return (budget_bytes is None or size <= budget_bytes) and (
        budget_seconds is None or spent <= budget_seconds
    )


def _pruned(
    chosen: list[Candidate],
    total: Callable[[frozenset[IndexKey]], float],
    reached: float,
    min_saving: float,
) -> list[Candidate]:
    """Drop, largest first, each index the others make unnecessary (all the
    drops together cost less than ``min_saving`` files)."""
    kept = list(chosen)
    for candidate in sorted(chosen, key=lambda c: -c.bytes):
        without = frozenset(c.key for c in kept if c is not candidate)
        if total(without) - reached < min_saving:
            kept.remove(candidate)
    return kept
