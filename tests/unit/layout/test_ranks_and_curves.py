"""Ranks from sampled boundaries, and the curves over them, against brute force."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex.layout.curves import CURVES, bits_per_column, hilbert, zorder
from skipindex.layout.ranks import NULL_RANK, boundaries, rank_count, ranks


def _spark_key(value: Any) -> tuple[int, Any]:
    """Spark's ascending order: NULL first, NaN last, -0.0 == 0.0, strings as UTF-8."""
    if value is None:
        return (0, 0)
    if isinstance(value, float) and math.isnan(value):
        return (2, 0)
    if isinstance(value, str):
        return (1, value.encode())
    return (1, value + 0 if isinstance(value, float) else value)


def _check_order(values: list[Any], arrow_type: pa.DataType, count: int) -> np.ndarray[Any, Any]:
    array = pa.array(values, type=arrow_type)
    bounds = boundaries(array, count)
    out = ranks(array, bounds)
    assert out.dtype == np.uint32
    assert int(out.max(initial=0)) < rank_count(bounds)
    keys = [_spark_key(v) for v in values]
    for i, j in itertools.combinations(range(len(values)), 2):
        if keys[i] < keys[j]:
            assert out[i] <= out[j], (values[i], values[j])
        elif keys[i] == keys[j]:
            assert out[i] == out[j], (values[i], values[j])
    for value, rank in zip(values, out, strict=True):
        assert (rank == NULL_RANK) == (value is None)
    return out


floats = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([-0.0, 0.0])
TYPED = [
    (st.integers(-(2**63), 2**63 - 1), pa.int64()),
    (st.integers(-128, 127), pa.int8()),
    (floats, pa.float64()),
    (st.text(max_size=8), pa.string()),
    (st.dates(), pa.date32()),
    (st.datetimes(), pa.timestamp("us")),
    (
        st.decimals(places=2, allow_nan=False, max_value=10**9, min_value=-(10**9)),
        pa.decimal128(12, 2),
    ),
    (st.booleans(), pa.bool_()),
]


@pytest.mark.parametrize(("strategy", "arrow_type"), TYPED, ids=[str(t) for _, t in TYPED])
@given(data=st.data())
def test_ranks_keep_sparks_order(strategy: Any, arrow_type: pa.DataType, data: Any) -> None:
    values = data.draw(st.lists(st.none() | strategy, max_size=40))
    count = data.draw(st.integers(1, 12))
    _check_order(values, arrow_type, count)


@given(st.lists(floats | st.none(), max_size=40), st.integers(1, 8))
def test_null_first_nan_last(values: list[float | None], count: int) -> None:
    out = _check_order(values, pa.float64(), count)
    for value, rank in zip(values, out, strict=True):
        if value is not None and math.isnan(value):
            assert rank == out.max()


@given(
    st.lists(st.integers(-1000, 1000), min_size=1, max_size=200),
    st.integers(1, 30),
    st.integers(0, 9),
)
def test_ranks_dense_under_skew(tail: list[int], count: int, hot: int) -> None:
    """90 % of the rows hold one value; the sample is the data: no rank is empty,
    ranks start at 1, and the tail still gets its own ranks."""
    values = [hot] * (9 * len(tail)) + tail
    array = pa.array(values, pa.int64())
    bounds = boundaries(array, count)
    used = np.unique(ranks(array, bounds))
    assert used.tolist() == list(range(1, len(bounds) + 1))
    distinct_tail = len(set(tail) - {hot})
    if count >= 20 and distinct_tail >= 10:
        assert len(used) >= 2  # the 10 % are not folded into the hot value's rank


@given(st.sets(st.text(min_size=1, max_size=6), min_size=2, max_size=80), st.integers(2, 20))
def test_shared_prefix_strings_spread(suffixes: set[str], count: int) -> None:
    prefix = "http://www.example.com/catalogue/item/"  # 38 shared characters
    values = [prefix + s for s in sorted(suffixes)]
    out = _check_order(values, pa.string(), count)
    assert len(np.unique(out)) == min(count, len(values))


