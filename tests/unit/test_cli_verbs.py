"""Every verb speaks JSON, and a damaged index is repaired with the command its error names.

Builds here run in-process (``build_with`` + ``InProcessRunner``); the CLI's own
``build`` verb, which starts Spark, is covered in ``tests/spark/test_cli_build.py``.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.cli import main
from skipindex.indexing.build import InProcessRunner, build_with

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def table(tmp_path: Path) -> Path:
    root = tmp_path / "t"
    root.mkdir()
    for k in range(4):
        ids = list(range(k * 10, k * 10 + 10))
        pq.write_table(
            pa.table({"id": ids, "flag": ["ab"[i % 2] for i in ids]}), root / f"p{k}.parquet"
        )
    build_with(root, [si.MinMax("id"), si.EqualityBitmap("flag")], InProcessRunner())
    return root


def _json(capsys: Capture, argv: list[str]) -> Any:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_verb_prints_json(table: Path, capsys: Capture):
    described = _json(capsys, ["describe", str(table)])
    assert described["files_indexed"] == 4
    pruned = _json(capsys, ["prune", str(table), "id = 35 AND flag = 'b'"])
    assert pruned["files"] == [str(table / "p3.parquet")]
    assert {c["condition"] for c in pruned["conditions"]} >= {"id = 35"}
    dropped = _json(capsys, ["drop", str(table), "--kind", "equality_bitmap"])
    assert dropped == {
        "dropped": [{"column": "flag", "kind": "equality_bitmap", "params": {"max_distinct": 4096}}]
    }
    vacuumed = _json(capsys, ["vacuum", str(table)])
    assert isinstance(vacuumed["removed"], list)
    repaired = _json(capsys, ["repair", str(table), "--no-rebuild"])
    assert repaired["damaged"] == []
    assert repaired["version"] == 2


def test_vacuum_on_a_table_with_no_index_says_there_is_nothing_to_do(table: Path, capsys: Capture):
    assert main(["drop", str(table), "--all"]) == 0
    assert not (table / "_skipindex").exists()
    capsys.readouterr()
    assert main(["vacuum", str(table)]) == 0
    captured = capsys.readouterr()
    assert "nothing to vacuum" in captured.out
    assert captured.err == ""
    assert _json(capsys, ["vacuum", str(table)]) == {
        "removed": [],
        "count": 0,
        "note": f"no index at {table}: nothing to vacuum",
    }
    never = table.parent / "never"
    never.mkdir()
    pq.write_table(pa.table({"id": [1]}), never / "p.parquet")
    assert _json(capsys, ["vacuum", str(never)])["count"] == 0
    assert not (never / "_skipindex").exists()  # vacuum creates nothing


def test_vacuum_json_counts_what_it_removed(table: Path, capsys: Capture):
    orphan = table / "_skipindex" / "segments" / "0000000000001-deadbeef0000-1-00000.parquet"
    orphan.write_bytes(b"left by a dead build")
    assert _json(capsys, ["vacuum", str(table)]) == {
        "removed": [f"_skipindex/segments/{orphan.name}"],
        "count": 1,
        "note": None,
    }


def test_errors_in_json_mode_are_json(table: Path, capsys: Capture):
    assert main(["prune", str(table), "nope = 1", "--json"]) == 2
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["type"] == "UnknownColumnError"
    assert "nope" in error["message"]


def test_warnings_are_messages_not_source_lines(table: Path, capsys: Capture):
    (table / "_skipindex" / "v1.json").write_text("{broken")
    assert main(["prune", str(table), "id = 1", "--keep-on-damage"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("skipindex: warning: manifest")
    assert "warnings.warn" not in err
    assert "stacklevel" not in err


def _repair_command(message: str) -> list[str]:
    found = re.search(r"`(skipindex repair [^`]+)`", message)
    assert found, f"no repair command in: {message}"
    return shlex.split(found.group(1))[1:]


def test_a_damaged_manifest_is_repaired_with_the_command_the_error_names(
    table: Path, capsys: Capture
):
    build_with(table, [si.Bloom("id")], InProcessRunner())  # version 2 on top of 1
    (table / "_skipindex" / "v2.json").write_text('{"format": "skipindex-manifest"')
    for argv in (["prune", str(table), "id = 1"], ["describe", str(table)], ["vacuum", str(table)]):
        assert main(argv) == 2
        assert "skipindex repair" in capsys.readouterr().err
    with pytest.raises(si.IndexCorruptError) as raised:
        si.prune(table, "id = 15")
    assert main([*_repair_command(str(raised.value)), "--no-rebuild"]) == 0
    assert "damaged: _skipindex/v2.json" in capsys.readouterr().out
    assert si.prune(table, "id = 15", time_zone="UTC").files == [str(table / "p1.parquet")]
    assert not (table / "_skipindex" / "v2.json").exists()  # damaged version removed
    assert main(["vacuum", str(table)]) == 0


def test_a_damaged_segment_loses_only_its_files_and_they_are_kept(table: Path, capsys: Capture):
    segments = sorted((table / "_skipindex" / "segments").glob("*.parquet"))
    victim = segments[0]
    victim.write_bytes(victim.read_bytes()[:-40])  # truncated
    with pytest.raises(si.IndexCorruptError, match="skipindex repair") as raised:
        si.prune(table, "id = 15")
    assert main([*_repair_command(str(raised.value)), "--no-rebuild"]) == 0
    out = capsys.readouterr().out
    assert "lost their index entries" in out
    described = si.describe(table)
    assert described.files_unindexed > 0  # the lost files are new again: always kept
    for k in range(4):
        assert (
            str(table / f"p{k}.parquet")
            in si.prune(table, f"id = {k * 10 + 3}", time_zone="UTC").files
        )
    build_with(table, None, InProcessRunner())  # what `repair` runs when it rebuilds
    assert si.describe(table).files_indexed == 4
    assert si.prune(table, "id = 15", time_zone="UTC").kept == 1


def test_repair_with_no_readable_manifest_removes_the_index(table: Path):
    (table / "_skipindex" / "v1.json").write_text("garbage")
    report = si.repair(table, rebuild=False)
    assert report.index_removed
    assert "build it again" in str(report)
    assert not (table / "_skipindex").exists()
    assert [p.name for p in sorted(table.glob("*.parquet"))] == [f"p{k}.parquet" for k in range(4)]


def test_drop_all_works_on_a_damaged_index(table: Path):
    (table / "_skipindex" / "v1.json").write_text("garbage")
    assert si.drop_index(table, all=True) == []
    assert not (table / "_skipindex").exists()


def test_bad_keywords_list_the_valid_ones():
    with pytest.raises(
        si.InvalidSpecError, match=r"unknown parameter 'foo'; it takes column, fpp, max_bytes"
    ):
        si.Bloom("c", foo=1)  # type: ignore[call-arg]
    with pytest.raises(si.InvalidSpecError, match="too many arguments"):
        si.MinMax("a", "b")  # type: ignore[call-arg]


def test_help_lists_each_kinds_parameters(capsys: Capture):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    out = capsys.readouterr().out
    assert "bloom             fpp=0.01, max_bytes=1048576" in out
    assert "range_bitmap      bins=64" in out


def test_a_first_build_without_definitions_chooses_and_says_why(tmp_path: Path):
    root = tmp_path / "t"
    root.mkdir()
    for k in range(3):
        n = 2000
        pq.write_table(
            pa.table(
                {
                    "key": pa.array(range(k * n, (k + 1) * n), pa.int64()),
                    "mode": pa.array(["AIR", "RAIL", "SHIP"] * (n // 3) + ["AIR"] * (n % 3)),
                    "price": pa.array([float(i % 97) for i in range(n)]),
                    "blob": pa.array([b"x"] * n),
                }
            ),
            root / f"p{k}.parquet",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = si.suggest_indexes(root)
    assert {(c.spec.kind, c.spec.column) for c in chosen} == {
        ("minmax", "key"),
        ("bloom", "key"),
        ("minmax", "mode"),
        ("equality_bitmap", "mode"),
        ("minmax", "price"),
    }
    assert all(c.reason for c in chosen)
    report = build_with(root, None, InProcessRunner())
    assert len(report.chosen) == 5
    assert "chose bloom on key: high cardinality" in str(report)
    assert si.prune(root, "key = 2500 AND mode = 'RAIL'", time_zone="UTC").kept == 1
    again = build_with(root, None, InProcessRunner())  # now a refresh: nothing chosen
    assert again.chosen == []
    assert again.files_indexed == 0


def test_explain_labels_partition_pruning_and_counts_add_up(tmp_path: Path):
    root = tmp_path / "t"
    for p in (1, 2):
        (root / f"p={p}").mkdir(parents=True)
        for k in range(3):
            ids = list(range(p * 100 + k * 10, p * 100 + k * 10 + 10))
            pq.write_table(pa.table({"id": ids}), root / f"p={p}" / f"f{k}.parquet")
    build_with(root, [si.MinMax("id")], InProcessRunner())
    result = si.prune(root, "p = 2 AND id >= 115", time_zone="UTC")
    text = result.explain()
    assert "p = 2: partition pruning ruled out 3 files" in text
    assert "minmax ruled out" in text
    assert f"skipped {result.skipped} = {result.skipped} ruled out by single conditions + 0" in text


def test_type_errors_name_spark_types(table: Path):
    with pytest.raises(si.UnsupportedTypeError, match=r"of type BIGINT with"):
        si.prune(table, "id = DATE '2024-01-01'", time_zone="UTC")
    from skipindex._types import spark_type_name

    assert spark_type_name(pa.date32()) == "DATE"
    assert spark_type_name(pa.timestamp("us", "UTC")) == "TIMESTAMP"
    assert spark_type_name(pa.timestamp("us")) == "TIMESTAMP_NTZ"
    assert spark_type_name(pa.decimal128(12, 2)) == "DECIMAL(12,2)"
    assert spark_type_name(pa.struct([("f", pa.int32())])) == "STRUCT<f: INT>"
