"""For each table reference of a query, the conditions every row it contributes meets.

The query is qualified with sqlglot's optimizer (every column tied to its
source, ``*`` expanded from the tables' Spark schemas) and walked scope by
scope (``sqlglot.optimizer.scope``). In each SELECT, a condition of WHERE or
of a join's ON is kept for a source where it absorbs that source's rows
(:mod:`.joins`) and names only that source's columns through derivable nodes
(:mod:`.conjuncts`). What is kept for a derived table, a CTE or a set operation
moves inside it (:mod:`.pushdown`); what is kept for a table reference prunes
it. In a SELECT of inner joins only, a one-column condition also moves across
``a.x = b.y`` to the other column when both have one type. Equalities between
two tables' columns are also returned as :class:`EquiJoin` candidates for
dynamic pruning (one side's keys prune the other), and a WHERE conjunct with an
uncorrelated subquery as Spark SQL for a key query only (:mod:`.subqueries`).

Nothing here runs Spark: ``catalog`` gives each table's columns and types.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, ScopeType, build_scope

from skipindex.sql.conjuncts import Condition, derivable, qualifiers, render, split_and
from skipindex.sql.joins import join_shape
from skipindex.sql.pushdown import (
    combine_references,
    into_branch,
    into_grouped,
    into_select,
    output_form,
    pushable,
    pushable_grouped,
    trace_column,
)
from skipindex.sql.references import (
    REF,
    Reference,
    TableKey,
    dialect,
    find_references,
    layout_dependent,
    parse_query,
)
from skipindex.sql.semi_joins import KeyPair, subquery_joins
from skipindex.sql.subqueries import key_query_owner, key_query_text
from skipindex.sql.transfer import Equality, equalities, key_types_join, transfer, transfer_outer

__all__ = ["Catalog", "Derivation", "EquiJoin", "Parsed", "derive", "parse"]

# TableKey -> column name (as the session compares names) -> Spark type (simpleString).
Catalog = Mapping[TableKey, Mapping[str, str]]
_SESSION_DB = "__skipindex_session__"  # where unqualified names live, for qualify


@dataclass
class Parsed:
    """A query, parsed, with its table references found."""

    text: str
    tree: exp.Query
    references: list[Reference]
    case_sensitive: bool
    layout: str | None  # why rows' placement matters to the answer, if it does


def parse(text: str, case_sensitive: bool = False) -> Parsed | None:
    """``text`` parsed (None: not one query sqlglot can parse); :func:`derive`
    never changes its tree, so a ``Parsed`` may be kept and derived again."""
    tree = parse_query(text, case_sensitive)
    if tree is None:
        return None
    references = find_references(tree, text, case_sensitive)
    return Parsed(text, tree, references, case_sensitive, layout_dependent(tree))


@dataclass(frozen=True)
class EquiJoin:
    """``fact.fact_column = dim.dim_column`` where a ``fact`` row counts only if
    it matches a ``dim`` row: ``dim``'s keys can prune ``fact``."""

    fact: int  # reference numbers
    fact_column: str
    dim: int
    dim_column: str
    text: str  # the condition as the query writes it
    # the fact side only follows the dim (an IN subquery's table, by the outer
    # rows' keys): the dim's own keys never wait for it (worth.narrowed_by_keys)
    follows: bool = False


@dataclass
class Derivation:
    """What :func:`derive` found: per table reference (by number), its conditions."""

    tables: set[int] = field(default_factory=set)  # references naming a table (not a CTE)
    conditions: dict[int, list[Condition]] = field(default_factory=dict)
    # Spark SQL a key query over the reference may add (see :mod:`.subqueries`)
    key_only: dict[int, list[str]] = field(default_factory=dict)
    joins: list[EquiJoin] = field(default_factory=list)
    # Groups of joins of which a fact row must match one (a CTE's several references)
    any_joins: list[tuple[EquiJoin, ...]] = field(default_factory=list)
    why_whole: str | None = None  # set: nothing is derived, the query runs as written

    def where(self, number: int) -> str | None:
        """The conditions of reference ``number`` as one Spark SQL predicate."""
        found = self.conditions.get(number) or []
        return " AND ".join(f"({render(c.node)})" for c in found) or None


