"""The command line: same functions, clear errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from skipindex.cli import main, parse_index_option


@pytest.fixture
def table(tmp_path: Path) -> Path:
    root = tmp_path / "t"
    root.mkdir()
    for k in range(4):
        pq.write_table(pa.table({"id": list(range(k * 10, k * 10 + 10))}), root / f"p{k}.parquet")
    build_with(str(root), [si.MinMax("id"), si.BitSlicedBitmap("id")], InProcessRunner())
    return root


def test_parse_index_option():
    assert parse_index_option("bloom:l_partkey:fpp=0.05") == si.Bloom("l_partkey", fpp=0.05)
    assert parse_index_option("range_bitmap:x:bins=8") == si.RangeBitmap("x", bins=8)
    assert parse_index_option("minmax:l_shipdate") == si.MinMax("l_shipdate")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope:x", "KIND one of minmax, bloom"),
        ("minmax:", "KIND:COLUMN"),
        ("bloom:x:fpp", "use name=value"),
        ("bloom:x:colour=red", "bad parameters"),
    ],
)
def test_bad_index_options_are_explained(text: str, message: str):
    with pytest.raises(si.InvalidSpecError, match=message):
        parse_index_option(text)


def test_prune_prints_kept_files(table: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["prune", str(table), "id BETWEEN 12 AND 15"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == [str(table / "p1.parquet")]
    assert "kept 1 of 4 files" in err


def test_prune_json_and_explain(table: Path, capsys: pytest.CaptureFixture[str]):
    main(["prune", str(table), "id = 35", "--json"])
    assert json.loads(capsys.readouterr().out) == {
        "files": [str(table / "p3.parquet")],
        "total": 4,
        "kept": 1,
    }
    main(["prune", str(table), "id = 35 OR upper(x) = 'A'", "--explain"])
    out = capsys.readouterr().out
    assert "kept 4 of 4 files" in out
    assert "not indexable" in out


def test_describe_json(table: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["describe", str(table), "--json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["files_indexed"] == 4
    assert {d["kind"] for d in described["indexes"]} == {"minmax", "bitsliced_bitmap"}


def test_drop_needs_a_target_and_reports(table: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["drop", str(table)]) == 2
    assert "--all" in capsys.readouterr().err
    assert main(["drop", str(table), "--kind", "bitsliced_bitmap"]) == 0
    assert "dropped bitsliced_bitmap on id" in capsys.readouterr().out
    assert main(["drop", str(table), "--all"]) == 0
    assert not (table / "_skipindex").exists()


def test_errors_exit_2_with_a_message(table: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["prune", str(table), "idd = 3"]) == 2
    assert "skipindex: error: unknown column 'idd'" in capsys.readouterr().err
    assert main(["prune", str(table / "missing"), "id = 3"]) == 2
    assert "does not exist" in capsys.readouterr().err
