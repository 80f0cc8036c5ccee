"""The million-file table as a Delta table: the same files, listed by a Delta log.

A Delta table's files come from its log, never from listing its folder (a stat
per file: most of a cold prune at a million files). To time that listing at the
same scale, the million files (and their index) are hard-linked into a folder of
their own, and a log is written whose one commit adds every file with the size
and modification time the index recorded (so the index covers each one), then
checkpointed by deltalake, as a writer checkpoints every ten commits. Written
once; ``READY`` marks it done.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import data
import pyarrow as pa
import pyarrow.parquet as pq

_DELTA_TYPES = {"int64": "long", "int32": "integer", "date32[day]": "date", "double": "double"}


def delta_copy(table: Path) -> Path:
    """``table``'s files and index as a Delta table (made once)."""
    target = data.DATA / f"{table.parent.name}-delta" / table.name
    if (target.parent / "READY").exists():
        return target
    shutil.rmtree(target.parent, ignore_errors=True)
    target.parent.mkdir(parents=True)
    subprocess.run(["cp", "-al", str(table), str(target)], check=True)  # links, no copies
    segments = sorted((target / "_skipindex" / "segments").glob("*.parquet"))
    files = pa.concat_tables(
        [pq.read_table(s, columns=["path", "size", "mtime_ms"]) for s in segments]
    )
    schema = pq.read_schema(target / files.column("path")[0].as_py())
    log = target / "_delta_log"
    log.mkdir()
    with open(log / f"{0:020d}.json", "w") as out:
        out.write(json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}))
        out.write("\n" + json.dumps({"metaData": _metadata(schema)}) + "\n")
        for path, size, mtime in zip(
            *(files.column(c).to_pylist() for c in ("path", "size", "mtime_ms")), strict=True
        ):
            add = {"path": path, "partitionValues": {}, "size": size}
            out.write(json.dumps({"add": {**add, "modificationTime": mtime, "dataChange": True}}))
            out.write("\n")
    from deltalake import DeltaTable

    DeltaTable(str(target)).create_checkpoint()
    (target.parent / "READY").write_text("ok\n")
    return target


def _metadata(schema: pa.Schema) -> dict[str, object]:
    fields = [
        {"name": f.name, "type": _delta_type(f.type), "nullable": True, "metadata": {}}
        for f in schema
    ]
    return {
        "id": str(uuid.uuid4()),
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps({"type": "struct", "fields": fields}),
        "partitionColumns": [],
        "configuration": {},
        "createdTime": 0,
    }


def _delta_type(arrow: pa.DataType) -> str:
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    return _DELTA_TYPES[str(arrow)]
