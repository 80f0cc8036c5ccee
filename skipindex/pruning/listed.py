"""A table located and listed: the files a prune evaluates against.

:func:`~skipindex.prune` lists the table on every call, so a file added or
rewritten a moment ago is seen. A :class:`~skipindex.Table` holds one listing
between prunes instead, as a Spark DataFrame holds its own: at a million files
the listing is most of a prune (3 s of stat calls on a local disk).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from skipindex.store.iceberg import AsOf, snapshot_as_of
from skipindex.store.listing import Listing
from skipindex.store.location import CatalogSpec, StorageOptions, TableLocation, TablePath, locate
from skipindex.store.swaps import settled_listing

__all__ = ["Listed", "list_table"]


@dataclass(frozen=True)
class Listed:
    """A table located and listed. ``swapping``: files an in-place cluster was
    moving when it was listed, left out of ``listing``."""

    location: TableLocation
    listing: Listing
    swapping: list[str]


def list_table(
    path: TablePath,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
    snapshot_id: int | None = None,
    as_of: AsOf | None = None,
) -> Listed:
    """The table at ``path`` and its files now (the arguments are :func:`~skipindex.prune`'s)."""
    if as_of is not None:
        snapshot_id = snapshot_as_of(os.fspath(path), catalog, as_of, snapshot_id)
    location = locate(path, storage_options, catalog=catalog, snapshot_id=snapshot_id)
    listing, swapping = settled_listing(location, location.list_table(), location.list_table)
    return Listed(location, listing, swapping)
