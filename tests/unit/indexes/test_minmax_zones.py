"""Min-max asked block by block first (indexes/_zones.py) keeps exactly the
files that asking every file keeps: a block's summary never rules out a file
its own payload would keep."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.expressions.nodes import BoundColumn, BoundComparison, Op
from skipindex.indexes import _zones
from skipindex.indexes.minmax import MAX_STRING_BYTES, MinMaxKind
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import Case, cases, file_batch


def _zoned(block_files: int):
    """Every batch asked by blocks of ``block_files``, whatever share of them is left."""
    return mock.patch.multiple(_zones, BLOCK_FILES=block_files, ZONED_FROM=0, ASK_BLOCKS_UP_TO=1.0)


@settings(max_examples=examples(150))
@given(case=cases(), copies=st.integers(1, 4), block=st.integers(1, 3), seed=st.integers(0, 99))
def test_blocks_keep_exactly_what_the_files_keep(case: Case, copies, block, seed):
    kind = MinMaxKind("c", case.column_type.arrow_type, {})
    files = case.files * copies  # some blocks of equal files, some of mixed ones
    order = np.random.default_rng(seed).permutation(len(files))
    batch = file_batch(kind, [files[i] for i in order])
    for leaf in case.leaves:
        plain = kind._verdict(leaf, batch)
        with _zoned(block):
            zoned = kind.might_match(leaf, batch)
        assert zoned.tolist() == plain.tolist(), leaf


def test_a_block_with_an_open_bound_or_an_unknown_file_asks_its_files():
    kind = MinMaxKind("c", pa.string(), {})
    unbounded = "\U0010ffff" * MAX_STRING_BYTES  # no prefix of it rounds up: max unknown
    files = [pa.array(["a", "b"]), pa.array(["c", unbounded]), pa.array(["x", "y"])]
    batch = file_batch(kind, files)  # and a fourth file the index does not know
    leaf = BoundComparison(BoundColumn("c", pa.string()), Op.GE, "z")
    with _zoned(2):
        assert kind.might_match(leaf, batch).tolist() == [False, True, False, True]


def test_blocks_follow_the_files_mins_not_their_listing_order():
    kind = MinMaxKind("c", pa.int64(), {})
    files = [pa.array([v, v + 1]) for v in np.random.default_rng(3).permutation(64) * 10]
    batch = file_batch(kind, files)
    leaf = BoundComparison(BoundColumn("c", pa.int64()), Op.EQ, 301)
    with _zoned(4):
        kept = kind.might_match(leaf, batch)
        zones = _zones.zones_of(batch)
    lows = zones.payloads.field("min").to_pylist()
    assert lows[:-1] == sorted(lows[:-1])  # the unknown file's block comes last
    assert np.flatnonzero(kept).tolist() == [
        *[i for i, f in enumerate(files) if f[0].as_py() == 300],
        len(files),
    ]
