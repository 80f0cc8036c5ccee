"""``sql(spark, query)``: Spark SQL over indexed tables, each reference pruned.

1. Parse the query and find its table references (:mod:`.references`); ask
   Spark for the schema of each table they name (:mod:`.catalog`).
2. Derive, per reference, what holds on every row it contributes
   (:mod:`.derive`), and prune each indexed reference with it
   (:mod:`.frames`).
3. Dynamic pruning: for each equi-join whose other side has conditions of its
   own and few keys, add ``key IN (keys)`` and prune again (:mod:`.dynamic`).
4. Run the user's own text with each pruned reference's name replaced by a
   view of its kept files (:mod:`.text`).

Whatever is not understood is read as written: a query sqlglot cannot parse,
a table it cannot resolve, a condition it cannot move, a join it does not
model. The rows are always the rows ``spark.sql(query)`` returns.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from skipindex.spark.settings import SparkView
from skipindex.sql import sizes, worth
from skipindex.sql.catalog import Source, resolve
from skipindex.sql.conjuncts import Condition, prune_where, render
from skipindex.sql.derive import Derivation, EquiJoin, Parsed, derive, parse
from skipindex.sql.dynamic import RANGES_ONLY, Keys, Spans, join_keys, key_bound
from skipindex.sql.file_ranges import kept_file_ranges
from skipindex.sql.frames import Pruned, prune_source, whole_frame
from skipindex.sql.key_use import index_kinds, indexed_rows, key_conditions
from skipindex.sql.local_keys import local_keys
from skipindex.sql.plan import JoinKeys, ReferencePlan, SqlPlan, made_under, reference_plan
from skipindex.sql.references import Reference
from skipindex.sql.sizes import KEY_SIDE_SHARE, fits, reference_bytes
from skipindex.sql.text import escape, placeholder, run_sql, substitute

__all__ = ["sql", "sql_plan"]

# Keys are not computed where the other side's index already says this many times
# the bound of rows match (its keys are as many, unless its key repeats).
MANY = 4
# Rounds of dynamic pruning: keys travel at most this many joins.
ROUNDS = 3


def sql(spark: Any, query: str, *, dynamic_keys: int | None = None, row_groups: bool = True) -> Any:
    """The rows ``spark.sql(query)`` returns, reading only the files of indexed
    tables that can hold rows the query uses.

    Tables are views :func:`~skipindex.register` made, or ``parquet.`/path```
    and ``delta.`/path``` in the query. Each reference to one is pruned with
    the conditions every row it contributes must meet: the query's own, those
    of the query around a derived table, CTE or set operation, those carried
    across inner equi-joins and, unless ``dynamic_keys`` is 0, the keys of the
    other side of an equi-join where that side is filtered and has at most
    ``dynamic_keys`` distinct keys (default 4,096, or 16,384 where the column
    has bit-sliced bitmaps). :func:`~skipindex.sql_plan` says what was done,
    per reference.
    """
    return sql_plan(spark, query, dynamic_keys=dynamic_keys, row_groups=row_groups).frame


def sql_plan(
    spark: Any, query: str, *, dynamic_keys: int | None = None, row_groups: bool = True
) -> SqlPlan:
    """:func:`sql`, with the plan: per reference, the predicate it was pruned
    with, where each condition came from, and the files kept
    (``plan.frame`` is the DataFrame, ``plan.explain()`` the account)."""
    started = time.perf_counter()
    view = SparkView.of_session(spark)
    parsed = parse(query, view.case_sensitive)
    if parsed is None:
        note = "not one query sqlglot can parse: Spark runs it as written"
        return SqlPlan(query, lambda: spark.sql(query), note=note, seconds=_since(started))
    catalog, sources = resolve(spark, parsed)
    derivation = derive(parsed, catalog)
    run = _Run(spark, parsed, derivation, sources, view, row_groups)
    run.prune_static()
    if dynamic_keys != 0 and derivation.why_whole is None:
        run.prune_dynamic(dynamic_keys)
    return SqlPlan(
        query,
        made_under(spark, view, run.frame),
        run.plans(),
        run.join_keys,
        derivation.why_whole or "",
        seconds=_since(started),
    )


class _Run:
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
        self.fed: dict[int, set[int]] = {}  # reference -> those whose keys pruned it
        self.rendered: dict[int, str] = {}  # id of a condition (alive in conditions) -> SQL
        self.join_keys: list[JoinKeys] = []
        self.asked: dict[tuple[Any, ...], Keys] = {}  # Spark key queries, by what they ask
        self.wholes: dict[int, Any] = {}  # reference -> read whole, schema known (see _read)
        self.indexed = [
            r
            for r in parsed.references
            if r.why_whole is None
            and r.key in sources
            and (r.number in derivation.tables or sources[r.key].must_replace)
        ]
        self.indexed_sources = {r.number: sources[r.key] for r in self.indexed}

    def _where(self, number: int) -> str | None:
        """Reference ``number``'s conditions as Spark SQL, for its key query."""
        found = [self._text(c) for c in self.conditions.get(number) or []]
        found += self._key_only(number)
        return " AND ".join(f"({text})" for text in found) or None

    def _key_only(self, number: int) -> list[str]:
        """Its conditions only Spark evaluates (:mod:`.subqueries`), unless keys narrow
        it (q33's item, by its IN subquery's): its kept rows then give its keys."""
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

    def _prune(self, reference: Reference) -> None:
        self.pruned[reference.number] = prune_source(
            self.spark,
            self.sources[reference.key],
            prune_where(self.conditions.get(reference.number, []), self.view.time_zone, self._text),
            self.view,
            row_groups=self.row_groups,
        )

    def prune_static(self) -> None:
        for reference in self.indexed:
            if self._one_file(reference) and not self._reach(reference.number):
                # Nothing to skip in one file, and its keys skip none anywhere: leave it
                # whole rather than evaluate its conditions (a 400-value IN, say) for nothing.
                self.pruned[reference.number] = Pruned(
                    None, None, None, "one file, and its keys skip no file: nothing to skip", 0.0
                )
                continue
            self._prune(reference)

    def _one_file(self, reference: Reference) -> bool:
        return worth.one_file(self.sources[reference.key])

    def _reach(self, number: int, besides: tuple[int, ...] = ()) -> bool:
        """Whether keys of reference ``number`` can skip files of some reference
        (:func:`~.worth.keys_reach_files`; q72's second date dimension, between
        1999's weeks and inventory, is worth narrowing however small it is)."""
        return worth.keys_reach_files(
            number, self.derivation.joins, self.indexed_sources.get, besides
        )

    def prune_dynamic(self, dynamic_keys: int | None) -> None:
        """Each equi-join's filtered side's keys prune its other side, in rounds: a
        side narrowed by keys in one round gives its own keys in the next (q72:
        1999's weeks narrow a second date dimension, whose dates narrow inventory)."""
        tried: dict[tuple[int, str, int, str], frozenset[int]] = {}
        for round_ in range(ROUNDS):
            found = self._key_round(dynamic_keys, tried, local_only=round_ > 0)
            if not found:
                return
            for number, lists in found.items():
                self._add_key_conditions(number, lists)
                self.fed.setdefault(number, set()).update(j.dim for j, _, _ in lists)
                self._prune(self.by_number[number])

    def _key_round(
        self,
        dynamic_keys: int | None,
        tried: dict[tuple[int, str, int, str], frozenset[int]],
        local_only: bool,
    ) -> dict[int, list[tuple[EquiJoin, list[Any] | Spans, set[str]]]]:
        """One round of key lists; after the first, only keys read from a side's
        kept rows (a Spark key query over the long lists earlier rounds added
        to its conditions costs seconds where reading them costs milliseconds).
        ``tried``: each join tried, and the sides whose keys had narrowed its dim
        side then. A side narrowed since, or narrowed by this very side and others,
        gives ranges from its kept files only, which cost no read (q49: catalog_sales,
        whole in the first round, then December's two files, bounds its returns)."""
        indexed = {r.number for r in self.indexed}
        found: dict[int, list[tuple[EquiJoin, list[Any] | Spans, set[str]]]] = {}
        for join in self.derivation.joins:
            key = (join.fact, join.fact_column, join.dim, join.dim_column)
            fed = frozenset(self.fed.get(join.dim, ()))
            if tried.get(key) == fed or join.fact not in indexed or (fed and fed <= {join.fact}):
                continue  # tried as it is, or its keys came from this very side
            dim = self.by_number[join.dim]
            filtered = self.conditions.get(join.dim) or self._key_only(join.dim)
            if not filtered or dim.why_whole is not None:
                continue  # not filtered (yet): its keys are all keys
            again = key in tried or join.fact in fed
            tried[key] = fed
            fact = self.by_number[join.fact]
            kinds = index_kinds(self.sources[fact.key], join.fact_column)
            ranges_only = bool(kinds) and kinds <= RANGES_ONLY
            before = self.pruned.get(join.fact)
            if before is not None and before.result is not None and not before.result.files:
                continue  # nothing left to prune
            if again and not ranges_only:
                continue
            why = worth.why_keys_skip_nothing(self.sources[fact.key], join.fact_column)
            if self._one_file(fact) and not self._reach(join.fact, (join.dim,)):
                why = "its other side is one file: nothing to skip"
            if why is not None:
                if not again:
                    self._keys(join, None, why, 0.0)
                continue
            bound = key_bound(dynamic_keys, kinds)
            keys = None if again else self._values(join, dim, fact, bound, local_only)
            if (keys is None or keys.values is None) and ranges_only:
                keys = self._spans(join, dim) or keys  # what min-max needs: ranges
            if keys is None:
                continue  # none read locally, and no Spark job for them
            self._keys(join, keys.values, keys.note, keys.seconds)
            if keys.values is not None:
                found.setdefault(join.fact, []).append((join, keys.values, kinds))
        return found

    def _values(
        self, join: EquiJoin, dim: Reference, fact: Reference, bound: int, local_only: bool
    ) -> Keys | None:
        """``join``'s keys from ``dim``, or why none are used (None: no word to say)."""
        pruned = self.pruned.get(join.dim)
        many = worth.matching_rows(pruned.result if pruned is not None else None)
        if many > MANY * bound:
            return Keys(join, None, f"its index says about {many:,} rows match", 0.0)
        relay = worth.relays(join, self.derivation.joins)
        read = None if relay else self._bytes(fact)  # a listing: asked once
        dim_read = None if relay else self._bytes(dim)
        # A side not much smaller than the one it prunes: its keys only where they
        # are read from its kept rows (milliseconds), never by a Spark job reading it,
        # and only from a few kept files (sizes.LOCAL_KEY_SIDE_BYTES).
        larger = not relay and not fits(dim_read, read, KEY_SIDE_SHARE)
        if larger and (dim_read is None or dim_read >= sizes.LOCAL_KEY_SIDE_BYTES):
            return Keys(join, None, "its side is not much smaller than the one to prune", 0)
        # A relay narrows a side that passes keys on, however small, but not a one-file
        # dimension by a fact's keys (q82: inventory's for item; q72's d1 for d2 is fine).
        if relay and self._one_file(fact) and not fits(self._bytes(dim), self._bytes(fact), 1):
            return Keys(join, None, "its side is larger than the one file it would narrow", 0)
        small = read is not None and read < sizes.KEY_QUERY_BYTES
        keys = self._dim_keys(join, dim, bound, local_only or small or larger)
        if keys is None and (small or larger) and not local_only:
            why = "its other side is too small for a Spark key query to pay"
            if larger:
                why = "its side is not much smaller than the one to prune"
            return Keys(join, None, why, 0.0)
        return keys

    def _spans(self, join: EquiJoin, dim: Reference) -> Keys | None:
        """Ranges holding ``dim``'s keys, from the min-max of the files its prune
        kept, where that prune skipped some (:mod:`.file_ranges`)."""
        pruned, source = self.pruned.get(dim.number), self.sources.get(dim.key)
        result = pruned.result if pruned is not None else None
        if source is None or result is None or result.kept >= result.total:
            return None
        started = time.perf_counter()
        ranges = kept_file_ranges(source, result, join.dim_column, self.view.case_sensitive)
        if ranges is None:
            return None
        note = f"the min-max of its {result.kept:,} kept files bound its keys"
        return Keys(join, Spans(tuple(ranges), result.kept), note, _since(started))

    def _add_key_conditions(
        self, number: int, lists: list[tuple[EquiJoin, list[Any] | Spans, set[str]]]
    ) -> None:
        """Add each list's condition to reference ``number``'s."""
        fact = self.by_number[number]
        counted = indexed_rows(self.sources.get(fact.key))
        per_file = counted[0] / counted[1] if counted else None
        shares = [
            self._share(join, len(values)) if isinstance(values, list) else None
            for join, values, _ in lists
        ]
        names = [self.by_number[join.dim].written for join, _, _ in lists]
        found = key_conditions(fact.alias or fact.written, lists, shares, per_file, names)
        self.conditions.setdefault(number, []).extend(found)

    def _share(self, join: EquiJoin, keys: int) -> float | None:
        """The share of the other side's rows ``keys`` of its join key are
        expected to hold: keys / the rows of the key's own table (its key)."""
        counted = indexed_rows(self.sources.get(self.by_number[join.dim].key))
        return min(1.0, keys / counted[0]) if counted and counted[0] else None

    def _bytes(self, reference: Reference) -> int | None:
        """The bytes ``reference`` reads (None: not known)."""
        source, pruned = self.sources.get(reference.key), self.pruned.get(reference.number)
        return reference_bytes(self.spark, reference, source, pruned)

    def _dim_keys(
        self, join: EquiJoin, dim: Reference, bound: int, local_only: bool
    ) -> Keys | None:
        pruned = self.pruned.get(dim.number)
        source = self.sources.get(dim.key)
        # Keys read from its kept rows leave out its key-only conditions: more keys, none lost.
        if pruned is not None and source is not None:
            started = time.perf_counter()
            found = local_keys(source, pruned.result, join.dim_column, self.view, bound)
            if found is not None and found.keys is None:
                return Keys(join, None, f"more than {bound:,} keys (its bitmaps)", _since(started))
            if found is not None:
                return Keys(join, found.keys, "read from its kept rows", _since(started))
        if local_only:
            return None
        dim_where = self._where(dim.number) or "TRUE"
        files = pruned.result.files if pruned and pruned.frame and pruned.result else None
        asked = (dim.key, tuple(files or ()), dim_where, join.dim_column, bound)
        known = self.asked.get(asked)  # q58: three CTEs' date dimensions, a week by subquery
        if known is not None:
            again = "as asked for another reference" if known.values is not None else known.note
            return replace(known, join=join, note=again)
        frame = self._read(dim)
        if frame is not None:
            name = placeholder(dim.number)
            keys = join_keys(self.spark, join, "{" + name + "}", {name: frame}, dim_where, bound)
        else:
            keys = join_keys(self.spark, join, escape(dim.written), {}, dim_where, bound)
        self.asked[asked] = replace(keys, seconds=0.0)
        return keys

    def _keys(
        self, join: EquiJoin, values: list[Any] | Spans | None, note: str, seconds: float
    ) -> None:
        fact, dim = self.by_number[join.fact], self.by_number[join.dim]
        count = len(values) if isinstance(values, list) else None
        ranges = len(values.ranges) if isinstance(values, Spans) else None
        self.join_keys.append(
            JoinKeys(join.text, fact.written, dim.written, count, note, seconds, ranges)
        )

    def _read(self, reference: Reference) -> Any:
        """The frame the reference is read from: its kept files, else the table
        read whole with the schema known here (None: as written)."""
        pruned = self.pruned.get(reference.number)
        if pruned is not None and pruned.frame is not None:
            return pruned.frame
        if reference.number not in self.wholes:
            source, key = self.sources.get(reference.key), reference.key
            whole = None
            if source is not None and reference.why_whole is None and key.kind != "delta":
                # the registered view's folder, or the parquet. path as written
                path = source.location.user_root if key.kind == "name" else key.name
                whole = whole_frame(self.spark, source, path)
            self.wholes[reference.number] = whole
        return self.wholes[reference.number]

    def frame(self) -> Any:
        frames, spans = {}, {}
        for reference in self.parsed.references if self.derivation.why_whole is None else ():
            frame = self._read(reference)
            if frame is not None:
                name = placeholder(reference.number)
                spans[(reference.start, reference.end)] = reference.replacement("{" + name + "}")
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
            )
            for number in sorted(self.derivation.tables | set(self.pruned))
        ]


def _since(started: float) -> float:
    return time.perf_counter() - started
