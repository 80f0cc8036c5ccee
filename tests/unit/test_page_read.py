"""Reading rows by pages gives exactly what pyarrow reads from the whole chunk,
and declines (None) wherever it cannot be sure."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.reading import pages as page_read
from skipindex.reading import thrift
from skipindex.reading.pages import PagedFile
from skipindex.spark.view import open_file
from tests._support import SCHEMA, column_values, examples

WRITERS = st.fixed_dictionaries(
    {
        "data_page_version": st.sampled_from(["1.0", "2.0"]),
        "use_dictionary": st.booleans(),
        "compression": st.sampled_from(["none", "snappy", "zstd", "gzip"]),
        "use_deprecated_int96_timestamps": st.booleans(),
        "store_schema": st.booleans(),
        "write_batch_size": st.integers(1, 8),  # with tiny pages: a page per batch
        "data_page_size": st.sampled_from([1, 64, 1 << 20]),
        # a small dictionary overflows: dictionary pages, then plain ones
        "dictionary_pagesize_limit": st.sampled_from([16, 1 << 20]),
    }
)
# Encodings a writer may choose instead of dictionaries.
ENCODINGS = {
    "i": "DELTA_BINARY_PACKED",
    "n": "DELTA_BINARY_PACKED",
    "f": "BYTE_STREAM_SPLIT",
    "s": "DELTA_LENGTH_BYTE_ARRAY",
    "dec": "BYTE_STREAM_SPLIT",
}


@st.composite
def _table_and_rows(draw: st.DrawFn) -> tuple[pa.Table, int, list[int]]:
    rows = draw(st.integers(1, 120))
    arrays = [
        pa.array([draw(column_values(f.name)) for _ in range(rows)], type=f.type) for f in SCHEMA
    ]
    group_rows = draw(st.integers(1, 150))
    wanted = draw(st.lists(st.integers(0, rows - 1), unique=True, min_size=1))
    return pa.Table.from_arrays(arrays, schema=SCHEMA), group_rows, sorted(wanted)


def _same(got: pa.Array, expected: pa.Array) -> bool:
    """Equal values; repr tells NaN equal to NaN and -0.0 from 0.0."""
    return got.type == expected.type and repr(got.to_pylist()) == repr(expected.to_pylist())


@settings(max_examples=examples(150), deadline=None)
@given(case=_table_and_rows(), writer=WRITERS, as_dictionary=st.booleans(), delta=st.booleans())
def test_rows_read_by_pages_equal_the_chunk_read_whole(
    tmp_path_factory, case, writer, as_dictionary, delta
):
    table, group_rows, wanted = case
    path = tmp_path_factory.mktemp("pages") / "f.parquet"
    if delta and not writer["use_dictionary"]:
        writer = {**writer, "column_encoding": ENCODINGS}
        as_dictionary = False  # pyarrow reads no delta-encoded strings as dictionaries
    pq.write_table(table, path, row_group_size=group_rows, **writer)
    dictionary = ["s"] if as_dictionary else None
    whole = open_file(str(path), read_dictionary=dictionary)
    paged = PagedFile.open(str(path))
    assert paged is not None
    starts = np.cumsum(
        [0] + [whole.metadata.row_group(g).num_rows for g in range(whole.num_row_groups)]
    )
    rows = np.array(wanted, np.int64)
    with patch.object(page_read, "PAGE_SHARE", 1.0):  # pages even where few are skipped
        for group in range(whole.num_row_groups):
            local = rows[(rows >= starts[group]) & (rows < starts[group + 1])] - starts[group]
            if not len(local):
                continue
            expected = whole.read_row_group(group).take(pa.array(local))
            for name in table.column_names:
                got = paged.column_values(
                    group, name, local, dictionary=name == "s" and as_dictionary
                )
                assert got is not None, name
                assert _same(got, expected.column(name).combine_chunks()), (name, local)


def _paged_file(tmp_path: Path, **writer: object) -> Path:
    path = tmp_path / "f.parquet"
    table = pa.table({"x": pa.array(np.arange(1000)), "s": [f"v{k % 7}" for k in range(1000)]})
    pq.write_table(table, path, write_batch_size=10, data_page_size=1, **writer)
    return path


def test_a_point_reads_one_page_and_many_rows_read_the_chunk(tmp_path):
    paged = PagedFile.open(str(_paged_file(tmp_path)))
    assert paged is not None
    assert len(paged.page_rows(0, "x")) == 100  # a page per 10-row batch
    point = paged.column_values(0, "x", np.array([537]))
    assert point is not None
    assert point.to_pylist() == [537]
    assert paged.column_values(0, "x", np.arange(0, 1000, 7)) is None  # every page: read whole


def test_planning_expects_about_the_pages_a_read_decodes(tmp_path):
    # 8 MB of int64 in pages of about 1 MiB (the writers' default) and a small
    # dictionary-encoded column: the estimate from the footer alone.
    path = tmp_path / "f.parquet"
    rows = 1 << 20
    table = pa.table({"x": np.arange(rows), "s": [f"v{k % 7}" for k in range(rows)]})
    pq.write_table(table, path, compression="none", use_dictionary=["s"])
    x, s = (pq.read_metadata(path).row_group(0).column(i) for i in range(2))
    paged = PagedFile.open(str(path))
    assert paged is not None
    pages = len(paged.page_rows(0, "x"))
    paged.close()
    assert pages >= 8
    page = x.total_compressed_size / pages
    one = page_read.expected_bytes(x, np.array([500_000]))
    assert page / 2 < one < 2 * page
    assert page_read.expected_bytes(x, np.array([], np.int64)) == 0.0
    assert page_read.expected_bytes(x, np.arange(700_000, 700_500)) < 3 * page  # clustered
    every_page = np.arange(0, rows, rows // pages)
    assert page_read.expected_bytes(x, every_page) == x.total_compressed_size  # the chunk whole
    dictionary = s.data_page_offset - s.dictionary_page_offset
    assert dictionary < page_read.expected_bytes(s, np.array([5])) < s.total_compressed_size / 2


def test_nested_and_repeated_columns_are_left_to_the_chunk_reader(tmp_path):
    path = tmp_path / "f.parquet"
    table = pa.table(
        {"x": [1, 2, 3], "st": [{"a": 1}, {"a": 2}, None], "l": [[1], [], None], "y": [4, 5, 6]}
    )
    pq.write_table(table, path)
    paged = PagedFile.open(str(path))
    assert paged is not None
    rows = np.array([1])
    assert paged.column_values(0, "st", rows) is None
    assert paged.column_values(0, "l", rows) is None
    assert paged.column_values(0, "missing", rows) is None
    with patch.object(page_read, "PAGE_SHARE", 1.0):
        got = paged.column_values(0, "y", rows)  # the leaf after a list and a struct
    assert got is not None
    assert got.to_pylist() == [5]


def test_files_it_cannot_read_open_as_none(tmp_path):
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1" + b"\x00" * 20 + b"PAR1")
    assert PagedFile.open(str(empty)) is None
    assert PagedFile.open(str(junk)) is None


def test_a_footer_whose_schema_lacks_a_name_opens_as_none(tmp_path):
    path = _paged_file(tmp_path)
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer, _ = thrift.load(data[-8 - length : -8])
    del footer[2][1][1][1][4]  # the first column's name, which Parquet requires
    encoded = thrift.dump(footer)
    path.write_bytes(data[: -8 - length] + encoded + len(encoded).to_bytes(4, "little") + b"PAR1")
    assert PagedFile.open(str(path)) is None


def test_a_page_header_that_does_not_add_up_declines(tmp_path):
    path = _paged_file(tmp_path, use_dictionary=False, compression="none")
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(path).metadata.row_group(0).column(0)
    header, _ = thrift.load(bytes(data), meta.data_page_offset)
    header[5][1][1] = (thrift.I32, header[5][1][1][1] + 1)  # one row too many
    patched = thrift.dump(header)
    old_end = thrift.load(bytes(data), meta.data_page_offset)[1]
    if len(patched) != old_end - meta.data_page_offset:
        pytest.fail("the patched header must keep its length for this test")
    data[meta.data_page_offset : old_end] = patched
    path.write_bytes(bytes(data))
    paged = PagedFile.open(str(path))
    assert paged is not None
    assert paged.column_values(0, "x", np.array([5])) is None
    assert paged.column_values(0, "s", np.array([5])) is not None  # other columns still do


def test_a_footer_survives_a_thrift_round_trip_byte_for_byte(tmp_path):
    path = _paged_file(tmp_path, store_schema=True)
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    footer_bytes = data[-8 - length : -8]
    footer, end = thrift.load(footer_bytes)
    assert end == length
    assert thrift.dump(footer) == footer_bytes


def test_pages_pyarrow_cannot_decode_are_left_to_the_chunk_reader(tmp_path):
    path = _paged_file(tmp_path, use_dictionary=False, compression="snappy")
    data = bytearray(path.read_bytes())
    start = pq.ParquetFile(path).metadata.row_group(0).column(0).data_page_offset
    _, body = thrift.load(bytes(data), start)
    data[body : body + 8] = b"\xff" * 8  # the first page's snappy stream, broken
    path.write_bytes(bytes(data))
    paged = PagedFile.open(str(path))
    assert paged is not None
    assert paged.page_rows(0, "x") is not None  # its headers still add up
    assert paged.column_values(0, "x", np.array([5])) is None
    with pytest.raises(OSError, match=r"(?i)snappy|corrupt|invalid|decompress"):
        pq.read_table(path, columns=["x"])  # what the whole-chunk read then reports
