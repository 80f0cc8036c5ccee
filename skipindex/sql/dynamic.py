"""Dynamic file pruning: one side's join keys, computed with Spark, prune the other.

For ``fact.fk = dim.pk`` where a fact row counts only if it matches a dim row
(:class:`~skipindex.sql.derive.EquiJoin`) and the dim side has conditions of
its own, Spark first runs ``SELECT DISTINCT pk FROM dim WHERE <its conditions>
AND pk IS NOT NULL LIMIT bound + 1`` over the dim reference (itself pruned
where it is indexed). With at most ``bound`` keys, ``fk IN (keys)`` joins the
fact reference's predicate: every fact row the query keeps equals one of them
(NULL never matches an equi-join). Bloom filters and equality or bit-sliced
bitmaps skip the files holding none of the keys, whatever the keys' spread;
min-max skips the files whose range holds none; partition folders too.

The bound (the policy's ``max_keys``, ``sql(dynamic_keys=)``) is where the list stops
paying: ``bench/sql_keys.py`` measures prune time against list length on
each index kind. Any failure of the key query (an error Spark raises on a row
the query itself would never evaluate, say) leaves the fact side as it was.
"""

from __future__ import annotations

import datetime
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import numpy as np
from sqlglot import exp

from skipindex.expressions.sql_literals import INTEGER_KEYS
from skipindex.reading.policy import active
from skipindex.sql.derive import EquiJoin
from skipindex.sql.text import escape, run_sql

__all__ = [
    "RANGES_ONLY",
    "Keys",
    "Spans",
    "asked_once",
    "in_node",
    "join_keys",
    "key_bound",
    "key_condition",
    "quote",
    "spans_condition",
]

# Kinds that answer a key list only by its ranges: a list on a column with no other
# index is cut to a few ranges (the policy's minmax_ranges), whatever its length.
RANGES_ONLY = frozenset({"minmax", "partition"})


@dataclass(frozen=True)
class Spans:
    """Ranges that hold every key a side yields, not the keys themselves: the
    joined ``(min, max)`` of its kept files (:mod:`.file_ranges`), or the keys
    of its kept rows split at their widest gaps (:mod:`.local_keys`)."""

    ranges: tuple[tuple[Any, Any], ...]
    files: int  # the kept files they bound
    keys: int | None = None  # the keys of its kept rows they hold (None: files' min-max)


@dataclass(frozen=True)
class Keys:
    """The keys one join's dim side yields (None: none used) and why."""

    join: EquiJoin
    values: list[Any] | Spans | None
    note: str
    seconds: float


def key_bound(dynamic_keys: int | None, kinds: set[str]) -> int:
    """At most this many keys prune a column with index ``kinds``: the caller's
    ``dynamic_keys``, else the policy's ``max_keys``, or its ``row_code_keys`` with
    bit-sliced bitmaps or where only min-max (or partition values) answer the
    column: its list is cut to a few ranges (``key_condition``'s ``max_ranges``),
    so its length costs nothing at prune time (12,648 orders shipped in two
    months, whose numbers follow the date, keep 9 of 40 files of their returns)."""
    if dynamic_keys is not None:
        return dynamic_keys
    if "bitsliced_bitmap" in kinds or (kinds and kinds <= RANGES_ONLY):
        return active().row_code_keys
    return active().max_keys


