"""Words across files (skipindex.indexes._dense): decoding stored Roaring bytes,
back to bitmaps, and the bit-sliced arithmetic, against plain Python sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from skipindex.errors import IndexCorruptError
from skipindex.indexes import _dense_sliced
from skipindex.indexes._dense import (
    ALL_SET,
    DenseColumns,
    full_words,
    shared_full_words,
    to_bitmaps,
    words_for,
)
from skipindex.indexes._dense_decode import decode_many, decode_words
from skipindex.indexes._dense_members import _is_key, _row_codes, _word_codes
from skipindex.indexes._dense_ops import union_of_items
from skipindex.indexes._dense_sliced import BLOCK_WORDS, SlicedFiles
from skipindex.indexes._roaring import mask_bytes, to_bytes
from tests._support import examples


def _rows_of(words: np.ndarray) -> set[int]:
    bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())


@st.composite
def row_sets(draw: st.DrawFn) -> tuple[int, set[int]]:
    """A file's row count (up to three Roaring containers) and some of its rows:
    scattered rows (array containers), dense halves (bitsets) and runs."""
    n = draw(st.integers(1, 3 * 65_536))
    rows = set(draw(st.lists(st.integers(0, n - 1), max_size=200)))
    for _ in range(draw(st.integers(0, 3))):
        a = draw(st.integers(0, n - 1))
        rows.update(range(a, min(n, a + draw(st.integers(1, 20_000)))))
    if draw(st.booleans()):  # a bitset container: every other row of a stretch
        a = draw(st.integers(0, n - 1))
        rows.update(range(a, min(n, a + 20_000), 2))
    return n, rows


@settings(max_examples=examples(60), deadline=None)
@given(row_sets(), st.sampled_from(["runs", "no-runs", "mask"]))
def test_decoding_gives_every_stored_row_and_no_other(case, writer):
    n, rows = case
    data = _serialized(n, rows, writer)
    out = np.zeros(words_for(n), dtype=np.uint64)
    decode_words(data, out)
    assert _rows_of(out) == rows
    assert [set(b) for b in to_bitmaps(out[np.newaxis, :])] == [rows]


def _serialized(n: int, rows: set[int], writer: str) -> bytes:
    bitmap = BitMap(sorted(rows))
    if writer == "runs":
        return to_bytes(bitmap)  # run containers where smaller (cookie 12347)
    if writer == "no-runs":
        return bitmap.serialize()  # cookie 12346
    mask = np.zeros(n, dtype=bool)
    mask[sorted(rows)] = True
    return mask_bytes(mask)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.tuples(row_sets(), st.sampled_from(["runs", "no-runs", "mask"])), max_size=6),
    st.randoms(use_true_random=False),
)
def test_decoding_many_at_once_equals_one_at_a_time(cases, random):
    """The vectorised path (one-container bitmaps) and the per-item fallback
    (several containers) together: into shuffled target rows of one array."""
    _decode_into_shuffled_rows(cases, random)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 300).flatmap(
                lambda n: st.tuples(
                    st.just(n), st.sets(st.integers(0, n - 1)) | st.builds(set, st.just(range(n)))
                )
            ),
            st.sampled_from(["runs", "no-runs", "mask"]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_many_small_files_decode_as_one_at_a_time(cases, random):
    """Files of a few words: array rows set as packed bools, runs as a mask per
    word (runs across word boundaries, whole words, a file's every row)."""
    _decode_into_shuffled_rows(cases, random)


def _decode_into_shuffled_rows(cases, random) -> None:
    """Decode every case's bitmap at once into shuffled rows of one array (three
    rows to spare): each target holds its case's rows, the spare rows none."""
    blobs = [_serialized(n, rows, writer) for (n, rows), writer in cases]
    width = words_for(max([n for (n, _), _ in cases], default=1))
    offsets = np.cumsum([0, *map(len, blobs)])
    targets = np.array(random.sample(range(len(blobs) + 3), len(blobs)), dtype=np.int64)
    out = np.zeros((len(blobs) + 3, width), dtype=np.uint64)
    decode_many(offsets, memoryview(b"".join(blobs)), np.arange(len(blobs)), targets, out)
    for ((_, rows), _), target in zip(cases, targets.tolist(), strict=True):
        assert _rows_of(out[target]) == rows
    assert not out[np.setdiff1d(np.arange(len(out)), targets)].any()


def test_an_array_container_out_of_order_still_sets_every_row():
    """No Roaring writer stores an array container's rows out of order, but
    decoding ORs words run by run, so such bytes must still set every row."""
    rows = [70, 3, 65, 2, 127, 64]
    unsorted = (
        np.array([12346, 1], "<u4").tobytes()  # cookie without runs, one container
        + np.array([0, len(rows) - 1], "<u2").tobytes()  # key 0, cardinality - 1
        + np.array([16], "<u4").tobytes()  # where the container starts
        + np.array(rows, "<u2").tobytes()
    )
    blobs = [BitMap([1, 66]).serialize(), unsorted]
    offsets = np.cumsum([0, *map(len, blobs)])
    out = np.zeros((2, 2), dtype=np.uint64)  # files of 128 rows
    decode_many(offsets, memoryview(b"".join(blobs)), np.arange(2), np.array([1, 0]), out)
    assert _rows_of(out[0]) == set(rows)
    assert _rows_of(out[1]) == {1, 66}


@pytest.mark.parametrize("where", [1, 2])  # amid the buffer, or its last bytes
@pytest.mark.parametrize(
    "bad",
    [
        b"",
        BitMap([1, 2]).serialize()[:-1],
        to_bytes(BitMap(range(10, 20)))[:-2],  # a run cut short
        BitMap([500]).serialize(),
        b"\x00" * 16,
    ],
)
def test_decoding_many_raises_on_the_one_bad_item(bad, where):
    good = BitMap([3, 4]).serialize()
    blobs = [good, good]
    blobs.insert(where, bad)
    offsets = np.cumsum([0, *map(len, blobs)])
    out = np.zeros((3, 2), dtype=np.uint64)  # files of 128 rows
    with pytest.raises(IndexCorruptError):
        decode_many(offsets, memoryview(b"".join(blobs)), np.arange(3), np.arange(3), out)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00" * 3, "shorter than a header"),
        (b"\x01\x02\x03\x04\x00\x00\x00\x00", "unknown cookie"),
        (BitMap(range(0, 10_000, 2)).serialize()[:-10], "truncated"),
        (BitMap([200]).serialize(), "past the file"),
        (BitMap([70_000]).serialize(), "exceed the file"),
    ],
)
def test_bytes_that_are_not_a_bitmap_of_the_file_raise_a_clear_error(data, message):
    with pytest.raises(IndexCorruptError, match=message):
        decode_words(data, np.zeros(2, dtype=np.uint64))  # a file of 128 rows


