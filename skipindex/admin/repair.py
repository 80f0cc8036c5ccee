"""``repair(path)``: make a damaged index readable again, then re-index what was lost.

Damage is what :class:`~skipindex.errors.IndexCorruptError` reports: a manifest
that is not valid JSON or fails its schema, a segment that is missing,
truncated or fails its page checksums. Repair never guesses at content:

1. it falls back to the newest manifest version that reads (definitions and
   schema come from there);
2. it reads every segment that version names, in full, with checksums on, and
   leaves out the ones that fail: their files become "not indexed", which
   prune always keeps (so the index is correct again at once, only weaker);
3. it commits that as a new version above every damaged one and deletes the
   damaged manifests, so readers and vacuum are unblocked;
4. with ``rebuild=True`` it runs an incremental build, which re-indexes exactly
   the files that lost their entries.

When no manifest reads at all the definitions are lost: the index is removed
(data files are never touched) and the report says to build it again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from skipindex.errors import IndexCorruptError, IndexFormatVersionError
from skipindex.store import vacuum
from skipindex.store.cache import segment_cache
from skipindex.store.location import CatalogSpec, StorageOptions, TableLocation, TablePath, locate
from skipindex.store.manifest import (
    Manifest,
    commit,
    load_version,
    manifest_path,
    manifest_versions,
)
from skipindex.store.segments import BASE_FIELDS, read_segments

__all__ = ["RepairReport", "repair"]


@dataclass(frozen=True)
class RepairReport:
    """What :func:`repair` found and did. ``damaged`` lists index files, relative to
    the table root; ``files_unindexed`` is how many data files lost their entries."""

    path: str
    damaged: list[str]
    version: int | None
    files_unindexed: int
    index_removed: bool = False
    rebuilt: Any = None  # the BuildReport of the rebuild, when one ran

    def __str__(self) -> str:
        if not self.damaged:
            return f"{self.path}: the index is readable, nothing to repair"
        lines = [f"{self.path}: damaged: {', '.join(self.damaged)}"]
        if self.index_removed:
            lines.append(
                "no manifest version was readable, so the definitions are lost: the index was "
                f"removed; build it again with `skipindex build {self.path} --index ...`"
            )
        else:
            lines.append(
                f"committed version {self.version} without the damaged parts; "
                f"{self.files_unindexed} files lost their index entries (prune keeps them)"
            )
        if self.rebuilt is not None:
            lines.append(f"re-indexed: {self.rebuilt}")
        elif self.files_unindexed and not self.index_removed:
            lines.append(f"re-index them with `skipindex build {self.path}`")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "damaged": self.damaged,
            "version": self.version,
            "files_unindexed": self.files_unindexed,
            "index_removed": self.index_removed,
            "rebuilt": None if self.rebuilt is None else self.rebuilt.to_dict(),
        }


def repair(
    path: TablePath,
    *,
    rebuild: bool = True,
    spark: Any = None,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> RepairReport:
    """Make the index of ``path`` readable again; ``rebuild`` re-indexes the files
    whose entries were lost (with Spark: ``spark`` or the active/local session)."""
    location = locate(path, storage_options, catalog=catalog)
    location.list_data_files()
    damaged: list[str] = []
    base = _newest_readable(location, damaged)
    if base is None:
        if damaged:
            vacuum.delete_index(location)
        return RepairReport(location.user_root, damaged, None, 0, index_removed=bool(damaged))
    segment_cache.clear()  # check what is on disk, not what this process read earlier
    good = []
    lost = 0
    for ref in base.segments:
        try:
            read_segments(location, replace(base, segments=(ref,)), _fields(base), BASE_FIELDS)
            good.append(ref)
        except IndexCorruptError:
            damaged.append(f"_skipindex/{ref.path}")
            lost += ref.files
    if not damaged:
        return RepairReport(location.user_root, [], base.version, 0)
    build_id = vacuum.new_build_id()
    with vacuum.in_flight(location, build_id):
        repaired = commit(
            location,
            replace(
                base,
                version=manifest_versions(location)[-1] + 1,
                segments=tuple(good),
                build={"repaired": ", ".join(damaged)},
            ),
            build_id,
        )
    vacuum.delete_paths(location, [f"{location.root}/{d}" for d in damaged if d.endswith(".json")])
    vacuum.collect(location)
    report = RepairReport(location.user_root, damaged, repaired.version, lost)
    if rebuild and lost:
        from skipindex.indexing.build import build_index

        rebuilt = build_index(path, spark=spark, storage_options=storage_options)
        report = replace(report, rebuilt=rebuilt)
    return report


def _newest_readable(location: TableLocation, damaged: list[str]) -> Manifest | None:
    prefix = location.root + "/"
    for version in reversed(manifest_versions(location)):
        try:
            return load_version(location, version)
        except IndexFormatVersionError:
            raise
        except IndexCorruptError:
            damaged.append(manifest_path(location, version).removeprefix(prefix))
    return None


def _fields(manifest: Manifest) -> list[str]:
    return [d.field for d in manifest.indexes]
