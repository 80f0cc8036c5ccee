"""The vectorised literal -> code counts agree with the per-file searchers.

Prune answers comparisons and short IN lists for all files at once
(:mod:`skipindex.indexes._code_search`); ``!=`` and NOT IN still search file by
file. Both must count the same codes for every literal, or a file could be
dropped by one path and kept by the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex._types import domain_of
from skipindex.indexes._bitmap_query import SortedValues, floor_ceil
from skipindex.indexes._code_search import OffsetMinimums, SortedLists
from skipindex.indexes._payloads import ListColumn
from skipindex.indexes.bitsliced_bitmap import OffsetCodes
from skipindex.indexes.equality_bitmap import EqualityBitmapKind
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import ALL_TYPES, Case, cases, file_batch


def literals(case: Case) -> list[Any]:
    out = []
    for leaf in case.leaves:
        out.extend(getattr(leaf, "values", ()))
        if hasattr(leaf, "value"):
            out.append(leaf.value)
    return out


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES))
def test_sorted_lists_count_like_a_search_per_file(case: Case) -> None:
    arrow_type = case.column_type.arrow_type
    kind = EqualityBitmapKind("c", arrow_type, {})
    batch = file_batch(kind, case.files)
    lists = ListColumn(batch.payloads.flatten()[0])  # "values": sorted distinct per file
    domain = domain_of(arrow_type)
    assert domain is not None
    together = SortedLists(lists, domain)
    for value in literals(case):
        lt, le = together.lt(value), together.le(value)
        for i in range(len(batch)):
            items = lists.items(i)
            if items is None:  # the unknown file
                assert lt[i] == le[i] == 0
                continue
            alone = SortedValues(items, domain)
            assert (lt[i], le[i]) == (alone.lt(value), alone.le(value)), (value, i)


@settings(max_examples=examples(300))
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=5),
    st.lists(st.integers(0, 62), min_size=5, max_size=5),
    st.lists(st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False)), max_size=6),
    st.sampled_from([0, 2]),
)
def test_offset_minimums_count_like_offset_codes(
    minimums: list[int], widths: list[int], probes: list[Any], scale: int
) -> None:
    sizes = np.array([1 << w for w in widths[: len(minimums)]], dtype=np.int64)
    together = OffsetMinimums(minimums, sizes, scale)
    for value in [*probes, float("inf"), float("-inf"), float("nan"), *minimums]:
        lt, le = together.lt(value), together.le(value)
        for i, (minimum, size) in enumerate(zip(minimums, sizes.tolist(), strict=True)):
            alone = OffsetCodes(int(floor_ceil(minimum, 0)[0]), size, scale)
            assert (lt[i], le[i]) == (alone.lt(value), alone.le(value)), (value, minimum, size)


def test_uint64_above_two_to_the_63_keeps_its_order() -> None:
    big = pa.array([[1, 2**63 + 5, 2**64 - 1]], pa.list_(pa.uint64()))
    together = SortedLists(ListColumn(big), domain_of(pa.uint64()))  # type: ignore[arg-type]
    assert together.lt(2**63 + 5).tolist() == [1]
    assert together.le(2**63 + 5).tolist() == [2]
    assert together.le(2**64).tolist() == [3]
    assert together.lt(-1).tolist() == [0]
