"""An Iceberg snapshot's data files, and the rows its delete files delete.

Position deletes (merge-on-read DELETE, UPDATE and MERGE; Flink upserts) name
rows by data file and position: they are read once per delete file and handed
on per data file, as Delta's deletion vectors are (the index covers every row
of a file; prune keeps only live matches; read() leaves deleted rows out).
Which delete files apply to which data file (partition, sequence numbers) is
pyiceberg's scan planning. Equality deletes name rows by value: pyiceberg
cannot plan a scan over them, so their data files are listed from the
manifests, every row counts as live (prune only keeps more), and read()
refuses the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._distinct import distinct
from skipindex.errors import UnsupportedTableError

__all__ = ["IcebergFiles", "snapshot_files"]


@dataclass(frozen=True)
class IcebergFiles:
    """(path as the manifests spell it, size) of each data file; each one's deleted
    positions (sorted) where position deletes apply; how many delete files apply,
    and how many of those are equality deletes."""

    files: list[tuple[str, int]]
    deleted: dict[str, np.ndarray] = field(default_factory=dict)
    delete_files: int = 0
    equality_deletes: int = 0

    @property
    def nbytes(self) -> int:
        """About what it holds in memory (what a byte-bounded cache counts): each
        path and its tuple, and the deleted positions."""
        paths = sum(len(path) + _PER_FILE for path, _ in self.files)
        return paths + sum(rows.nbytes + len(path) for path, rows in self.deleted.items())


_PER_FILE = 100  # a (path, size) tuple, its str and int objects, the list's slot


def snapshot_files(table: Any, snapshot_id: int, name: str) -> IcebergFiles:
    """The data files of ``snapshot_id`` and what deletes them."""
    try:
        tasks = list(table.scan(snapshot_id=snapshot_id).plan_files())
    except ValueError as exc:  # "PyIceberg does not yet support equality deletes"
        if "equality" not in str(exc).lower():
            raise
        return _from_manifests(table, snapshot_id, name)
    files = []
    wanted: dict[str, list[str]] = {}  # delete file -> data files it may apply to
    for task in tasks:
        _parquet(task.file, name)
        files.append((task.file.file_path, int(task.file.file_size_in_bytes)))
        for delete in task.delete_files:
            wanted.setdefault(delete.file_path, []).append(task.file.file_path)
    deleted: dict[str, list[np.ndarray]] = {}
    for delete_path, data_paths in wanted.items():
        rows = _position_rows(table, delete_path)
        for data_path in set(data_paths):
            mine = pc.equal(rows.column("file_path"), data_path)
            positions = rows.column("pos").filter(mine).to_numpy()
            deleted.setdefault(data_path, []).append(np.asarray(positions, dtype=np.int64))
    merged = {p: distinct(np.concatenate(parts)) for p, parts in deleted.items()}
    return IcebergFiles(files, {p: r for p, r in merged.items() if len(r)}, len(wanted))


def _position_rows(table: Any, path: str) -> pa.Table:
    """A position delete file's (file_path, pos) rows, read through the table's IO."""
    import pyarrow.parquet as pq

    with table.io.new_input(path).open() as stream:
        return pq.read_table(stream, columns=["file_path", "pos"])


def _from_manifests(table: Any, snapshot_id: int, name: str) -> IcebergFiles:
    """Data files straight from the snapshot's manifests (no scan planning)."""
    from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntryStatus

    snapshot = table.snapshot_by_id(snapshot_id)
    files, deletes, equality = [], 0, 0
    for manifest in snapshot.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            if entry.status == ManifestEntryStatus.DELETED:
                continue
            data_file = entry.data_file
            if manifest.content == ManifestContent.DATA:
                _parquet(data_file, name)
                files.append((data_file.file_path, int(data_file.file_size_in_bytes)))
            else:
                deletes += 1
                equality += data_file.content == DataFileContent.EQUALITY_DELETES
    return IcebergFiles(files, {}, deletes, equality)


def _parquet(data_file: Any, name: str) -> None:
    if data_file.file_format.name != "PARQUET":
        raise UnsupportedTableError(
            f"Iceberg table {name} has {data_file.file_format.name} data files; "
            "skipindex indexes Parquet files only"
        )
