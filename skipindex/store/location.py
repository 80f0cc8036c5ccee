"""Where a table lives, and which of its files Spark would read.

Paths are handled as ``pyarrow.fs`` paths internally; the paths handed back to
users keep the scheme they wrote (``s3a://`` included, which pyarrow spells
``s3://``), so ``spark.read.parquet(*result.files)`` reads the same files.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

from skipindex.errors import IndexCorruptError, NotATableError

__all__ = ["DataFile", "TableLocation", "TablePath", "is_hidden", "locate"]

# Where a table lives: a path or URI string, or a pathlib.Path.
TablePath = str | os.PathLike[str]
INDEX_DIR = "_skipindex"
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


@dataclass(frozen=True)
class DataFile:
    """A data file as listed: path relative to the table root, size, mtime (ms)."""

    path: str
    size: int
    mtime_ms: int


@dataclass(frozen=True)
class TableLocation:
    fs: Any  # pyarrow.fs.FileSystem (kept Any: pyarrow ships no type stubs)
    root: str  # the table root as a path inside ``fs``, without trailing slash
    user_root: str  # the table root as the user spelled it, without trailing slash
    uri: str  # a URI that ``pyarrow.fs.FileSystem.from_uri`` can reopen (for workers)

    @property
    def index_dir(self) -> str:
        return f"{self.root}/{INDEX_DIR}"

    def fs_path(self, relative: str) -> str:
        return f"{self.root}/{_contained(relative)}"

    def user_path(self, relative: str) -> str:
        return f"{self.user_root}/{_contained(relative)}"

    def list_data_files(self) -> list[DataFile]:
        """Every file Spark would read, sorted by path; hidden files and folders
        (``_x``, ``.x``, but not ``key=value`` folders) are left out."""
        info = self.fs.get_file_info(self.root)
        if info.type == pafs.FileType.NotFound:
            raise NotATableError(f"table path does not exist: {self.user_root}")
        if info.type != pafs.FileType.Directory:
            raise NotATableError(
                f"table path is not a directory: {self.user_root} "
                "(point skipindex at the folder that holds the Parquet files)"
            )
        found: list[DataFile] = []
        pending = [self.root]
        while pending:  # breadth-first, never descending into hidden folders
            folder = pending.pop()
            for entry in self.fs.get_file_info(pafs.FileSelector(folder)):
                if is_hidden(entry.base_name):
                    continue
                if entry.type == pafs.FileType.Directory:
                    pending.append(entry.path)
                elif entry.type == pafs.FileType.File:
                    relative = entry.path[len(self.root) + 1 :]
                    found.append(DataFile(relative, int(entry.size), entry.mtime_ns // 1_000_000))
        found.sort(key=lambda f: f.path)
        return found


def is_hidden(name: str) -> bool:
    """Spark's rule for data files (``PartitioningAwareFileIndex.isDataPath`` after
    ``shouldFilterOutPathName``): Parquet's ``_metadata`` and ``_common_metadata``
    summary files are listed by Spark but never read as data, so they are hidden."""
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


def locate(path: TablePath) -> TableLocation:
    """Resolve a table path or URI (local, file://, s3://, s3a://, gs://, abfs://, hdfs://)."""
    if not isinstance(path, str | os.PathLike):
        raise NotATableError(f"a table path is a string or a path, got {type(path).__name__}")
    path = os.fspath(path)
    if not path:
        raise NotATableError("empty table path")
    user_root = path.rstrip("/") or "/"
    scheme, sep, rest = user_root.partition("://")
    if sep:
        uri = f"{_SCHEME_ALIASES.get(scheme, scheme)}://{rest}"
    else:
        uri = posixpath.abspath(user_root)
        user_root = uri
    try:
        fs, root = pafs.FileSystem.from_uri(uri)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError/ValueError variously
        raise NotATableError(f"cannot open table path {path!r}: {exc}") from exc
    return TableLocation(fs=fs, root=root.rstrip("/") or "/", user_root=user_root, uri=uri)


def _contained(relative: str) -> str:
    """Refuse paths that would escape the table root (a manifest is untrusted input)."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or ".." in parts or "" in parts or "\\" in relative:
        raise IndexCorruptError(f"refusing a path outside the table root: {relative!r}")
    return relative
