"""Min-max: never rules out a file holding a matching row; skips what it can."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
from hypothesis import given

from skipindex._types import to_physical
from skipindex.expressions.nodes import BoundColumn, BoundComparison, BoundIn, BoundIsNull, Op
from skipindex.indexes.minmax import MAX_STRING_BYTES, MinMaxKind
from tests.unit.indexes.test_bitmap_oracle import Case, cases, file_batch, oracle_rows


@given(cases())
def test_minmax_never_rules_out_a_file_with_a_matching_row(case: Case):
    kind = MinMaxKind("c", case.column_type.arrow_type, {})
    batch = file_batch(kind, case.files)
    for leaf in case.leaves:
        verdict = kind.might_match(leaf, batch)
        assert verdict.shape == (len(case.files) + 1,)
        assert verdict[-1], "a file the index does not know must be kept"
        for position, values in enumerate(case.files):
            if oracle_rows(leaf, values):
                assert verdict[position], (leaf, values)


def _kind(arrow_type: pa.DataType) -> MinMaxKind:
    return MinMaxKind("c", arrow_type, {})


def _verdicts(kind: MinMaxKind, files: list[list[object]], leaf) -> list[bool]:
    arrays = [pa.array(f, type=kind.arrow_type) for f in files]
    return kind.might_match(leaf, file_batch(kind, arrays)).tolist()[:-1]


def test_ranges_skip_files_whose_range_does_not_overlap():
    kind = _kind(pa.int64())
    files = [list(range(100)), list(range(100, 200)), list(range(200, 300))]
    column = BoundColumn("c", pa.int64())
    assert _verdicts(kind, files, BoundComparison(column, Op.GE, 150)) == [False, True, True]
    assert _verdicts(kind, files, BoundComparison(column, Op.LT, 100)) == [True, False, False]
    assert _verdicts(kind, files, BoundComparison(column, Op.EQ, 199)) == [False, True, False]
    assert _verdicts(kind, files, BoundIn(column, (5, 250))) == [True, False, True]


def test_long_in_lists_agree_with_short_ones():
    kind = _kind(pa.int64())
    rng = np.random.default_rng(7)
    files = [sorted(rng.integers(0, 10_000, 50).tolist()) for _ in range(40)]
    column = BoundColumn("c", pa.int64())
    values = tuple(sorted(set(rng.integers(0, 10_000, 300).tolist())))
    many = _verdicts(kind, files, BoundIn(column, values))
    few = np.zeros(len(files), dtype=bool)
    for start in range(0, len(values), 10):
        few |= _verdicts(kind, files, BoundIn(column, values[start : start + 10]))
    assert many == few.tolist()


def test_nan_is_above_every_value_and_equal_to_itself():
    kind = _kind(pa.float64())
    column = BoundColumn("c", pa.float64())
    files = [[1.0, 2.0], [float("nan")], [None], [-0.0]]
    assert _verdicts(kind, files, BoundComparison(column, Op.GT, 1e308)) == [
        False,
        True,
        False,
        False,
    ]
    assert _verdicts(kind, files, BoundComparison(column, Op.EQ, float("nan"))) == [
        False,
        True,
        False,
        False,
    ]
    assert _verdicts(kind, files, BoundComparison(column, Op.LT, float("nan"))) == [
        True,
        False,
        False,
        True,
    ]
    assert _verdicts(kind, files, BoundComparison(column, Op.EQ, 0.0)) == [
        False,
        False,
        False,
        True,
    ]
    assert _verdicts(kind, files, BoundComparison(column, Op.NE, 0.0)) == [True, True, False, False]


def test_nulls_and_empty_files():
    kind = _kind(pa.int32())
    column = BoundColumn("c", pa.int32())
    files = [[None, None], [], [1, None], [1, 1]]
    assert _verdicts(kind, files, BoundIsNull(column)) == [True, False, True, False]
    assert _verdicts(kind, files, BoundIsNull(column, negated=True)) == [False, False, True, True]
    assert _verdicts(kind, files, BoundComparison(column, Op.NE, 1)) == [False, False, False, False]
    assert _verdicts(kind, files, BoundIn(column, (1,), negated=True)) == [
        False,
        False,
        False,
        False,
    ]


def test_long_strings_are_truncated_but_bounds_stay_safe():
    kind = _kind(pa.string())
    column = BoundColumn("c", pa.string())
    long_a = "a" * 100 + "z"
    payload = kind.build(to_physical(pa.array([long_a, "a" * 100])))
    assert len(payload["min"]) == MAX_STRING_BYTES
    assert len(payload["max"]) <= MAX_STRING_BYTES
    assert payload["max"] >= long_a.encode()
    files = [[long_a], ["\U0010ffff" * 30]]
    assert _verdicts(kind, files, BoundComparison(column, Op.EQ, long_a)) == [True, False]
    assert _verdicts(kind, files, BoundComparison(column, Op.EQ, "\U0010ffff" * 30)) == [
        False,
        True,
    ]
    assert _verdicts(kind, files, BoundComparison(column, Op.GT, "b")) == [False, True]


def test_decimals_compare_exactly():
    arrow_type = pa.decimal128(9, 2)
    kind = _kind(arrow_type)
    column = BoundColumn("c", arrow_type)
    files = [[Decimal("1.50"), Decimal("2.00")], [Decimal("2.01")]]
    assert _verdicts(kind, files, BoundComparison(column, Op.GT, Decimal("2.00"))) == [False, True]
    assert _verdicts(kind, files, BoundComparison(column, Op.LE, Decimal("2.00"))) == [True, False]
