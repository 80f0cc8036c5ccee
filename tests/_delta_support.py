"""Delta tables as writers leave them, where no writer here makes them: deletion
vectors written to the protocol's format (PROTOCOL.md, "Deletion Vectors" and the
appendix "Deletion Vector Format") and committed as a new log version.

deltalake 1.6.6 rewrites files on DELETE (copy-on-write) and has no way to write
a deletion vector, but its ``scan()`` reads them: that reader is the oracle.

A deletion vector's bytes are the magic 1681511377 (u32, little-endian) and the
64-bit Roaring treemap in its portable serialization (pyroaring's BitMap64). In
a file (storage type 'u', ``<prefix>/deletion_vector_<uuid>.bin``, the UUID in
Z85 in the log) they sit after a version byte as: size (u32, big-endian), the
bytes, their CRC-32 (u32, big-endian); the descriptor's offset points at the
size. Inline ('i'): Z85 of the bytes, zero-padded to a multiple of four.
"""

from __future__ import annotations

import json
import os
import struct
import time
import uuid
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyroaring import BitMap64

MAGIC = 1681511377
Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_AT = {c: i for i, c in enumerate(Z85)}


def z85(data: bytes) -> str:
    data += b"\0" * (-len(data) % 4)
    out = []
    for at in range(0, len(data), 4):
        value = int.from_bytes(data[at : at + 4], "big")
        digits = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            digits.append(Z85[digit])
        out.extend(reversed(digits))
    return "".join(out)


def unz85(text: str, size: int) -> bytes:
    out = bytearray()
    for at in range(0, len(text), 5):
        value = 0
        for c in text[at : at + 5]:
            value = value * 85 + _Z85_AT[c]
        out += value.to_bytes(4, "big")
    return bytes(out[:size])


def vector_bytes(rows: Iterable[int]) -> bytes:
    return struct.pack("<I", MAGIC) + BitMap64(sorted(set(rows))).serialize()


def vector_rows(data: bytes) -> set[int]:
    assert struct.unpack_from("<I", data)[0] == MAGIC
    return set(BitMap64.deserialize(data[4:]))


def _file_vector(root: Path, rows: set[int], prefix: str) -> dict[str, Any]:
    data = vector_bytes(rows)
    name = uuid.uuid4()
    folder = root / prefix if prefix else root
    folder.mkdir(parents=True, exist_ok=True)
    blob = b"\x01" + struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    (folder / f"deletion_vector_{name}.bin").write_bytes(blob)
    return {
        "storageType": "u",
        "pathOrInlineDv": prefix + z85(name.bytes),
        "offset": 1,
        "sizeInBytes": len(data),
        "cardinality": len(rows),
    }


def _inline_vector(rows: set[int]) -> dict[str, Any]:
    data = vector_bytes(rows)
    return {
        "storageType": "i",
        "pathOrInlineDv": z85(data),
        "sizeInBytes": len(data),
        "cardinality": len(rows),
    }


def read_vector(root: Path, descriptor: dict[str, Any]) -> set[int]:
    if descriptor["storageType"] == "i":
        return vector_rows(unz85(descriptor["pathOrInlineDv"], descriptor["sizeInBytes"]))
    text = descriptor["pathOrInlineDv"]
    prefix, name = text[:-20], uuid.UUID(bytes=unz85(text[-20:], 16))
    blob = ((root / prefix) if prefix else root).joinpath(f"deletion_vector_{name}.bin")
    data = blob.read_bytes()
    at = descriptor["offset"]
    (size,) = struct.unpack_from(">I", data, at)
    return vector_rows(data[at + 4 : at + 4 + size])


def _replay(root: Path) -> tuple[int, dict[str, Any], dict[str, dict[str, Any]]]:
    """The latest version, protocol and active add actions (JSON commits only)."""
    log = root / "_delta_log"
    commits = sorted(p for p in log.iterdir() if p.name.endswith(".json"))
    protocol: dict[str, Any] = {}
    adds: dict[str, dict[str, Any]] = {}
    for commit in commits:
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            protocol = action.get("protocol", protocol)
            if "add" in action:
                adds[action["add"]["path"]] = action["add"]
            if "remove" in action:
                adds.pop(action["remove"]["path"], None)
    return int(commits[-1].name[:20]), protocol, adds


_BASIC = ["appendOnly", "invariants"]
_IMPLIED = {  # the writer features each legacy writer version implies
    1: [],
    2: _BASIC,
    3: [*_BASIC, "checkConstraints"],
    4: [*_BASIC, "checkConstraints", "changeDataFeed", "generatedColumns"],
    5: [*_BASIC, "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping"],
    6: [*_BASIC, "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping",
        "identityColumns"],
}  # fmt: skip


