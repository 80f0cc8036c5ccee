"""Read access to one bitmap index's payloads across all files of a batch.

A :class:`PayloadColumns` is made once per :class:`~skipindex.indexes.base.FileBatch`
and lives as long as the batch does, which prune keeps across calls (segments
never change under a name). So a stored bitmap is decoded once per process, not
once per prune, as long as the cache's budget lasts (then on use): list<binary>
fields are read straight from the Arrow buffers by offset, and decoded bitmaps
are kept as ``FrozenBitMap`` so no caller can change a shared one in place.
"""

from __future__ import annotations

import threading
import weakref
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap, BitMap, FrozenBitMap

from skipindex.indexes._dense import DenseColumns
from skipindex.indexes._roaring import from_bytes

__all__ = ["FileView", "ListColumn", "PayloadColumns"]

EMPTY = FrozenBitMap()
# What a decoded bitmap costs beyond its bytes (the Python object, the Roaring
# container header): dominant for tiny files.
OBJECT_BYTES = 256


def decode(data: Any) -> FrozenBitMap:
    """A stored bitmap (bytes or a memoryview of them), as an immutable bitmap."""
    return from_bytes(data, FrozenBitMap)


class ListColumn:
    """A list field of the payload struct: per file the start and end of its items
    in one flat child array (``valid`` False: the list is null)."""

    def __init__(self, lists: pa.ListArray) -> None:
        offsets = np.asarray(lists.offsets.to_numpy(), dtype=np.int64)
        self.starts = offsets[:-1]
        self.ends = offsets[1:]
        self.valid = np.asarray(lists.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        self.flat: pa.Array = lists.values
        self.lengths = np.where(self.valid, self.ends - self.starts, 0)

    def items(self, file: int) -> pa.Array | None:
        if not self.valid[file]:
            return None
        start = int(self.starts[file])
        return self.flat.slice(start, int(self.ends[file]) - start)


class PayloadColumns:
    """One index's payloads over a batch of files; see the module docstring."""

    def __init__(self, payloads: pa.StructArray, num_rows: np.ndarray, budget: int) -> None:
        self.num_rows = num_rows
        self._budget = budget  # bytes of decoded bitmaps to keep; then decode on use
        self.nbytes = 0  # what the kept bitmaps cost, for the cache's accounting
        self.known = np.asarray(payloads.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        self._fields = dict(zip((f.name for f in payloads.type), payloads.flatten(), strict=True))
        self._lists: dict[str, ListColumn] = {}
        self._scalars: dict[str, list[Any]] = {}
        self._binary: dict[str, tuple[np.ndarray, memoryview]] = {}
        self._decoded: dict[str, dict[int, FrozenBitMap]] = {}  # field -> item -> bitmap
        self._nonnull: dict[int, FrozenBitMap] = {}
        self._lock = threading.Lock()  # prunes in several threads share one instance
        self.memo: dict[str, Any] = {}  # what a kind derives from the payloads, once

    def lists(self, name: str) -> ListColumn:
        column = self._lists.get(name)
        if column is None:
            column = self._lists.setdefault(name, ListColumn(self._fields[name]))
        return column

    def field(self, name: str) -> pa.Array:
        """A field of the payload struct, one item per file."""
        return self._fields[name]

    def scalars(self, name: str) -> list[Any]:
        """A scalar field as Python values, one per file (converted once)."""
        values = self._scalars.get(name)
        if values is None:
            values = self._scalars.setdefault(name, self._fields[name].to_pylist())
        return values

    def bitmap(self, name: str, file: int, j: int) -> AbstractBitMap:
        """Item ``j`` of file ``file``'s list<binary> field ``name``."""
        return self.bitmaps(name, file, j, j + 1)[0]

    def bitmaps(self, name: str, file: int, a: int, b: int) -> list[AbstractBitMap]:
        """Items ``a..b-1`` of file ``file``'s list<binary> field ``name``."""
        base = int(self.lists(name).starts[file])
        decoded = self._decoded.setdefault(name, {})
        out: list[AbstractBitMap] = []
        for item in range(base + a, base + b):
            found = decoded.get(item)
            out.append(found if found is not None else self._decode(name, item, decoded))
        return out

    def _decode(self, name: str, item: int, into: dict[int, FrozenBitMap]) -> FrozenBitMap:
        offsets, data = self._binary_of(name)
        found = decode(data[offsets[item] : offsets[item + 1]])
        self._keep(into, item, found, int(offsets[item + 1] - offsets[item]))
        return found

    def nulls(self, file: int) -> FrozenBitMap:
        """The null rows of a file (its ``nulls`` field)."""
        decoded = self._decoded.setdefault("\0nulls", {})  # not a list field's name
        found = decoded.get(file)
        if found is None:
            offsets, data = self._binary_of("nulls", flat=False)
            is_set = self.has_nulls[file]
            found = decode(data[offsets[file] : offsets[file + 1]]) if is_set else EMPTY
            self._keep(decoded, file, found, int(offsets[file + 1] - offsets[file]))
        return found

    @cached_property
    def has_nulls(self) -> np.ndarray:
        """Per file: does it have null rows (a stored ``nulls`` bitmap)?"""
        return np.asarray(self._fields["nulls"].is_valid().to_numpy(zero_copy_only=False))

    def nonnull(self, file: int) -> FrozenBitMap:
        found = self._nonnull.get(file)
        if found is None:
            every = BitMap()
            every.add_range(0, int(self.num_rows[file]))
            found = FrozenBitMap(every - self.nulls(file))
            self._keep(self._nonnull, file, found, int(self.num_rows[file]) // 8 + 16)
        return found

    def _keep(
        self, into: dict[int, FrozenBitMap], key: int, bitmap: FrozenBitMap, size: int
    ) -> None:
        if self.reserve(size + OBJECT_BYTES):
            into[key] = bitmap

    def reserve(self, cost: int) -> bool:
        """Count ``cost`` bytes as kept if the budget allows them."""
        if self.nbytes + cost > self._budget:
            return False
        self.nbytes += cost
        return True

    @cached_property
    def dense(self) -> DenseColumns:
        """The stored bitmaps as words, for the row-level pass across files."""
        # The words are kept here, so they call back through a weak reference: a
        # strong one made a cycle that held each batch's payloads until Python's
        # cycle collector ran (gigabytes, mid-prune, over a million files).
        owner = weakref.ref(self)

        def alive() -> PayloadColumns:
            found = owner()
            if found is None:  # the words outlived the batch they were decoded from
                raise ReferenceError("payload columns released while their words are in use")
            return found

        def nulls() -> tuple[np.ndarray, memoryview, np.ndarray] | None:
            columns = alive()
            if not columns.has_nulls.any():
                return None
            return (*columns._binary_of("nulls", flat=False), columns.has_nulls)

        def reserve(cost: int) -> bool:
            return alive().reserve(cost)

        def items(name: str) -> tuple[np.ndarray, memoryview]:
            return alive()._binary_of(name)

        return DenseColumns(self.num_rows, reserve, items, nulls)

    def _binary_of(self, name: str, flat: bool = True) -> tuple[np.ndarray, memoryview]:
        """Offsets and data of a binary array: a list field's items, or a field."""
        found = self._binary.get(name)
        if found is None:
            with self._lock:
                array = self.lists(name).flat if flat else self._fields[name]
                raw = array.buffers()[1]
                every = np.frombuffer(raw, dtype=np.int32) if raw is not None else np.zeros(1)
                offsets = every[array.offset : array.offset + len(array) + 1].astype(np.int64)
                buffer = array.buffers()[2]
                data = memoryview(buffer if buffer is not None else b"").cast("B")
                found = self._binary.setdefault(name, (offsets, data))
        return found


class FileView:
    """One file of a :class:`PayloadColumns`: what the kinds' per-file code reads."""

    def __init__(self, columns: PayloadColumns, index: int) -> None:
        self.columns = columns
        self.index = index
        self.n = int(columns.num_rows[index])

    def scalar(self, name: str) -> Any:
        return self.columns.scalars(name)[self.index]

    def values(self, name: str) -> pa.Array | None:
        """A list field's items (None when the list is null)."""
        return self.columns.lists(name).items(self.index)

    def bitmap(self, name: str, j: int) -> AbstractBitMap:
        return self.columns.bitmap(name, self.index, j)

    def bitmaps(self, name: str, a: int, b: int) -> list[AbstractBitMap]:
        return self.columns.bitmaps(name, self.index, a, b)

    @property
    def nulls(self) -> FrozenBitMap:
        return self.columns.nulls(self.index)

    @property
    def nonnull(self) -> FrozenBitMap:
        return self.columns.nonnull(self.index)
