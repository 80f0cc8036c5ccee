"""Noticing commits without being told: a listing's signature changes with any
added, rewritten or deleted data file and with nothing else; Delta's is its log
version."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.maintain.changes import latest_commit
from skipindex.maintain.policy import TablePolicy


def _file(root: Path, name: str, rows: int = 10) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": list(range(rows))}), path)
    return path


def test_a_listing_signature_moves_with_the_data_files_only(tmp_path: Path) -> None:
    root = tmp_path / "t"
    table = TablePolicy(name=str(root), path=str(root))
    first = _file(root, "a.parquet")
    seen = [latest_commit(table)]
    assert seen[0].id.startswith("listing:")
    assert "1 files" in seen[0].note
    assert latest_commit(table) == seen[0]  # nothing changed: the same commit

    # hidden files, the index and Spark's markers are not the table
    (root / "_SUCCESS").write_text("")
    (root / ".a.parquet.crc").write_text("x")
    (root / "_skipindex").mkdir()
    (root / "_skipindex" / "v1.json").write_text("{}")
    assert latest_commit(table) == seen[0]

    _file(root, "day=2/b.parquet")  # added, in a partition folder
    seen.append(latest_commit(table))
    _file(root, "a.parquet", rows=20)  # rewritten (size changes)
    seen.append(latest_commit(table))
    stat = first.stat()
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # touched
    seen.append(latest_commit(table))
    first.unlink()  # deleted
    seen.append(latest_commit(table))
    assert len({c.id for c in seen}) == len(seen)


def test_an_empty_table_has_a_commit_too(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    commit = latest_commit(TablePolicy(name=str(root), path=str(root)))
    assert commit.note == "0 files, 0.0 MB"


def test_a_delta_table_commit_is_its_log_version(tmp_path: Path) -> None:
    root = tmp_path / "d"
    log = root / "_delta_log"
    log.mkdir(parents=True)
    table = TablePolicy(name=str(root), path=str(root))
    for version in range(3):
        (log / f"{version:020d}.json").write_text("{}\n")
    (log / "00000000000000000002.checkpoint.parquet").write_text("")
    (log / "_last_checkpoint").write_text("{}")
    (log / "00000000000000000009.json.tmp").write_text("")  # not a commit
    commit = latest_commit(table)
    assert (commit.id, commit.note) == ("delta:2", "Delta version 2")
    (log / f"{3:020d}.json").write_text("{}\n")
    assert latest_commit(table).id == "delta:3"
