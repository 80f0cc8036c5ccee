"""A table held between prunes: listed once, pruned many times.

``si.prune(path, where)`` lists the table on every call, so it never returns a
file deleted a moment ago and always keeps one added since. That listing grows
with the table (3 s of stat calls for a million files on a local disk) while the
rest of a selective prune does not. A :class:`Table` holds one listing, as a
Spark DataFrame over a folder holds its own: its prunes see the files as they
were when it was listed, and :meth:`Table.refresh` lists them again (Spark's
``REFRESH TABLE``). The index is read afresh by every prune, as ``prune`` reads
it: a build committed meanwhile covers the files it indexed.
"""

from __future__ import annotations

from functools import partial

from skipindex.pruning.evaluate import RowLevel
from skipindex.pruning.listed import Listed, list_table
from skipindex.pruning.options import PruneOptions
from skipindex.pruning.prune import OnDamaged, prune_listed
from skipindex.pruning.result import PruneResult
from skipindex.pruning.session import Where
from skipindex.store.iceberg import AsOf
from skipindex.store.location import CatalogSpec, StorageOptions, TablePath

__all__ = ["Table"]


class Table:
    """The table at ``path``, listed now and held for :meth:`prune`.

    For the many prunes of one table in a process (a service, a notebook, a
    planner): each answers what :func:`~skipindex.prune` answers over the files
    as listed here, without listing them again. A Delta or Iceberg table is held
    at its snapshot now (or the one ``snapshot_id``/``as_of`` name). The
    arguments are :func:`~skipindex.prune`'s.
    """

    def __init__(
        self,
        path: TablePath,
        *,
        storage_options: StorageOptions | None = None,
        catalog: CatalogSpec | None = None,
        snapshot_id: int | None = None,
        as_of: AsOf | None = None,
    ) -> None:
        self._list = partial(list_table, path, storage_options, catalog, snapshot_id, as_of)
        self._listed: Listed = self._list()

    @property
    def path(self) -> str:
        """The table as prune names its files (their common root)."""
        return self._listed.location.user_root

    def __len__(self) -> int:
        """The files held."""
        return len(self._listed.listing)

    def __repr__(self) -> str:
        return f"Table({self.path!r}, files={len(self)})"

    def refresh(self) -> Table:
        """List the table again: files added, rewritten or removed since are seen."""
        self._listed = self._list()
        return self

    def prune(
        self,
        where: Where,
        *,
        time_zone: str | None = None,
        case_sensitive: bool | None = None,
        on_damaged: OnDamaged = "raise",
        row_level: RowLevel = "auto",
        options: PruneOptions | None = None,
    ) -> PruneResult:
        """:func:`~skipindex.prune` over the files held: the same answer as
        ``prune`` gives on a table that has not changed since it was listed."""
        return prune_listed(
            self._listed,
            where,
            time_zone=time_zone,
            case_sensitive=case_sensitive,
            on_damaged=on_damaged,
            row_level=row_level,
            options=options,
        )
