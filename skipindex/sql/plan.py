"""What :func:`skipindex.sql_plan` returns: the DataFrame, and how each table
reference of the query was pruned and why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skipindex.errors import SessionChangedError
from skipindex.pruning.result import PruneResult
from skipindex.spark.settings import SparkView
from skipindex.sql.catalog import Source
from skipindex.sql.conjuncts import Condition, has_function, render
from skipindex.sql.frames import Pruned
from skipindex.sql.references import Reference

__all__ = ["JoinKeys", "ReferencePlan", "SqlPlan", "made_under", "reference_plan"]

_KEY_ONLY = "a subquery no index evaluates: not pruned with, held by a key query for its keys"
_ORIGINS = {
    "written": "written",
    "pushed": "pushed into a derived table, CTE or set operation from the query around it",
    "join": "carried across a join",
    "dynamic": "dynamic, from a join's keys",
}


@dataclass(frozen=True)
class ReferencePlan:
    """One table reference of the query."""

    number: int
    written: str  # the name as the query writes it
    alias: str | None
    line: int
    table: str | None  # the indexed table's path (None: not an indexed table)
    conditions: tuple[Condition, ...]
    where: str | None  # the predicate it was pruned with
    result: PruneResult | None
    replaced: bool  # read from a view of its kept files (else as written)
    note: str
    seconds: float = 0.0
    # Conditions only Spark evaluates (a subquery), held by its key query (:mod:`.subqueries`)
    key_only: tuple[str, ...] = ()

    @property
    def files(self) -> list[str] | None:
        """The files read for this reference (None: as Spark lists them itself)."""
        return self.result.files if self.replaced and self.result is not None else None

    def describe(self) -> list[str]:
        name = self.written + (f" AS {self.alias}" if self.alias else "")
        head = f"{name} (line {self.line})" + (f": {self.table}" if self.table else "")
        lines = [head]
        for condition in self.conditions:
            why = _ORIGINS.get(condition.origin, condition.origin)
            if condition.note:
                why += f" ({condition.note})"
            if has_function(condition.node) and condition.origin != "dynamic":
                why += "; a function of a column, pruned as a range of the column"
            lines.append(f"  {_short(render(condition.node))}  <- {why}")
        lines.extend(f"  {_short(text)}  <- written; {_KEY_ONLY}" for text in self.key_only)
        if self.result is not None:
            lines.append(
                f"  kept {self.result.kept} of {self.result.total} files "
                f"({self.seconds * 1000:.1f} ms)"
                + (
                    f", {len(self.result.row_groups)} narrowed to row groups"
                    if self.replaced and self.result.row_groups
                    else ""
                )
            )
        lines.append(
            f"  {'read from the kept files' if self.replaced else 'read whole'}"
            + (f": {self.note}" if self.note else "")
        )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": self.written,
            "alias": self.alias,
            "line": self.line,
            "table": self.table,
            "conditions": [
                {"condition": render(c.node), "origin": c.origin, "note": c.note}
                for c in self.conditions
            ],
            "key_only": list(self.key_only),
            "where": self.where,
            "kept": self.result.kept if self.result is not None else None,
            "total": self.result.total if self.result is not None else None,
            "files": self.files,
            "replaced": self.replaced,
            "note": self.note,
            "seconds": self.seconds,
        }


def reference_plan(
    reference: Reference,
    pruned: Pruned | None,
    source: Source | None,
    conditions: list[Condition],
    key_only: list[str] | None = None,
) -> ReferencePlan:
    """The account of one reference: how it was pruned, or why it is read whole."""
    note = (
        pruned.note
        if pruned is not None
        else (reference.why_whole or ("not an indexed table" if source is None else ""))
    )
    return ReferencePlan(
        reference.number,
        reference.written,
        reference.alias,
        reference.line,
        source.path if source is not None else None,
        tuple(conditions),
        pruned.where if pruned is not None else None,
        pruned.result if pruned is not None else None,
        pruned is not None and pruned.frame is not None,
        note,
        pruned.seconds if pruned is not None else 0.0,
        tuple(key_only or ()),
    )


@dataclass(frozen=True)
class JoinKeys:
    """One equi-join whose keys were (or were not) used to prune its fact side."""

    condition: str
    fact: str
    dim: str
    keys: int | None  # how many keys (None: not used)
    note: str
    seconds: float
    ranges: int | None = None  # not keys, but ranges holding them (:mod:`.file_ranges`)

    def describe(self) -> str:
        if self.ranges is not None:
            used = f"{self.note}: {self.ranges:,} range(s) pruned {self.fact}"
        elif self.keys is not None:
            used = f"{self.keys:,} keys of {self.dim} pruned {self.fact}" + (
                f", {self.note}" if self.note else ""
            )
        else:
            used = f"keys of {self.dim} not used for {self.fact}: {self.note}"
        return f"  {self.condition}: {used} ({self.seconds * 1000:.0f} ms)"


@dataclass
class SqlPlan:
    """A query, the DataFrame :func:`skipindex.sql` returns for it, and per table
    reference what it was pruned with, where that came from, and what it kept."""

    query: str
    # Makes the DataFrame: Spark analyses the rewritten query then, so a plan asked
    # for its account alone (``explain``, ``--explain``) costs no Spark analysis.
    frame_of: Callable[[], Any] = field(repr=False)
    references: list[ReferencePlan] = field(default_factory=list)
    joins: list[JoinKeys] = field(default_factory=list)
    note: str = ""  # why the whole query runs as written, if it does
    seconds: float = 0.0  # skipindex's own planning (Spark's analysis not included)
    _frame: Any = field(default=None, init=False, repr=False)

    @property
    def frame(self) -> Any:
        """The DataFrame of the query over the kept files (made on first use)."""
        if self._frame is None:
            self._frame = self.frame_of()
        return self._frame

    def explain(self) -> str:
        lines = [
            f"skipindex.sql: {len(self.references)} table reference(s), planned in "
            f"{self.seconds * 1000:.0f} ms"
        ]
        if self.note:
            lines.append(f"run as written: {self.note}")
        for reference in self.references:
            lines.extend(reference.describe())
        if self.joins:
            lines.append("dynamic pruning:")
            lines.extend(j.describe() for j in self.joins)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "note": self.note,
            "references": [r.to_dict() for r in self.references],
            "joins": [
                {
                    "condition": j.condition,
                    "fact": j.fact,
                    "dim": j.dim,
                    "keys": j.keys,
                    "ranges": j.ranges,
                    "note": j.note,
                    "seconds": j.seconds,
                }
                for j in self.joins
            ],
            "seconds": self.seconds,
            "explanation": self.explain(),
        }


def made_under(spark: Any, view: SparkView, make: Callable[[], Any]) -> Callable[[], Any]:
    """``make``, refused once the session's settings are no longer ``view``: the
    files were pruned with literals as those settings read them (a timestamp in
    the session's zone), and Spark would read the query in the new ones."""

    def frame() -> Any:
        now = SparkView.of_session(spark)
        if now != view:
            raise SessionChangedError(
                f"the query was planned under {view} and the session now has {now}: "
                "plan it again (skipindex.sql_plan) in these settings"
            )
        return make()

    return frame


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 25] + f"... ({len(text):,} chars)"
