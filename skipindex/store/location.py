"""Where a table lives, and which of its files Spark would read.

Paths are handled as ``pyarrow.fs`` paths internally; the paths handed back to
users keep the scheme they wrote (``s3a://`` included, which pyarrow spells
``s3://``), so ``spark.read.parquet(*result.files)`` reads the same files.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from skipindex.errors import (
    IndexCorruptError,
    InvalidSpecError,
    NotATableError,
    UnsupportedTableError,
)
from skipindex.spark.partitions import partition_names
from skipindex.store.cache import batch_cache
from skipindex.store.delta import delta_files, delta_partition_names, is_delta, latest_version
from skipindex.store.iceberg import CatalogSpec, IcebergSource, is_iceberg_folder, open_iceberg
from skipindex.store.iceberg import iceberg_files as _iceberg_files
from skipindex.store.listing import DataFile, Listing, is_hidden, list_folder_tree

__all__ = [
    "CatalogSpec",
    "DataFile",
    "Listing",
    "StorageOptions",
    "TableLocation",
    "TablePath",
    "is_hidden",
    "locate",
]

# Where a table lives: a path or URI string, or a pathlib.Path.
TablePath = str | os.PathLike[str]
# Object-store settings, as deltalake and polars spell them (``AWS_ENDPOINT_URL``...)
# or as pyarrow does (``endpoint_override``...). Unset ones come from the environment.
StorageOptions = Mapping[str, str]
INDEX_DIR = "_skipindex"
# Cluster plans and the data files they move live here (see skipindex.layout): not
# part of the index, so dropping or repairing the index never deletes them.
CLUSTER_DIR = "cluster"
_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3"}


@dataclass(frozen=True)
class TableLocation:
    fs: Any  # pyarrow.fs.FileSystem (kept Any: pyarrow ships no type stubs)
    root: str  # the table root as a path inside ``fs``, without trailing slash
    user_root: str  # the table root as the user spelled it, without trailing slash
    uri: str  # a URI that ``pyarrow.fs.FileSystem.from_uri`` can reopen (for workers)
    options: tuple[tuple[str, str], ...] = ()  # resolved storage options, for workers
    iceberg: IcebergSource | None = None  # an Iceberg table's snapshot (named by catalog)

    @property
    def index_dir(self) -> str:
        return f"{self.root}/{INDEX_DIR}"

    def exists(self, fs_path: str) -> bool:
        """Whether anything (file or folder) is at ``fs_path`` in this file system."""
        return bool(self.fs.get_file_info(fs_path).type != pafs.FileType.NotFound)

    def fs_path(self, relative: str) -> str:
        return f"{self.root}/{_contained(relative)}"

    def user_path(self, relative: str) -> str:
        return f"{self.user_root}/{_contained(relative)}"

    def relative(self, user_path: str) -> str:
        """The path inside the root of a file :meth:`user_path` named (a kept file)."""
        return user_path[len(self.user_root) + 1 :]

    def user_paths(self, listing: Listing, positions: np.ndarray) -> list[str]:
        """:meth:`user_path` of the listed files at ``positions`` (a listing holds
        only paths inside the root: no check per path)."""
        prefix = f"{self.user_root}/"
        return [prefix + path for path in listing.path_list(positions)]

    @property
    def is_delta(self) -> bool:
        return is_delta(self.fs, self.root)

    def partition_names(self, files: Sequence[DataFile]) -> list[str]:
        """The table's partition columns read from paths or logs rather than from
        data columns: a Delta table's as its log names them, a folder's from the
        ``key=value`` folders of its first file in ``files`` (Spark refuses a folder
        whose files disagree). An Iceberg table has none: its files hold every column."""
        if self.iceberg is not None:
            return []
        if is_delta(self.fs, self.root):
            return delta_partition_names(self.uri, self.user_root, dict(self.options))
        return partition_names(files[0].path) if files else []

    def list_data_files(self) -> list[DataFile]:
        """Every file Spark would read, sorted by path; hidden files and folders
        (``_x``, ``.x``, but not ``key=value`` folders) are left out. For a Delta
        table: the files of its current snapshot."""
        return self.list_table().files()

    def require_folder(self) -> None:
        """Raise NotATableError unless the table's root is a folder (one call,
        where listing a million files takes seconds)."""
        info = self.fs.get_file_info(self.root)
        if info.type == pafs.FileType.NotFound:
            raise NotATableError(f"table path does not exist: {self.user_root}")
        if info.type != pafs.FileType.Directory:
            raise NotATableError(
                f"table path is not a directory: {self.user_root} "
                "(point skipindex at the folder that holds the Parquet files)"
            )

    def list_table(self) -> Listing:
        """The data files as :meth:`list_data_files` finds them, in listing order,
        and the files left out because their extension says they are not Parquet
        (``notes.txt``, ``export.csv``): Spark would fail on them."""
        self.require_folder()
        if self.iceberg is not None:
            found = _iceberg_files(self.iceberg, self.user_root)
            return Listing.of(
                (DataFile(_contained(path), size, 0) for path, size in found.files),
                deleted=found.deleted,
            )
        if is_delta(self.fs, self.root):
            return self._delta_listing()
        if is_iceberg_folder(self.fs, self.root):
            raise UnsupportedTableError(
                f"{self.user_root} is an Iceberg table (its metadata/ folder says so): read as "
                "plain Parquet it would give wrong answers (renamed columns, old snapshots' "
                "files); name it by its catalog (catalog='...') or by its metadata.json"
            )
        return list_folder_tree(self.fs, self.root)

    def _delta_listing(self) -> Listing:
        """The files of the Delta table's newest snapshot, kept per version: a
        version never changes, and reading a million files' log (and naming each
        file) costs seconds where listing the log's folder costs milliseconds."""
        version = latest_version(self.fs, self.root)
        key = ("delta-listing", self.uri, str(version))
        found = batch_cache.get(key) if version is not None else None
        if isinstance(found, Listing):
            return found
        snapshot = delta_files(self.uri, self.user_root, dict(self.options), version)
        _all_contained(snapshot.paths)
        listing = Listing(
            snapshot.paths,
            snapshot.sizes,
            snapshot.mtimes_ms,
            partition_values=snapshot.partition_values,
            deleted=snapshot.deleted,
            id_schema=snapshot.id_schema,
        )
        if version is not None:
            batch_cache.put(key, listing)
        return listing


