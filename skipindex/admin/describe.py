"""``describe(path)``: definitions, coverage, staleness and size of a table's index."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from skipindex._types import spark_type_name
from skipindex.column_paths import field_at
from skipindex.expressions.indexed import zone_of
from skipindex.expressions.timezones import default_time_zone, zone_named
from skipindex.store.cluster_plan import PENDING, load_plans
from skipindex.store.damage import repairable
from skipindex.store.iceberg import iceberg_files
from skipindex.store.location import (
    CatalogSpec,
    Listing,
    StorageOptions,
    TableLocation,
    TablePath,
    locate,
)
from skipindex.store.manifest import IndexDef, load_latest, manifest_versions
from skipindex.store.partitions import table_partitions
from skipindex.store.segments import read_segments

__all__ = ["Description", "describe"]


@dataclass(frozen=True)
class Description:
    """What :func:`describe` reports. ``to_dict()`` is JSON-ready."""

    path: str
    version: int | None
    versions_on_disk: int
    indexes: list[dict[str, Any]] = field(default_factory=list)
    files_listed: int = 0
    files_indexed: int = 0  # listed and covered with the same size and mtime
    files_stale: int = 0  # listed, in the index, but changed since
    files_unindexed: int = 0  # listed, not in the index (new)
    files_gone: int = 0  # in the index, no longer listed
    files_unreadable: int = 0  # in the index with an error (always kept)
    files_not_parquet: list[str] = field(default_factory=list)  # left out by their extension
    segments: int = 0
    index_bytes: int = 0
    clusters: list[dict[str, Any]] = field(default_factory=list)  # cluster plans, oldest first
    # Where the files come from: a folder, a Delta snapshot, an Iceberg snapshot.
    source: dict[str, Any] = field(default_factory=lambda: {"format": "parquet"})
    # name, Spark type (None: untyped, see why) and where the values come from
    partition_columns: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        lines = [*self._source_lines(), self._index_lines(), *self._partition_lines()]
        return "\n".join([*lines, *self._cluster_lines()])

    def _partition_lines(self) -> list[str]:
        if not self.partition_columns:
            return []
        shown = ", ".join(
            f"{p['name']} {p['type'] or 'untyped (' + p['why'] + ')'}"
            for p in self.partition_columns
        )
        return [f"partition columns ({self.partition_columns[0]['from']}): {shown}"]

    def _source_lines(self) -> list[str]:
        deleted = self.source.get("deleted_rows", 0)
        applied = (
            f"{deleted:,} rows of {self.source['files_with_deletes']} files deleted without "
            "rewriting them (prune keeps live matches only; read() leaves them out)"
            if deleted
            else ""
        )
        if self.source.get("format") == "delta":
            return [f"Delta table: {applied}"] if applied else []
        if self.source.get("format") != "iceberg":
            return []
        equality = self.source.get("equality_deletes", 0)
        refused = f"; {equality} equality delete files: read() refuses it" if equality else ""
        return [
            f"Iceberg table {self.source['table']}, snapshot {self.source['snapshot_id']}; "
            "its own partition values and column metrics prune too (explain() says how much "
            "the index adds)",
            *([f"  {applied}{refused}"] if applied or refused else []),
        ]

    def _cluster_lines(self) -> list[str]:
        pending = [c for c in self.clusters if c["state"] in PENDING]
        if pending:  # what a crash left: the next cluster finishes or rolls it back
            return ["cluster plans not finished:", *(f"  {c['summary']}" for c in pending)]
        return [f"last cluster: {self.clusters[-1]['summary']}"] if self.clusters else []

    def _index_lines(self) -> str:
        if self.version is None:
            return f"{self.path}: no skipindex index ({self.files_listed} data files)"
        lines = [
            f"{self.path}: index version {self.version} ({self.versions_on_disk} on disk), "
            f"{self.segments} segments, {self.index_bytes / 1e6:.2f} MB",
            f"files: {self.files_listed} listed, {self.files_indexed} indexed, "
            f"{self.files_stale} stale, {self.files_unindexed} not indexed, "
            f"{self.files_gone} gone, {self.files_unreadable} unreadable",
            "indexes:",
        ]
        if self.files_not_parquet:
            shown = ", ".join(self.files_not_parquet[:3])
            more = ", ..." if len(self.files_not_parquet) > 3 else ""
            lines.insert(2, f"not Parquet, left out: {shown}{more}")
        for d in self.indexes:
            params = ", ".join(f"{k}={v}" for k, v in d["params"].items())
            subject = d["column"]
            if d.get("expression") is not None:
                zone = (
                    f"computed in time zone {d['time_zone']}, which its values depend on"
                    if d.get("zone_dependent")
                    else "independent of the time zone"
                )
                subject = f"expr {d['expression']} [key {d['column']}; {zone}]"
            lines.append(
                f"  {d['kind']:<17} {subject} ({d['spark_type']}) {params} "
                f"{d['bytes'] / 1e6:.3f} MB"
            )
        return "\n".join(lines)


def describe(
    path: TablePath,
    *,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> Description:
    """Definitions, coverage (indexed, stale, new, gone, unreadable files) and size."""
    location = locate(path, storage_options, catalog=catalog)
    with repairable(location.user_root):
        return _describe(location)


def _describe(location: TableLocation) -> Description:
    clusters = [
        {"plan_id": p.plan_id, "state": p.state, "summary": p.summary()}
        for p in load_plans(location)
    ]
    table = location.list_table()
    return replace(
        _describe_index(location, table),
        clusters=clusters,
        source=_source(location, table),
        partition_columns=[] if location.iceberg is not None else _partitions(table),
    )


def _partitions(listing: Listing) -> list[dict[str, Any]]:
    """The partition columns as prune types them: a Delta log's, or Spark's
    inference over the folder names (in the zone a new session has)."""
    zone = zone_named(default_time_zone())
    origin = "the Delta log" if listing.partition_values is not None else "folder names"
    return [
        {
            "name": p.name,
            "type": None if p.type is None else spark_type_name(p.type),
            "why": p.why,
            "from": origin,
        }
        for p in table_partitions(listing, time_zone=zone)
    ]


def _source(location: TableLocation, listing: Listing) -> dict[str, Any]:
    deletes = {
        "files_with_deletes": len(listing.deleted),
        "deleted_rows": int(sum(len(rows) for rows in listing.deleted.values())),
    }
    if location.iceberg is not None:
        found = iceberg_files(location.iceberg, location.user_root)
        return {
            "format": "iceberg",
            "table": location.iceberg.name,
            "snapshot_id": location.iceberg.snapshot_id,
            "metadata": location.iceberg.metadata_location,
            "delete_files": found.delete_files,
            "equality_deletes": found.equality_deletes,
            **deletes,
        }
    return {"format": "delta", **deletes} if location.is_delta else {"format": "parquet"}


def _describe_index(location: TableLocation, table: Listing) -> Description:
    listing, not_parquet = table.files(), table.not_parquet
    manifest = load_latest(location)
    if manifest is None:
        return Description(
            path=location.user_root,
            version=None,
            versions_on_disk=0,
            files_listed=len(listing),
            files_unindexed=len(listing),
            files_not_parquet=not_parquet,
        )
    segments = read_segments(location, manifest)
    identity = {
        p: (s, m)
        for p, s, m in zip(
            segments.column("path").to_pylist(),
            segments.column("size").to_pylist(),
            segments.column("mtime_ms").to_pylist(),
            strict=True,
        )
    }
    listed = {f.path: (f.size, f.mtime_ms) for f in listing}
    state = Counter(
        "unindexed" if p not in identity else "indexed" if identity[p] == key else "stale"
        for p, key in listed.items()
    )
    field_bytes = _field_bytes(location, manifest)
    errors = np.asarray(segments.column("error").is_valid().to_numpy(zero_copy_only=False))
    return Description(
        path=location.user_root,
        version=manifest.version,
        versions_on_disk=len(manifest_versions(location)),
        indexes=[_index(d, manifest.arrow_schema, field_bytes) for d in manifest.indexes],
        files_listed=len(listing),
        files_indexed=state["indexed"],
        files_stale=state["stale"],
        files_unindexed=state["unindexed"],
        files_gone=len(set(identity) - set(listed)),
        files_unreadable=int(errors.sum()),
        files_not_parquet=not_parquet,
        segments=len(manifest.segments),
        index_bytes=sum(s.bytes for s in manifest.segments),
    )


def _index(definition: IndexDef, schema: pa.Schema, field_bytes: dict[str, int]) -> dict[str, Any]:
    """One definition as describe reports it: an expression index's with its
    expression as written, key, Spark type and time zone."""
    found = field_at(schema, definition.column)
    out = {
        **asdict(definition),
        "spark_type": spark_type_name(found.type),
        "bytes": field_bytes.get(definition.field, 0),
    }
    if definition.expression is None:
        for name in ("expression", "time_zone"):
            out.pop(name, None)
    else:
        out["zone_dependent"] = zone_of(found)[1]
    return out


def _field_bytes(location: Any, manifest: Any) -> dict[str, int]:
    """Compressed bytes per segment column, from the segments' Parquet footers."""
    sizes: Counter[str] = Counter()
    for ref in manifest.segments:
        metadata = pq.read_metadata(f"{location.index_dir}/{ref.path}", filesystem=location.fs)
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                sizes[chunk.path_in_schema.split(".")[0]] += chunk.total_compressed_size
    return dict(sizes)
