"""What planning work can pay for: pruning a reference, and reading a join's keys.

A table of one file has nothing to skip. Keys skip files only on a column some
index answers them on, and not by min-max alone where each file spans most of
the column's range. So a one-file reference is worth pruning only where its
keys reach, directly or through other one-file references, a table of several
files they can skip in (a year's weeks narrow a one-file date dimension, whose
dates narrow a fact). Where they cannot (a dimension's keys reach only one-file
dimensions and a fact column only min-max answers, over files that each span
most of it), its prune and its key queries cost 0.3 s for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from skipindex.pruning.evaluate import LIKELY_ROWS
from skipindex.pruning.result import PruneResult
from skipindex.pruning.spread import clustered_by
from skipindex.sql.catalog import Source
from skipindex.sql.derive import EquiJoin
from skipindex.sql.key_use import index_kinds, indexed_rows

__all__ = [
    "keys_reach_files",
    "matching_rows",
    "narrowed_by_keys",
    "one_file",
    "why_keys_skip_nothing",
]


def one_file(source: Source | None) -> bool:
    """Whether ``source``'s table is one file (as its index counted), to be read as
    written: nothing to skip."""
    if source is None or source.must_replace:
        return False
    counted = indexed_rows(source)
    return counted is not None and counted[1] <= 1


def matching_rows(result: PruneResult | None) -> int:
    """At least about how many rows a prune says match (0: it cannot say): the
    rows bitmaps narrowed kept files to, and about LIKELY_ROWS in each file kept
    from a sample of its rows. Keys are not asked of a side this says has many
    times the bound of them."""
    if result is None:
        return 0
    narrowed = sum(len(rows) for rows in result.rows.values())
    return int(narrowed + LIKELY_ROWS * result.row_level_sampled)


def why_keys_skip_nothing(source: Source, column: str) -> str | None:
    """Why keys on ``column`` cannot skip a file of ``source``'s table (None: they may)."""
    kinds = index_kinds(source, column)
    if not kinds:
        return "no index on the column"
    if kinds <= {"minmax"} and clustered_by(source.location, column) is False:
        return "only min-max answers the column, and each file spans most of its range"
    return None


def keys_reach_files(
    number: int,
    joins: Iterable[EquiJoin],
    source_of: Callable[[int], Source | None],
    besides: Iterable[int] = (),
) -> bool:
    """Whether keys of reference ``number`` can skip files: it is the filtered
    side of an equi-join into a table of several files whose column they can
    skip on, or into a one-file table whose own keys can (never through
    ``besides``, the references its own keys came from)."""
    joins = list(joins)
    seen = {number, *besides}
    todo = [number]
    while todo:
        current = todo.pop()
        for join in joins:
            if join.dim != current or join.fact in seen:
                continue
            source = source_of(join.fact)
            if source is None or why_keys_skip_nothing(source, join.fact_column) is not None:
                continue
            if not one_file(source):
                return True
            seen.add(join.fact)
            todo.append(join.fact)
    return False


def narrowed_by_keys(
    number: int,
    joins: Iterable[EquiJoin],
    source: Source | None,
    filtered: Collection[int],
    conditioned: Collection[int],
) -> bool:
    """Whether keys of a ``filtered`` reference can narrow reference ``number``'s
    table by an index: its kept rows then give its own keys without a Spark job.
    A reference filtered only by conditions Spark alone evaluates, whose keys
    ``number``'s could narrow in turn, does not count unless it has
    ``conditioned`` ones too: each would wait for the other's keys, and neither
    key query would hold the conditions that choose the rows."""
    if source is None:
        return False
    joins = list(joins)
    narrows = {j.fact for j in joins if j.dim == number and not j.follows}
    return any(
        why_keys_skip_nothing(source, j.fact_column) is None
        for j in joins
        if j.fact == number and j.dim in filtered and (j.dim in conditioned or j.dim not in narrows)
    )
