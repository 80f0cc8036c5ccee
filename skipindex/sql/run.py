"""One query being pruned: its references, their conditions and what each kept.

:class:`QueryRun` holds, per table reference, the conditions derived for it
(:mod:`.derive`, and those :mod:`.key_rounds` adds), prunes each indexed one
with them (:mod:`.frames`), and makes the DataFrame: the user's own text with
each pruned reference's name replaced by a view of its kept files
(:mod:`.text`).
"""

from __future__ import annotations

from typing import Any

from skipindex.reading.held import LeftOut
from skipindex.spark.settings import SparkView
from skipindex.sql import worth
from skipindex.sql.catalog import Source
from skipindex.sql.conjuncts import Condition, prune_where, render
from skipindex.sql.derive import Derivation, Parsed
from skipindex.sql.frames import Pruned, prune_source, reference_whole
from skipindex.sql.plan import ReferencePlan, reference_plan
from skipindex.sql.references import Reference
from skipindex.sql.sizes import kept_bytes, listed_sizes, spark_estimate
from skipindex.sql.text import left_out_sql, placeholder, run_sql, substitute

__all__ = ["QueryRun"]


class QueryRun:
    """One query being pruned."""

    def __init__(
        self,
        spark: Any,
        parsed: Parsed,
        derivation: Derivation,
        sources: dict[Any, Source],
        view: SparkView,
        row_groups: bool,
    ) -> None:
        self.spark, self.parsed, self.derivation = spark, parsed, derivation
        self.sources, self.view, self.row_groups = sources, view, row_groups
        self.by_number = {r.number: r for r in parsed.references}
        self.conditions = {n: list(c) for n, c in derivation.conditions.items()}
        self.pruned: dict[int, Pruned] = {}
        # (table, conditions as text) -> its prune: references of one table with the
        # same written conditions (a query's scalar subqueries over one fact) keep
        # the same files, so the index is read and evaluated once for all of them
        self.same_prunes: dict[tuple[Any, str], Pruned] = {}
        self.rendered: dict[int, str] = {}  # id of a condition (alive in conditions) -> SQL
        self.sizes: dict[Any, dict[str, int] | None] = {}  # table -> its files' sizes
        self.estimates: dict[str, int | None] = {}  # a table not indexed -> Spark's bytes
        self.wholes: dict[int, Any] = {}  # reference -> read whole, schema known (see read)
        self.indexed = [
            r
            for r in parsed.references
            if r.why_whole is None
            and r.key in sources
            and (r.number in derivation.tables or sources[r.key].must_replace)
        ]
        self.indexed_sources = {r.number: sources[r.key] for r in self.indexed}

    def where(self, number: int) -> str | None:
        """Reference ``number``'s conditions as Spark SQL, for its key query."""
        found = [self._text(c) for c in self.conditions.get(number) or []]
        found += self.key_only(number)
        return " AND ".join(f"({text})" for text in found) or None

    def key_only(self, number: int) -> list[str]:
        """Its conditions only Spark evaluates (:mod:`.subqueries`), unless keys narrow
        it (a dimension by the keys of its own IN subquery): its kept rows then give
        its keys."""
        source, key_only = self.sources.get(self.by_number[number].key), self.derivation.key_only
        conditioned = {n for n, found in self.conditions.items() if found}
        narrowed = worth.narrowed_by_keys(
            number, self.derivation.joins, source, conditioned | set(key_only), conditioned
        )
        return [] if narrowed else key_only.get(number, [])

    def _text(self, condition: Condition) -> str:
        """A condition as SQL, rendered once (key lists run to thousands of keys)."""
        text = self.rendered.get(id(condition))
        if text is None:
            text = self.rendered[id(condition)] = render(condition.node)
        return text

    def prune(self, reference: Reference) -> None:
        where = prune_where(
            self.conditions.get(reference.number, []), self.view.time_zone, self._text
        )
        # key lists (a predicate, not text) differ per reference: not worth a key
        same = (reference.key, where) if isinstance(where, str) else None
        if same is not None and same in self.same_prunes:
            self.pruned[reference.number] = self.same_prunes[same]
            return
        pruned = prune_source(
            self.spark,
            self.sources[reference.key],
            where,
            self.view,
            row_groups=self.row_groups,
            as_text=True,
        )
        self.pruned[reference.number] = pruned
        if same is not None:
            self.same_prunes[same] = pruned

    def prune_static(self) -> None:
        for reference in self.indexed:
            if self.one_file(reference) and not self.reach(reference.number):
                # Nothing to skip in one file, and its keys skip none anywhere: leave it
                # whole rather than evaluate its conditions (a 400-value IN, say) for nothing.
                self.pruned[reference.number] = Pruned(
                    None, None, None, "one file, and its keys skip no file: nothing to skip", 0.0
                )
                continue
            self.prune(reference)

    def one_file(self, reference: Reference) -> bool:
        return worth.one_file(self.sources[reference.key])

    def reach(self, number: int, besides: tuple[int, ...] = ()) -> bool:
        """Whether keys of reference ``number`` can skip files of some reference
        (:func:`~.worth.keys_reach_files`; a second date dimension, between a
        year's weeks and a fact, is worth narrowing however small it is)."""
        grouped = [j for group in self.derivation.any_joins for j in group]
        return worth.keys_reach_files(
            number, [*self.derivation.joins, *grouped], self.indexed_sources.get, besides
        )

    def bytes_read(self, reference: Reference) -> int | None:
        """The bytes ``reference`` reads (None: not known)."""
        source, pruned = self.sources.get(reference.key), self.pruned.get(reference.number)
        if source is None:  # Spark's estimate: one analysis and its statistics
            if reference.written not in self.estimates:
                self.estimates[reference.written] = spark_estimate(self.spark, reference.written)
            return self.estimates[reference.written]
        if reference.key not in self.sizes:  # listed once a query, however often asked
            self.sizes[reference.key] = listed_sizes(source)
        sizes = self.sizes[reference.key]
        return None if sizes is None else kept_bytes(source, pruned, sizes)

    def read(self, reference: Reference) -> Any:
        """The frame the reference is read from: its kept files, else the table
        read whole with the schema known here (None: as written)."""
        pruned = self.pruned.get(reference.number)
        if pruned is not None and pruned.frame is not None:
            return pruned.frame
        if reference.number not in self.wholes:
            source = self.sources.get(reference.key)
            self.wholes[reference.number] = reference_whole(self.spark, reference, source)
        return self.wholes[reference.number]

    def frame(self) -> Any:
        frames, spans = {}, {}
        for reference in self.parsed.references if self.derivation.why_whole is None else ():
            frame = self.read(reference)
            if frame is not None:
                name = placeholder(reference.number)
                text = "{" + name + "}"
                if isinstance(frame, LeftOut):  # the skipped files left out in the text
                    text, frame = left_out_sql(text, frame.columns, frame.condition), frame.frame
                spans[(reference.start, reference.end)] = reference.replacement(text)
                frames[name] = frame
        if not frames:
            return self.spark.sql(self.parsed.text)
        return run_sql(self.spark, substitute(self.parsed.text, spans), frames)

    def plans(self) -> list[ReferencePlan]:
        return [
            reference_plan(
                self.by_number[number],
                self.pruned.get(number),
                self.sources.get(self.by_number[number].key),
                self.conditions.get(number, []),
                self.derivation.key_only.get(number),
            )
            for number in sorted(self.derivation.tables | set(self.pruned))
        ]
