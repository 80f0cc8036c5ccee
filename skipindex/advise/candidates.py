"""What the advisor may choose from: the columns the workload filters on, each
with every index kind its type takes, and the layouts worth simulating.

Columns are found in each query's predicate (sqlglot), matched to the table's
columns as Spark matches them (case-insensitively). Nothing is ruled out by a
rule of thumb except what cannot pay: an equality bitmap on a column whose
sampled values are nearly all distinct (one bitmap per row, never smaller
than a Bloom filter, and never better at ``=``), and a substring index on a
column no query searches for text in (``LIKE '%x%'``, ``contains``...). Layouts: the table as it is,
then its most filtered columns in decreasing order of how many queries filter
on them: one column sorted (linear), two and three on a Hilbert curve.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from skipindex.advise.workload import Query
from skipindex.errors import SkipIndexError
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec

__all__ = ["LayoutOption", "columns_of", "index_specs", "layouts", "searched_columns"]

LayoutOption = tuple[str, tuple[str, ...]]  # (curve, columns); ("none", ()) is the table as is
BITMAP_MAX_DISTINCT_SHARE = 0.5
# Conditions a substring index (ngram_bloom) answers.
_SUBSTRING_NODES = (
    exp.Like,
    exp.ILike,
    exp.RegexpLike,
    exp.Contains,
    exp.EndsWith,
    exp.StrPosition,
)


def columns_of(query: Query, schema: pa.Schema) -> frozenset[str]:
    """The table's columns (lower case) that ``query``'s predicate names."""
    return _named(query, schema, None)


def searched_columns(query: Query, schema: pa.Schema) -> frozenset[str]:
    """The table's columns (lower case) ``query`` searches for text in."""
    return _named(query, schema, _SUBSTRING_NODES)


def _named(
    query: Query, schema: pa.Schema, within: tuple[type[exp.Expression], ...] | None
) -> frozenset[str]:
    """The table's columns (lower case) named in ``query``'s predicate, or only
    inside its nodes of a ``within`` type."""
    if query.where is None:
        return frozenset()
    try:
        tree = sqlglot.parse_one(query.where, dialect="spark")
    except SqlglotError:
        return frozenset()
    names = {f.name.lower() for f in schema}
    nodes = [tree] if within is None else tree.find_all(*within)
    found = {c.name.lower() for node in nodes for c in node.find_all(exp.Column)}
    return frozenset(found & names)


def index_specs(
    columns: Sequence[str],
    schema: pa.Schema,
    distinct_share: Mapping[str, float],
    searched: frozenset[str] = frozenset(),
) -> dict[str, list[IndexSpec]]:
    """Per kind, a spec on each of ``columns`` whose type it takes (a substring
    index only on the ``searched`` ones)."""
    by_name = {f.name.lower(): f for f in schema}
    out: dict[str, list[IndexSpec]] = {kind: [] for kind in KINDS}
    for column in columns:
        found = by_name[column.lower()]
        for kind, kind_class in KINDS.items():
            if kind == "equality_bitmap" and (
                distinct_share.get(found.name, 0.0) > BITMAP_MAX_DISTINCT_SHARE
            ):
                continue
            if kind == "ngram_bloom" and column.lower() not in searched:
                continue
            try:
                kind_class(found.name, found.type, {})
            except SkipIndexError:
                continue  # this kind cannot take this type
            out[kind].append(kind_class.spec(found.name))
    return out


def layouts(queries: Sequence[Query], used: Mapping[str, frozenset[str]]) -> list[LayoutOption]:
    """The table as is, then the workload's most filtered columns, sorted or on a curve."""
    weight: Counter[str] = Counter()
    for query in queries:
        for column in used.get(query.label, frozenset()):
            weight[column] += int(query.weight) or 1
    top = [column for column, _ in weight.most_common(3)]
    options: list[LayoutOption] = [("none", ())]
    if top:
        options.append(("linear", (top[0],)))
    if len(top) >= 2:
        options.append(("hilbert", tuple(top[:2])))
    if len(top) >= 3:
        options.append(("hilbert", tuple(top[:3])))
    return options
