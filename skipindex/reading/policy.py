"""The planning policy of si.sql and si.read: every knob their decisions weigh, in one place.

The decisions of the dynamic half (whether a side's join keys are asked of
Spark, read from its kept rows or left alone, and how a key list is written for
the column it prunes) are functions of measured inputs (the bytes a reference
reads, the rows its index counts, the index kinds on a column, the keys'
count) and of these knobs. Each knob names the cost it weighs; the defaults
were measured by the benches in ``bench/`` (``sql_keys.py``, ``tpcds.py``,
``tpch.py``). How the kept files reach Spark (named, the folder, a filter on a held
relation, or row groups read in Python) is weighed the same way, in seconds
and bytes measured on this machine. ``si.sql(spark, query,
policy=PlanningPolicy(...))`` and ``si.read(..., policy=...)`` set them for one
call; :func:`active` is what the planning and reading modules read.
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
    """The knobs of ``si.sql``'s planning and of how ``si.read`` and ``si.sql``
    hand kept files to Spark, each with the cost it weighs."""

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

    # How the kept files reach Spark where no relation is held. Up to this share of
    # the files kept they are named; above it, the folder is read unless the files
    # skipped save more reading than the paths cost: Spark looks up each path it
    # is given on the driver, one by one, where it lists a folder at once (60M
    # rows in 1,000 files of 2.5 MB: 831 kept paths took 6.53 s, the folder 5.88 s).
    folder_share: float = 0.5
    path_seconds: float = 0.002  # a path looked up
    read_seconds_per_byte: float = 0.0024 / _MiB  # a byte of a file read
    # Where a relation is held, the skipped files are left out by a filter on each
    # row's file: Spark prunes the files by it but evaluates it on every row it reads
    # (a path hashed a row: 0.1-0.25 s over 4.5M rows, 157 MB, on 2 cores) and plans
    # the relation's joins by the whole folder's size. Naming the kept files instead
    # costs a new relation (analysis and a look-up per path, 10-25 ms) and lets
    # Spark plan by the kept files' size, which goes either way (a broadcast that
    # made a join 1.6x faster; one over 24 MB that made a query 3x slower). So the
    # filter is kept until its cost reaches this, twice naming's upper end: about
    # 36 MB of kept files.
    filter_seconds_per_byte: float = 0.0014 / _MiB
    name_seconds: float = 0.05

    # A kept file is read by its row groups in Python (only those holding candidate
    # rows, and in them only the pages that pay) where that reads at most this
    # share of its compressed bytes: pyarrow in a Python task spends about 1.25x
    # Spark's CPU per row group, so the break-even is near 0.8.
    group_share: float = 0.75
    # ... and saves work even for a count(): Spark may decode only the predicate's
    # columns, while pyarrow passing on only the candidate rows runs 3-7x faster per
    # compressed byte than Spark filtering every row. A file saves this many times
    # its predicate's bytes, less its row groups' bytes (negative: it costs) ...
    where_bytes_factor: float = 4.0
    # ... and row groups are read only when the files together save this many
    # bytes: the Python source costs Spark a second scan, Python workers and an
    # Arrow hand-over, 0.15-0.2 s in local mode, about what pyarrow reads of 40 MB.
    min_bytes_saved: int = 40_000_000


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
