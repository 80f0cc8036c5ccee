"""Which files of a table Spark would read, listed as columns.

Every data file is stat'ed: its size and mtime are what tell a file the index
covers from one rewritten since, so no listing may skip them. At a million files
those stat calls are most of a prune, so the listing adds as little as it can
around them: names are sorted out (hidden, other formats) as one pyarrow array
before any stat, a local folder is stat'ed relative to its open descriptor, and
paths, sizes and mtimes land in arrays. Nothing is sorted until a caller asks
for files in order, and then only the files it asks for.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from stat import S_ISDIR, S_ISREG
from typing import Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from skipindex.errors import UnsupportedTableError

__all__ = ["DataFile", "Listing", "SortedFiles", "is_hidden", "list_folder_tree"]

# Extensions that name other formats; Parquet files may have any other name (Hive
# writes "000000_0"), so only these are left out.
_NOT_PARQUET = r"\.(csv|tsv|txt|json|jsonl|ndjson|orc|avro|xml|md|log|crc|zip|gz|bz2|xz|tmp)$"
_COPYING = "._COPYING_"


@dataclass(frozen=True)
class DataFile:
    """A data file as listed: path relative to the table root, size, mtime (ms)."""

    path: str
    size: int
    mtime_ms: int


@dataclass(frozen=True, eq=False)
class Listing:
    """The data files of a table in listing order (not sorted): paths relative to
    the table root, sizes in bytes and mtimes in ms; and the files left out because
    their extension names another format (``notes.txt``: Spark would fail on them).
    ``partition_values`` holds each file's partition values where the table's own
    metadata states them (a Delta log: one typed column per partition column, a
    row per file); None for a folder, whose values Spark infers from its names.
    ``deleted``: the rows a table format deleted from files it did not rewrite
    (Delta deletion vectors, Iceberg position deletes), sorted positions by path.
    ``id_schema``: where files are read by field id (a Delta table with column
    mapping), the table's schema with the ids."""

    paths: pa.StringArray
    sizes: np.ndarray
    mtimes_ms: np.ndarray
    not_parquet: list[str] = field(default_factory=list)
    partition_values: pa.Table | None = None
    deleted: Mapping[str, np.ndarray] = field(default_factory=dict)
    id_schema: pa.Schema | None = None

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def nbytes(self) -> int:
        """About what holding the listing costs (what a cache counts)."""
        deleted = sum(int(rows.nbytes) for rows in self.deleted.values())
        values = 0 if self.partition_values is None else int(self.partition_values.nbytes)
        return int(self.paths.nbytes + self.sizes.nbytes + self.mtimes_ms.nbytes) + deleted + values

    @classmethod
    def of(
        cls,
        files: Iterable[DataFile],
        not_parquet: Iterable[str] = (),
        partition_values: pa.Table | None = None,
        deleted: Mapping[str, np.ndarray] | None = None,
        id_schema: pa.Schema | None = None,
    ) -> Listing:
        files = list(files)
        return cls(
            pa.array([f.path for f in files], pa.string()),
            np.array([f.size for f in files], dtype=np.int64),
            np.array([f.mtime_ms for f in files], dtype=np.int64),
            sorted(not_parquet),
            partition_values,
            dict(deleted or {}),
            id_schema,
        )

    def in_order(self, positions: np.ndarray | None = None) -> np.ndarray:
        """``positions`` (default: every file) sorted by path."""
        if positions is None:
            order: np.ndarray = np.asarray(pc.sort_indices(self.paths), dtype=np.int64)
            return order
        chosen = self.paths.take(pa.array(positions, pa.int64()))
        sorted_positions: np.ndarray = np.asarray(positions, dtype=np.int64)[
            np.asarray(pc.sort_indices(chosen))
        ]
        return sorted_positions

    def path_list(self, positions: np.ndarray) -> list[str]:
        """The paths at ``positions``, in that order."""
        return self.paths.take(pa.array(positions, pa.int64())).to_pylist()  # type: ignore[no-any-return]

    def files(self) -> list[DataFile]:
        """Every file, sorted by path."""
        order = self.in_order()
        sizes, mtimes = self.sizes[order].tolist(), self.mtimes_ms[order].tolist()
        return [DataFile(*f) for f in zip(self.path_list(order), sizes, mtimes, strict=True)]

    def sorted_files(self) -> SortedFiles:
        """Every file, sorted by path, as a sequence that makes each a DataFile
        only when asked for."""
        return SortedFiles(self, self.in_order())

    def without(self, paths: Collection[str]) -> Listing:
        """This listing less the files at ``paths``."""
        gone = pc.is_in(self.paths, value_set=pa.array(list(paths), pa.string()))
        keep = ~np.asarray(gone.to_numpy(zero_copy_only=False), dtype=bool)
        values = self.partition_values
        return Listing(
            self.paths.filter(pa.array(keep)),
            self.sizes[keep],
            self.mtimes_ms[keep],
            self.not_parquet,
            None if values is None else values.filter(pa.array(keep)),
            {p: rows for p, rows in self.deleted.items() if p not in set(paths)},
            self.id_schema,
        )


