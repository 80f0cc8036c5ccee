"""RangeBitmap: exact with at most ``bins`` distinct values, a superset at bin edges beyond."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.errors import InvalidSpecError
from skipindex.expressions.nodes import BoundColumn, BoundComparison, BoundIn, Op
from skipindex.indexes._payloads import decode
from skipindex.indexes._roaring import from_bytes
from skipindex.indexes.base import FileBatch
from skipindex.indexes.range_bitmap import RangeBitmap, RangeBitmapKind
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import (
    ALL_TYPES,
    ROUND_TRIP_TYPES,
    Case,
    cases,
    check,
    distinct_count,
    oracle_rows,
    parquet_batch,
    round_trip_leaves,
    sample_files,
)


def kind_for(arrow_type: pa.DataType, bins: int = 64) -> RangeBitmapKind:
    return RangeBitmapKind("c", arrow_type, {"bins": bins})


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES))
def test_exact_with_few_distinct_values(case: Case) -> None:
    check(kind_for(case.column_type.arrow_type), case.files, case.leaves, lambda _: True)


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES), st.integers(2, 6))
def test_binned_is_a_superset(case: Case, bins: int) -> None:
    kind = kind_for(case.column_type.arrow_type, bins)
    check(kind, case.files, case.leaves, lambda f: distinct_count(f) <= bins)


@pytest.mark.parametrize("arrow_type", ROUND_TRIP_TYPES, ids=str)
@pytest.mark.parametrize("bins", [64, 4])
def test_payload_survives_parquet(arrow_type: pa.DataType, bins: int, tmp_path: Path) -> None:
    kind = kind_for(arrow_type, bins)
    files = sample_files(arrow_type, seed=2)
    batch = parquet_batch(kind, files, tmp_path / "segment.parquet")
    leaves = round_trip_leaves(arrow_type, files)
    check(kind, files, leaves, lambda f: distinct_count(f) <= bins, batch=batch)


def test_cumulative_layout_with_complemented_upper_half() -> None:
    kind = kind_for(pa.int32())
    payload = kind.build(pa.array([3, 1, None, 2, 1, 4], pa.int32()))
    assert list(payload["bounds"]) == [1, 2, 3, 4]
    assert payload["lows"] is None
    assert payload["flip_from"] == 1  # C_0 = {1, 4} holds 2 of 5 rows; C_1 holds 3
    stored = [sorted(from_bytes(b)) for b in payload["bitmaps"]]
    assert stored == [[1, 4], [0, 5], [5]]  # C_0, then rows > 2, rows > 3
    assert sorted(from_bytes(payload["nulls"])) == [2]


def test_any_range_decodes_at_most_two_bitmaps(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    column = pa.array(rng.integers(0, 1000, 50_000), pa.int64())
    kind = kind_for(pa.int64(), 32)
    payload = kind.build(column)
    assert len(payload["bitmaps"]) <= 31
    assert payload["lows"] is not None
    batch = FileBatch(np.array([len(column)]), pa.array([payload], kind.payload_type()))
    decoded: list[bytes] = []
    real = decode

    def counting(data: memoryview) -> object:
        decoded.append(bytes(data))
        return real(data)

    monkeypatch.setattr("skipindex.indexes._payloads.decode", counting)
    bound = BoundColumn("c", pa.int64())
    for leaf in (
        BoundComparison(bound, Op.LT, 400),
        BoundComparison(bound, Op.GE, 123),
        BoundComparison(bound, Op.EQ, 500),
    ):
        decoded.clear()
        fresh = FileBatch(batch.num_rows, batch.payloads)  # nothing decoded yet
        (rows,) = kind.matching_rows(leaf, fresh, np.array([0]))
        assert rows is not None
        assert set(rows) >= oracle_rows(leaf, column)
        assert len(decoded) <= 3  # two cumulative bitmaps (+ the null bitmap)


def test_sorted_file_is_exact_at_bin_edges_and_small() -> None:
    column = pa.array(np.repeat(np.arange(1000), 60), pa.int32())
    kind = kind_for(pa.int32(), 10)
    payload = kind.build(column)
    assert sum(len(b) for b in payload["bitmaps"]) < 200  # one run each
    bounds = [int(b) for b in payload["bounds"]]
    assert len(bounds) == 10
    assert bounds[-1] == 999
    bound = BoundColumn("c", pa.int32())
    at_edges = [BoundComparison(bound, op, bounds[3]) for op in (Op.LE, Op.GT)]
    check(kind, [column], at_edges, lambda _: True)
    inside = [BoundIn(bound, (bounds[0],)), BoundComparison(bound, Op.LT, bounds[3])]
    check(kind, [column], inside, lambda _: False)


def test_spec() -> None:
    assert RangeBitmap("c").params() == {"bins": 64}
    assert RangeBitmap.kind == RangeBitmapKind.kind == "range_bitmap"
    assert RangeBitmapKind.row_level
    assert RangeBitmapKind.precision == 20
    for bad in (1, 0, "8"):
        with pytest.raises(InvalidSpecError):
            RangeBitmap("c", bins=bad)  # type: ignore[arg-type]
