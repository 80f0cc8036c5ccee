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
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

__all__ = ["DataFile", "Listing", "is_hidden", "list_folder_tree"]

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
    their extension names another format (``notes.txt``: Spark would fail on them)."""

    paths: pa.StringArray
    sizes: np.ndarray
    mtimes_ms: np.ndarray
    not_parquet: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.paths)

    @classmethod
    def of(cls, files: Iterable[DataFile], not_parquet: Iterable[str] = ()) -> Listing:
        files = list(files)
        return cls(
            pa.array([f.path for f in files], pa.string()),
            np.array([f.size for f in files], dtype=np.int64),
            np.array([f.mtime_ms for f in files], dtype=np.int64),
            sorted(not_parquet),
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

    def without(self, paths: Collection[str]) -> Listing:
        """This listing less the files at ``paths``."""
        gone = pc.is_in(self.paths, value_set=pa.array(list(paths), pa.string()))
        keep = ~np.asarray(gone.to_numpy(zero_copy_only=False), dtype=bool)
        return Listing(
            self.paths.filter(pa.array(keep)),
            self.sizes[keep],
            self.mtimes_ms[keep],
            self.not_parquet,
        )


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


def _sorted_out(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Masks over file ``names``: data files, and files of another format."""
    array = pa.array(names, pa.string())
    visible = ~_hidden(array)
    other = pc.match_substring_regex(array, _NOT_PARQUET, ignore_case=True)
    other_format = visible & np.asarray(other.to_numpy(zero_copy_only=False), dtype=bool)
    return visible & ~other_format, other_format


def list_folder_tree(fs: Any, root: str) -> Listing:
    """The data files under ``root`` in ``fs``, never descending into hidden
    folders (``_x``, ``.x``, but not ``key=value``)."""
    if isinstance(fs, pafs.LocalFileSystem):
        return _list_local(root)
    return _list_store(fs, root)


def _list_local(root: str) -> Listing:
    """:func:`list_folder_tree` on a local disk: ``os.scandir`` for names, then one
    ``stat`` per data file relative to its folder (no FileInfo or DirEntry kept
    per file: at 100,000 files those were half of a warm prune)."""
    folders = _scan_folders(root)
    data, other = _sorted_out([name for _, names in folders for name in names])
    paths: list[str] = []
    sizes = np.empty(int(data.sum()), dtype=np.int64)
    mtimes = np.empty(len(sizes), dtype=np.int64)
    not_parquet: list[str] = []
    start = 0
    for relative, names in folders:
        end = start + len(names)
        wanted = [names[i] for i in np.flatnonzero(data[start:end]).tolist()]
        not_parquet.extend(relative + names[i] for i in np.flatnonzero(other[start:end]).tolist())
        _stat_into(f"{root}/{relative}", wanted, sizes[len(paths) :], mtimes[len(paths) :])
        paths.extend([relative + name for name in wanted] if relative else wanted)
        start = end
    listing = Listing(pa.array(paths, pa.string()), sizes, mtimes // 1_000_000, sorted(not_parquet))
    present = sizes >= 0
    if present.all():
        return listing
    # Deleted between the scan and the stat: as if never there.
    return Listing(
        listing.paths.filter(pa.array(present)),
        sizes[present],
        listing.mtimes_ms[present],
        listing.not_parquet,
    )


def _scan_folders(root: str) -> list[tuple[str, list[str]]]:
    """(folder relative to ``root`` with a trailing slash, its file names) for
    ``root`` and every folder under it that is not hidden."""
    folders: list[tuple[str, list[str]]] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        names: list[str] = []
        try:
            with os.scandir(f"{root}/{relative}") as scan:
                for entry in scan:
                    if entry.is_dir():
                        if not is_hidden(entry.name):
                            pending.append(f"{relative}{entry.name}/")
                    elif entry.is_file():
                        names.append(entry.name)
        except FileNotFoundError:  # removed while listing: as if never there
            continue
        folders.append((relative, names))
    return folders


def _stat_into(folder: str, names: list[str], sizes: np.ndarray, mtimes_ns: np.ndarray) -> None:
    """Size and mtime of each of ``names`` in ``folder`` (size -1: gone)."""
    if not names:
        return
    stat = os.stat
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except FileNotFoundError:
        sizes[: len(names)] = -1
        return
    try:
        for at, name in enumerate(names):
            try:
                status = stat(name, dir_fd=descriptor)
            except FileNotFoundError:
                sizes[at] = -1
                continue
            sizes[at] = status.st_size
            mtimes_ns[at] = status.st_mtime_ns
    finally:
        os.close(descriptor)


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
    data, other = _sorted_out([entry.base_name for entry in files])
    skip = len(root) + 1
    kept = [files[i] for i in np.flatnonzero(data).tolist()]
    return Listing(
        pa.array([entry.path[skip:] for entry in kept], pa.string()),
        np.array([entry.size for entry in kept], dtype=np.int64),
        np.array([entry.mtime_ns // 1_000_000 for entry in kept], dtype=np.int64),
        sorted(files[i].path[skip:] for i in np.flatnonzero(other).tolist()),
    )
