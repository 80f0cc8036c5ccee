"""``mask_bytes`` writes Roaring's portable format from numpy: it must produce
exactly the bytes pyroaring writes for the same rows, so readers in any
language decode the same bitmap as before."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from skipindex.indexes._roaring import bitmap_of, mask_bytes, to_bytes
from tests._support import examples

SIZES = [0, 1, 7, 4096, 4097, 65535, 65536, 65537, 140_000]


@settings(max_examples=examples(200))
@given(
    st.sampled_from(SIZES),
    st.sampled_from([0.0, 0.0005, 0.03, 0.0625, 0.07, 0.5, 0.999, 1.0]),
    st.sampled_from(["random", "runs", "sorted"]),
    st.integers(0, 2**32 - 1),
)
def test_same_bytes_as_pyroaring(rows: int, share: float, shape: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    if shape == "random":
        mask = rng.random(rows) < share
    elif shape == "runs":  # long stretches, as in sorted files: run containers win
        mask = np.repeat(rng.random(rows // 500 + 1) < share, 500)[:rows]
    else:
        mask = np.arange(rows) < int(rows * share)
    written = mask_bytes(mask)
    assert written == to_bytes(bitmap_of(np.flatnonzero(mask)))
    assert BitMap.deserialize(written) == BitMap(np.flatnonzero(mask).tolist())
