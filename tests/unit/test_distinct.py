"""``skipindex._distinct.distinct`` is ``np.unique`` (sorted distinct values), by a sort."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from skipindex._distinct import distinct

_ARRAYS = st.one_of(
    hnp.arrays(np.int64, st.integers(0, 50), elements=st.integers(-5, 5)),
    hnp.arrays(np.uint64, st.integers(0, 50)),
    hnp.arrays(np.float64, st.integers(0, 50), elements=st.sampled_from([0.0, 1.5, np.nan, -2.0])),
)


@given(_ARRAYS)
def test_distinct_is_what_np_unique_gives(values: np.ndarray):
    found, expected = distinct(values), np.unique(values)
    assert found.dtype == expected.dtype
    np.testing.assert_array_equal(found, expected)


def test_a_matrix_is_flattened():
    np.testing.assert_array_equal(distinct(np.array([[3, 1], [1, 2]])), [1, 2, 3])
