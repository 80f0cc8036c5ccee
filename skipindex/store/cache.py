"""In-process LRU caches of segment columns and of what prune makes of them.

Segment files are written once under a unique name and never modified, so a
column read from one stays valid for as long as the name is in use: repeated
prunes (a warm process, a notebook, a query server) skip the Parquet reads, and
with :data:`batch_cache` the decoding of stored bitmaps too. Each cache is
bounded in bytes; ``SKIPINDEX_CACHE_BYTES=0`` turns both off.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, Generic, Protocol, TypeVar

import pyarrow as pa

__all__ = ["ColumnCache", "batch_cache", "segment_cache"]


class _Sized(Protocol):
    @property
    def nbytes(self) -> int: ...


V = TypeVar("V", bound=_Sized)

DEFAULT_BYTES = 512 * 1024 * 1024


class ColumnCache(Generic[V]):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, ...], V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> V | None:
        with self._lock:
            column = self._entries.get(key)
            if column is not None:
                self._entries.move_to_end(key)
            return column

    def put(self, key: tuple[str, ...], column: V) -> None:
        size = int(column.nbytes)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            self._bytes -= int(old.nbytes) if old is not None else 0
            self._entries[key] = column
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= int(evicted.nbytes)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


_LIMIT = int(os.environ.get("SKIPINDEX_CACHE_BYTES", DEFAULT_BYTES))
segment_cache: ColumnCache[pa.ChunkedArray] = ColumnCache(_LIMIT)
# Prune's FileBatch per (table, segments, index column): payloads plus decoded bitmaps.
batch_cache: ColumnCache[Any] = ColumnCache(_LIMIT)
