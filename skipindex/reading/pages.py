"""Read a few rows of a column chunk by decoding only the pages that hold them.

A 1M-row row group holding one matching row costs a reader every page of every
column; pyarrow reads no less than a column chunk. But the pages of a chunk hold
consecutive rows, and each page header says how many. So for one chunk this
module walks the page headers, keeps the dictionary page and the data pages
holding the wanted rows, and hands pyarrow a one-column Parquet file of just
those pages (their bytes unchanged, under a footer copied from the original with
the chunk's sizes and offsets rewritten). pyarrow then decodes them exactly as
it would have in place: same codec, encodings, logical types, writer
(``created_by``) and stored Arrow schema.

Anything unexpected (encryption, a chunk in another file, a page header that
does not add up to the row group's rows) returns None, and the caller reads the
chunk whole: this path may only ever save work, never change a value.
"""

from __future__ import annotations

import base64
import mmap
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from skipindex._distinct import distinct
from skipindex.reading import thrift
from skipindex.reading.thrift import I32, I64, STRUCT, Struct, ThriftError
from skipindex.spark.view import open_file

__all__ = [
    "PAGE_BYTES",
    "PAGE_ROWS",
    "PAGE_SHARE",
    "PagedFile",
    "chunk_bytes",
    "chunk_pages",
    "expected_bytes",
]

# Decode by pages only when the pages kept hold at most this share of the
# chunk's data bytes; above it, a plain read of the chunk with the rest of the
# row group costs less than a second file open per column.
PAGE_SHARE = 0.5
# Writers close a data page at about this many uncompressed bytes or this many
# rows, whichever comes first (the defaults of parquet-mr, so of Spark, and of
# pyarrow 26). Planning counts a chunk's pages from them without reading the
# page headers; a writer with larger pages makes the plan too hopeful, which
# costs time (the read falls back to whole chunks), never a row.
PAGE_BYTES = 1 << 20
PAGE_ROWS = 20_000

_MAGIC = b"PAR1"
_ARROW_SCHEMA = b"ARROW:schema"
_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = range(4)
_REPEATED = 2


