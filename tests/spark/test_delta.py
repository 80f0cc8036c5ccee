"""Delta tables as a source: the snapshot's files, never removed ones; refusals that are clear."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake

import skipindex as si


def _batch(start: int, rows: int = 200) -> pa.Table:
    ids = pa.array(range(start, start + rows), pa.int64())
    return pa.table(
        {"id": ids, "region": pa.array(["EU", "US"][(start // rows) % 2] for _ in range(rows))}
    )


def _active(root: Path) -> set[str]:
    return {str(root / p) for p in DeltaTable(str(root)).file_uris()} | {
        p for p in DeltaTable(str(root)).file_uris() if p.startswith("/")
    }


def _rows(root: Path, where: pa.compute.Expression) -> int:
    return DeltaTable(str(root)).to_pyarrow_dataset().to_table(filter=where).num_rows


def test_a_delta_table_prunes_and_reads_its_current_snapshot(spark, tmp_path):
    root = tmp_path / "events"
    for k in range(4):
        write_deltalake(str(root), _batch(k * 200), mode="append", partition_by=["region"])
    si.build_index(root, [si.MinMax("id"), si.Bloom("id")], spark=spark)
    assert si.describe(root).files_indexed == 4
    assert len(si.prune(root, "id = 250").files) == 1

    # A later Delta commit rewrites files: the removed ones stay on disk until Delta's VACUUM.
    DeltaTable(str(root)).delete("id < 300")
    on_disk = {str(p) for p in root.rglob("*.parquet") if "_skipindex" not in str(p)}
    active = _active(root)
    assert len(on_disk) > len(active)
    for key in (250, 350, 700):
        kept = set(si.prune(root, f"id = {key}").files)
        assert kept <= active  # never a removed file
        holding = {
            f
            for f in active
            if pc.any(pc.equal(pa.parquet.read_table(f).column("id"), key)).as_py()
        }
        assert holding <= kept
    for where, expression in (
        ("id = 250", pc.field("id") == 250),
        ("id >= 350 AND id < 420", (pc.field("id") >= 350) & (pc.field("id") < 420)),
        ("region = 'US'", pc.field("region") == "US"),
    ):
        assert si.read(spark, root, where).count() == _rows(root, expression), where
    assert si.read(spark, root, "id >= 0").count() == 500  # nothing skipped: still the snapshot

    report = si.build_index(root, spark=spark)  # refresh: the rewritten file is indexed
    assert report.files_indexed == 1
    assert report.files_removed >= 1


def _edit_log(root: Path, edit: object) -> None:
    log = root / "_delta_log" / "00000000000000000000.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    for action in actions:
        edit(action)  # type: ignore[operator]
    log.write_text("\n".join(json.dumps(a) for a in actions) + "\n")


def test_deletion_vectors_enabled_with_none_written_read_as_before(spark, tmp_path):
    """The feature on (as Databricks sets it for new tables) and no vector yet:
    nothing is deleted, nothing refused."""
    root = tmp_path / "dv"
    write_deltalake(str(root), _batch(0))

    def enable(action: dict) -> None:
        if "protocol" in action:
            action["protocol"] = {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": ["deletionVectors"],
                "writerFeatures": ["deletionVectors"],
            }

    _edit_log(root, enable)
    assert len(si.prune(root, "id = 1").files) == 1
    assert si.read(spark, root, "id < 10").count() == 10
