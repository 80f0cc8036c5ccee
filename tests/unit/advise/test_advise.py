"""The advisor without Spark: workloads from SQL, predicates and the query log;
estimates that equal what the table keeps once the plan is built (when the
sample is the whole table); budgets; advice that follows the workload."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from _advise_support import DAY_QUERIES, FILES, KEY_QUERIES, events_table

import skipindex as si
from skipindex.advise.advise import advise
from skipindex.cli import main
from skipindex.errors import InvalidSpecError
from skipindex.indexing.build import build_with
from skipindex.indexing.runners import InProcessRunner
from skipindex.maintain.advice import to_policy
from skipindex.store import query_log


def _kept(path: Path, where: str) -> int:
    return si.prune(str(path), where, time_zone="UTC").kept


def test_estimates_are_what_the_built_plan_keeps(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    advice = advise(table, DAY_QUERIES, sample_files=FILES, layouts_too=False)
    assert {c.column for c in advice.indexes} >= {"day"}
    build_with(str(table), advice.specs, InProcessRunner())
    for estimate in advice.estimates:
        assert estimate.where is not None
        assert estimate.planned == _kept(table, estimate.where), estimate.label
        assert estimate.no_index == FILES
    totals = advice.totals()
    assert totals["planned"] < totals["no_index"] / 2
    # What each index is said to save adds up to what the plan saves.
    assert sum(c.saves for c in advice.indexes) == pytest.approx(
        totals["no_index"] - totals["planned"]
    )


def test_advice_follows_the_workload(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    by_day = advise(table, DAY_QUERIES, sample_files=FILES, layouts_too=False)
    by_key = advise(table, KEY_QUERIES, sample_files=FILES, layouts_too=False)
    assert "k" not in {c.column for c in by_day.indexes}
    assert {(c.column, c.kind) for c in by_key.indexes} & {("k", "bloom"), ("k", "equality_bitmap")}
    assert by_key.totals()["planned"] <= len(KEY_QUERIES) * 2  # a key lives in one file


def test_budget_bounds_the_index_bytes(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    free = advise(table, {**DAY_QUERIES, **KEY_QUERIES}, sample_files=FILES, layouts_too=False)
    budget = free.index_bytes / 4
    tight = advise(
        table, {**DAY_QUERIES, **KEY_QUERIES}, sample_files=FILES, layouts_too=False,
        budget_bytes=budget,
    )  # fmt: skip
    assert tight.index_bytes <= budget
    assert tight.left_out
    assert tight.totals()["planned"] >= free.totals()["planned"]


def test_a_shuffled_table_is_advised_a_layout(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events", shuffled=True)
    advice = advise(table, DAY_QUERIES, sample_files=FILES)
    assert advice.layout is not None
    assert advice.layout[1][0] == "day"
    assert advice.totals()["planned"] < 0.5 * advice.totals()["today"]
    assert "day" in str(advice)


def test_sql_conditions_through_a_join_and_queries_elsewhere(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    joined = (
        "SELECT e.k, d.name FROM events e JOIN dims d ON e.cat = d.cat "
        "WHERE e.day = DATE '2024-01-05' AND d.name = 'x'"
    )
    advice = advise(table, [joined, "SELECT 1 FROM other WHERE a = 1"], layouts_too=False)
    # The other query does not read the table; the join's own condition is not this table's.
    assert [e.where for e in advice.estimates] == ["(`day` = CAST('2024-01-05' AS DATE))"]
    with pytest.raises(InvalidSpecError, match="no query of the workload reads this table"):
        advise(table, ["SELECT 1 FROM other WHERE a = 1"], layouts_too=False)


def test_the_query_log_is_the_default_workload(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    log = str(tmp_path / "queries.db")
    query_log.use_query_log(log)
    try:
        for _ in range(3):
            si.prune(str(table), "k = 97", time_zone="UTC")
        si.prune(str(table), "day = DATE '2024-01-05'", time_zone="UTC")
    finally:
        query_log.use_query_log(None)
    advice = advise(table, log=log, layouts_too=False, sample_files=FILES)
    weights = {e.where: e.weight for e in advice.estimates}
    assert weights == {"k = 97": 3.0, "day = DATE '2024-01-05'": 1.0}


def test_no_workload_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = events_table(tmp_path / "events")
    monkeypatch.delenv(query_log.ENV, raising=False)
    with pytest.raises(InvalidSpecError, match="give the workload"):
        advise(table)


def test_advice_goes_into_a_maintenance_policy(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    policy = tmp_path / "policy.toml"
    policy.write_text(
        f'[service]\nstate = "state.db"\n\n[[table]]\npath = "{os.path.relpath(table, tmp_path)}"\n'
    )
    advice = advise(table, KEY_QUERIES, sample_files=FILES, layouts_too=False)
    entry = to_policy(advice, policy)
    written = tomllib.loads(policy.read_text())["table"][0]
    assert written["indexes"] == entry["indexes"] == advice.policy_entry()["indexes"]
    assert (tmp_path / "policy.toml.bak").exists()


def test_the_command_reads_named_queries_and_speaks_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = events_table(tmp_path / "events")
    queries = tmp_path / "queries.sql"
    queries.write_text(
        "-- by key\nSELECT * FROM events WHERE k = 97;\n\n-- by day\nday = DATE '2024-01-05';\n"
    )
    argv = ["advise", str(table), "--queries", str(queries), "--no-layout", "--json"]
    assert main([*argv, "--sample-files", str(FILES)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [e["label"] for e in document["estimates"]] == ["by key", "by day"]
    assert document["layout"] is None
    assert document["totals"]["planned"] == sum(e["planned"] for e in document["estimates"])
    assert main(["advise", str(table), "--queries", str(tmp_path / "missing.sql")]) == 2


def test_a_partitioned_table_gets_index_advice_only(tmp_path: Path) -> None:
    table = events_table(tmp_path / "events")
    for number, path in enumerate(sorted(table.glob("*.parquet"))):
        folder = table / f"region={'north' if number % 2 else 'south'}"
        folder.mkdir(exist_ok=True)
        path.rename(folder / path.name)
    advice = advise(table, {**DAY_QUERIES, "north": "region = 'north' AND k = 97"})
    assert advice.layout is None
    assert "partitioned" in advice.layout_reason
    north = next(e for e in advice.estimates if e.label == "north")
    assert north.no_index == FILES // 2  # the partition folders prune with no index file


def test_a_workload_searching_text_is_advised_a_substring_index(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "logs"
    table.mkdir()
    for number in range(FILES):  # each file's messages unique; one word per file pair
        messages = [
            f"request {number * 1000 + i} failed with code{number // 2}x" for i in range(50)
        ]
        pq.write_table(pa.table({"msg": messages}), table / f"part-{number:05d}.parquet")
    searches = {f"Q{n}": f"msg LIKE '%code{n}x%'" for n in range(4)}
    advice = advise(table, searches, sample_files=FILES, layouts_too=False)
    assert ("msg", "ngram_bloom") in {(c.column, c.kind) for c in advice.indexes}
    assert advice.totals()["planned"] <= 2 * len(searches)
    plain = advise(table, {"Q": "msg = 'x'"}, sample_files=FILES, layouts_too=False)
    assert "ngram_bloom" not in {c.kind for c in plain.indexes}  # only where text is searched
    regexes = {f"R{n}": f"msg RLIKE 'code{n}x[0-9]*'" for n in range(4)}  # the same text
    by_regex = advise(table, regexes, sample_files=FILES, layouts_too=False)
    assert ("msg", "ngram_bloom") in {(c.column, c.kind) for c in by_regex.indexes}
