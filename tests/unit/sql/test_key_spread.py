"""How many files a join's keys are expected to skip (``sql/key_spread.py``):
the even-spread estimate, against the same sum written file pair by file pair,
and its two ends (keys bunched in a file's range, keys spread over all)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skipindex.sql.file_ranges import FileBounds
from skipindex.sql.key_spread import expected_keys, likely_skips


def _bounds(spans: list[tuple[int, int, bool]]) -> FileBounds:
    lows = np.array([min(a, b) if held else 0 for a, b, held in spans], np.int64)
    highs = np.array([max(a, b) if held else 0 for a, b, held in spans], np.int64)
    return FileBounds(lows, highs, np.array([held for _, _, held in spans], bool))


def _pairwise(
    keys: FileBounds, matching: list[int], pruned: FileBounds, repeats: float
) -> list[float]:
    """Per pruned file, each key-side file's keys in the overlap of the two ranges."""
    out = []
    for low, high, held in zip(pruned.lows, pruned.highs, pruned.holding, strict=True):
        total = 0.0
        for k_low, k_high, k_held, rows in zip(
            keys.lows, keys.highs, keys.holding, matching, strict=True
        ):
            if not (held and k_held):
                continue
            width = int(k_high) - int(k_low) + 1
            overlap = min(int(high), int(k_high)) - max(int(low), int(k_low)) + 1
            if overlap > 0:
                total += min(rows / repeats, width) * overlap / width
        out.append(total)
    return out


span = st.tuples(st.integers(-1000, 1000), st.integers(-1000, 1000), st.booleans())


@given(
    keys=st.lists(span, max_size=8),
    matching=st.lists(st.integers(0, 5000), min_size=8, max_size=8),
    pruned=st.lists(span, max_size=8),
    repeats=st.sampled_from([1.0, 4.0]),
)
def test_the_estimate_is_the_sum_over_every_pair_of_files(keys, matching, pruned, repeats):
    key_bounds, pruned_bounds = _bounds(keys), _bounds(pruned)
    rows = np.array(matching[: len(keys)], np.float64)
    got = expected_keys(key_bounds, rows, pruned_bounds, repeats)
    want = _pairwise(key_bounds, matching[: len(keys)], pruned_bounds, repeats)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-6)
    skips = likely_skips(got)
    assert 0.0 <= skips <= len(pruned) + 1e-9
    assert math.isclose(skips, sum(math.exp(-w) for w in want), rel_tol=1e-6, abs_tol=1e-9)


def test_keys_of_one_file_skip_the_files_outside_its_range():
    keys = _bounds([(1000, 1999, True)])
    pruned = _bounds([(i * 1000, i * 1000 + 999, True) for i in range(8)])
    expected = expected_keys(keys, np.array([400.0]), pruned, 4.0)
    assert expected[1] == 100.0  # 400 rows, 4 each: 100 keys over its 1,000 numbers
    assert likely_skips(expected) > 6.99  # every file but the one


def test_keys_spread_over_every_file_skip_none():
    ranges = [(i * 1000, i * 1000 + 999, True) for i in range(8)]
    expected = expected_keys(_bounds(ranges), np.full(8, 400.0), _bounds(ranges), 4.0)
    assert likely_skips(expected) < 1e-6


def test_a_file_of_only_nulls_holds_no_key():
    keys = _bounds([(0, 99, True)])
    expected = expected_keys(keys, np.array([1000.0]), _bounds([(0, 99, False)]), 1.0)
    assert expected.tolist() == [0.0]
    assert likely_skips(expected) == 1.0
