"""Dynamic pruning: one side's join keys prune the other, in rounds of passes.

For each equi-join whose other side is filtered (:mod:`.derive`'s
``EquiJoin``), that side's keys are added to the pruned side's conditions
(:mod:`.key_use`), which is pruned again. A side narrowed in one round gives
its own keys in the next (a year's weeks narrow a second date dimension, whose
dates narrow a fact). Each round runs three passes, in order:

1. **joins** (:meth:`KeyRounds._join_pass`): each join tried as
   :func:`~.key_choice.retry` says, its keys read from the key side's kept rows
   now, a Spark key query held;
2. **groups** (:meth:`KeyRounds._group_pass`): a group of joins a row must match
   one of (a CTE's several references) gives the union of their keys
   (:mod:`.any_keys`); the lists of both passes are added and pruned with;
3. **held queries** (:meth:`KeyRounds._held_pass`): the Spark key queries held,
   asked only where the side they prune, narrowed by the first two, still pays
   (:func:`~.key_choice.why_not_ask`); their lists are added and pruned with.

Rounds end when one finds no keys. Where keys come from, and the measuring and
reading, is :mod:`.key_sources`'; what to do is decided by pure functions
(:mod:`.key_choice`, :mod:`.key_spread`, :mod:`.worth`, :mod:`.sizes`).
"""

from __future__ import annotations

from typing import Any

from skipindex.reading.policy import active
from skipindex.sql import worth
from skipindex.sql.any_keys import union_keys
from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import RANGES_ONLY, Keys, Spans, asked_once, key_bound
from skipindex.sql.key_choice import Attempt, Retry, Sides, retry, why_not_ask
from skipindex.sql.key_sources import HeldQuery, KeySources
from skipindex.sql.key_use import index_kinds, key_conditions
from skipindex.sql.plan import JoinKeys
from skipindex.sql.references import Reference
from skipindex.sql.run import QueryRun

__all__ = ["KeyRounds"]


Found = dict[int, list[tuple[EquiJoin, list[Any] | Spans, set[str]]]]


class KeyRounds:
    """The dynamic pruning of one :class:`~.run.QueryRun`, and its account."""

    def __init__(self, run: QueryRun) -> None:
        self.run = run
        self.fed: dict[int, set[int]] = {}  # reference -> those whose keys pruned it
        self.join_keys: list[JoinKeys] = []
        self.sources = KeySources(run)

    def prune_dynamic(self, dynamic_keys: int | None) -> None:
        """At most the policy's ``rounds`` rounds of the three passes (see the
        module's doc), until one finds no keys."""
        tried: dict[tuple[int, str, int, str], frozenset[int]] = {}
        grouped: set[int] = set()
        for round_ in range(active().rounds):
            later = round_ > 0
            held: list[HeldQuery] = []
            found = self._join_pass(dynamic_keys, tried, later, held)
            self._group_pass(dynamic_keys, grouped, later, found)
            self._apply(found)
            asked = self._held_pass(held)
            self._apply(asked)
            if not found and not asked:
                return

    def _apply(self, found: Found) -> None:
        """Each reference's new key lists: added to its conditions, and pruned with."""
        for number, lists in found.items():
            self._add_key_conditions(number, lists)
            self.fed.setdefault(number, set()).update(j.dim for j, _, _ in lists)
            self.run.prune(self.run.by_number[number])

    def _held_pass(self, held: list[HeldQuery]) -> Found:
        """The Spark key queries a round held, now that its local keys have pruned:
        only where the side to prune is still large enough for one to pay, and its
        own side still much smaller (both only shrank: none is asked that was not
        held)."""
        found: Found = {}
        for query in held:
            join = query.join
            fact, dim = self.run.by_number[join.fact], self.run.by_number[join.dim]
            relay, read, dim_read = self.sources.sides_read(join, fact, dim)
            why = why_not_ask(Sides(0, relay, read, dim_read), active())
            if why is not None:
                keys = Keys(join, None, why, 0.0)
            else:
                keys = asked_once(self.sources.asked, query.asked, join, query.ask)
            settled = self._settle(join, dim, keys, query.spans)
            if settled is not None and settled.values is not None:
                kinds = index_kinds(self.run.sources[fact.key], join.fact_column)
                found.setdefault(join.fact, []).append((join, settled.values, kinds))
        return found

    def _join_pass(
        self,
        dynamic_keys: int | None,
        tried: dict[tuple[int, str, int, str], frozenset[int]],
        local_only: bool,
        held: list[HeldQuery],
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
            spans = bool(kinds & RANGES_ONLY) and self.sources.clustered(fact, join.fact_column)
            keys = None
            if attempt is not Attempt.RANGES:
                holding, first = len(held), attempt is Attempt.FIRST
                bound = key_bound(dynamic_keys, kinds)
                local = local_only or not first
                keys = self.sources.values(join, dim, fact, bound, local, spans, held)
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
        if not self.sources.filtered(self.run.by_number[join.dim]):
            return Attempt.NONE, set()  # not filtered (yet): its keys are all keys
        before = self.run.pruned.get(join.fact)
        if before is not None and before.result is not None and not before.result.files:
            return Attempt.NONE, set()  # nothing left to prune
        fact = self.run.by_number[join.fact]
        kinds = index_kinds(self.run.sources[fact.key], join.fact_column)
        again = key in tried or join.fact in fed
        whole = again and self.sources.whole(join.fact)  # measured only where they may matter
        known = Retry(
            tried=key in tried,
            fed_by_pruned_side=join.fact in fed,
            by_ranges=bool(kinds & RANGES_ONLY),
            pruned_whole=whole,
            pruned_large=whole and self.sources.large(fact),
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
            keys = self.sources.spans(join, dim) or keys
        if keys is not None:
            self._keys(join, keys.values, keys.note, keys.seconds)
        return keys

    def _group_pass(
        self, dynamic_keys: int | None, done: set[int], local_only: bool, found: dict[int, Any]
    ) -> None:
        """Each group of joins a row must match one of (:mod:`.any_keys`) whose every
        other side is filtered: the union of their keys, added to ``found``."""
        for at, group in enumerate(self.run.derivation.any_joins):
            fact = self.run.by_number[group[0].fact]
            dims = [self.run.by_number[j.dim] for j in group]
            filtered = all(map(self.sources.filtered, dims))
            if at in done or fact not in self.run.indexed or not filtered:
                continue
            done.add(at)
            kinds = index_kinds(self.run.sources[fact.key], group[0].fact_column)
            bound = key_bound(dynamic_keys, kinds)
            each = [
                self.sources.values(j, d, fact, bound, local_only)
                for j, d in zip(group, dims, strict=True)
            ]
            keys = union_keys(group, each, bound)
            self._keys(keys.join, keys.values, keys.note, keys.seconds)
            if isinstance(keys.values, list):
                found.setdefault(fact.number, []).append((keys.join, keys.values, kinds))

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

    def _keys(
        self, join: EquiJoin, values: list[Any] | Spans | None, note: str, seconds: float
    ) -> None:
        fact, dim = self.run.by_number[join.fact], self.run.by_number[join.dim]
        count = len(values) if isinstance(values, list) else None
        ranges = len(values.ranges) if isinstance(values, Spans) else None
        self.join_keys.append(
            JoinKeys(join.text, fact.written, dim.written, count, note, seconds, ranges)
        )
