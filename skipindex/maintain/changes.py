"""Noticing commits without being told: a table's latest commit, cheaply.

* Delta: the highest version in ``_delta_log/`` (one listing of the log folder);
* Iceberg: the current snapshot id, from its catalog (a table named by its
  ``metadata.json`` is one fixed state: it never changes);
* plain Parquet: a signature of the listing Spark would read (every file's
  path, size and modification time), so an added, rewritten or deleted file
  changes it.

A commit is only a hint: the refresh it queues compares the listing with the
index itself, so a missed or a spurious signature costs a poll, never a file.
"""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass

import numpy as np
import pyarrow.fs as pafs

from skipindex.maintain.policy import TablePolicy
from skipindex.store.delta import DELTA_LOG, is_delta
from skipindex.store.iceberg import open_iceberg
from skipindex.store.location import locate

__all__ = ["Commit", "latest_commit"]

_DELTA_VERSION = re.compile(r"^(\d{20})\.(json|checkpoint\.parquet|checkpoint\.\d+\.\d+\.parquet)$")


@dataclass(frozen=True)
class Commit:
    id: str  # compared for equality only
    note: str  # for people: "Delta version 12", "58 files, 1.2 MB, newest 12:03:04 UTC"


def latest_commit(table: TablePolicy) -> Commit:
    """The table's latest commit as seen now."""
    if table.is_iceberg:
        _, source = open_iceberg(table.path, table.catalog)
        snapshot = source.snapshot_id
        return Commit(f"iceberg:{snapshot}", f"Iceberg snapshot {snapshot}")
    location = locate(table.path)
    if is_delta(location.fs, location.root):
        version = _delta_version(location.fs, f"{location.root}/{DELTA_LOG}")
        return Commit(f"delta:{version}", f"Delta version {version}")
    listing = location.list_table()
    order = listing.in_order()
    digest = hashlib.blake2b(digest_size=16)
    for path in listing.path_list(order):
        digest.update(path.encode())
        digest.update(b"\0")
    digest.update(np.ascontiguousarray(listing.sizes[order]).tobytes())
    digest.update(np.ascontiguousarray(listing.mtimes_ms[order]).tobytes())
    newest = int(listing.mtimes_ms.max()) if len(listing) else 0
    when = datetime.datetime.fromtimestamp(newest / 1000, datetime.UTC).strftime("%H:%M:%S")
    note = f"{len(listing)} files, {int(listing.sizes.sum()) / 1e6:.1f} MB" + (
        f", newest {when} UTC" if len(listing) else ""
    )
    return Commit(f"listing:{digest.hexdigest()}", note)


def _delta_version(fs: pafs.FileSystem, log: str) -> int:
    versions = [
        int(found.group(1))
        for entry in fs.get_file_info(pafs.FileSelector(log))
        if (found := _DELTA_VERSION.match(entry.base_name)) is not None
    ]
    return max(versions, default=-1)