def chunk_pages(uncompressed: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per column chunk, how many pages planning takes it to hold (from its
    footer entry alone: see :data:`PAGE_BYTES`)."""
    by_bytes = -(-uncompressed // PAGE_BYTES)
    by_rows = -(-values // PAGE_ROWS)
    pages: np.ndarray = np.maximum(np.maximum(by_bytes, by_rows), 1)
    return pages


def chunk_bytes(compressed: np.ndarray, dictionary: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Per column chunk, about the compressed bytes read of it when ``share`` of
    its pages hold wanted rows: none where no page does, the whole chunk where
    that share is above :data:`PAGE_SHARE` (as :meth:`PagedFile.column_values`
    decides from the real page headers), else the dictionary page and that
    share of the data pages (pages taken as equal runs of rows)."""
    partial = dictionary + (compressed - dictionary) * share
    return np.where(share <= 0, 0.0, np.where(share > PAGE_SHARE, compressed, partial))


def expected_bytes(chunk: pq.ColumnChunkMetaData, rows: np.ndarray) -> float:
    """:func:`chunk_bytes` of one chunk for its ``rows`` (sorted, counted from the
    row group's first)."""
    if not len(rows):
        return 0.0
    pages = int(chunk_pages(np.array(chunk.total_uncompressed_size), np.array(chunk.num_values)))
    page_of = rows * pages // max(chunk.num_values, 1)
    share = (1 + int(np.count_nonzero(np.diff(page_of)))) / pages
    whole = chunk.total_compressed_size
    first = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
    dictionary = min(max(chunk.data_page_offset - (first or chunk.data_page_offset), 0), whole)
    return float(chunk_bytes(np.array(whole), np.array(dictionary), np.array(share)))


@dataclass(frozen=True)
class _Pages:
    """A chunk's pages: the dictionary page's bytes (or empty), and per data
    page its byte range, its uncompressed size (header included) and rows."""

    dictionary: tuple[int, int, int]  # start, end, uncompressed size with header
    starts: np.ndarray
    ends: np.ndarray
    uncompressed: np.ndarray
    rows: np.ndarray


class PagedFile:
    """A local Parquet file, memory-mapped, with its footer decoded."""

    def __init__(self, data: mmap.mmap, footer: Struct) -> None:
        self._data = data
        self._footer = footer
        self._columns = _top_level_leaves(_items(footer, 2))
        self._stored = _stored_schema(footer)
        self._stored_fields: dict[int, Struct | None] = {}  # per schema element

    @classmethod
    def open(cls, path: str) -> PagedFile | None:
        """``path`` opened, or None where its footer is not plain Parquet this
        module understands (encrypted, malformed)."""
        try:
            with open(path, "rb") as handle:
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # ValueError: an empty file
            return None  # the chunk reader says what is wrong
        footer = _footer(data)
        # 1, 2, 4: version, schema, row groups; 8: encryption_algorithm
        if footer is None or 8 in footer or not all(k in footer for k in (1, 2, 4)):
            data.close()
            return None
        try:
            paged = cls(data, footer)
        except (KeyError, IndexError, TypeError, UnicodeDecodeError):
            data.close()  # a schema without names or counts where Parquet requires them
            return None
        stores_schema = any(pair[1][1] == _ARROW_SCHEMA for pair in _items(footer, 5))
        if stores_schema and paged._stored is None:
            paged.close()
            return None
        return paged

    def close(self) -> None:
        self._data.close()

    def page_rows(self, group: int, name: str) -> np.ndarray | None:
        """Rows in each data page of column ``name`` in row group ``group``;
        None where the chunk cannot be read by pages."""
        found = self._chunk(group, name)
        return None if found is None else found[1].rows

    def column_values(
        self, group: int, name: str, rows: np.ndarray, *, dictionary: bool = False
    ) -> pa.Array | None:
        """Values of top-level column ``name`` at ``rows`` (sorted, within row
        group ``group``), read from the pages holding them; None where this path
        does not apply or would not save work. ``dictionary``: read as a dictionary."""
        found = self._chunk(group, name) if len(rows) else None
        if found is None:
            return None
        meta, pages, element = found
        first = np.concatenate([[0], np.cumsum(pages.rows)])
        at = np.searchsorted(first, rows, side="right") - 1
        keep = distinct(at)
        data_bytes = pages.ends - pages.starts
        if data_bytes[keep].sum() > PAGE_SHARE * data_bytes.sum():
            return None
        local = np.concatenate([[0], np.cumsum(pages.rows[keep])])
        offsets = rows - first[at] + local[np.searchsorted(keep, at)]
        try:
            parquet = open_file(
                pa.BufferReader(self._file_of(element, meta, pages, keep)),
                pre_buffer=False,
                read_dictionary=[name] if dictionary else None,
            )
            values = parquet.read(use_threads=False).column(0).combine_chunks()
        except (pa.ArrowException, OSError, KeyError):
            return None  # the whole chunk's read decodes it, or says what is wrong
        return values.take(pa.array(offsets, pa.int64()))

    def _chunk(self, group: int, name: str) -> tuple[Struct, _Pages, int] | None:
        """Column ``name``'s chunk in row group ``group``: its metadata, its
        pages and its schema element; None where it cannot be read by pages."""
        leaf, element = self._columns.get(name, (-1, -1))
        groups = _items(self._footer, 4)
        if leaf < 0 or not 0 <= group < len(groups):
            return None
        if self._stored is not None and self._stored.get_field_index(name) < 0:
            return None  # pyarrow's stored types cannot be told for this column
        row_group = groups[group]
        chunks = _items(row_group, 1)
        if leaf >= len(chunks):
            return None
        chunk = chunks[leaf]
        if any(k in chunk for k in (1, 8, 9)) or 3 not in chunk:  # other file, encrypted
            return None
        meta = chunk[3][1]
        try:
            pages = self._pages(meta, int(row_group[3][1]))
        except (ThriftError, KeyError, IndexError, TypeError):
            return None
        return None if pages is None else (meta, pages, element)

    def _pages(self, meta: Struct, group_rows: int) -> _Pages | None:
        """The chunk's pages, or None where they do not add up to ``group_rows``."""
        start = int(meta[9][1])
        if 11 in meta and 0 < int(meta[11][1]) < start:
            start = int(meta[11][1])
        end = start + int(meta[7][1])
        if end > len(self._data) - 8:
            return None
        dictionary: tuple[int, int, int] | None = None
        starts: list[int] = []
        ends: list[int] = []
        uncompressed: list[int] = []
        rows: list[int] = []
        at = start
        while at < end:
            header, body = thrift.load(self._data, at)
            if int(header[3][1]) < 0:
                return None  # a page that ends before it starts: not a chunk to trust
            page_end = body + int(header[3][1])
            kind = int(header[1][1])
            size = page_end - at + int(header[2][1]) - int(header[3][1])
            if kind == _DICTIONARY_PAGE and not starts and dictionary is None:
                dictionary = (at, page_end, size)
            elif kind == _DATA_PAGE:
                starts.append(at)
                rows.append(int(header[5][1][1][1]))
            elif kind == _DATA_PAGE_V2:
                starts.append(at)
                rows.append(int(header[8][1][3][1]))
            elif kind != _INDEX_PAGE:
                return None
            if kind in (_DATA_PAGE, _DATA_PAGE_V2):
                ends.append(page_end)
                uncompressed.append(size)
            at = page_end
        if at != end or sum(rows) != group_rows or min(rows, default=-1) < 0:
            return None
        return _Pages(
            dictionary or (start, start, 0),
            np.array(starts, np.int64),
            np.array(ends, np.int64),
            np.array(uncompressed, np.int64),
            np.array(rows, np.int64),
        )

    def _file_of(self, element: int, meta: Struct, pages: _Pages, keep: np.ndarray) -> bytes:
        """A one-column Parquet file of the dictionary page and the pages ``keep``."""
        head, tail, dictionary_size = pages.dictionary
        parts = [_MAGIC, self._data[head:tail]]
        parts += [self._data[pages.starts[k] : pages.ends[k]] for k in keep]
        body = sum(len(p) for p in parts[1:])
        first_data = len(_MAGIC) + tail - head
        rows = int(pages.rows[keep].sum())
        uncompressed = dictionary_size + int(pages.uncompressed[keep].sum())
        column: Struct = {
            k: v for k, v in meta.items() if k in (1, 2, 3, 4, 8)
        }  # type, encodings, path, codec, key-value metadata: as written
        column[5] = (I64, rows)
        column[6] = (I64, uncompressed)
        column[7] = (I64, body)
        column[9] = (I64, first_data)
        if tail > head:
            column[11] = (I64, len(_MAGIC))
        if 13 in meta:
            column[13] = meta[13]  # encoding stats: still says if every page is a dictionary's
        chunk: Struct = {2: (I64, len(_MAGIC)), 3: (STRUCT, column)}
        row_group: Struct = {
            1: (thrift.LIST, (STRUCT, [chunk])),
            2: (I64, uncompressed),
            3: (I64, rows),
            5: (I64, len(_MAGIC)),
            6: (I64, body),
        }
        schema = _items(self._footer, 2)
        root = dict(schema[0])
        root[5] = (I32, 1)
        footer: Struct = {
            1: self._footer[1],
            2: (thrift.LIST, (STRUCT, [root, schema[element]])),
            3: (I64, rows),
            4: (thrift.LIST, (STRUCT, [row_group])),
        }
        if element not in self._stored_fields:
            self._stored_fields[element] = self._stored_field(schema[element])
        stored = self._stored_fields[element]
        if stored is not None:
            footer[5] = (thrift.LIST, (STRUCT, [stored]))
        if 6 in self._footer:
            footer[6] = self._footer[6]  # created_by: pyarrow's workarounds key on it
        encoded = thrift.dump(footer)
        return b"".join([*parts, encoded, len(encoded).to_bytes(4, "little"), _MAGIC])

    def _stored_field(self, element: Struct) -> Struct | None:
        """The stored Arrow schema (``ARROW:schema``) cut down to ``element``'s
        field, as a footer key-value pair; None where the file stores none."""
        if self._stored is None:
            return None
        field = self._stored.field(self._stored.get_field_index(_name(element)))
        single = pa.schema([field], metadata=self._stored.metadata)
        encoded = base64.b64encode(single.serialize().to_pybytes())
        return {1: (thrift.BINARY, _ARROW_SCHEMA), 2: (thrift.BINARY, encoded)}


def _footer(data: mmap.mmap) -> Struct | None:
    """The file's footer, decoded; None where it is not plain Parquet."""
    size = len(data)
    if size < 12 or data[-4:] != _MAGIC or data[:4] != _MAGIC:
        return None
    length = int.from_bytes(data[-8:-4], "little")
    if length > size - 12:
        return None
    try:
        return thrift.load(data, size - 8 - length)[0]
    except ThriftError:
        return None


def _stored_schema(footer: Struct) -> pa.Schema | None:
    """The Arrow schema pyarrow stored in the footer, if any."""
    for pair in _items(footer, 5):
        if pair[1][1] == _ARROW_SCHEMA and 2 in pair:
            try:
                return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(pair[2][1])))
            except (ValueError, pa.ArrowException):
                return None
    return None


