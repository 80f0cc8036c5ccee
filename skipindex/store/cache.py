"""In-process LRU caches of segment columns and of what prune makes of them.

Segment files are written once under a unique name and never modified, so a
column read from one stays valid for as long as the name is in use: repeated
prunes (a warm process, a notebook, a query server) skip the Parquet reads, and
with :data:`batch_cache` the decoding of stored bitmaps too. The two hold
different columns, so no bytes are counted twice: :data:`segment_cache` the
files' identity columns every prune reads, :data:`batch_cache` the index
payloads, once, with what was decoded from them. Each cache is bounded in bytes
(``SKIPINDEX_CACHE_BYTES``, default 1 GiB; ``0`` turns them off).
:mod:`skipindex.reading.footers` keeps the data files' footers, as ``read()``
plans from them, in one more such cache, within a sixteenth of that budget.

Plain LRU thrashes when one prune needs more than the budget: each entry it
adds evicts one it is about to need again, so every warm prune misses on every
entry. ``put(..., protect=...)`` names the entries the caller is using; they
are never evicted to make room, and what does not fit beside them is simply not
kept. A prune too big for the budget then still hits on what fits.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Collection
from typing import Any, Generic, Protocol, TypeVar

import pyarrow as pa

__all__ = ["LIMIT", "ColumnCache", "batch_cache", "segment_cache"]


class _Sized(Protocol):
    @property
    def nbytes(self) -> int: ...


V = TypeVar("V", bound=_Sized)

DEFAULT_BYTES = 1024 * 1024 * 1024


class ColumnCache(Generic[V]):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        # Each entry with the size it was counted at: a batch grows as kinds
        # decode into it, and is counted again only when put again.
        self._entries: OrderedDict[tuple[str, ...], tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(
        self, key: tuple[str, ...], column: V, protect: Collection[tuple[str, ...]] = ()
    ) -> bool:
        """Keep ``column`` (again: its size may have grown) as the most recent
        entry, evicting the least recent ones outside ``protect``. Returns False,
        and keeps nothing under ``key``, where that cannot make room."""
        size = int(column.nbytes)
        with self._lock:
            self._forget(key)
            needed = self._bytes + size - self.max_bytes
            victims: list[tuple[str, ...]] = []
            for candidate, (_, counted) in self._entries.items():  # least recent first
                if needed <= 0:
                    break
                if candidate not in protect:
                    victims.append(candidate)
                    needed -= counted
            if needed > 0:
                return False  # evict nothing for an entry that would not fit anyway
            for candidate in victims:
                self._bytes -= self._entries.pop(candidate)[1]
            self._entries[key] = (column, size)
            self._bytes += size
            return True

    def discard(self, key: tuple[str, ...]) -> None:
        """Keep nothing under ``key`` (any more)."""
        with self._lock:
            self._forget(key)

    def _forget(self, key: tuple[str, ...]) -> None:
        """Drop ``key``'s entry and its bytes; the caller holds the lock."""
        if (old := self._entries.pop(key, None)) is not None:
            self._bytes -= old[1]

    @property
    def nbytes(self) -> int:
        """The bytes counted for what the cache holds."""
        return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


LIMIT = int(os.environ.get("SKIPINDEX_CACHE_BYTES", DEFAULT_BYTES))
segment_cache: ColumnCache[pa.ChunkedArray] = ColumnCache(LIMIT)
# Prune's FileBatch per (table, segments, index column): payloads plus decoded bitmaps.
batch_cache: ColumnCache[Any] = ColumnCache(LIMIT)