def asked_once(
    asked: dict[tuple[Any, ...], Keys],
    key: tuple[Any, ...],
    join: EquiJoin,
    ask: Callable[[], Keys],
) -> Keys:
    """``ask()``'s keys for ``join``, or those already asked under ``key`` (the same
    table, kept files, conditions, column and bound) for another join."""
    known = asked.get(key)
    if known is not None:
        again = "as asked for another reference" if known.values is not None else known.note
        return replace(known, join=join, note=again, seconds=0.0)
    keys = asked[key] = ask()
    return keys


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def join_keys(
    spark: Any,
    join: EquiJoin,
    dim_sql: str,
    dim_frames: dict[str, Any],
    dim_where: str,
    bound: int,
) -> Keys:
    """At most ``bound`` distinct non-NULL keys of ``join.dim_column`` over the
    rows of ``dim_sql`` (a reference's text, ready for ``spark.sql``'s
    formatter with ``dim_frames``) where ``dim_where`` holds."""
    started = time.perf_counter()
    key = quote(join.dim_column)
    # Names are quoted, and the conditions are the query's own.
    text = (
        f"SELECT DISTINCT {key} FROM {dim_sql} AS __skipindex_dim "  # noqa: S608
        f"WHERE ({escape(dim_where)}) AND {key} IS NOT NULL LIMIT {bound + 1}"
    )
    try:
        rows = run_sql(spark, text, dim_frames).collect()
    except Exception as exc:
        message = str(exc).splitlines()[0][:200]
        return Keys(join, None, f"the key query failed ({message})", _since(started))
    if len(rows) > bound:
        return Keys(join, None, f"more than {bound:,} keys", _since(started))
    values = [row[0] for row in rows]
    if any(_literal(v) is None for v in values):
        return Keys(join, None, "keys of a type not listed as literals", _since(started))
    return Keys(join, sorted(values), "", _since(started))


def key_condition(
    alias: str,
    column: str,
    values: list[Any],
    rows_by_key: bool,
    ranges: bool = True,
    one_list: bool = False,
    max_ranges: int | None = None,
    runs_list: bool = False,
) -> exp.Expr:
    """A condition every row whose ``column`` equals one of ``values`` meets.

    Runs of consecutive integers or days become ``BETWEEN`` (exactly the same
    rows: a date dimension's year is one range, which min-max and bitmaps answer
    at once); the other keys an ``IN`` list (Bloom filters, min-max, bitmaps).
    With ``rows_by_key`` (the column's bitmaps would answer a long list key by
    key, or the list is not expected to skip), more than the policy's ``bitmap_keys`` such
    keys become the one range covering them instead: fewer files skipped, never
    a matching one. Where no
    index on the column answers ranges (``ranges`` False: Bloom filters only),
    every key is listed. With ``one_list`` (bit-sliced bitmaps, which read a long
    list by each row's code), keys that are not one run are one IN list: one leaf
    that an AND narrows to the rows its other conditions left, where an OR of
    ranges would be answered over every row. ``max_ranges`` (a column only
    min-max answers: a file is skipped only where its whole value range falls in
    a gap) joins the runs across their narrowest gaps until at most that many
    ranges are left: the widest gaps, which skip, stay; thousands of ranges a
    file can never fit between cost their parse for nothing. With ``runs_list``
    (bit-sliced bitmaps again), more than the policy's ``listed_runs`` runs are one IN
    list too: each range is a pass over every row, the list one pass whatever
    its keys (72 runs of three or four days over three years: 75 ms of prune
    less as a list); scattered keys whose covering range holds their runs stay
    that one range (9,807 customers scattered over the key's range).
    """
    if not values:
        return exp.false()
    if not ranges:
        return in_node(alias, column, values)
    ordered = sorted(values)
    if one_list and max_ranges != 1 and _int64(ordered) and _many_runs(ordered):
        return in_node(alias, column, values)  # what the runs below come to, without them
    target = exp.column(exp.to_identifier(column), table=alias)
    runs = _runs(ordered)
    if max_ranges is not None and len(runs) > max_ranges:
        runs = _widest_gaps(runs, max_ranges)
    if one_list and len(runs) > 1:
        return in_node(alias, column, values)
    singles = [run[0] for run in runs if len(run) == 1]
    covered = rows_by_key and len(singles) > active().bitmap_keys
    if covered:  # the runs within the singles' covering range add nothing to it
        runs = [run for run in runs if run[-1] < singles[0] or run[0] > singles[-1]]
    ranged = [run for run in runs if len(run) > 1]
    if runs_list and len(ranged) > active().listed_runs:
        return in_node(alias, column, values)
    parts: list[exp.Expr] = [
        exp.Between(this=target.copy(), low=_literal(run[0]), high=_literal(run[-1]))
        for run in ranged
    ]
    if covered:
        parts.append(
            exp.Between(this=target.copy(), low=_literal(singles[0]), high=_literal(singles[-1]))
        )
    elif singles:
        parts.append(in_node(alias, column, singles))
    return parts[0] if len(parts) == 1 else exp.or_(*parts)