def test_rank_types_outside_the_sample() -> None:
    sample = pa.array([dt.date(2020, 1, d) for d in range(1, 29)])
    later = pa.array([dt.date(1900, 1, 1), dt.date(2020, 1, 15), dt.date(2999, 1, 1), None])
    out = ranks(later, boundaries(sample, 4))
    assert out.tolist() == [1, 3, 4, 0]  # bounds: the 1st, 8th, 15th, 22nd
    exact = pa.array([decimal.Decimal("-1.50"), decimal.Decimal("2.00")], pa.decimal128(5, 2))
    assert ranks(exact, boundaries(exact, 2)).tolist() == [1, 2]


def _grid(columns: int, bits: int) -> list[np.ndarray[Any, Any]]:
    cells = np.array(list(itertools.product(range(1 << bits), repeat=columns)), dtype=np.uint32)
    return [cells[:, i] for i in range(columns)]


@pytest.mark.parametrize(("columns", "bits"), [(1, 5), (2, 1), (2, 4), (3, 3), (4, 2), (5, 1)])
def test_hilbert_neighbours_are_adjacent(columns: int, bits: int) -> None:
    """Walking the whole grid in Hilbert order: every step moves to a neighbouring
    cell (one column, by one), and every cell gets its own key."""
    grid = _grid(columns, bits)
    keys = hilbert(grid, bits)
    assert len(np.unique(keys)) == len(keys)
    assert int(keys.max()) == (1 << (columns * bits)) - 1
    walk = np.stack(grid, axis=1)[np.argsort(keys)].astype(np.int64)
    assert (np.abs(np.diff(walk, axis=0)).sum(axis=1) == 1).all()


@given(st.integers(1, 8), st.data())
def test_curves_keep_each_columns_order_where_others_tie(columns: int, data: Any) -> None:
    """Raising one column's rank with the others fixed never lowers a Z-order or
    linear key; every curve is a bijection on the grid cells it is given."""
    bits = bits_per_column(columns, 2**62)
    row = [data.draw(st.integers(0, (1 << bits) - 2)) for _ in range(columns)]
    axis = data.draw(st.integers(0, columns - 1))
    raised = list(row)
    raised[axis] += 1
    pair = [np.array([a, b], dtype=np.uint64) for a, b in zip(row, raised, strict=True)]
    for name in ("linear", "zorder"):
        low, high = CURVES[name](pair, bits)
        assert low < high, name
    for curve in CURVES.values():
        keys = curve(pair, bits)
        assert keys[0] != keys[1]
        assert int(keys.max()) < 2**63


def test_zorder_interleaves_most_significant_bits_first() -> None:
    assert zorder([np.array([0b10]), np.array([0b01])], 2).tolist() == [0b1001]


def test_curves_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="1 to 8 columns"):
        bits_per_column(9, 10)
    with pytest.raises(ValueError, match="does not fit"):
        zorder([np.array([4])], 2)


def test_keys_stretch_a_few_values_over_the_whole_span():
    """A column of 2 values beside one of 1,000: the curve's first split must still
    separate the 2 values (else files would ignore that column)."""
    from skipindex.layout.keys import PATH, fit

    few = pa.array([0, 1] * 500, pa.int64())
    many = pa.array(range(1000), pa.int64())
    paths = pa.array(["file:/t/a.parquet"] * 1000)
    sample = pa.table({"few": few, "many": many, PATH: paths})
    model = fit(sample, ["few", "many"], "zorder", {"a.parquet": 0}, [2], [0, 1], noise=False)
    keys = model.keys([few, many], 1000)
    top_bit = keys >> np.uint64(2 * model.bits - 1)
    assert (top_bit == np.asarray(few, dtype=np.uint64)).all()
    assert set(model.outputs(np.zeros(1000, np.int64), keys, seed=0).tolist()) == {0, 1}
