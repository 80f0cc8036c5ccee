"""Versioned manifests: ``_skipindex/v<N>.json``, validated, created never overwritten.

A commit writes the whole manifest to a temporary name, then links it to
``v<N>.json`` only if that name does not exist yet (on object stores, through a
claim protocol: see :func:`_publish_claimed`). Readers take the highest N,
so they always see a complete version; a build that loses a race sees the link
fail and re-plans on top of the winner (see :func:`commit`).
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import time
import uuid
from contextlib import suppress
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import jsonschema
import pyarrow as pa
import pyarrow.fs as pafs

from skipindex.errors import ConflictError, IndexCorruptError, IndexFormatVersionError
from skipindex.spark.settings import SparkView
from skipindex.store.location import TableLocation
from skipindex.store.schemas import validator

__all__ = ["FORMAT_VERSION", "IndexDef", "Manifest", "SegmentRef", "commit", "load_latest"]

FORMAT_VERSION = 2  # the newest this skipindex reads (and writes: see Manifest.format_version)
_MANIFEST_NAME = re.compile(r"^v(\d+)\.json$")


@dataclass(frozen=True)
class IndexDef:
    """One index definition: which kind on which column, and its segment field.

    An expression index has ``expression`` (the Spark SQL text as the user wrote
    it) and ``time_zone`` (the session zone Spark computes its values in); its
    ``column`` is the expression's canonical key, the name of the field that
    records its type in the table schema."""

    id: int
    column: str
    kind: str
    params: dict[str, Any]
    arrow_type: str
    field: str
    expression: str | None = None
    time_zone: str | None = None

    def same_definition(self, column: str, kind: str, params: dict[str, Any]) -> bool:
        return (self.column, self.kind, self.params) == (column, kind, params)

    def to_json(self) -> dict[str, Any]:
        """As the manifest holds it: a column index without the expression fields,
        exactly as format version 1 wrote it."""
        return {k: v for k, v in asdict(self).items() if v is not None or k not in _OPTIONAL}

    @property
    def subject(self) -> str:
        """What the index is on, for messages: the column, or ``expr=<text>``."""
        return self.column if self.expression is None else f"expr={self.expression}"


_OPTIONAL = ("expression", "time_zone")


@dataclass(frozen=True)
class SegmentRef:
    path: str  # relative to _skipindex/
    files: int
    rows: int
    bytes: int


@dataclass(frozen=True)
class Manifest:
    version: int
    arrow_schema: pa.Schema
    indexes: tuple[IndexDef, ...]
    segments: tuple[SegmentRef, ...]
    next_index_id: int
    spark_schema: str | None = None
    spark_view: SparkView = field(default_factory=SparkView)
    partition_columns: tuple[str, ...] = ()
    created_ms: int = 0
    build: dict[str, Any] = field(default_factory=dict)

    @property
    def format_version(self) -> int:
        """1 unless an expression index needs 2 (a reader of version 1 would take
        its key for a column): older readers then refuse it instead of misreading."""
        return 2 if any(d.expression is not None for d in self.indexes) else 1

    def to_json(self) -> dict[str, Any]:
        schema_bytes = self.arrow_schema.serialize().to_pybytes()
        return {
            "format": "skipindex-manifest",
            "format_version": self.format_version,
            "version": self.version,
            "created_ms": self.created_ms,
            "table": {
                "arrow_schema": base64.b64encode(schema_bytes).decode("ascii"),
                "spark_schema": self.spark_schema,
                "spark_view": self.spark_view.to_json(),
                "partition_columns": list(self.partition_columns),
            },
            "indexes": [d.to_json() for d in self.indexes],
            "next_index_id": self.next_index_id,
            "segments": [asdict(s) for s in self.segments],
            "build": self.build,
        }

    @classmethod
    def from_json(cls, doc: Any, source: str) -> Manifest:
        version = doc.get("format_version") if isinstance(doc, dict) else None
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise IndexFormatVersionError(
                f"{source} was written by a newer skipindex (format version "
                f"{version}, this one reads up to {FORMAT_VERSION}): upgrade skipindex to read it"
            )
        try:
            validator("manifest").validate(doc)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
            raise IndexCorruptError(
                f"{source} fails the manifest schema at {where}: {exc.message}"
            ) from exc
        try:
            schema_bytes = base64.b64decode(doc["table"]["arrow_schema"], validate=True)
            arrow_schema = pa.ipc.read_schema(pa.py_buffer(schema_bytes))
        except Exception as exc:  # binascii.Error, ArrowInvalid: both mean a damaged file
            raise IndexCorruptError(f"{source} has an unreadable table schema: {exc}") from exc
        return cls(
            version=doc["version"],
            arrow_schema=arrow_schema,
            indexes=tuple(IndexDef(**d) for d in doc["indexes"]),
            segments=tuple(SegmentRef(**s) for s in doc["segments"]),
            next_index_id=doc["next_index_id"],
            spark_schema=doc["table"].get("spark_schema"),
            spark_view=SparkView.from_json(doc["table"].get("spark_view")),
            partition_columns=tuple(doc["table"]["partition_columns"]),
            created_ms=doc["created_ms"],
            build=doc.get("build", {}),
        )


def manifest_versions(location: TableLocation) -> list[int]:
    """Committed version numbers, ascending (empty when there is no index)."""
    selector = pafs.FileSelector(location.index_dir, allow_not_found=True)
    versions = []
    for entry in location.fs.get_file_info(selector):
        match = _MANIFEST_NAME.match(entry.base_name)
        if match and entry.type == pafs.FileType.File:
            versions.append(int(match.group(1)))
    return sorted(versions)


def manifest_path(location: TableLocation, version: int) -> str:
    return f"{location.index_dir}/v{version}.json"


def load_version(location: TableLocation, version: int) -> Manifest:
    path = manifest_path(location, version)
    try:
        with location.fs.open_input_stream(path) as stream:
            raw = stream.read()
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"manifest {path} disappeared while reading it") from exc
    manifest = _parse(raw, path)
    if manifest.version != version:
        raise IndexCorruptError(f"manifest {path} says it is version {manifest.version}")
    return manifest


@functools.lru_cache(maxsize=64)
def _parse(raw: bytes, path: str) -> Manifest:
    """A manifest from its bytes, validated. Cached by content: validating the
    JSON schema took a quarter of a warm prune, and the same bytes always make
    the same (frozen) manifest. Failures are not cached (they raise)."""
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IndexCorruptError(f"manifest {path} is not valid JSON: {exc}") from exc
    return Manifest.from_json(doc, path)


def load_latest(location: TableLocation) -> Manifest | None:
    """The newest committed manifest, or None when the table has no index."""
    versions = manifest_versions(location)
    return load_version(location, versions[-1]) if versions else None


def commit(location: TableLocation, manifest: Manifest, build_id: str = "") -> Manifest:
    """Write ``manifest`` as ``v<manifest.version>.json`` iff no such version exists.

    Raises ConflictError when another writer committed that version first. The
    temporary file is named after ``build_id`` so cleanup can tell a dead
    writer's leftovers from a live one's.
    """
    stamped = replace(manifest, created_ms=int(time.time() * 1000))
    doc = stamped.to_json()
    validator("manifest").validate(doc)  # never write what we would refuse to read
    payload = json.dumps(doc, indent=1, sort_keys=True).encode("utf-8")
    final = manifest_path(location, stamped.version)
    tmp = f"{location.index_dir}/.tmp-{build_id or 'x-x'}-{uuid.uuid4().hex}.json"
    location.fs.create_dir(location.index_dir, recursive=True)
    with location.fs.open_output_stream(tmp) as out:
        out.write(payload)
    try:
        _publish(location, tmp, final, stamped.version)
    finally:
        if location.exists(tmp):
            location.fs.delete_file(tmp)
    return stamped


def _publish(location: TableLocation, tmp: str, final: str, version: int) -> None:
    if isinstance(location.fs, pafs.LocalFileSystem):
        try:
            os.link(tmp, final)  # atomic create-if-absent, content complete
        except FileExistsError as exc:
            raise ConflictError(f"another build committed {final} first") from exc
        return
    _publish_claimed(location, tmp, final, version)


# Object stores offer no create-if-absent through pyarrow.fs. A writer claims
# the version with a uniquely named marker, lists the claims, and publishes only
# when its own is the only live one and the version does not exist yet. With
# read-after-write and list-after-write consistency (S3 since 2020, GCS, Azure,
# MinIO) at most one writer can see only its own claim: whoever lists second
# sees the first's claim, or, once the first has published and withdrawn it,
# the published version. Losers withdraw their claim and re-plan. A claim older
# than CLAIM_TTL_MS (by the store's clock) is a crashed writer's and is ignored;
# a writer whose own claim grew that old before publishing gives up instead.
CLAIM_TTL_MS = 60_000
CLAIMS_DIR = "_claims"


def _publish_claimed(location: TableLocation, tmp: str, final: str, version: int) -> None:
    claims = f"{location.index_dir}/{CLAIMS_DIR}"
    prefix = f"v{version}-"
    mine = f"{claims}/{prefix}{uuid.uuid4().hex}"
    started = time.monotonic()
    with location.fs.open_output_stream(mine) as out:
        out.write(b"")
    try:
        entries = location.fs.get_file_info(pafs.FileSelector(claims, allow_not_found=True))
        own = [e for e in entries if e.path == mine]
        if not own:
            raise ConflictError(f"could not see this build's own claim on {final}")
        born = own[0].mtime_ns
        rivals = [
            e
            for e in entries
            if e.base_name.startswith(prefix)
            and e.path != mine
            and (born - e.mtime_ns) // 10**6 < CLAIM_TTL_MS
        ]
        if rivals or location.exists(final):
            raise ConflictError(f"another build is committing or committed {final}")
        if (time.monotonic() - started) * 1000 > CLAIM_TTL_MS / 2:
            raise ConflictError(f"claiming {final} took too long to be safe; retrying")
        location.fs.move(tmp, final)  # one atomic copy: readers see all of it or nothing
    finally:
        with suppress(FileNotFoundError):
            location.fs.delete_file(mine)
