"""What the advisor found: the plan, its estimates beside today's, and why, in words.

``str(advice)`` is for a person to check: the layout and each index with the
files it saves and what it costs, then per query the files it keeps today,
with no index, and with the plan. ``to_dict()`` is JSON-ready; ``specs`` are
what ``build_index`` takes; ``policy_entry()`` is the ``[[table]]`` keys the
maintenance service reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skipindex.advise.simulate import Candidate
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec

__all__ = ["Advice", "Estimate", "IndexChoice"]


@dataclass(frozen=True)
class IndexChoice:
    """One chosen index: what it costs and what it saves on the whole table."""

    column: str
    kind: str
    bytes: float
    seconds: float
    saves: float  # files read over the workload, when it was added
    before: float  # files read over the workload before it was added
    queries: int  # queries whose predicate names its column

    @classmethod
    def of(cls, candidate: Candidate, saves: float, before: float, queries: int) -> IndexChoice:
        c = candidate
        return cls(c.column, c.kind, c.bytes, c.seconds, saves, before, queries)

    @property
    def spec(self) -> IndexSpec:
        return KINDS[self.kind].spec(self.column)


@dataclass(frozen=True)
class Estimate:
    """One query: files of the table it keeps today, with no index, with the plan."""

    label: str
    where: str | None
    weight: float
    today: int
    no_index: float
    planned: float


@dataclass(frozen=True)
class Advice:
    path: str
    files: int
    queries: int  # distinct queries of the workload, as weighted in ``estimates``
    layout: tuple[str, tuple[str, ...]] | None  # (curve, columns) to cluster by, or None
    layout_reason: str
    target_file_bytes: int  # of the files a cluster writes
    indexes: tuple[IndexChoice, ...]
    estimates: tuple[Estimate, ...]
    left_out: tuple[str, ...] = ()
    layouts_tried: tuple[str, ...] = ()  # per simulated layout, its files read
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def specs(self) -> list[IndexSpec]:
        return [c.spec for c in self.indexes]

    @property
    def index_bytes(self) -> float:
        return sum(c.bytes for c in self.indexes)

    def totals(self) -> dict[str, float]:
        """The workload's files read (weighted): today, with no index, with the plan."""
        return {
            name: sum(getattr(e, name) * e.weight for e in self.estimates)
            for name in ("today", "no_index", "planned")
        }

    def policy_entry(self) -> dict[str, Any]:
        """The keys of this table's ``[[table]]`` in a maintenance policy."""
        entry: dict[str, Any] = {
            "indexes": [{"kind": c.kind, "column": c.column} for c in self.indexes]
        }
        if self.layout is not None:
            entry["cluster_by"] = list(self.layout[1])
            entry["curve"] = self.layout[0]
        return entry

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "files": self.files,
            "layout": None
            if self.layout is None
            else {"curve": self.layout[0], "by": list(self.layout[1])},
            "layout_reason": self.layout_reason,
            "indexes": [c.__dict__ for c in self.indexes],
            "estimates": [e.__dict__ for e in self.estimates],
            "totals": self.totals(),
            "index_bytes": self.index_bytes,
            "left_out": list(self.left_out),
            "layouts_tried": list(self.layouts_tried),
            "notes": list(self.notes),
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        totals = self.totals()
        weight = sum(e.weight for e in self.estimates)
        lines = [
            f"{self.path}: {self.files} files, {self.queries} queries "
            f"(advised in {self.seconds:.1f} s)",
            f"files read over the workload: today {totals['today']:.0f} "
            f"({totals['today'] / max(self.files * weight, 1):.0%} of the table per query), "
            f"with this plan about {totals['planned']:.0f} "
            f"({totals['planned'] / max(totals['no_index'], 1):.0%}; "
            f"{self.index_bytes / 1e6:.2f} MB of index)",
        ]
        if self.layout is None:
            lines.append(f"layout: keep it ({self.layout_reason})")
        else:
            curve, by = self.layout
            lines.append(f"layout: cluster by {', '.join(by)} ({curve}): {self.layout_reason}")
        lines.extend(f"  simulated: {t}" for t in self.layouts_tried)
        lines.append("indexes:")
        lines.extend(f"  {_reason(c, self.queries)}" for c in self.indexes)
        lines.extend(f"  left out: {o}" for o in self.left_out)
        lines.append("per query (files kept: today / no index / planned):")
        lines.extend(
            f"  {e.label:<8} {e.today:>6} / {e.no_index:>8.1f} / {e.planned:>8.1f}  "
            f"{_short(e.where)}"
            for e in self.estimates
        )
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _reason(choice: IndexChoice, queries: int) -> str:
    return (
        f"{choice.kind} on {choice.column}: {choice.queries} of {queries} queries filter on it, "
        f"{choice.saves / max(choice.before, 1):.0%} fewer files read ({choice.saves:.0f} "
        f"of {choice.before:.0f}) for {choice.bytes / 1e6:.2f} MB, about "
        f"{choice.seconds:.1f} s to build on one core"
    )


def _short(where: str | None, width: int = 70) -> str:
    if where is None:
        return "(no condition on this table: every file)"
    return where if len(where) <= width else where[: width - 3] + "..."
