"""Whether a long list of join keys can skip any file of the side it prunes.

A list of scattered keys costs its prune time whether or not it skips: about
2,000 supplier keys tried on every lineorder file, where every file holds some
of those suppliers, made ``si.sql`` 15 % slower than ``spark.sql`` over a star
schema. Whether a file holds none of the keys is predictable. With ``r``
rows a file and keys that are a share ``s`` of the other side's rows (its
join key is unique there), a file holds about ``r * s`` matching rows, spread
as a Poisson count, so it holds none with probability ``exp(-r * s)``. Lists
on columns whose index answers row by row meet each other, and the other
conditions, on the same row: their shares multiply. Lists of 1,209 customers
and 84 suppliers within one month expect 0.05 matching rows in a file of 60k
and skip 93 of 100 files; the same lists over all years expect 3.5 and skip one.

The estimate is made for long lists on columns with a row-level index (the
lists that meet on one row, and the ones that cost most): where more than
the policy's ``useful_matches`` rows a file are expected (a file then holds none with
probability 5 % at most), the list is not tried key by key but as its one
covering range (cheap, and what skips where the other side is clustered by
the key). That keeps more files, never fewer: only speed rides on it. The
model assumes the keys spread over the files; on a side clustered by the
key, where a file holds few distinct keys, it errs towards the range, which
is what these columns were given before the estimate. Short lists, runs of
consecutive keys (a date dimension's year) and lists on columns with only
Bloom filters or min-max are used as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from skipindex.errors import SkipIndexError
from skipindex.pruning.spread import clustered_by
from skipindex.reading.policy import active
from skipindex.sql.catalog import Source
from skipindex.sql.conjuncts import Condition
from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import RANGES_ONLY, Spans, key_condition, spans_condition
from skipindex.sql.file_ranges import indexed_ranges, keys_within
from skipindex.sql.local_keys import ROW_LEVEL
from skipindex.store.manifest import load_latest

__all__ = [
    "KeyForm",
    "KeyList",
    "expected_matches",
    "index_kinds",
    "indexed_rows",
    "key_conditions",
    "key_form",
]


@dataclass(frozen=True)
class KeyList:
    """One join's keys for a side, and the share of that side's rows they are
    expected to hold (None: not known)."""

    keys: int
    share: float | None
    row_level: bool


def indexed_rows(source: Source | None) -> tuple[int, int] | None:
    """Rows and files of a table as its index counted them (None: no index)."""
    if source is None:
        return None
    try:
        manifest = load_latest(source.location)
    except (SkipIndexError, OSError):
        return None
    if manifest is None or not manifest.segments:
        return None
    rows = sum(s.rows for s in manifest.segments)
    files = sum(s.files for s in manifest.segments)
    return (rows, files) if files else None


def index_kinds(source: Source, column: str) -> set[str]:
    """The index kinds on ``column`` of ``source``'s table ("partition" for a
    partition column)."""
    try:
        manifest = load_latest(source.location)
    except (SkipIndexError, OSError):
        return set()
    if manifest is None:
        return set()
    wanted = column.lower()
    kinds = {
        str(d.kind)
        for d in manifest.indexes
        if getattr(d, "expression", None) is None
        and str(getattr(d, "column", "") or "").lower() == wanted
    }
    if wanted in {p.lower() for p in manifest.partition_columns}:
        kinds.add("partition")
    return kinds


def expected_matches(rows_per_file: float, lists: Sequence[KeyList], at: int) -> float | None:
    """About how many rows of a file match list ``at`` together with the other
    lists it meets row by row (None: a share is not known)."""
    own = lists[at]
    if own.share is None:
        return None
    shares = [own.share]
    if own.row_level:
        shares += [x.share for i, x in enumerate(lists) if i != at and x.row_level and x.share]
    return rows_per_file * math.prod(shares)


@dataclass(frozen=True)
class KeyForm:
    """How a key list is written for a column (see
    :func:`~skipindex.sql.dynamic.key_condition`): ``listed`` key by key, or
    its long runs ``collapse``d to a covering range; ``ranges`` where an index
    on the column answers them; ``one_list`` to keep the keys one IN leaf;
    ``expected``: the matching rows a file the choice rests on (None: not
    estimated); ``runs_list``, where bit-sliced bitmaps answer a list not
    listed, to make its many runs one IN leaf."""

    listed: bool
    collapse: bool
    ranges: bool
    one_list: bool
    expected: float | None = None
    max_ranges: int | None = None  # a column only min-max answers: see key_condition
    runs_list: bool = False


def key_form(
    kinds: set[str],
    lists: Sequence[KeyList],
    at: int,
    rows_per_file: float | None,
    rows: int | None = None,
    same_table: bool = False,
    clustered: bool | None = None,
) -> KeyForm:
    """The form of list ``at`` on a column with index ``kinds`` (of a table of
    ``rows``): listed unless it is long, the column answers it row by row and it
    is expected to skip nothing. Bit-sliced bitmaps, min-max and Bloom filters
    take a long list as it is; equality and range bitmaps would answer it key by
    key. With ``same_table`` (the keys were read from the very table pruned, a
    self-join, or from the rows around the IN subquery it is read in: the same
    key, an order's, on both sides), bit-sliced bitmaps of at most
    the policy's ``tried_rows`` rows get the list whatever the estimate: the covering
    range costs them as much, and where the rows keep their key together (an
    order's lines, its returns) the keys sit in the files of their time, which
    the estimate, assuming keys spread over every file, cannot see (6,418 orders
    shipped in two months keep 7 of 40 files of their sales for an EXISTS, not
    40, and 13 of 40 files of their returns for an IN). A list not listed on a
    column the table is not ``clustered`` by is its one covering range: its runs,
    like its scattered keys, fall in every file (15,801 of 18,000 items over
    date-ordered sales, once thousands of ranges or a 15,801-key list). On a
    clustered column (a date) its runs stay: they skip files."""
    policy, expected = active(), None
    if rows_per_file is not None and lists[at].row_level and lists[at].keys > policy.bitmap_keys:
        expected = expected_matches(rows_per_file, lists, at)
    small = rows is not None and rows <= policy.tried_rows
    tried = same_table and "bitsliced_bitmap" in kinds and small
    listed = expected is None or expected < policy.useful_matches or tried
    by_key = bool(kinds & {"range_bitmap", "equality_bitmap"}) and "bitsliced_bitmap" not in kinds
    covering = not listed and clustered is False
    return KeyForm(
        listed,
        not listed or by_key,
        bool(kinds - {"bloom"}),  # Bloom filters answer keys, not ranges
        listed and "bitsliced_bitmap" in kinds,
        expected,
        1 if covering else policy.minmax_ranges if kinds <= RANGES_ONLY else None,
        not listed and not covering and "bitsliced_bitmap" in kinds,
    )


def key_conditions(
    alias: str,
    lists: Sequence[tuple[EquiJoin, list[Any] | Spans, set[str]]],
    fact: Source | None,
    sides: Sequence[tuple[str, Source | None]],
    case_sensitive: bool = False,
) -> list[Condition]:
    """A condition on reference ``alias`` (of table ``fact``) for each key list (its
    join, keys, or ranges holding them, and the index kinds on the pruned column),
    in the form :func:`key_form` gives it; ``sides``: each join's other side as the
    query writes it, and its table (the share of its rows the keys hold: keys / its
    rows, the key being its own). Keys outside every indexed file's min-max are
    left out: no indexed file holds them (see
    :func:`~skipindex.sql.file_ranges.indexed_ranges`)."""
    counted = indexed_rows(fact)
    rows_per_file = counted[0] / counted[1] if counted else None
    given = [len(values) if isinstance(values, list) else 0 for _, values, _ in lists]
    lists = [(j, _within(values, fact, j.fact_column, case_sensitive), k) for j, values, k in lists]
    described = []
    for (_, values, kinds), (_, side) in zip(lists, sides, strict=True):
        if not isinstance(values, list):  # ranges: not counted, not estimated
            described.append(KeyList(0, None, False))
            continue
        held = indexed_rows(side)
        share = min(1.0, len(values) / held[0]) if held and held[0] else None
        described.append(KeyList(len(values), share, bool(kinds & ROW_LEVEL)))
    out = []
    for at, ((join, values, kinds), (name, side)) in enumerate(zip(lists, sides, strict=True)):
        if isinstance(values, Spans):
            node = spans_condition(alias, join.fact_column, values, active().minmax_ranges)
            note = f"the min-max of {name}'s {values.files:,} kept files through {join.text}"
            if values.keys is not None:
                note = f"{values.keys:,} keys of {name} as ranges through {join.text}"
            out.append(Condition(node, "dynamic", note))
            continue
        same = fact is not None and side is not None and side.path == fact.path
        tried = same or join.follows  # (see key_form)
        clustered = None if fact is None else clustered_by(fact.location, join.fact_column)
        form = key_form(
            kinds, described, at, rows_per_file, counted and counted[0], tried, clustered
        )
        node = key_condition(
            alias, join.fact_column, values, form.collapse, form.ranges, form.one_list,
            form.max_ranges, form.runs_list,
        )  # fmt: skip
        note = f"{given[at]:,} keys of {name} through {join.text}"
        if len(values) < given[at]:
            note += f" ({len(values):,} within the min-max of its indexed files)"
        if not form.listed:
            expected = form.expected or 0.0  # an estimate decided it
            how = "its runs as one list" if isinstance(node, exp.In) else "as one range"
            note += f" ({how}: about {expected:,.1f} matching rows a file expected)"
        out.append(Condition(node, "dynamic", note))
    return out


def _within(
    values: list[Any] | Spans, fact: Source | None, column: str, case_sensitive: bool
) -> list[Any] | Spans:
    """``values``, a key list, without the keys no indexed file of ``fact``'s holds
    on ``column`` (a date dimension's 6,000 November dates, 150 of them within the
    five years of the fact's sales)."""
    if not isinstance(values, list) or fact is None or not values:
        return values
    ranges = indexed_ranges(fact, column, case_sensitive)
    return values if ranges is None else keys_within(values, ranges)
