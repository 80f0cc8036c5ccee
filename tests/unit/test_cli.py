"""The command line: same functions, clear errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.cli import main, parse_index_option
from skipindex.indexing.build import InProcessRunner, build_with


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
    pruned = json.loads(capsys.readouterr().out)
    assert (pruned["files"], pruned["total"], pruned["kept"]) == ([str(table / "p3.parquet")], 4, 1)
    assert pruned["skipped"] == 3
    assert "kept 1 of 4 files" in pruned["explanation"]
    main(["prune", str(table), "id = 35 OR upper(x) = 'A'", "--explain"])
    out = capsys.readouterr().out
    assert "kept 4 of 4 files" in out
    assert "not indexable" in out


def test_prune_row_level_flag_reaches_prune(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    root = tmp_path / "anti"
    root.mkdir()
    half = 2000  # a = 1 on one half, b = 2 on the other: no row has both
    pq.write_table(
        pa.table({"a": [1] * half + [0] * half, "b": [0] * half + [2] * half}), root / "f.parquet"
    )
    build_with(str(root), [si.BitSlicedBitmap("a"), si.BitSlicedBitmap("b")], InProcessRunner())
    kept = {}
    for mode in ("auto", "always", "estimate"):
        main(["prune", str(root), "a = 1 AND b = 2", "--json", "--row-level", mode])
        kept[mode] = json.loads(capsys.readouterr().out)["kept"]
    assert kept == {"auto": 0, "always": 0, "estimate": 1}  # only the opt-in guesses
    with pytest.raises(SystemExit):
        main(["prune", str(root), "a = 1", "--row-level", "never"])


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


# ------------------------------------------------------------ first ten minutes (issue 10)


def test_drop_index_must_be_told_to_drop_everything(table: Path):
    with pytest.raises(si.InvalidSpecError, match=r"all=True for the whole index"):
        si.drop_index(str(table))
    assert (table / "_skipindex").exists()
    si.drop_index(table, all=True)  # a pathlib.Path is a table path too
    assert not (table / "_skipindex").exists()


def test_paths_are_accepted_as_pathlib_paths(table: Path):
    assert si.prune(table, "id = 15", time_zone="UTC").kept == 1
    assert si.describe(table).files_indexed == 4


def test_specs_refuse_what_is_not_a_column_name():
    with pytest.raises(si.InvalidSpecError, match=r"MinMax\(\.\.\.\): the column must be"):
        si.MinMax(1)  # type: ignore[arg-type]
    with pytest.raises(si.InvalidSpecError, match="the column must be"):
        si.Bloom("")


def test_prune_result_repr_is_short(table: Path):
    text = repr(si.prune(str(table), "id >= 0", time_zone="UTC"))
    assert text == "PruneResult(kept=4, total=4, version=1, predicate='id >= 0')"


def test_version_and_a_closed_pipe(table: Path, capsys: pytest.CaptureFixture[str]):
    import subprocess
    import sys

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"skipindex {si.__version__}"
    # A verb printing far more than a pipe buffer holds, read by a reader that leaves.
    script = (
        "import sys\n"
        "import skipindex.cli as cli\n"
        "import skipindex.commands as commands\n"
        "def chatty(args):\n"
        "    for _ in range(200_000):\n"
        "        print('x' * 60)\n"
        "    return 0\n"
        "commands.describe = chatty\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, "describe", str(table)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    assert child.stdout.read(10) == b"x" * 10
    child.stdout.close()  # what `| head -c10` does
    _, errors = child.communicate(timeout=60)
    assert errors == b""  # no traceback, no "Exception ignored" from the final flush
    assert child.returncode == 0


def test_a_bad_spec_fails_before_spark_starts(table: Path, monkeypatch: pytest.MonkeyPatch):
    import skipindex.spark.session

    def no_spark(*_args: object) -> None:
        raise AssertionError("Spark was started for a build that cannot succeed")

    monkeypatch.setattr(skipindex.spark.session, "local_session", no_spark)
    monkeypatch.setattr(skipindex.spark.session, "active_or_local_session", no_spark)
    with pytest.raises(si.UnknownColumnError, match="unknown column 'nope'"):
        si.build_index(str(table), [si.MinMax("nope")])
    assert main(["build", str(table), "--index", "bloom:nope"]) == 2
