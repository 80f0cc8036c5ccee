"""si.sql's planning policy: every knob its decisions weigh, in one place.

The decisions of the dynamic half (whether a side's join keys are asked of
Spark, read from its kept rows or left alone, and how a key list is written for
the column it prunes) are functions of measured inputs (the bytes a reference
reads, the rows its index counts, the index kinds on a column, the keys'
count) and of these knobs. Each knob names the cost it weighs; the defaults
were measured by the benches in ``bench/`` (``sql_keys.py``, ``tpcds.py``,
``tpch.py``). ``si.sql(spark, query, policy=PlanningPolicy(...))`` sets them for
one call; :func:`active` is what the planning modules read.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["DEFAULT", "PlanningPolicy", "active", "using"]

_MiB = 2**20


@dataclass(frozen=True)
class PlanningPolicy:
    """The knobs of ``si.sql``'s planning, each with the cost it weighs."""

    # Keys a list may hold for a column Bloom filters or equality or range bitmaps
    # answer: each key is a probe per file (4,096 scattered keys prune SSB SF10's
    # 1,000 lineorder files in about 170 ms by Bloom filters, 80 ms by min-max).
    max_keys: int = 4096
    # ... for a column bit-sliced bitmaps (or min-max alone) answer: the list costs
    # one read of each candidate row's code (or is cut to a few ranges), whatever
    # its length, so a longer list costs little more.
    row_code_keys: int = 16384
    # Scattered keys beyond this many are one covering range on a column equality
    # or range bitmaps answer key by key (about 25 ms a key on 1,000 files).
    bitmap_keys: int = 32
    # More runs than this are one IN list on bit-sliced bitmaps: a range is a pass
    # over every row's slices, a list one pass whatever its keys.
    listed_runs: int = 2
    # A long list on a row-level column is tried key by key only where a file is
    # expected to hold fewer matching rows than this (it then holds none with
    # probability exp(-3), 5 %, or more): else it is its one covering range.
    useful_matches: float = 3.0
    # A table of at most this many rows takes a long list of its own keys on
    # bit-sliced bitmaps as it is: about 0.1 s of prune at most.
    tried_rows: int = 1_000_000
    # A column only min-max answers takes at most this many ranges: a file is
    # skipped only where its range falls in a gap, and parsing thousands costs.
    minmax_ranges: int = 16
    # Keys are not asked where the other side's index already says this many times
    # the bound of rows match (its keys are as many, unless the key repeats).
    rows_per_key_bound: int = 4
    # Keys are looked for (read from kept rows, or asked of Spark) only where they
    # are expected to skip at least this many files of the side they prune (the
    # estimate of :mod:`.key_spread`, where both sides are clustered by the key):
    # reading them costs about 0.35 us a matching row, a Spark key query 0.15-0.3 s.
    least_skips: float = 0.5
    # Rounds of key passing: keys travel at most this many joins.
    rounds: int = 4
    # A side gives keys only if it reads at most 1 / this of the bytes of the side
    # it would prune: computing them scans it.
    key_side_share: int = 2
    # A Spark key query (analysis, a job, the keys back: 0.15-0.3 s) runs only
    # against a side reading at least this many bytes, about what Spark reads in
    # that time for a query that reads a few columns.
    key_query_bytes: int = 64 * _MiB
    # A side not much smaller than the one it prunes gives keys read from its kept
    # rows only below this many bytes: beyond, reading them costs what they save.
    local_key_side_bytes: int = 64 * _MiB
    # At most this many bytes of kept files are read in the driver for keys.
    local_bytes: int = 256 * _MiB


DEFAULT = PlanningPolicy()

_active: ContextVar[PlanningPolicy | None] = ContextVar("skipindex_planning_policy", default=None)


def active() -> PlanningPolicy:
    """The policy of the planning under way (:data:`DEFAULT` outside one)."""
    return _active.get() or DEFAULT


@contextmanager
def using(policy: PlanningPolicy | None) -> Iterator[PlanningPolicy]:
    """In the block, :func:`active` is ``policy`` (None: :data:`DEFAULT` as it is then)."""
    chosen = policy or DEFAULT
    token = _active.set(chosen)
    try:
        yield chosen
    finally:
        _active.reset(token)
