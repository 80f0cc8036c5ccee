"""The listing a registered view holds, taken with Spark's and renewed with it.

A view of ``spark.read.parquet(folder)`` holds the folder's listing in its file
index until ``REFRESH TABLE name`` (or ``spark.catalog.refreshTable``, or
``REFRESH "path"``) lists it again, in place. si.sql prunes a reference to the
view over a listing held the same way: taken when Spark took its own (listed
before and after Spark lists; equal, so Spark saw the same files), and taken
again only when Spark's index has listed since, which the index shows by a new
map of its files (``leafDirToChildrenFiles``, replaced whenever it lists: two
calls into the JVM, and the map held here is compared with Spark's own ``equals``,
which is identity for the same map and false at the first file array of
another). So a query lists no folder, however many references and key rounds
it has, and a file added later is seen once the name is refreshed, as in Spark.

A listing taken after Spark's refresh may differ from Spark's by what changed in
between. That only keeps files: a file new to ours and not to Spark's is not
read (Spark does not list it), a file gone from ours is read by Spark as its
index says, and a file rewritten since Spark listed it is judged by ours, whose
size and mtime tell it from the indexed one (it is kept). A file rewritten in
place after both listed is judged by its indexed contents until the name is
refreshed, as :class:`~skipindex.Table` documents: Spark's view reads it with
the size it listed.

Where no index can be reached (Spark Connect: no JVM here) nothing is held and
every prune lists the table, as ``prune`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from skipindex.pruning.listed import Listed
from skipindex.store.listing import Listing

__all__ = ["HeldListing", "same_files"]


class HeldListing:
    """The files a registered view reads, and the state of Spark's index they match."""

    def __init__(
        self, index: Any, files: Any, listed: Listed, relist: Callable[[], Listed]
    ) -> None:
        self._index = index  # Spark's InMemoryFileIndex (a py4j reference)
        self._files = files  # the map of files it held when ``listed`` was taken
        self._listed = listed
        self._relist = relist

    @classmethod
    def take(cls, frame: Any, relist: Callable[[], Listed], before: Listed) -> HeldListing | None:
        """The listing of ``frame``'s folder, ``before`` (taken just before Spark
        listed the folder for ``frame``), where a listing after Spark's finds the
        same files; None where they differ (a writer meanwhile) or Spark's index
        cannot be reached."""
        index = _file_index(frame)
        files = None if index is None else _files(index)
        if files is None:
            return None
        if before.swapping or not same_files(before.listing, relist().listing):
            return None
        return cls(index, files, before, relist)

    def current(self) -> Listed | None:
        """The listing as Spark's index holds the folder now: the one held, or a
        new one where Spark listed since (None: the index cannot be asked)."""
        files = _files(self._index)
        if files is None:
            return None
        try:
            listed_since = not files.equals(self._files)
        except Exception:
            return None
        if listed_since:
            self._listed, self._files = self._relist(), files
        return self._listed


def same_files(first: Listing, second: Listing) -> bool:
    """Whether two listings name the same files with the same sizes and mtimes."""
    return (
        len(first) == len(second)
        and first.paths.equals(second.paths)
        and bool(np.array_equal(first.sizes, second.sizes))
        and bool(np.array_equal(first.mtimes_ms, second.mtimes_ms))
        and first.not_parquet == second.not_parquet
    )


def _file_index(frame: Any) -> Any:
    """The file index of a DataFrame that is one Parquet relation (None: not one)."""
    try:
        plan = frame._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() != "LogicalRelation":
            return None
        index = plan.relation().location()
        return index if index.getClass().getSimpleName() == "InMemoryFileIndex" else None
    except Exception:  # Spark Connect, or another relation: nothing to hold
        return None


def _files(index: Any) -> Any:
    """The listing ``index`` holds: its map of files, replaced whenever it lists."""
    try:
        return index.leafDirToChildrenFiles()
    except Exception:
        return None
