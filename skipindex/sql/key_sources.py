"""Where one join's keys come from, measured and read: the I/O of the key rounds.

:mod:`.key_rounds` runs the passes; here each join's two sides are measured
(the bytes each reads, the rows the key side's index counts, where both sides'
min-max say its keys can lie: :mod:`.key_spread`), the pure
:func:`~.key_choice.choose_keys` is asked what to do, and the keys are read:
from the key side's kept rows (:mod:`.local_keys`), by a Spark key query
(:mod:`.dynamic`, held until a round's local keys have pruned), or bounded by
the min-max of its kept files (:mod:`.file_ranges`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from skipindex.pruning.evaluate import LIKELY_ROWS
from skipindex.pruning.spread import clustered_by
from skipindex.reading.policy import active
from skipindex.sql import worth
from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import Keys, Spans, asked_once, join_keys
from skipindex.sql.file_ranges import file_bounds, kept_file_ranges
from skipindex.sql.key_choice import Sides, choose_keys
from skipindex.sql.key_spread import expected_keys, likely_skips
from skipindex.sql.local_keys import local_keys
from skipindex.sql.references import Reference
from skipindex.sql.run import QueryRun
from skipindex.sql.sizes import fits
from skipindex.sql.text import escape, placeholder

__all__ = ["HeldQuery", "KeySources"]


@dataclass(frozen=True)
class HeldQuery:
    """A Spark key query a round holds until the keys its sides read locally have
    pruned: the side it would prune may be too small for it to pay by then (a
    month's dates leave each sales table two files before its returns' keys, a
    Spark job each, would have pruned it)."""

    join: EquiJoin
    spans: bool  # its keys may be given as ranges (see KeyRounds._join_pass)
    asked: tuple[Any, ...]  # what it asks (dynamic.asked_once)
    ask: Callable[[], Keys]


class KeySources:
    """The sides of one query run's joins, measured, and their keys read."""

    def __init__(self, run: QueryRun) -> None:
        self.run = run
        self.asked: dict[tuple[Any, ...], Keys] = {}  # Spark key queries, by what they ask

    def values(
        self,
        join: EquiJoin,
        dim: Reference,
        fact: Reference,
        bound: int,
        local_only: bool,
        spans: bool = False,
        held: list[HeldQuery] | None = None,
    ) -> Keys | None:
        """``join``'s keys from ``dim``, or why none are used (None: no word to say,
        or its Spark key query is added to ``held``)."""
        pruned = self.run.pruned.get(join.dim)
        many = worth.matching_rows(pruned.result if pruned is not None else None)
        relay, read, dim_read = self.sides_read(join, fact, dim)
        relay_larger = (
            relay
            and self.run.one_file(fact)
            and not fits(self.run.bytes_read(dim), self.run.bytes_read(fact), 1)
        )
        # a relay's narrowed rows give keys on, whatever files they skip
        skips = None if relay else self._likely_skips(join, dim, fact)
        sides = Sides(many, relay, read, dim_read, relay_larger, skips)
        choice = choose_keys(sides, bound, spans, local_only, active())
        if choice.why_none is not None:
            return Keys(join, None, choice.why_none, 0.0)
        keys = self._dim_keys(join, dim, bound, choice.local_only, spans, held)
        if keys is None and choice.why_not_asked is not None:
            return Keys(join, None, choice.why_not_asked, 0.0)
        return keys

    def _likely_skips(self, join: EquiJoin, dim: Reference, fact: Reference) -> float | None:
        """The files of ``fact`` ``join``'s keys are expected to skip (:mod:`.key_spread`),
        where both sides are clustered by the key and bitmaps counted the key side's
        kept rows, or found at least LIKELY_ROWS in a sample of a file's (None: not
        estimated)."""
        pruned, narrowed = self.run.pruned.get(join.dim), self.run.pruned.get(join.fact)
        result = pruned.result if pruned is not None else None
        if result is None or not result.files:
            return None
        if not (self.clustered(fact, join.fact_column) and self.clustered(dim, join.dim_column)):
            return None  # (cached per index version: asked before a pass over the kept files)
        counted = [len(result.rows[f]) if f in result.rows else None for f in result.files]
        if counted.count(None) > result.row_level_sampled:
            return None  # a file kept with no rows counted (min-max, or not indexed)
        case = self.run.view.case_sensitive
        keys = file_bounds(self.run.sources[dim.key], result.files, join.dim_column, case)
        files = narrowed.result.files if narrowed is not None and narrowed.result else None
        bounds = file_bounds(self.run.sources[fact.key], files, join.fact_column, case)
        if keys is None or bounds is None:
            return None
        matching = np.array([LIKELY_ROWS if n is None else n for n in counted], np.float64)
        repeats = active().rows_per_key_bound  # as choose_keys assumes a key's rows
        return likely_skips(expected_keys(keys, matching, bounds, repeats))

    def spans(self, join: EquiJoin, dim: Reference) -> Keys | None:
        """Ranges holding ``dim``'s keys, from the min-max of the files its prune
        kept, where that prune skipped some and its files are clustered by the key
        (else each spans most of its range: :mod:`.file_ranges`)."""
        pruned, source = self.run.pruned.get(dim.number), self.run.sources.get(dim.key)
        result = pruned.result if pruned is not None else None
        if source is None or result is None or self.whole(dim.number):
            return None
        if not self.clustered(dim, join.dim_column):
            return None
        started = time.perf_counter()
        ranges = kept_file_ranges(source, result, join.dim_column, self.run.view.case_sensitive)
        if ranges is None:
            return None
        note = f"the min-max of its {result.kept:,} kept files bound its keys"
        return Keys(join, Spans(tuple(ranges), result.kept), note, _since(started))

    def sides_read(
        self, join: EquiJoin, fact: Reference, dim: Reference
    ) -> tuple[bool, int | None, int | None]:
        """Whether ``join``'s pruned side is a relay (its keys reach a third table's
        files: narrowed however small), else the bytes each side reads."""
        relay = self.run.reach(join.fact, (join.dim,))
        if relay:
            return True, None, None
        return False, self.run.bytes_read(fact), self.run.bytes_read(dim)  # listings: asked once

    def filtered(self, dim: Reference) -> bool:
        """Whether ``dim`` has conditions of its own: else its keys are all keys."""
        found = self.run.conditions.get(dim.number) or self.run.key_only(dim.number)
        return bool(found) and dim.why_whole is None

    def clustered(self, reference: Reference, column: str) -> bool:
        """Whether ``reference``'s files are clustered by ``column`` (its min-max)."""
        return bool(clustered_by(self.run.sources[reference.key].location, column))

    def whole(self, number: int) -> bool:
        """Whether reference ``number`` still keeps every file (nothing narrowed it)."""
        pruned = self.run.pruned.get(number)
        return pruned is None or pruned.result is None or pruned.result.kept == pruned.result.total

    def large(self, reference: Reference) -> bool:
        """Whether ``reference`` reads at least what a Spark key query costs to read."""
        read = self.run.bytes_read(reference)
        return read is None or read >= active().key_query_bytes

    def _dim_keys(
        self,
        join: EquiJoin,
        dim: Reference,
        bound: int,
        local_only: bool,
        spans: bool,
        held: list[HeldQuery] | None = None,
    ) -> Keys | None:
        pruned = self.run.pruned.get(dim.number)
        source = self.run.sources.get(dim.key)
        # Keys read from its kept rows leave out its key-only conditions: more keys, none lost.
        if pruned is not None and source is not None:
            started = time.perf_counter()
            ranges = active().minmax_ranges if spans else None
            view, result = self.run.view, pruned.result
            whole = self.whole(join.fact)
            found = local_keys(
                source, result, join.dim_column, view, bound, ranges, whole, pruned.given
            )
            if found is not None and found.spans is not None and result is not None:
                bounded = Spans(tuple(found.spans), result.kept, found.counted)
                return Keys(join, bounded, "read from its kept rows", _since(started))
            if found is not None and found.keys is None:
                return Keys(join, None, f"more than {bound:,} keys (its bitmaps)", _since(started))
            if found is not None:
                return Keys(join, found.keys, "read from its kept rows", _since(started))
        if local_only:
            return None
        dim_where = self.run.where(dim.number) or "TRUE"
        files = pruned.result.files if pruned and pruned.frame and pruned.result else None

        def ask() -> Keys:
            frame, name = self.run.read(dim), placeholder(dim.number)
            if frame is None:
                return join_keys(self.run.spark, join, escape(dim.written), {}, dim_where, bound)
            return join_keys(
                self.run.spark, join, "{" + name + "}", {name: frame}, dim_where, bound
            )

        # asked once: several CTEs' date dimensions may ask for the same week by the
        # same subquery
        asked = (dim.key, tuple(files or ()), dim_where, join.dim_column, bound)
        if held is not None:
            held.append(HeldQuery(join, spans, asked, ask))
            return None
        return asked_once(self.asked, asked, join, ask)


def _since(started: float) -> float:
    return time.perf_counter() - started
