"""Dynamic pruning: one side's join keys prune the other, in rounds.

For each equi-join whose other side is filtered (:mod:`.derive`'s
``EquiJoin``), that side's keys are read from its kept rows
(:mod:`.local_keys`), asked of Spark (:mod:`.dynamic`), or bounded by the
min-max of its kept files (:mod:`.file_ranges`), and added to the pruned side's
conditions (:mod:`.key_use`), which is pruned again. A side narrowed in one
round gives its own keys in the next (a year's weeks narrow a second date
dimension, whose dates narrow a fact). A group of joins a row must match one
of (a CTE's several references) gives the union of their keys
(:mod:`.any_keys`). :mod:`.worth` and :mod:`.sizes` say where keys cannot pay.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from skipindex.pruning.evaluate import LIKELY_ROWS
from skipindex.pruning.spread import clustered_by
from skipindex.sql import worth
from skipindex.sql.any_keys import union_keys
from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import RANGES_ONLY, Keys, Spans, asked_once, join_keys, key_bound
from skipindex.sql.file_ranges import file_bounds, kept_file_ranges
from skipindex.sql.key_choice import Attempt, Retry, Sides, choose_keys, retry, why_not_ask
from skipindex.sql.key_spread import expected_keys, likely_skips
from skipindex.sql.key_use import index_kinds, key_conditions
from skipindex.sql.local_keys import local_keys
from skipindex.sql.plan import JoinKeys
from skipindex.sql.policy import active
from skipindex.sql.references import Reference
from skipindex.sql.run import QueryRun
from skipindex.sql.sizes import fits
from skipindex.sql.text import escape, placeholder

__all__ = ["KeyRounds"]


Found = dict[int, list[tuple[EquiJoin, list[Any] | Spans, set[str]]]]


@dataclass(frozen=True)
class _Held:
    """A Spark key query a round holds until the keys its sides read locally have
    pruned: the side it would prune may be too small for it to pay by then (a
    month's dates leave each sales table two files before its returns' keys, a
    Spark job each, would have pruned it)."""

    join: EquiJoin
    spans: bool  # its keys may be given as ranges (see _key_round)
    asked: tuple[Any, ...]  # what it asks (dynamic.asked_once)
    ask: Callable[[], Keys]


class KeyRounds:
    """The dynamic pruning of one :class:`~.run.QueryRun`, and its account."""

    def __init__(self, run: QueryRun) -> None:
        self.run = run
        self.fed: dict[int, set[int]] = {}  # reference -> those whose keys pruned it
        self.join_keys: list[JoinKeys] = []
        self.asked: dict[tuple[Any, ...], Keys] = {}  # Spark key queries, by what they ask

    def prune_dynamic(self, dynamic_keys: int | None) -> None:
        """Each equi-join's filtered side's keys prune its other side, in rounds: a
        side narrowed by keys in one round gives its own keys in the next (a year's
        weeks narrow a second date dimension, whose dates narrow a fact)."""
        tried: dict[tuple[int, str, int, str], frozenset[int]] = {}
        grouped: set[int] = set()
        for round_ in range(active().rounds):
            held: list[_Held] = []
            found = self._key_round(dynamic_keys, tried, round_ > 0, held)
            self._any_round(dynamic_keys, grouped, round_ > 0, found)
            self._apply(found)
            asked = self._ask_held(held)
            self._apply(asked)
            if not found and not asked:
                return

    def _apply(self, found: Found) -> None:
        """Each reference's new key lists: added to its conditions, and pruned with."""
        for number, lists in found.items():
            self._add_key_conditions(number, lists)
            self.fed.setdefault(number, set()).update(j.dim for j, _, _ in lists)
            self.run.prune(self.run.by_number[number])

    def _ask_held(self, held: list[_Held]) -> Found:
        """The Spark key queries a round held, now that its local keys have pruned:
        only where the side to prune is still large enough for one to pay, and its
        own side still much smaller (both only shrank: none is asked that was not
        held)."""
        found: Found = {}
        for query in held:
            join = query.join
            fact, dim = self.run.by_number[join.fact], self.run.by_number[join.dim]
            relay, read, dim_read = self._sides_read(join, fact, dim)
            why = why_not_ask(Sides(0, relay, read, dim_read), active())
            if why is not None:
                keys = Keys(join, None, why, 0.0)
            else:
                keys = asked_once(self.asked, query.asked, join, query.ask)
            settled = self._settle(join, dim, keys, query.spans)
            if settled is not None and settled.values is not None:
                kinds = index_kinds(self.run.sources[fact.key], join.fact_column)
                found.setdefault(join.fact, []).append((join, settled.values, kinds))
        return found

    def _key_round(
        self,
        dynamic_keys: int | None,
        tried: dict[tuple[int, str, int, str], frozenset[int]],
        local_only: bool,
        held: list[_Held],
    ) -> Found:
        """One round of key lists; after the first, only keys read from a side's
        kept rows (``local_only``). ``tried``: each join tried, and the sides whose
        keys had narrowed its key side then; how a join is tried again is
        :func:`~.key_choice.retry`'s. A Spark key query is ``held`` until the
        round's local keys have pruned."""
        found: Found = {}
        for join in self.run.derivation.joins:
            attempt, kinds = self._attempt(join, tried)
            if attempt is Attempt.NONE:
                continue
            fact, dim = self.run.by_number[join.fact], self.run.by_number[join.dim]
            why = worth.why_keys_skip_nothing(self.run.sources[fact.key], join.fact_column)
            if self.run.one_file(fact) and not self.run.reach(join.fact, (join.dim,)):
                why = "its other side is one file: nothing to skip"
            if why is not None:
                if attempt is Attempt.FIRST:
                    self._keys(join, None, why, 0.0)
                continue
            # ranges answer the column, and skip files there: past the bound, the keys as ranges
            spans = bool(kinds & RANGES_ONLY) and self._clustered(fact, join.fact_column)
            keys = None
            if attempt is not Attempt.RANGES:
                holding, first = len(held), attempt is Attempt.FIRST
                bound = key_bound(dynamic_keys, kinds)
                keys = self._values(join, dim, fact, bound, local_only or not first, spans, held)
                if len(held) > holding:
                    continue  # asked (or not) once this round's local keys have pruned
                if not first and keys is not None and keys.values is None:
                    keys = None  # its first try said why none are used
            keys = self._settle(join, dim, keys, spans)
            if keys is not None and keys.values is not None:
                found.setdefault(join.fact, []).append((join, keys.values, kinds))
        return found

    def _attempt(
        self, join: EquiJoin, tried: dict[tuple[int, str, int, str], frozenset[int]]
    ) -> tuple[Attempt, set[str]]:
        """How ``join`` is tried this round (recorded in ``tried``), and the index
        kinds on the column it prunes."""
        key = (join.fact, join.fact_column, join.dim, join.dim_column)
        fed = frozenset(self.fed.get(join.dim, ()))
        indexed = join.fact in self.run.indexed_sources
        if tried.get(key) == fed or not indexed or (fed and fed <= {join.fact}):
            return Attempt.NONE, set()  # tried as it is, or its keys came from this very side
        if not self._filtered(self.run.by_number[join.dim]):
            return Attempt.NONE, set()  # not filtered (yet): its keys are all keys
        before = self.run.pruned.get(join.fact)
        if before is not None and before.result is not None and not before.result.files:
            return Attempt.NONE, set()  # nothing left to prune
        fact = self.run.by_number[join.fact]
        kinds = index_kinds(self.run.sources[fact.key], join.fact_column)
        again = key in tried or join.fact in fed
        whole = again and self._whole(join.fact)  # measured only where they may matter
        known = Retry(
            tried=key in tried,
            fed_by_pruned_side=join.fact in fed,
            by_ranges=bool(kinds & RANGES_ONLY),
            pruned_whole=whole,
            pruned_large=whole and self._large(fact),
        )
        tried[key] = fed
        return retry(known), kinds

    def _settle(
        self, join: EquiJoin, dim: Reference, keys: Keys | None, spans: bool
    ) -> Keys | None:
        """``join``'s keys as accounted: where none are used and ranges answer the
        pruned column, those of ``dim``'s kept files (what min-max needs); None where
        none were read locally and no Spark job was run for them (no word to say)."""
        if (keys is None or keys.values is None) and spans:
            keys = self._spans(join, dim) or keys
        if keys is not None:
            self._keys(join, keys.values, keys.note, keys.seconds)
        return keys

    def _sides_read(
        self, join: EquiJoin, fact: Reference, dim: Reference
    ) -> tuple[bool, int | None, int | None]:
        """Whether ``join``'s pruned side is a relay (its keys reach a third table's
        files: narrowed however small), else the bytes each side reads."""
        relay = self.run.reach(join.fact, (join.dim,))
        if relay:
            return True, None, None
        return False, self.run.bytes_read(fact), self.run.bytes_read(dim)  # listings: asked once

    def _filtered(self, dim: Reference) -> bool:
        """Whether ``dim`` has conditions of its own: else its keys are all keys."""
        found = self.run.conditions.get(dim.number) or self.run.key_only(dim.number)
        return bool(found) and dim.why_whole is None

    def _any_round(
        self, dynamic_keys: int | None, done: set[int], local_only: bool, found: dict[int, Any]
    ) -> None:
        """Each group of joins a row must match one of (:mod:`.any_keys`) whose every
        other side is filtered: the union of their keys, added to ``found``."""
        for at, group in enumerate(self.run.derivation.any_joins):
            fact = self.run.by_number[group[0].fact]
            dims = [self.run.by_number[j.dim] for j in group]
            if at in done or fact not in self.run.indexed or not all(map(self._filtered, dims)):
                continue
            done.add(at)
            kinds = index_kinds(self.run.sources[fact.key], group[0].fact_column)
            bound = key_bound(dynamic_keys, kinds)
            each = [
                self._values(j, d, fact, bound, local_only)
                for j, d in zip(group, dims, strict=True)
            ]
            keys = union_keys(group, each, bound)
            self._keys(keys.join, keys.values, keys.note, keys.seconds)
            if isinstance(keys.values, list):
                found.setdefault(fact.number, []).append((keys.join, keys.values, kinds))

    def _clustered(self, reference: Reference, column: str) -> bool:
        """Whether ``reference``'s files are clustered by ``column`` (its min-max)."""
        return bool(clustered_by(self.run.sources[reference.key].location, column))

    def _values(
        self,
        join: EquiJoin,
        dim: Reference,
        fact: Reference,
        bound: int,
        local_only: bool,
        spans: bool = False,
        held: list[_Held] | None = None,
    ) -> Keys | None:
        """``join``'s keys from ``dim``, or why none are used (None: no word to say,
        or its Spark key query is added to ``held``)."""
        pruned = self.run.pruned.get(join.dim)
        many = worth.matching_rows(pruned.result if pruned is not None else None)
        relay, read, dim_read = self._sides_read(join, fact, dim)
        relay_larger = (
            relay
            and self.run.one_file(fact)
            and not fits(self.run.bytes_read(dim), self.run.bytes_read(fact), 1)
        )
        skips = self._likely_skips(join, dim, fact)
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
        counted = [len(result.rows[f]) if f in result.rows else None for f in result.files]
        if counted.count(None) > result.row_level_sampled:
            return None  # a file kept with no rows counted (min-max, or not indexed)
        if not (self._clustered(fact, join.fact_column) and self._clustered(dim, join.dim_column)):
            return None
        case = self.run.view.case_sensitive
        keys = file_bounds(self.run.sources[dim.key], result.files, join.dim_column, case)
        files = narrowed.result.files if narrowed is not None and narrowed.result else None
        bounds = file_bounds(self.run.sources[fact.key], files, join.fact_column, case)
        if keys is None or bounds is None:
            return None
        matching = np.array([LIKELY_ROWS if n is None else n for n in counted], np.float64)
        repeats = active().rows_per_key_bound  # as choose_keys assumes a key's rows
        return likely_skips(expected_keys(keys, matching, bounds, repeats))

    def _spans(self, join: EquiJoin, dim: Reference) -> Keys | None:
        """Ranges holding ``dim``'s keys, from the min-max of the files its prune
        kept, where that prune skipped some and its files are clustered by the key
        (else each spans most of its range: :mod:`.file_ranges`)."""
        pruned, source = self.run.pruned.get(dim.number), self.run.sources.get(dim.key)
        result = pruned.result if pruned is not None else None
        if source is None or result is None or self._whole(dim.number):
            return None
        if not self._clustered(dim, join.dim_column):
            return None
        started = time.perf_counter()
        ranges = kept_file_ranges(source, result, join.dim_column, self.run.view.case_sensitive)
        if ranges is None:
            return None
        note = f"the min-max of its {result.kept:,} kept files bound its keys"
        return Keys(join, Spans(tuple(ranges), result.kept), note, _since(started))

    def _add_key_conditions(
        self, number: int, lists: list[tuple[EquiJoin, list[Any] | Spans, set[str]]]
    ) -> None:
        """Add each list's condition to reference ``number``'s."""
        fact, dims = self.run.by_number[number], [self.run.by_number[j.dim] for j, _, _ in lists]
        sides = [(d.written, self.run.sources.get(d.key)) for d in dims]
        found = key_conditions(
            fact.alias or fact.written,
            lists,
            self.run.sources.get(fact.key),
            sides,
            self.run.view.case_sensitive,
        )
        self.run.conditions.setdefault(number, []).extend(found)

    def _whole(self, number: int) -> bool:
        """Whether reference ``number`` still keeps every file (nothing narrowed it)."""
        pruned = self.run.pruned.get(number)
        return pruned is None or pruned.result is None or pruned.result.kept == pruned.result.total

    def _large(self, reference: Reference) -> bool:
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
        held: list[_Held] | None = None,
    ) -> Keys | None:
        pruned = self.run.pruned.get(dim.number)
        source = self.run.sources.get(dim.key)
        # Keys read from its kept rows leave out its key-only conditions: more keys, none lost.
        if pruned is not None and source is not None:
            started = time.perf_counter()
            ranges = active().minmax_ranges if spans else None
            view, result = self.run.view, pruned.result
            whole = self._whole(join.fact)
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
            held.append(_Held(join, spans, asked, ask))
            return None
        return asked_once(self.asked, asked, join, ask)

    def _keys(
        self, join: EquiJoin, values: list[Any] | Spans | None, note: str, seconds: float
    ) -> None:
        fact, dim = self.run.by_number[join.fact], self.run.by_number[join.dim]
        count = len(values) if isinstance(values, list) else None
        ranges = len(values.ranges) if isinstance(values, Spans) else None
        self.join_keys.append(
            JoinKeys(join.text, fact.written, dim.written, count, note, seconds, ranges)
        )


def _since(started: float) -> float:
    return time.perf_counter() - started