def spans_condition(alias: str, column: str, spans: Spans, max_ranges: int) -> exp.Expr:
    """``column BETWEEN low AND high OR ...`` over ``spans``' ranges, joined across
    their narrowest gaps down to at most ``max_ranges`` (see :func:`key_condition`)."""
    runs = [[low, high] for low, high in spans.ranges]
    if not runs:
        return exp.false()
    if len(runs) > max_ranges:
        runs = _widest_gaps(runs, max_ranges)
    target = exp.column(exp.to_identifier(column), table=alias)
    parts: list[exp.Expr] = [
        exp.Between(this=target.copy(), low=_literal(low), high=_literal(high))
        for low, high in runs
    ]
    return parts[0] if len(parts) == 1 else exp.or_(*parts)


def _runs(values: list[Any]) -> list[list[Any]]:
    """Sorted distinct ``values`` in runs of consecutive integers or days."""
    if values and _int64(values):
        ordered = np.array(values, dtype=np.int64)
        cuts = (np.flatnonzero(np.diff(ordered) != 1) + 1).tolist()
        return [values[a:b] for a, b in itertools.pairwise([0, *cuts, len(values)])]
    runs: list[list[Any]] = []
    for value in values:
        if runs and _next(runs[-1][-1]) == value:
            runs[-1].append(value)
        else:
            runs.append([value])
    return runs


def _many_runs(ordered: list[int]) -> bool:
    """Whether sorted 64-bit integers are more than one run of consecutive ones."""
    return bool(np.any(np.diff(np.array(ordered, dtype=np.int64)) != 1))


def _int64(values: list[Any]) -> bool:
    """Whether every value (of at least one) is an int numpy holds as int64."""
    return all(type(v) is int for v in values) and -(2**63) <= min(values) <= max(values) < 2**63


def _widest_gaps(runs: list[list[Any]], count: int) -> list[list[Any]]:
    """``runs`` joined into ``count`` runs (first and last value each), split at
    the ``count - 1`` widest gaps between them; values with no distance (strings)
    split at the first gaps."""
    gaps = [_gap(a[-1], b[0]) for a, b in itertools.pairwise(runs)]
    cut = sorted(sorted(range(len(gaps)), key=lambda i: -gaps[i])[: count - 1])
    out, start = [], 0
    for at in [*cut, len(runs) - 1]:
        out.append([runs[start][0], runs[at][-1]])
        start = at + 1
    return out


def _gap(low: Any, high: Any) -> float:
    try:
        return float(high - low) if not isinstance(low, datetime.date) else (high - low).days
    except TypeError:
        return 0.0


def _next(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value + datetime.timedelta(days=1) if value < datetime.date.max else None
    return None  # strings, decimals: no next value


def in_node(alias: str, column: str, values: list[Any]) -> exp.Expr:
    """``alias.column IN (values)`` (``FALSE`` for no values)."""
    literals = [_literal(v) for v in values]
    if not literals:
        return exp.false()
    target = exp.column(exp.to_identifier(column), table=alias)
    node = exp.In(this=target, expressions=[v for v in literals if v is not None])
    if _int64(values):
        node.meta[INTEGER_KEYS] = tuple(values)  # read back without its nodes (sql_literals)
    return node


def _literal(value: Any) -> exp.Expr | None:
    """``value`` as a Spark SQL literal of its type, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):  # the constructor Literal.number calls, minus its sign check
        return (
            exp.Literal(this=str(value), is_string=False)
            if value >= 0
            else exp.Literal.number(value)
        )
    if isinstance(value, Decimal):
        return exp.Literal.number(format(value, "f"))
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.Type.DATE)
    return None


def _since(started: float) -> float:
    return time.perf_counter() - started