def test_full_words_set_exactly_each_files_rows():
    counts = np.array([0, 1, 63, 64, 65, 200])
    full = full_words(counts, words_for(200))
    assert [_rows_of(row) for row in full] == [set(range(c)) for c in counts]
    for shared_counts in (counts[::-1], np.array([65, 65, 65])):
        shared = shared_full_words(shared_counts, 4)
        assert not shared.flags.writeable
        assert np.array_equal(shared, full_words(shared_counts, 4))


def test_arrays_beyond_the_budget_are_not_made():
    def never(_: int) -> bool:
        return False

    dense = DenseColumns(
        np.array([10, 20]), never, lambda name: (np.zeros(1), memoryview(b"")), lambda: None
    )
    assert dense.full() is None
    assert dense.nonnull() is None
    assert dense.items("bitmaps", np.array([0])) is None


def test_items_are_decoded_as_asked_and_kept():
    stored = [to_bytes(BitMap(rows)) for rows in ([1, 5], [0, 63, 64], [2])]
    offsets = np.cumsum([0, *(len(b) for b in stored)])
    fetched: list[str] = []

    def items(name: str) -> tuple[np.ndarray, memoryview]:
        fetched.append(name)
        return offsets, memoryview(b"".join(stored))

    dense = DenseColumns(np.array([70, 70, 70]), lambda _: True, items, lambda: None)
    first = dense.items("bitmaps", np.array([1]))
    assert first is not None
    assert not first.flags.writeable
    assert [_rows_of(r) for r in first] == [set(), {0, 63, 64}, set()]  # only item 1 read
    both = dense.items("bitmaps", np.array([2, 0, 1]))
    assert both is not None
    assert [_rows_of(r) for r in both] == [{1, 5}, {0, 63, 64}, {2}]
    assert _rows_of(first[0]) == {1, 5}  # one array, filled in as asked


@st.composite
def sliced_files(draw: st.DrawFn) -> tuple[list[np.ndarray], list[int]]:
    """Per file, codes of its rows (-1: null) and its slice count m (codes < 2**m)."""
    files, ms = [], []
    for _ in range(draw(st.integers(1, 5))):
        m = draw(st.integers(0, 5))
        n = draw(st.integers(1, 150))
        codes = draw(st.lists(st.integers(-1, (1 << m) - 1), min_size=n, max_size=n))
        files.append(np.array(codes))
        ms.append(m)
    return files, ms


def _slices(files: list[np.ndarray], ms: list[int]) -> tuple[np.ndarray, np.ndarray]:
    width = words_for(max(len(c) for c in files))
    depth = max(*ms, 1)
    slices = np.full((depth, len(files), width), ALL_SET)
    nonnull = np.zeros((len(files), width), dtype=np.uint64)
    for f, (codes, m) in enumerate(zip(files, ms, strict=True)):
        nonnull[f] = _words(codes >= 0, width)
        for i in range(m):
            slices[i, f] = _words((codes >= 0) & ((codes >> i) & 1 == 0), width)
    return slices, nonnull


def _words(mask: np.ndarray, width: int) -> np.ndarray:
    padded = np.zeros(width * 64, dtype=bool)
    padded[: len(mask)] = mask
    return np.packbits(padded, bitorder="little").view("<u8")


