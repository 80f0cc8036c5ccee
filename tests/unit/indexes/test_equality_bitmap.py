"""EqualityBitmap: exact within ``max_distinct``, a superset beyond (buckets)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.errors import InvalidSpecError, UnsupportedTypeError
from skipindex.expressions.nodes import BoundColumn, BoundComparison, BoundIn, Op
from skipindex.indexes._roaring import from_bytes
from skipindex.indexes.equality_bitmap import EqualityBitmap, EqualityBitmapKind
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import (
    ALL_TYPES,
    ROUND_TRIP_TYPES,
    Case,
    cases,
    check,
    distinct_count,
    parquet_batch,
    round_trip_leaves,
    sample_files,
)


def kind_for(arrow_type: pa.DataType, max_distinct: int = 4096) -> EqualityBitmapKind:
    return EqualityBitmapKind("c", arrow_type, {"max_distinct": max_distinct})


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES))
def test_exact_within_max_distinct(case: Case) -> None:
    check(kind_for(case.column_type.arrow_type), case.files, case.leaves, lambda _: True)


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES), st.integers(1, 6))
def test_buckets_beyond_max_distinct_are_supersets(case: Case, max_distinct: int) -> None:
    kind = kind_for(case.column_type.arrow_type, max_distinct)
    check(kind, case.files, case.leaves, lambda f: distinct_count(f) <= max_distinct)


@pytest.mark.parametrize("arrow_type", ROUND_TRIP_TYPES, ids=str)
@pytest.mark.parametrize("max_distinct", [4096, 3])
def test_payload_survives_parquet(
    arrow_type: pa.DataType, max_distinct: int, tmp_path: Path
) -> None:
    kind = kind_for(arrow_type, max_distinct)
    files = sample_files(arrow_type, seed=1)
    batch = parquet_batch(kind, files, tmp_path / "segment.parquet")
    leaves = round_trip_leaves(arrow_type, files)
    check(kind, files, leaves, lambda f: distinct_count(f) <= max_distinct, batch=batch)


def test_payload_layout() -> None:
    kind = kind_for(pa.string())
    payload = kind.build(pa.array(["b", None, "a", "b", "é", None]))
    assert payload["values"] == ["a", "b", "é"]
    assert payload["lows"] is None
    assert [list(from_bytes(b)) for b in payload["bitmaps"]] == [[2], [0, 3], [4]]
    assert list(from_bytes(payload["nulls"])) == [1, 5]
    assert kind.build(pa.array(["x"]))["nulls"] is None
    pa.array([payload], type=kind.payload_type())  # fits the declared struct


def test_buckets_bound_the_bitmap_count_and_keep_single_values_exact() -> None:
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.integers(0, 100_000, 20_000), np.full(20_000, 5)])
    rng.shuffle(values)
    column = pa.array(values, pa.int64())
    kind = kind_for(pa.int64(), 64)
    payload = kind.build(column)
    assert payload["lows"] is not None
    assert 1 < len(payload["bitmaps"]) <= 64
    bound = BoundColumn("c", pa.int64())
    check(
        kind,
        [column],
        [
            BoundComparison(bound, Op.LT, 40_000),
            BoundComparison(bound, Op.EQ, 77),
            BoundIn(bound, (5, 99_999)),
        ],
        lambda _: False,
    )
    # The frequent value 5 has a bucket of its own: != 5 is still exact.
    check(kind, [column], [BoundComparison(bound, Op.NE, 5)], lambda _: True)


def test_spec() -> None:
    spec = EqualityBitmap("c", max_distinct=10)
    assert spec.kind == "equality_bitmap" == EqualityBitmapKind.kind
    assert spec.params() == {"max_distinct": 10}
    assert EqualityBitmapKind.spec is EqualityBitmap
    assert EqualityBitmapKind.row_level
    assert EqualityBitmapKind.precision == 30
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InvalidSpecError):
            EqualityBitmap("c", max_distinct=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidSpecError):
        EqualityBitmapKind("c", pa.int32(), {"max_distinct": 0})
    with pytest.raises(UnsupportedTypeError):
        EqualityBitmapKind("c", pa.list_(pa.int32()), {})
    assert not kind_for(pa.int32()).answers(BoundComparison(BoundColumn("d", pa.int32()), Op.EQ, 1))
