"""The build helpers of the bucketed bitmap kinds: their fast paths give what
the plain NumPy calls give."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.indexes._bitmap_build import stable_order
from tests._support import examples

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@st.composite
def integer_keys(draw: st.DrawFn) -> np.ndarray:
    """Keys of any integer dtype whose span is narrow (one radix pass), under
    2**32 (two passes) or wider (NumPy's own sort), with many repeats."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    info = np.iinfo(dtype)
    span = draw(st.sampled_from([1 << 8, 1 << 16, 1 << 32, 1 << 62]))
    low = draw(st.integers(int(info.min), int(info.max)))
    high = min(low + span, int(info.max))
    values = draw(st.lists(st.integers(low, high), max_size=200))
    picks = draw(st.lists(st.integers(0, max(len(values) - 1, 0)), max_size=400))
    return np.array([values[i] for i in picks] if values else [], dtype=dtype)


@settings(max_examples=examples(400))
@given(integer_keys())
def test_stable_order_is_numpys_stable_argsort(keys: np.ndarray) -> None:
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))


def test_two_pass_radix_keeps_ties_in_row_order() -> None:
    keys = np.array([70_000, 5, 70_000, 2**31, 5, -(2**31)], dtype=np.int64)
    assert stable_order(keys).tolist() == [5, 1, 4, 0, 2, 3]


def test_two_pass_radix_on_a_file_sized_column() -> None:
    """Large enough that an unstable pass would reorder ties (small arrays are
    insertion-sorted, which is stable by accident)."""
    keys = np.random.default_rng(7).integers(-(2**20), 2**20, 200_000)
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))
