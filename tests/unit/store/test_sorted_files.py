"""A listing's files sorted by path, made DataFile objects only when asked for:
the same files, in the same order, as the list a listing spells out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex.store.listing import DataFile, Listing

_FILES = st.lists(
    st.tuples(st.text(min_size=1, max_size=6), st.integers(0, 2**40), st.integers(0, 2**41)),
    unique_by=lambda f: f[0],
    max_size=20,
)


@given(files=_FILES)
def test_sorted_files_are_the_listings_files_in_path_order(files):
    listing = Listing.of(DataFile(*f) for f in files)
    lazy = listing.sorted_files()
    expected = listing.files()
    assert list(lazy) == expected
    assert len(lazy) == len(expected)
    assert [lazy[i] for i in range(len(lazy))] == expected
    assert lazy[1:3] == expected[1:3]
    if expected:
        assert lazy[-1] == expected[-1]
        assert lazy.paths.to_pylist() == [f.path for f in expected]
        assert np.array_equal(lazy.sizes, [f.size for f in expected])
    with pytest.raises(IndexError):
        lazy[len(expected)]