def derive(parsed: Parsed, catalog: Catalog) -> Derivation:
    """Conditions for each reference of ``parsed`` to a table in ``catalog``."""
    if parsed.layout is not None:
        return Derivation(why_whole=parsed.layout)
    types = {r.number: catalog[r.key] for r in parsed.references if r.key in catalog}
    tree = parsed.tree.copy()  # qualify rewrites the tree it is given: parsed is kept
    try:
        qualify(
            tree,
            db=_SESSION_DB,
            schema=_schema(catalog),
            dialect=dialect(parsed.case_sensitive),
            validate_qualify_columns=False,
            quote_identifiers=False,
            expand_alias_refs=False,
        )
        root = build_scope(tree)
    except (SqlglotError, RecursionError, ValueError, KeyError) as exc:
        return Derivation(why_whole=f"the query's names could not be resolved ({exc})")
    if root is None:
        return Derivation(why_whole="no query scope")
    walk = _Walk(types)
    walk.run(root)
    walk.shared_joins()
    return walk.result


def _schema(catalog: Catalog) -> dict[str, object]:
    out: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for key, columns in catalog.items():
        if key.kind == "other":
            continue
        db = _SESSION_DB if key.kind == "name" else key.kind
        out[db][key.name] = {name: _sqlglot_type(t) for name, t in columns.items()}
    return dict(out)


@functools.lru_cache(maxsize=1024)
def _sqlglot_type(spark_type: str) -> str:
    """A Spark type's spelling in sqlglot's Spark dialect (each parse costs
    about 0.4 ms, and a star schema's columns repeat a few types)."""
    try:
        return exp.DataType.build(spark_type, dialect="spark").sql(dialect="spark")
    except (SqlglotError, ValueError):
        return "STRING"  # only names matter to qualify; types are checked apart


