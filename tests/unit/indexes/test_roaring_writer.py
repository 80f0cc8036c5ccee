"""``mask_bytes`` writes Roaring's portable format from numpy: it must produce
exactly the bytes pyroaring writes for the same rows, so readers in any
language decode the same bitmap as before."""

from __future__ import annotations

import numpy as np
import pytest
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


def _runs(rows: int, runs: int, length: int, offset: int = 0) -> np.ndarray:
    """``runs`` runs of ``length`` rows, evenly spaced from ``offset``."""
    mask = np.zeros(rows, dtype=bool)
    step = max((rows - offset) // max(runs, 1), length + 1)
    for start in range(offset, offset + runs * step, step):
        mask[start : start + length] = True
    return mask


def _containers(*masks: np.ndarray) -> np.ndarray:
    """One 65,536-row container per mask (shorter masks are padded)."""
    out = np.zeros(65536 * len(masks), dtype=bool)
    for i, mask in enumerate(masks):
        out[i * 65536 : i * 65536 + len(mask)] = mask
    return out


EDGES = {
    # array containers at the run / array tie and either side of it
    "one run of 2": _runs(100, 1, 2),
    "one run of 3": _runs(100, 1, 3),
    "one run of 4": _runs(100, 1, 4),
    "runs of 2": _runs(5000, 100, 2),
    "runs of 3": _runs(5000, 100, 3),
    # bitset containers either side of 8,192 bytes as runs
    "2047 runs": _runs(65536, 2047, 4),
    "2048 runs": _runs(65536, 2048, 4),
    "2049 runs": _runs(65536, 2049, 4),
    "full": np.ones(65536, dtype=bool),
    "last row only": _runs(65536, 1, 1, offset=65535),
    # the run format writes offsets only from four containers on
    "3 containers, runs": _containers(_runs(100, 1, 50), _runs(10, 3, 1), _runs(6000, 1, 6000)),
    "4 containers, runs": _containers(*[_runs(300, 2, 40)] * 4),
    "mixed kinds": _containers(
        _runs(65536, 1, 65536), np.arange(65536) % 3 == 0, _runs(200, 7, 1), _runs(9, 1, 9)
    ),
    "runs across a boundary": _runs(140_000, 1, 20_000, offset=60_000),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_same_bytes_as_pyroaring_at_the_edges(name: str) -> None:
    mask = EDGES[name]
    assert mask_bytes(mask) == to_bytes(bitmap_of(np.flatnonzero(mask)))
