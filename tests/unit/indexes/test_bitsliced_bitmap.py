"""BitSlicedBitmap: exact for every leaf, small enough to beat the column's Parquet size."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.expressions.nodes import BoundColumn, BoundComparison, BoundIn, Op
from skipindex.indexes._roaring import from_bytes
from skipindex.indexes.bitsliced_bitmap import (
    BitSlicedBitmap,
    BitSlicedBitmapKind,
    _offsets_pay,
)
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import (
    ALL_TYPES,
    ROUND_TRIP_TYPES,
    Case,
    cases,
    check,
    parquet_batch,
    round_trip_leaves,
    sample_files,
)


def kind_for(arrow_type: pa.DataType) -> BitSlicedBitmapKind:
    return BitSlicedBitmapKind("c", arrow_type, {})


@settings(max_examples=examples(500))
@given(cases(types=ALL_TYPES))
def test_exact(case: Case) -> None:
    check(kind_for(case.column_type.arrow_type), case.files, case.leaves, lambda _: True)


@settings(max_examples=examples(100))
@given(cases(max_rows=300, max_pool=300, types=ALL_TYPES))
def test_exact_with_many_values(case: Case) -> None:
    check(kind_for(case.column_type.arrow_type), case.files, case.leaves, lambda _: True)


@pytest.mark.parametrize("arrow_type", ROUND_TRIP_TYPES, ids=str)
def test_payload_survives_parquet(arrow_type: pa.DataType, tmp_path: Path) -> None:
    kind = kind_for(arrow_type)
    files = sample_files(arrow_type, seed=3)
    batch = parquet_batch(kind, files, tmp_path / "segment.parquet")
    check(kind, files, round_trip_leaves(arrow_type, files), lambda _: True, batch=batch)


def test_offset_codes_store_min_and_slices_only() -> None:
    kind = kind_for(pa.int32())
    payload = kind.build(pa.array([10, 13, None, 11], pa.int32()))
    assert payload["min"] == 10
    assert payload["values"] is None
    # codes 0, 3, -, 1: B_0 = code bit 0 is 0, B_1 = code bit 1 is 0 (nulls in none)
    assert [sorted(from_bytes(s)) for s in payload["slices"]] == [[0], [0, 3]]
    decimal = kind_for(pa.decimal128(12, 2)).build(pa.array([1, 2], pa.decimal128(12, 2)))
    assert decimal["values"] is None
    assert len(decimal["slices"]) == 7


def test_rank_codes_for_strings_and_sparse_wide_ints() -> None:
    payload = kind_for(pa.string()).build(pa.array(["b", "a", None, "b"]))
    assert payload["values"] == ["a", "b"]
    assert payload["min"] is None
    wide = pa.array(np.tile([0, 2**50, 2**61], 100), pa.int64())
    payload = kind_for(pa.int64()).build(wide)
    assert payload["min"] is None
    assert len(payload["slices"]) == 2


@settings(max_examples=examples(300))
@given(
    st.lists(st.integers(0, 2**40), min_size=1, max_size=300),
    st.integers(1, 300),
    st.sampled_from([4, 8, 16]),
)
def test_offset_choice_equals_the_exact_distinct_count(
    values: list[int], repeat: int, width: int
) -> None:
    """The bucketed lower bound only shortcuts the decision, never changes it."""
    codes = np.repeat(np.array(values, dtype=np.int64) - min(values), repeat % 7 + 1)
    codes = codes[: max(len(codes) - repeat, 1)]
    span, n, distinct = int(codes.max()), len(codes), len(np.unique(codes))
    extra = span.bit_length() - (distinct - 1).bit_length()
    assert _offsets_pay(codes, span, width) == (extra * n / 8 <= distinct * width)


def test_offset_choice_counts_values_that_share_a_bucket() -> None:
    """1,000 consecutive keys and one far outlier: two occupied buckets are not
    enough to pay for 31 extra slices, the exact count (1,001 values) is."""
    codes = np.append(np.arange(1000, dtype=np.int64), 2**40)
    assert _offsets_pay(codes, 2**40, 8)
    assert not _offsets_pay(codes, 2**40, 1)  # a 1-byte values list is cheaper


def test_smaller_than_the_column_in_parquet(capsys: pytest.CaptureFixture[str]) -> None:
    values = np.random.default_rng(42).integers(1, 200_001, 60_000)
    column = pa.array(values, pa.int64())
    sink = io.BytesIO()
    pq.write_table(pa.table({"l_partkey": column}), sink)
    parquet_size = sink.tell()
    payload = kind_for(pa.int64()).build(column)
    payload_size = sum(len(s) for s in payload["slices"]) + 8
    with capsys.disabled():
        print(
            f"\nbitsliced payload {payload_size:,} B ({len(payload['slices'])} slices) "
            f"vs Parquet column {parquet_size:,} B"
        )
    assert len(payload["slices"]) == 18
    assert payload_size < parquet_size
    bound = BoundColumn("c", pa.int64())
    leaves = [
        BoundComparison(bound, Op.GT, 199_990),
        BoundComparison(bound, Op.EQ, int(values[17])),
        BoundIn(bound, (5, 77, int(values[3])), negated=True),
    ]
    check(kind_for(pa.int64()), [column], leaves, lambda _: True)


def test_spec() -> None:
    assert BitSlicedBitmap("c").params() == {}
    assert BitSlicedBitmap.kind == BitSlicedBitmapKind.kind == "bitsliced_bitmap"
    assert BitSlicedBitmapKind.row_level
    assert BitSlicedBitmapKind.precision == 30