class SortedFiles(Sequence[DataFile]):
    """A listing's files in ``order``, each a :class:`DataFile` only when asked
    for: a build that indexes 10,000 new files of a million needs the million as
    arrays to compare with its index, and objects for the new ones alone (a
    million objects cost seconds)."""

    def __init__(self, listing: Listing, order: np.ndarray) -> None:
        self.paths: pa.StringArray = listing.paths.take(pa.array(order, pa.int64()))
        self.sizes: np.ndarray = listing.sizes[order]
        self.mtimes_ms: np.ndarray = listing.mtimes_ms[order]

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, at: int) -> DataFile: ...

    @overload
    def __getitem__(self, at: slice) -> list[DataFile]: ...

    def __getitem__(self, at: int | slice) -> DataFile | list[DataFile]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        if not -len(self) <= at < len(self):
            raise IndexError(at)
        return DataFile(self.paths[at].as_py(), int(self.sizes[at]), int(self.mtimes_ms[at]))

    def __iter__(self) -> Iterator[DataFile]:
        sizes, mtimes = self.sizes.tolist(), self.mtimes_ms.tolist()
        for path, size, mtime in zip(self.paths.to_pylist(), sizes, mtimes, strict=True):
            yield DataFile(path, size, mtime)


def is_hidden(name: str) -> bool:
    """Spark's rule for data files (``PartitioningAwareFileIndex.isDataPath`` after
    ``shouldFilterOutPathName``): Parquet's ``_metadata`` and ``_common_metadata``
    summary files are listed by Spark but never read as data, so they are hidden."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith(_COPYING)
    )


def _hidden(names: pa.Array) -> np.ndarray:
    """:func:`is_hidden` of every name at once (a test holds the two to one rule)."""
    underscore = pc.and_(pc.starts_with(names, "_"), pc.invert(pc.match_substring(names, "=")))
    dotted = pc.or_(pc.starts_with(names, "."), pc.ends_with(names, _COPYING))
    return np.asarray(pc.or_(underscore, dotted).to_numpy(zero_copy_only=False), dtype=bool)


def _other_format(names: pa.Array) -> np.ndarray:
    """Which ``names`` end in an extension of another format."""
    other = pc.match_substring_regex(names, _NOT_PARQUET, ignore_case=True)
    return np.asarray(other.to_numpy(zero_copy_only=False), dtype=bool)


def list_folder_tree(fs: Any, root: str) -> Listing:
    """The data files under ``root`` in ``fs``, never descending into hidden
    folders (``_x``, ``.x``, but not ``key=value``)."""
    if isinstance(fs, pafs.LocalFileSystem):
        return _list_local(root)
    return _list_store(fs, root)


def _list_local(root: str) -> Listing:
    """:func:`list_folder_tree` on a local disk: ``os.listdir`` for names, then one
    ``stat`` per visible name relative to its folder, which also tells files from
    folders (no DirEntry or FileInfo per file: at 100,000 files those were half of
    a warm prune)."""
    parts: list[tuple[pa.Array, np.ndarray, np.ndarray]] = []
    not_parquet: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        folder = f"{root}/{relative}"
        try:
            listed = os.listdir(folder)
        except FileNotFoundError:  # removed while listing: as if never there
            continue
        everything = _names(folder, listed)
        names = everything.filter(pa.array(~_hidden(everything)))
        kinds, sizes, mtimes = _stat_all(folder, names.to_pylist())
        folders = names.filter(pa.array(kinds == _FOLDER)).to_pylist()
        pending.extend(f"{relative}{name}/" for name in folders)
        files = kinds == _FILE
        other = _other_format(names) & files
        not_parquet.extend(relative + name for name in names.filter(pa.array(other)).to_pylist())
        data = files & ~other
        paths = names.filter(pa.array(data))
        if relative:
            paths = pc.binary_join_element_wise(relative, paths, "")
        parts.append((paths, sizes[data], mtimes[data]))
    return Listing(
        pa.concat_arrays([p for p, _, _ in parts]) if parts else pa.array([], pa.string()),
        np.concatenate([s for _, s, _ in parts]) if parts else np.zeros(0, np.int64),
        np.concatenate([m for _, _, m in parts]) // 1_000_000 if parts else np.zeros(0, np.int64),
        sorted(not_parquet),
    )


_FILE, _FOLDER, _OTHER = 1, 2, 0


def _names(folder: str, listed: list[str]) -> pa.Array:
    """``listed`` as an Arrow array; a name that is not UTF-8 (which Python hands
    back with surrogate escapes) cannot be indexed or matched, so it is refused."""
    try:
        return pa.array(listed, pa.string())
    except UnicodeEncodeError:
        bad = next(name for name in listed if _not_utf8(name))
        raise UnsupportedTableError(
            f"{folder}: file name {bad!r} is not UTF-8; rename it to index this table"
        ) from None


def _not_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _stat_all(folder: str, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What each of ``names`` in ``folder`` is (_FILE, _FOLDER, _OTHER: gone, a
    socket...), its size and its mtime in ns."""
    kinds = np.zeros(len(names), dtype=np.int8)
    sizes = np.zeros(len(names), dtype=np.int64)
    mtimes_ns = np.zeros(len(names), dtype=np.int64)
    if not names:
        return kinds, sizes, mtimes_ns
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except FileNotFoundError:
        return kinds, sizes, mtimes_ns
    stat, is_file, is_folder = os.stat, S_ISREG, S_ISDIR
    try:
        for at, name in enumerate(names):
            try:
                status = stat(name, dir_fd=descriptor)
            except FileNotFoundError:  # deleted since the names were read
                continue
            if is_file(status.st_mode):
                kinds[at] = _FILE
                sizes[at] = status.st_size
                mtimes_ns[at] = status.st_mtime_ns
            elif is_folder(status.st_mode):
                kinds[at] = _FOLDER
    finally:
        os.close(descriptor)
    return kinds, sizes, mtimes_ns


def _list_store(fs: Any, root: str) -> Listing:
    """:func:`list_folder_tree` through ``pyarrow.fs`` (object stores, HDFS)."""
    files: list[Any] = []
    pending = [root]
    while pending:
        for entry in fs.get_file_info(pafs.FileSelector(pending.pop())):
            if entry.type == pafs.FileType.Directory:
                if not is_hidden(entry.base_name):
                    pending.append(entry.path)
            elif entry.type == pafs.FileType.File:
                files.append(entry)
    names = pa.array([entry.base_name for entry in files], pa.string())
    visible = ~_hidden(names)
    other = visible & _other_format(names)
    data = visible & ~other
    skip = len(root) + 1
    kept = [files[i] for i in np.flatnonzero(data).tolist()]
    return Listing(
        pa.array([entry.path[skip:] for entry in kept], pa.string()),
        np.array([entry.size for entry in kept], dtype=np.int64),
        np.array([entry.mtime_ns // 1_000_000 for entry in kept], dtype=np.int64),
        sorted(files[i].path[skip:] for i in np.flatnonzero(other).tolist()),
    )
