"""The vectorised XXH64 equals the reference implementation (``xxhash``) bit for bit."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from skipindex.indexes._xxh64 import hash_binary, hash_fixed, hash_u32, hash_u64


def _reference(blobs: list[bytes]) -> list[int]:
    return [xxhash.xxh64_intdigest(b) for b in blobs]


@given(st.lists(st.integers(0, 2**32 - 1), max_size=200))
def test_u32_matches_xxhash(values: list[int]) -> None:
    array = np.array(values, dtype=np.uint32)
    expected = _reference([v.to_bytes(4, "little") for v in values])
    assert hash_u32(array).tolist() == expected
    assert hash_u32(array.view(np.int32)).tolist() == expected  # any 4-byte dtype


@given(st.lists(st.integers(0, 2**64 - 1), max_size=200))
def test_u64_matches_xxhash(values: list[int]) -> None:
    array = np.array(values, dtype=np.uint64)
    expected = _reference([v.to_bytes(8, "little") for v in values])
    assert hash_u64(array).tolist() == expected
    assert hash_u64(array.view(np.float64)).tolist() == expected


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=50))
def test_u32_hashes_float_bits(values: list[float]) -> None:
    array = np.array(values, dtype=np.float32)
    assert hash_u32(array).tolist() == _reference([v.tobytes() for v in array])


@given(st.integers(0, 100).flatmap(lambda w: st.lists(st.binary(min_size=w, max_size=w))))
def test_fixed_width_matches_xxhash(blobs: list[bytes]) -> None:
    # Widths 0..100 cover every code path: the 32-byte stripes, 8-, 4- and 1-byte tails.
    width = len(blobs[0]) if blobs else 7
    rows = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    assert hash_fixed(rows).tolist() == _reference(blobs)


def test_fixed_width_of_a_strided_view() -> None:
    rng = np.random.default_rng(0)
    wide = rng.integers(0, 256, (64, 50), dtype=np.uint8)
    rows = wide[::3, 5:45]  # neither C-contiguous nor starting at column 0
    assert hash_fixed(rows).tolist() == _reference([r.tobytes() for r in rows])


@given(st.lists(st.binary(max_size=80), max_size=50), st.integers(0, 3))
def test_binary_matches_xxhash(blobs: list[bytes], skip: int) -> None:
    for array in (pa.array(blobs, pa.binary()), pa.array(blobs, pa.large_binary())):
        sliced = array.slice(min(skip, len(blobs)))
        assert hash_binary(sliced).tolist() == _reference(blobs[skip:])


@given(st.lists(st.text(max_size=30), max_size=50))
def test_strings_hash_their_utf8_bytes(texts: list[str]) -> None:
    expected = _reference([t.encode() for t in texts])
    for array_type in (pa.string(), pa.large_string(), pa.string_view()):
        assert hash_binary(pa.array(texts, array_type)).tolist() == expected


def test_rejects_wrong_widths() -> None:
    with pytest.raises(TypeError):
        hash_u32(np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError):
        hash_u64(np.zeros(3, dtype=np.int32))
    with pytest.raises(TypeError):
        hash_fixed(np.zeros(3, dtype=np.uint8))