@settings(max_examples=examples(200), deadline=None)
@given(sliced_files(), st.data())
def test_sliced_ranges_match_the_codes(case, data):
    files, ms = case
    slices, nonnull = _slices(files, ms)
    # Every file in order (views), most of them or a few, in any order (gathers).
    everything = list(range(len(files)))
    some = st.lists(st.sampled_from(everything), min_size=1, unique=True)
    positions = np.array(data.draw(st.one_of(st.just(everything), some)))
    # Blocks of one file, of a few words (a file split across none), or the whole batch.
    block_words = data.draw(st.sampled_from([1, 2, 3, 8, BLOCK_WORDS]))
    sliced = SlicedFiles(slices, np.array(ms), nonnull, positions, block_words)
    bounds = st.integers(-3, (1 << max(ms)) + 2)
    ranges = data.draw(st.integers(1, 3))
    starts = np.array([[data.draw(bounds) for _ in positions] for _ in range(ranges)])
    ends = starts + np.array([[data.draw(st.integers(-1, 9)) for _ in positions] for _ in starts])
    words = sliced.between(starts, ends)
    for at, f in enumerate(positions.tolist()):
        codes = files[f]
        inside = np.zeros(len(codes), dtype=bool)
        for a, b in zip(starts[:, at], ends[:, at], strict=True):
            inside |= (a <= codes) & (codes < b)
        truth = set(np.flatnonzero((codes >= 0) & inside).tolist())
        assert _rows_of(words[at]) == truth, (f, starts[:, at], ends[:, at])


def test_sliced_narrow_range_over_many_words_gathers_only_what_is_left(monkeypatch):
    """A narrow range among many distinct codes leaves few words after the high
    slices: the low slices are gathered at those words only, and the answer is
    still every row in the range."""
    read: list[int] = []
    original = _dense_sliced._Block._slice
    monkeypatch.setattr(
        _dense_sliced._Block,
        "_slice",
        lambda self, i: read.append(original(self, i).size) or original(self, i),
    )
    rng = np.random.default_rng(7)
    files = [rng.integers(-1, 1 << 16, 20_000) for _ in range(4)]
    ms = [16] * 4
    slices, nonnull = _slices(files, ms)
    sliced = SlicedFiles(slices, np.array(ms), nonnull)
    targets = np.array([files[f][f * 7] for f in range(4)])  # a code each file holds
    words = sliced.between(targets[None, :] - 1, targets[None, :] + 2)
    for f, codes in enumerate(files):
        truth = np.flatnonzero((codes >= targets[f] - 1) & (codes <= targets[f] + 1))
        assert _rows_of(words[f]) == set(truth.tolist()) != set()
    whole = 4 * slices.shape[2]
    assert read[0] == whole
    assert min(read) <= whole / 8


def test_union_of_items_gathers_each_files_ranges():
    items = np.arange(1, 11, dtype=np.uint64)[:, None] << np.arange(2, dtype=np.uint64)[None, :]
    first = np.array([0, 4, 8])
    starts = np.array([[0, 1, 0], [3, 0, 2]])  # two ranges per file
    ends = np.array([[2, 1, 1], [4, 0, 2]])
    asked: list[np.ndarray] = []
    union = union_of_items(lambda at: asked.append(at) or items, 2, first, starts, ends)
    assert sorted(np.concatenate(asked).tolist()) == [0, 1, 3, 8]  # only the items needed
    assert union is not None
    expected = [items[0] | items[1] | items[3], np.zeros(2, dtype=np.uint64), items[8]]
    assert [list(r) for r in union] == [list(e) for e in expected]


@settings(max_examples=examples(60))
@given(
    keys=st.sets(st.integers(-(2**62), 2**62), min_size=1, max_size=40),
    near=st.lists(st.integers(-3, 3), max_size=40),
    small=st.booleans(),
)
def test_key_lookup_by_table_and_by_search_agree_with_isin(keys, near, small):
    ordered = np.array(sorted(k % 1000 if small else k for k in keys), dtype=np.int64)
    ordered = np.unique(ordered)
    shifts = np.array(near[: len(ordered)], dtype=np.int64)
    probes = np.concatenate([ordered, ordered[: len(shifts)] + shifts])
    assert (_is_key(ordered, probes) == np.isin(probes, ordered)).all()


@settings(max_examples=examples(40))
@given(depth=st.integers(0, 34), seed=st.integers(0, 2**32 - 1))
def test_codes_read_by_row_equal_codes_read_by_word(depth, seed):
    rng = np.random.default_rng(seed)
    slices = rng.integers(0, 2**64, size=(depth, 3, 5), dtype=np.uint64)
    in_slice = np.array([0, 4, 7, 14], dtype=np.int64)
    by_word = _word_codes(slices, in_slice)
    word, bit = np.divmod(np.arange(len(in_slice) * 64), 64)
    assert (_row_codes(slices, in_slice[word], bit) == by_word[word, bit]).all()