def _items(struct: Struct, field: int) -> list[Any]:
    """The elements of list field ``field`` (none where it is absent)."""
    return struct[field][1][1] if field in struct else []


def _name(element: Struct) -> str:
    return bytes(element[4][1]).decode("utf-8")


def _top_level_leaves(schema: list[Struct]) -> dict[str, tuple[int, int]]:
    """Name -> (leaf column number, schema element index) of the leaves directly
    under the root that are not repeated (one value per row, so a page's values
    are its rows); a name given twice is left out."""
    leaves: dict[str, tuple[int, int]] = {}
    seen: set[str] = set()
    leaf = 0
    stack: list[int] = [int(schema[0].get(5, (I32, 0))[1])]  # children left per level
    for index in range(1, len(schema)):
        element = schema[index]
        top_level = len(stack) == 1
        stack[-1] -= 1
        children = int(element.get(5, (I32, 0))[1])
        if top_level:
            name = _name(element)
            if name in seen:
                leaves.pop(name, None)
            elif children == 0 and int(element.get(3, (I32, 0))[1]) != _REPEATED:
                leaves[name] = (leaf, index)
            seen.add(name)
        if children > 0:
            stack.append(children)
            continue
        leaf += 1
        while len(stack) > 1 and stack[-1] == 0:
            stack.pop()
    return leaves
