"""What :func:`skipindex.prune` returns: the kept files, and why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from skipindex.pruning.evaluate import LIKELY_ROWS, LeafReport
from skipindex.spark.partitions import PartitionColumn

if TYPE_CHECKING:
    from pyroaring import AbstractBitMap

__all__ = ["LazyPaths", "PruneResult"]


class LazyPaths:
    """Paths worked out the first time they are asked for. A prune that keeps a
    few files of a million skips the rest, and spelling those out costs more
    than the prune (0.6 s): only a reader that names them (reading/held.py) pays."""

    def __init__(self, make: Callable[[], list[str]] | None = None) -> None:
        self._make = make
        self._paths: list[str] | None = None if make is not None else []

    def get(self) -> list[str]:
        if self._paths is None:
            assert self._make is not None
            self._paths, self._make = self._make(), None
        return self._paths


@dataclass(frozen=True)
class PruneResult:
    """The outcome of :func:`prune`. ``files`` are full paths, ready for Spark."""

    files: list[str]
    total: int
    predicate: str
    bound: str
    covered: int = 0
    version: int | None = None
    leaves: list[LeafReport] = field(default_factory=list, repr=False)
    row_level_files: int = 0
    row_level_skipped: int = 0
    row_level_sampled: int = 0
    row_level_likely: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    spark_schema: str | None = field(default=None, repr=False)  # for read()
    time_zone: str = "UTC"
    # For read(): typed as Spark types them over every listed file; values per kept
    # file, in the order of ``files``.
    partitions: list[PartitionColumn] = field(default_factory=list, repr=False)
    # Files under the table named as another format (x.csv): not data, left out.
    not_parquet: list[str] = field(default_factory=list, repr=False)
    # Files left out because an in-place cluster was swapping them: a plain listing
    # of the folder would not be consistent now.
    swapping: list[str] = field(default_factory=list, repr=False)
    # Kept file -> the row groups that can hold a matching row, for the files where
    # row-level bitmaps rule some out; see row_groups_of().
    row_groups: dict[str, list[int]] = field(default_factory=dict, repr=False)
    # Kept file -> the rows that can match, where row-level bitmaps narrowed them.
    rows: dict[str, AbstractBitMap] = field(default_factory=dict, repr=False)
    # Files in ``rows`` -> (bytes, mtime in ms) as listed (= as indexed): row numbers
    # hold only while the file is unchanged, so a reader by rows checks this first.
    listed: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    # The top-level columns the predicate reads (as the table names them): what a
    # reader of the kept files must decode at least, whatever else it selects.
    columns: tuple[str, ...] = field(default=(), repr=False)
    # An Iceberg table: the files its own planning (partition values, column
    # metrics) keeps, before the index; None for other tables.
    iceberg_kept: int | None = None
    # Bytes of every listed file: what read() weighs the kept files' paths against.
    listed_bytes: int = 0
    # Bytes of the kept files: what a filter on each row's file would pass over.
    kept_bytes: int = 0
    # Kept file -> the rows its table format deleted without rewriting it (Delta
    # deletion vectors, Iceberg position deletes): a reader leaves them out.
    deleted: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # The listed files not kept, as skipped_files spells them when asked.
    skipped_paths: LazyPaths = field(default_factory=LazyPaths, repr=False, compare=False)

    @property
    def skipped_files(self) -> list[str]:
        """The listed files not kept (full paths, in no order): what a reader
        holding the table's listing leaves out (reading/held.py). Empty where
        nothing was evaluated."""
        return self.skipped_paths.get()

    @property
    def kept(self) -> int:
        return len(self.files)

    def __repr__(self) -> str:  # the file list can be 100,000 paths long: counts only
        return (
            f"PruneResult(kept={self.kept}, total={self.total}, version={self.version}, "
            f"predicate={self.predicate!r})"
        )

    @property
    def skipped(self) -> int:
        return self.total - self.kept

    def row_groups_of(self, file: str) -> list[int] | None:
        """The row groups of kept ``file`` (a path from ``files``) that can hold a
        matching row, or None when any of them can. For readers that open row
        groups themselves: ``pq.ParquetFile(f).read_row_groups(groups)``."""
        return self.row_groups.get(file)

    def rows_of(self, file: str) -> np.ndarray | None:
        """The rows of kept ``file`` (0-based positions in the file, ascending,
        uint32) that can hold a match, or None when any row can; every matching
        row is among them. For readers that take rows: ``table.take(rows)``."""
        rows = self.rows.get(file)
        return None if rows is None else np.asarray(rows.to_array(), dtype=np.uint32)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: files, counts, what each condition's indexes ruled out, warnings."""
        return {
            "files": self.files,
            "total": self.total,
            "kept": self.kept,
            "skipped": self.skipped,
            "covered": self.covered,
            "version": self.version,
            "predicate": self.predicate,
            "as_evaluated": self.bound,
            "time_zone": self.time_zone,
            "conditions": [
                {
                    "condition": leaf.condition,
                    "indexes": leaf.kinds,
                    "ruled_out": dict(leaf.ruled_out),
                    "note": leaf.note,
                }
                for leaf in self.leaves
            ],
            "row_groups": self.row_groups,
            "row_level": {
                "files": self.row_level_files,
                "ruled_out": self.row_level_skipped,
                "kept_from_a_sample": self.row_level_sampled,
                "kept_as_likely": self.row_level_likely,
            },
            "warnings": self.warnings,
            "iceberg_kept": self.iceberg_kept,
            "seconds": self.seconds,
            "explanation": self.explain(),
        }

    def explain(self) -> str:
        """A human-readable account of what each index ruled out."""
        lines = [
            f"predicate: {self.predicate}",
            f"as evaluated: {self.bound}",
            f"index version: {self.version if self.version is not None else 'none'}",
            f"session time zone: {self.time_zone}",
            f"files: {self.total} listed, {self.covered} covered by the index, "
            f"{self.total - self.covered} not covered (always kept)",
            f"kept {self.kept} of {self.total} files, skipped {self.skipped} "
            f"({self.seconds * 1000:.1f} ms)",
        ]
        if self.skipped:
            by_file = self.skipped - self.row_level_skipped
            lines.append(
                f"skipped {self.skipped} = {by_file} ruled out by single conditions "
                f"+ {self.row_level_skipped} only by combining row-level bitmaps "
                "(the per-condition counts below overlap: a file can be ruled out by several)"
            )
        if self.row_level_files:
            lines.append(
                f"row-level bitmaps, combined row by row across conditions, evaluated on "
                f"{self.row_level_files} files and ruled out {self.row_level_skipped}"
            )
        if self.row_level_sampled:
            lines.append(
                f"{self.row_level_sampled} files kept from a sample of their rows: sampled "
                f"rows match the whole predicate, about {LIKELY_ROWS:.0f} or more in all, so "
                "their rows were not narrowed further (row_level='always' narrows them too)"
            )
        if self.row_level_likely:
            lines.append(
                f"{self.row_level_likely} files kept without combining bitmaps: their "
                f"conditions' value ranges predict at least {LIKELY_ROWS:.0f} matching rows "
                "as if the columns were independent; unexamined, they may hold none "
                "(row_level='estimate')"
            )
        for leaf in self.leaves:
            by_kind = ", ".join(f"{k} ruled out {n} files" for k, n in leaf.ruled_out.items())
            detail = by_kind or leaf.note or f"answered by {', '.join(leaf.kinds)}: ruled out none"
            lines.append(f"  {leaf.condition}: {detail}")
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)
