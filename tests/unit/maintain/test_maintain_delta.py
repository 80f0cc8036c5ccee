"""A Delta table under the service (index tasks in process, no JVM): commits
seen by log version, the index refreshed, small files compacted by Delta's own
OPTIMIZE (a Delta commit), the rows unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.maintain import jobs
from skipindex.maintain.scheduler import Service

deltalake = pytest.importorskip("deltalake")


def _append(root: Path, k: int) -> None:
    data = pa.table({"id": pa.array(range(k * 50, k * 50 + 50), pa.int64())})
    deltalake.write_deltalake(str(root), data, mode="append")


def test_a_delta_table_is_refreshed_and_compacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def in_process(path: Any, specs: Any = None, *, spark: Any = None, catalog: Any = None) -> Any:
        return build_with(path, specs, InProcessRunner(), catalog=catalog)

    monkeypatch.setattr(jobs, "build_index", in_process)
    monkeypatch.setattr(Service, "spark", lambda self: None)
    root = tmp_path / "d"
    for k in range(6):
        _append(root, k)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'[service]\nstate = "state.db"\n[[table]]\npath = "{root}"\n'
        'indexes = [{kind = "minmax", column = "id"}]\nbinpack_min_small_files = 4\n'
    )
    report = si.maintain(policy=policy)
    kinds = [(j["kind"], j["result"]) for j in report.jobs]
    assert kinds[:2] == [("refresh", "done"), ("binpack", "done")]
    assert "Delta OPTIMIZE compacted: 6 files became 1" in report.jobs[1]["summary"]
    assert report.coverage[str(root)] == {"files": 1, "covered": 1, "version": 2}
    table = deltalake.DeltaTable(str(root))
    assert sorted(table.to_pyarrow_table()["id"].to_pylist()) == list(range(300))

    _append(root, 6)  # a Delta commit: seen by its log version
    again = si.maintain(policy=policy)
    assert again.changed == [str(root)]
    assert again.coverage[str(root)]["covered"] == again.coverage[str(root)]["files"] == 2
    kept = si.prune(str(root), "id = 320")
    assert kept.kept == 1