def locate(
    path: TablePath,
    storage_options: StorageOptions | None = None,
    *,
    catalog: CatalogSpec | None = None,
    snapshot_id: int | None = None,
) -> TableLocation:
    """Resolve a table path or URI (local, file://, s3://, s3a://, gs://, abfs://, hdfs://).

    For S3, ``storage_options`` (see :data:`StorageOptions`) win over the usual
    ``AWS_*`` environment variables; what is resolved travels with the location,
    so Spark workers open the store exactly as the driver did. An Iceberg table
    is named by ``catalog`` and its identifier, or by its ``metadata.json``; its
    files are those of ``snapshot_id`` (default: the current snapshot).
    """
    if catalog is not None or os.fspath(path).endswith(".metadata.json"):
        root, source = open_iceberg(os.fspath(path), catalog, snapshot_id)
        return replace(locate(root, storage_options), iceberg=source)
    if snapshot_id is not None:
        raise InvalidSpecError(
            f"snapshot_id is for Iceberg tables; {os.fspath(path)} is named as a folder "
            "(pass catalog= or the table's metadata.json)"
        )
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
    options = dict(_s3_options(uri, storage_options or {}))
    try:
        if storage_options:
            fs, root = pafs.S3FileSystem(**options), uri.removeprefix("s3://")
        else:
            fs, root = pafs.FileSystem.from_uri(uri)  # resolves the bucket's region
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError/ValueError variously
        raise NotATableError(f"cannot open table path {path!r}: {exc}") from exc
    if isinstance(fs, pafs.S3FileSystem):
        options["region"] = fs.region  # so workers need not resolve it again
    return TableLocation(
        fs=fs,
        root=root.rstrip("/") or "/",
        user_root=user_root,
        uri=uri,
        options=tuple(sorted(options.items())),
    )


_S3_ARGUMENTS = {
    "aws_access_key_id": "access_key",
    "aws_secret_access_key": "secret_key",
    "aws_session_token": "session_token",
    "aws_region": "region",
    "aws_default_region": "region",
    "aws_endpoint_url": "endpoint_override",
    "aws_endpoint_url_s3": "endpoint_override",
    "endpoint_url": "endpoint_override",
}
_S3_ENVIRONMENT = (  # lowest precedence first
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def _s3_options(uri: str, given: StorageOptions) -> tuple[tuple[str, str], ...]:
    """pyarrow ``S3FileSystem`` arguments from the environment, then ``given``."""
    if not uri.startswith("s3://"):
        if given:
            raise InvalidSpecError(
                f"storage_options are understood for s3:// and s3a:// tables, not {uri}; "
                "configure other stores through their environment variables"
            )
        return ()
    resolved: dict[str, str] = {}
    for name in _S3_ENVIRONMENT:
        if os.environ.get(name):
            resolved[_S3_ARGUMENTS[name.lower()]] = os.environ[name]
    valid = sorted(set(_S3_ARGUMENTS) | set(_S3_ARGUMENTS.values()))
    for key, value in given.items():
        argument = _S3_ARGUMENTS.get(key.lower(), key.lower())
        if argument not in _S3_ARGUMENTS.values():
            raise InvalidSpecError(
                f"unknown storage option {key!r}; valid ones: {', '.join(valid)}"
            )
        resolved[argument] = str(value)
    return tuple(sorted(resolved.items()))


def _all_contained(paths: pa.StringArray) -> None:
    """:func:`_contained` for every path at once (a Python call per path cost a
    second at a million files): the first path that escapes is refused by it."""
    escapes = pc.equal(paths, "")
    for test in (
        pc.starts_with(paths, "/"),
        pc.ends_with(paths, "/"),
        pc.match_substring(paths, "//"),
        pc.match_substring(paths, "\\"),
    ):
        escapes = pc.or_(escapes, test)
    if pc.any(pc.match_substring(paths, "..")).as_py():  # a regex only where ".." is
        escapes = pc.or_(escapes, pc.match_substring_regex(paths, r"(^|/)\.\.(/|$)"))
    if pc.any(escapes).as_py():
        _contained(paths.filter(escapes)[0].as_py())


def _contained(relative: str) -> str:
    """Refuse paths that would escape the table root (a manifest is untrusted input)."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or ".." in parts or "" in parts or "\\" in relative:
        raise IndexCorruptError(f"refusing a path outside the table root: {relative!r}")
    return relative