class _Walk:
    """One walk over a query's scopes, recording what holds where."""

    def __init__(self, types: Mapping[int, Mapping[str, str]]) -> None:
        self.types = types
        self.result = Derivation()
        self.queue: list[tuple[Scope, list[Condition] | None]] = []
        self.done: set[int] = set()
        self.uses: dict[int, int] = defaultdict(int)  # CTE scope -> references to it
        self.pushes: dict[int, list[list[Condition] | None]] = defaultdict(list)
        self.shared: dict[int, tuple[Scope, list[KeyPair]]] = {}  # CTE -> joins on it

    def run(self, root: Scope) -> None:
        scopes = list(root.traverse())
        for scope in scopes:  # every table node naming a CTE, a join in brackets's too
            for table in scope.tables:
                source = scope.sources.get(table.alias_or_name)
                if isinstance(source, Scope) and source.scope_type == ScopeType.CTE:
                    self.uses[id(source)] += 1
        self.queue.append((root, None))
        while True:
            while self.queue:
                scope, pushed = self.queue.pop()
                if id(scope) not in self.done:
                    self.done.add(id(scope))
                    self._scope(scope, pushed)
            # Scopes nothing reached with a push (subqueries, unused CTEs, scopes
            # under a join not modelled): their own conditions still hold.
            left = [s for s in scopes if id(s) not in self.done]
            if not left:
                return
            self.queue.append((left[-1], None))

    @staticmethod
    def _from_items(scope: Scope) -> dict[str, exp.Table | Scope]:
        select = scope.expression
        if not isinstance(select, exp.Select):
            return {}
        items = [select.args.get("from_"), *list(select.args.get("joins") or [])]
        out = {}
        for item in items:
            node = getattr(item, "this", None)
            if isinstance(node, exp.Table | exp.Subquery) and node.alias in scope.sources:
                out[node.alias] = scope.sources[node.alias]
        return out

    def _scope(self, scope: Scope, pushed: list[Condition] | None) -> None:
        if scope.set_operation_scopes:
            self._set_operation(scope, pushed)
        elif isinstance(scope.expression, exp.Select):
            self._select(scope, pushed)

    def _set_operation(self, scope: Scope, pushed: list[Condition] | None) -> None:
        for branch in scope.set_operation_scopes:
            moved = None
            if pushed and not scope.expression.args.get("limit"):
                moved = [m for c in pushed if (m := into_branch(scope, branch, c, self.types))]
            self.queue.append((branch, moved or None))

    def _select(self, scope: Scope, pushed: list[Condition] | None) -> None:
        select = cast(exp.Select, scope.expression)
        shape = join_shape(select)
        items = self._from_items(scope)
        kept: dict[str, list[Condition]] = defaultdict(list)
        if shape.understood:
            where = [Condition(c, "written") for c in split_and(_where(select))]
            if pushed and pushable(select):
                where += [m for c in pushed if (m := into_select(scope, c)) is not None]
            elif pushed and pushable_grouped(select):
                where += [
                    m for c in pushed if (m := into_grouped(scope, c, self.types)) is not None
                ]
            placed = [(c, shape.where) for c in where]
            placed += [
                (Condition(c, "written"), on) for node, on in shape.on for c in split_and(node)
            ]
            for condition, absorbs in placed:
                alias = self._owner(scope, condition, absorbs)
                if alias is not None:
                    kept[alias].append(condition)
                elif absorbs is shape.where:
                    self._key_only(scope, condition.node, absorbs)
            found = equalities(scope, placed, self.types)
            if shape.inner:
                carried = transfer(kept, found)
            else:
                carried = transfer_outer(kept, found, shape.where)
            for alias, extra in carried.items():
                kept[alias].extend(extra)
            self._joins(scope, found, where, shape.where)
        for alias, source in items.items():
            self._record(source, alias, kept.get(alias, []))

    def _owner(self, scope: Scope, condition: Condition, absorbs: set[str]) -> str | None:
        """The one source ``condition`` is kept for, if any."""
        names = qualifiers(condition.node)
        if len(names) != 1 or not derivable(condition.node):
            return None
        (alias,) = names
        if alias not in absorbs:
            return None
        source = scope.sources.get(alias)
        columns = _columns_of(source, self.types)
        if columns is None:
            return None
        named = {c.name for c in condition.node.find_all(exp.Column)}
        return alias if named <= columns else None

    def _key_only(self, scope: Scope, node: exp.Expr, absorbs: set[str]) -> None:
        alias = key_query_owner(scope, node, absorbs)
        source = scope.sources.get(alias) if alias is not None else None
        number = source.meta.get(REF) if isinstance(source, exp.Table) else None
        if isinstance(number, int) and number in self.types:
            text = key_query_text(node, _SESSION_DB)
            self.result.key_only.setdefault(number, []).append(text)

    def _record(self, source: exp.Table | Scope, alias: str, kept: list[Condition]) -> None:
        if isinstance(source, exp.Table):
            number = source.meta.get(REF)
            if number is not None and number in self.types:
                self.result.tables.add(number)
                self.result.conditions.setdefault(number, []).extend(kept)
            return
        pushed = [output_form(c, alias) for c in kept] or None
        if source.scope_type == ScopeType.CTE:
            self.pushes[id(source)].append(pushed)
            if len(self.pushes[id(source)]) == self.uses[id(source)]:
                self.queue.append((source, combine_references(self.pushes[id(source)])))
        else:
            self.queue.append((source, pushed))

    def _joins(
        self, scope: Scope, found: list[Equality], where: list[Condition], preserved: set[str]
    ) -> None:
        for equality in found:
            for fact, dim in ((equality.left, equality.right), (equality.right, equality.left)):
                if fact.alias in equality.absorbs:
                    self._candidate(
                        KeyPair(scope, fact.alias, fact.column, scope, dim.alias, dim.column,
                                equality.text)
                    )  # fmt: skip
        for condition in where:
            for pair in subquery_joins(scope, condition.node, preserved):
                self._candidate(pair)

    def _candidate(self, pair: KeyPair) -> None:
        fact_source = pair.fact_scope.sources.get(pair.fact)
        if isinstance(fact_source, exp.Table) and fact_source.meta.get(REF) is not None:
            facts = [(int(fact_source.meta[REF]), pair.fact_column)]
        elif isinstance(fact_source, Scope) and not self._single_use(fact_source):
            self.shared.setdefault(id(fact_source), (fact_source, []))[1].append(pair)
            return  # one reference of several: see shared_joins
        elif isinstance(fact_source, Scope):  # a derived table, UNION ALL branches: its tables
            facts = trace_column(fact_source, pair.fact_column, self._single_use) or []
        else:
            return
        for fact_ref, column in facts:
            if (join := self._equi_join(fact_ref, column, pair)) is not None:
                self.result.joins.append(join)

    def _equi_join(self, fact_ref: int, column: str, pair: KeyPair) -> EquiJoin | None:
        """``fact_ref.column = pair's dim`` where the two types join as keys."""
        dim_source = pair.dim_scope.sources.get(pair.dim)
        if not isinstance(dim_source, exp.Table) or dim_source.meta.get(REF) is None:
            return None
        dim_ref = dim_source.meta[REF]
        dim_type = self.types.get(dim_ref, {}).get(pair.dim_column)
        fact_type = self.types.get(fact_ref, {}).get(column)
        if fact_ref == dim_ref or fact_type is None or dim_type is None:
            return None
        if not key_types_join(fact_type, dim_type):
            return None
        return EquiJoin(fact_ref, column, dim_ref, pair.dim_column, pair.text, pair.follows)

    def shared_joins(self) -> None:
        """Joins on a column of a CTE referenced several times (once for one year's
        weeks, once for the next year's), where every reference joins on it: a row
        of a table behind the column counts only if it matches the other side of
        *some* reference, so it is pruned by the union of their keys (one group in
        :attr:`Derivation.any_joins`; never by one reference's keys alone)."""
        for scope, pairs in self.shared.values():
            uses: dict[tuple[int, str], list[KeyPair]] = defaultdict(list)
            for pair in pairs:
                uses[(id(pair.fact_scope), pair.fact)].append(pair)
            if len(uses) != self.uses[id(scope)]:
                continue  # a reference not joined so keeps every row

            def through(inner: Scope, cte: Scope = scope) -> bool:
                return inner is cte or self._single_use(inner)

            for column in dict.fromkeys(p.fact_column for p in pairs):
                found = [
                    next((p for p in u if p.fact_column == column), None) for u in uses.values()
                ]
                chosen = [p for p in found if p is not None]
                if len(chosen) != len(uses):
                    continue  # a reference joins on other columns only
                for fact_ref, fact_column in trace_column(scope, column, through) or []:
                    group = [self._equi_join(fact_ref, fact_column, p) for p in chosen]
                    if all(group):
                        self.result.any_joins.append(tuple(j for j in group if j))

    def _single_use(self, scope: Scope) -> bool:
        """A derived table, or a CTE referenced once: its tables serve one reference."""
        return scope.scope_type != ScopeType.CTE or self.uses[id(scope)] == 1


def _where(select: exp.Select) -> exp.Expr | None:
    where = select.args.get("where")
    return where.this if where is not None else None


def _columns_of(
    source: exp.Table | Scope | None, types: Mapping[int, Mapping[str, str]]
) -> set[str] | None:
    if isinstance(source, exp.Table):
        number = source.meta.get(REF)
        return set(types[number]) if isinstance(number, int) and number in types else None
    if isinstance(source, Scope):
        return set(cast(exp.Query, source.expression).named_selects)
    return None