def delete_rows(
    root: Path, rows_by_file: dict[str, Iterable[int]], *, inline: bool = False, prefix: str = ""
) -> int:
    """Mark rows of files deleted with deletion vectors (merged with any already
    there), as Delta's DELETE does where it rewrites no file; ``rows_by_file``:
    the log's path of each file -> row positions. Commits the next version."""
    version, protocol, adds = _replay(root)
    now = int(time.time() * 1000)
    actions: list[dict[str, Any]] = [
        {"commitInfo": {"timestamp": now, "operation": "DELETE", "engineInfo": "tests"}}
    ]
    reader = protocol.get("readerFeatures") or []
    if "deletionVectors" not in reader:
        # Legacy versions imply features; table features must name them all.
        writer = protocol.get("writerFeatures") or _IMPLIED[protocol.get("minWriterVersion", 2)]
        if protocol.get("minReaderVersion", 1) == 2:
            reader = ["columnMapping"]
        actions.append(
            {
                "protocol": {
                    "minReaderVersion": 3,
                    "minWriterVersion": 7,
                    "readerFeatures": sorted({*reader, "deletionVectors"}),
                    "writerFeatures": sorted({*writer, "deletionVectors"}),
                }
            }
        )
    for path, rows in rows_by_file.items():
        old = adds[path]
        deleted = set(map(int, rows))
        if old.get("deletionVector"):
            deleted |= read_vector(root, old["deletionVector"])
        vector = _inline_vector(deleted) if inline else _file_vector(root, deleted, prefix)
        stats = {**json.loads(old["stats"]), "tightBounds": False}
        remove = {
            "path": path,
            "deletionTimestamp": now,
            "dataChange": True,
            "extendedFileMetadata": True,
            "partitionValues": old.get("partitionValues", {}),
            "size": old["size"],
        }
        if old.get("deletionVector"):
            remove["deletionVector"] = old["deletionVector"]
        add = {k: v for k, v in old.items() if k not in ("deletionVector", "stats")}
        add.update(dataChange=True, stats=json.dumps(stats), deletionVector=vector)
        actions += [{"remove": remove}, {"add": add}]
    body = "".join(json.dumps(a) + "\n" for a in actions)
    temporary = root / "_delta_log" / f".tmp-{uuid.uuid4()}.json"
    temporary.write_text(body)
    os.link(temporary, root / "_delta_log" / f"{version + 1:020d}.json")  # put if absent
    temporary.unlink()
    return version + 1


def live_table(root: Path) -> pa.Table:
    """The table's live rows as deltalake's reader returns them (deletion vectors
    applied), view types cast to plain ones."""
    from deltalake import DeltaTable

    table = pa.table(DeltaTable(str(root)).scan())
    plain = [
        pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
        for f in table.schema
    ]
    return table.cast(pa.schema(plain))


def log_paths(root: Path) -> list[str]:
    """The active files' paths as the log spells them (URI-encoded)."""
    from deltalake import DeltaTable

    return sorted(pa.table(DeltaTable(str(root)).get_add_actions()).column("path").to_pylist())


def alter_schema(
    root: Path, *, rename: dict[str, str] | None = None, drop: Iterable[str] = ()
) -> int:
    """RENAME COLUMN and DROP COLUMN on a column-mapped table, as Delta commits them:
    a new metaData action whose schema keeps each field's id and physical name
    under its new name, or leaves the field out. Commits the next version."""
    rename, drop = rename or {}, set(drop)
    log = root / "_delta_log"
    commits = sorted(p for p in log.iterdir() if p.name.endswith(".json"))
    metadata: dict[str, Any] = {}
    for commit in commits:
        for line in commit.read_text().splitlines():
            metadata = json.loads(line).get("metaData", metadata)
    schema = json.loads(metadata["schemaString"])
    schema["fields"] = [
        {**f, "name": rename.get(f["name"], f["name"])}
        for f in schema["fields"]
        if f["name"] not in drop
    ]
    metadata = {
        **metadata,
        "schemaString": json.dumps(schema),
        "partitionColumns": [rename.get(c, c) for c in metadata["partitionColumns"]],
    }
    actions = [
        {"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "ALTER TABLE"}},
        {"metaData": metadata},
    ]
    version = int(commits[-1].name[:20]) + 1
    temporary = log / f".tmp-{uuid.uuid4()}.json"
    temporary.write_text("".join(json.dumps(a) + "\n" for a in actions))
    os.link(temporary, log / f"{version:020d}.json")
    temporary.unlink()
    return version
