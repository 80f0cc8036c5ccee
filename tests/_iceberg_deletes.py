"""Iceberg delete files where no writer here makes them: pyiceberg 0.12 writes
copy-on-write deletes only (its merge-on-read mode falls back to rewriting), but
its scan applies position deletes. These helpers write delete files to the spec
(a position delete file holds ``file_path`` and ``pos``, field ids 2147483546 and
2147483545; an equality delete file the deleted values of the equality columns)
and commit them in a delete manifest through pyiceberg's snapshot producer."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
)
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles

POSITIONS = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": b"2147483545"}),
    ]
)


class _DeleteManifestWriter(ManifestWriterV2):
    """A v2 manifest writer whose manifest holds delete files."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


class _RowDelta(_FastAppendFiles):
    """An append whose delete files go into delete manifests (by partition spec)."""

    def _manifests(self) -> list[Any]:
        out = []
        by_spec: dict[int, list[DataFile]] = {}
        for data_file in self._added_data_files:
            by_spec.setdefault(data_file.spec_id, []).append(data_file)
        for spec_id, files in by_spec.items():
            writer = _DeleteManifestWriter(
                self.spec(spec_id),
                self.schema(),
                self.new_manifest_output(),
                self._snapshot_id,
                self._compression,
            )
            with writer:
                for data_file in files:
                    writer.add(
                        ManifestEntry.from_args(
                            status=ManifestEntryStatus.ADDED,
                            snapshot_id=self._snapshot_id,
                            sequence_number=None,
                            file_sequence_number=None,
                            data_file=data_file,
                        )
                    )
            out.append(writer.to_manifest_file())
        return self._process_manifests(out + self._existing_manifests())


def _commit(table: Any, files: list[DataFile]) -> None:
    with table.transaction() as transaction:
        producer = _RowDelta(
            operation=Operation.DELETE,
            transaction=transaction,
            io=transaction._table.io,
            snapshot_properties={},
        )
        for data_file in files:
            producer.append_data_file(data_file)
        producer.commit()


def _write(table: Any, name: str, rows: pa.Table) -> tuple[str, int]:
    location = table.location_provider().new_data_location(f"{name}-{os.urandom(6).hex()}.parquet")
    with table.io.new_output(location).create(overwrite=False) as out:
        pq.write_table(rows, out)
    return location, len(table.io.new_input(location))


def delete_positions(table: Any, positions: dict[str, Iterable[int]]) -> None:
    """Position deletes: ``positions`` maps a data file's path (as the manifests
    spell it) to the row positions to delete; one delete file per partition."""
    tasks = {task.file.file_path: task.file for task in table.scan().plan_files()}
    groups: dict[tuple[int, Any], list[str]] = {}
    for path in positions:
        groups.setdefault((tasks[path].spec_id, tuple(tasks[path].partition)), []).append(path)
    files = []
    for (spec_id, _), paths in groups.items():
        rows = sorted((path, int(pos)) for path in paths for pos in set(positions[path]))
        table_rows = pa.table(
            {"file_path": [r[0] for r in rows], "pos": [r[1] for r in rows]}, schema=POSITIONS
        )
        location, size = _write(table, "pos-deletes", table_rows)
        data_file = DataFile.from_args(
            content=DataFileContent.POSITION_DELETES,
            file_path=location,
            file_format=FileFormat.PARQUET,
            partition=tasks[paths[0]].partition,
            record_count=len(rows),
            file_size_in_bytes=size,
            lower_bounds={2147483546: rows[0][0].encode(), 2147483545: _long(rows, min)},
            upper_bounds={2147483546: rows[-1][0].encode(), 2147483545: _long(rows, max)},
            _table_format_version=table.format_version,
        )
        data_file.spec_id = spec_id  # not a from_args argument in pyiceberg 0.12
        files.append(data_file)
    _commit(table, files)


def _long(rows: list[tuple[str, int]], pick: Any) -> bytes:
    return struct.pack("<q", pick(r[1] for r in rows))


def delete_equal(table: Any, field_id: int, name: str, values: list[Any], arrow_type: Any) -> None:
    """An equality delete file: rows whose column (by field id) equals a value."""
    schema = pa.schema(
        [pa.field(name, arrow_type, True, {b"PARQUET:field_id": str(field_id).encode()})]
    )
    location, size = _write(table, "eq-deletes", pa.table({name: values}, schema=schema))
    first = next(iter(table.scan().plan_files())).file
    data_file = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES,
        file_path=location,
        file_format=FileFormat.PARQUET,
        partition=first.partition,
        record_count=len(values),
        file_size_in_bytes=size,
        equality_ids=[field_id],
        _table_format_version=table.format_version,
    )
    data_file.spec_id = first.spec_id
    _commit(table, [data_file])
