"""skipindex.sql against Spark: registered views, paths, partition folders, Delta
snapshots, views replaced behind its back, case-sensitive sessions, what it
leaves as written, explain(), and the `skipindex sql` command."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import skipindex as si
from skipindex.cli import main
from tests._support import exact_rows

pytestmark = pytest.mark.spark


def _write(folder: Path, files: int = 4, rows: int = 50, partitioned: bool = False) -> Path:
    folder.mkdir(parents=True)
    for f in range(files):
        table = pa.table(
            {
                "id": pa.array(range(f * rows, (f + 1) * rows), pa.int64()),
                "k": pa.array(
                    [None if i % 7 == 0 else f * 3 + i % 3 for i in range(rows)], pa.int32()
                ),
                "s": pa.array([f"s{f}"] * rows),
            }
        )
        target = folder / (f"p={f % 2}" if partitioned else "") / f"part-{f}.parquet"
        target.parent.mkdir(exist_ok=True)
        pq.write_table(table, target, row_group_size=10)
    return folder


@pytest.fixture
def fact(spark: Any, tmp_path: Path) -> Path:
    folder = _write(tmp_path / "fact")
    specs = [si.MinMax("id"), si.BitSlicedBitmap("id"), si.Bloom("k"), si.EqualityBitmap("s")]
    si.build_index(str(folder), specs, spark=spark)
    si.register(spark, "fact", str(folder))
    return folder


@pytest.fixture
def dim(spark: Any, tmp_path: Path) -> Path:
    folder = tmp_path / "dim"
    folder.mkdir()
    for f in range(2):
        keys = list(range(f * 6, f * 6 + 6))
        pq.write_table(
            pa.table({"k": pa.array(keys, pa.int32()), "tag": [f"t{k % 4}" for k in keys]}),
            folder / f"part-{f}.parquet",
        )
    si.build_index(str(folder), [si.EqualityBitmap("tag")], spark=spark)
    si.register(spark, "dim", str(folder))
    return folder


def _same(spark: Any, query: str, policy: si.PlanningPolicy | None = None) -> si.SqlPlan:
    plan = si.sql_plan(spark, query, policy=policy)
    expected = spark.sql(query)
    assert plan.frame.schema == expected.schema
    assert exact_rows(plan.frame) == exact_rows(expected), plan.explain()
    return plan


def test_a_registered_table_is_read_from_its_kept_files(spark, fact):
    plan = _same(spark, "SELECT id, k FROM fact WHERE id < 60 AND s = 's1'")
    (reference,) = plan.references
    assert reference.replaced
    assert reference.result is not None
    assert reference.result.kept == 1
    assert reference.files == [str(fact / "part-1.parquet")]
    text = plan.explain()
    assert "`id` < 60  <- written" in text
    assert "kept 1 of 4 files" in text
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("_pyspark")]


def test_nothing_kept_is_an_empty_table_of_the_same_schema(spark, fact):
    plan = _same(spark, "SELECT * FROM fact WHERE id > 1000")
    assert plan.references[0].replaced
    assert plan.frame.count() == 0


def test_a_plans_frame_is_refused_once_the_session_zone_changed(spark, fact):
    plan = si.sql_plan(spark, "SELECT id FROM fact WHERE id < 60")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kathmandu")
    try:
        with pytest.raises(si.SessionChangedError, match="Asia/Kathmandu"):
            _ = plan.frame
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    assert sorted(r.id for r in plan.frame.collect()) == list(range(60))  # settings back


def test_dynamic_pruning_by_the_keys_of_a_filtered_side(spark, fact, dim):
    plan = _same(spark, "SELECT f.id, d.tag FROM fact f JOIN dim d ON f.k = d.k WHERE d.tag = 't1'")
    fact_plan = next(r for r in plan.references if r.written == "fact")
    assert any(c.origin == "dynamic" for c in fact_plan.conditions)
    assert fact_plan.result is not None
    assert fact_plan.result.kept < 4
    assert any(j.keys is not None for j in plan.joins)
    # dim's bitmaps narrowed it to its matching rows: their keys are read without Spark.
    assert [j.note for j in plan.joins if j.keys is not None] == ["read from its kept rows"]
    # Rows no index narrows (k is not indexed in dim) give all 12 keys, more than the
    # bound of 3: Spark's key query finds the 2 that match.
    plan = _same(spark, "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.k < 2")
    fact_plan = next(r for r in plan.references if r.written == "fact")
    assert fact_plan.result is not None
    assert fact_plan.result.kept < 4, plan.explain()
    plan = si.sql_plan(
        spark, "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.k < 2", dynamic_keys=3
    )
    assert [(j.keys, j.note) for j in plan.joins if j.fact == "fact"] == [(2, "")]
    # Too many keys for the bound: no dynamic condition, same rows. The 12 rows of dim
    # match: with a bound of 3 the key query finds more, with 2 its index says so first.
    query = "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.tag <> 't9'"
    plan = si.sql_plan(spark, query, dynamic_keys=3)
    assert all(j.keys is None for j in plan.joins)
    assert "more than 3 keys" in plan.explain()
    plan = si.sql_plan(spark, query, dynamic_keys=2)
    assert all(j.keys is None for j in plan.joins)
    assert "its index says about 12 rows match" in plan.explain()


def test_a_subquery_choosing_the_dimensions_rows_narrows_its_keys(spark, fact, dim):
    """q58's shape: the dimension's rows are chosen by an uncorrelated subquery,
    which no index evaluates but Spark's key query holds: dim's rows k = 1, 5, 9."""
    query = (
        "SELECT f.id, d.tag FROM fact f JOIN dim d ON f.k = d.k "
        "WHERE d.tag IN (SELECT tag FROM dim WHERE k = (SELECT min(k) + 1 FROM dim))"
    )
    plan = _same(spark, query)
    fact_plan = next(r for r in plan.references if r.written == "fact")
    assert fact_plan.result is not None, plan.explain()
    assert fact_plan.result.kept == 3, plan.explain()  # file 2 holds k 6-8 only
    used = sorted((j.fact, j.keys, j.note) for j in plan.joins if j.keys is not None)
    # the inner dim's key query holds its scalar subquery: tag t1; d, narrowed to it by
    # its bitmaps, gives its rows' keys
    assert used == [("dim", 1, ""), ("fact", 3, "read from its kept rows")], plan.explain()
    # explain() names the condition no index evaluates, on the reference it filters
    dim_plan = next(r for r in plan.references if r.alias == "d")
    (held,) = dim_plan.key_only
    assert held.startswith("`tag` IN (SELECT"), plan.explain()
    assert "not pruned with, held by a key query" in plan.explain()
    (as_json,) = [r for r in plan.to_dict()["references"] if r["alias"] == "d"]
    assert as_json["key_only"] == [held]
    # q06's shape: a scalar subquery alone, on a dimension whose key an index answers
    # (so that the fact's keys could narrow it, had the fact any conditions: it has none)
    si.build_index(str(dim), [si.EqualityBitmap("tag"), si.MinMax("k")], spark=spark)
    plan = _same(
        spark,
        "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.k = (SELECT min(k) + 1 FROM dim)",
    )
    fact_plan = next(r for r in plan.references if r.written == "fact")
    assert fact_plan.result is not None
    assert fact_plan.result.kept == 1, plan.explain()
    # naming the outer row (correlated), it is not held for d's key query; the inner
    # dim's own conditions still narrow d by tag, a superset of its rows: same rows
    _same(spark, query.replace("FROM dim WHERE k =", "FROM dim i WHERE i.k = d.k AND i.k ="))


def test_no_spark_key_query_for_a_side_smaller_than_it_costs(spark, fact, dim, monkeypatch):
    # fact's 4 files are a few KB, far below the bound si.sql runs with by default
    # (the tests' sessions lower it to 0: tests/conftest.py).
    policy = si.PlanningPolicy(key_query_bytes=64 * 2**20)
    jobs = []
    monkeypatch.setattr(
        importlib.import_module("skipindex.sql.key_sources"),
        "join_keys",
        lambda *args, **kwargs: jobs.append(args) or None,
    )
    # k is not indexed in dim: only a Spark key query could give its keys.
    plan = _same(spark, "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.k < 2", policy)
    assert not jobs
    assert "too small for a Spark key query to pay" in plan.explain()
    # Keys read from dim's bitmaps' rows cost no Spark job: those still prune.
    query = "SELECT f.id, d.tag FROM fact f JOIN dim d ON f.k = d.k WHERE d.tag = 't1'"
    plan = _same(spark, query, policy)
    assert [j.note for j in plan.joins if j.keys is not None] == ["read from its kept rows"]
    assert not jobs


def test_a_spark_key_query_waits_for_the_keys_read_locally_in_its_round(
    spark, fact, dim, tmp_path, monkeypatch
):
    # q49: December's dates, read from date_dim's bitmaps, leave each sales table two
    # files; its returns' keys, a Spark job each, were asked before those pruned it.
    keyed = tmp_path / "keyed"  # one file: fact's keys skip none of it (no relay)
    keyed.mkdir()
    pq.write_table(
        pa.table({"k": pa.array([0, 1, 7, 8], pa.int32()), "tag": ["z", "z", "y", "y"]}),
        keyed / "part-0.parquet",
    )
    si.build_index(str(keyed), [si.EqualityBitmap("tag"), si.BitSlicedBitmap("k")], spark=spark)
    si.register(spark, "keyed", str(keyed))
    files = sorted(fact.glob("*.parquet"))
    policy = importlib.import_module("skipindex.reading.policy")
    # the whole fact is worth a key query; the one file keyed's keys keep is not
    monkeypatch.setattr(
        policy, "DEFAULT", replace(policy.DEFAULT, key_query_bytes=2 * files[0].stat().st_size)
    )
    jobs = []
    monkeypatch.setattr(
        importlib.import_module("skipindex.sql.key_sources"),
        "join_keys",
        lambda *args, **kwargs: jobs.append(args) or None,
    )
    # k is not indexed in dim: only a Spark key query could give d's keys
    plan = _same(
        spark,
        "SELECT f.id FROM fact f JOIN keyed x ON f.k = x.k JOIN dim d ON f.id = d.k "
        "WHERE x.tag = 'z' AND d.k < 2",
    )
    assert not jobs, plan.explain()
    (fact_plan,) = [r for r in plan.references if r.written == "fact"]
    assert fact_plan.result is not None
    assert fact_plan.result.kept == 1, plan.explain()
    assert "pruned by other keys, is too small for a key query to pay" in plan.explain()


def test_a_view_replaced_after_register_is_just_a_view(spark, fact, tmp_path):
    other = _write(tmp_path / "other")
    spark.read.parquet(str(other)).createOrReplaceTempView("fact")
    plan = _same(spark, "SELECT id FROM fact WHERE id < 60")
    assert not plan.references or not plan.references[0].replaced


def test_a_registered_view_holds_its_listing_until_refreshed_as_spark_does(
    spark, fact, monkeypatch
):
    """The view is a DataFrame's, as plain Spark's best: its listing and schema are
    taken once. si.sql reads that relation less the skipped files, with no listing
    and no schema asked of Spark; a file added later shows in spark.sql's rows and
    si.sql's alike, once the view is refreshed, and never in only one of them."""
    asked: list[str] = []
    reader = type(spark.read)
    parquet = reader.parquet

    def counted(self: Any, *paths: str, **options: Any) -> Any:
        asked.extend(paths)
        return parquet(self, *paths, **options)

    monkeypatch.setattr(reader, "parquet", counted)
    from skipindex.store.location import TableLocation

    listings: list[str] = []
    list_table = TableLocation.list_table

    def listed(self: Any) -> Any:
        listings.append(self.user_root)
        return list_table(self)

    monkeypatch.setattr(TableLocation, "list_table", listed)
    query = "SELECT id, s FROM fact WHERE id < 60 OR id >= 9000"
    plan = _same(spark, query)
    assert plan.references[0].replaced, plan.explain()
    assert plan.references[0].result is not None
    assert plan.references[0].result.kept == 2
    # the held relation, filtered by the skipped files' paths: Spark's file index
    # drops them before opening any
    assert "_metadata" in plan.frame._jdf.queryExecution().optimizedPlan().toString()
    assert not asked, "si.sql listed the folder again"
    pq.write_table(
        pa.table({"id": pa.array([9500], pa.int64()), "k": pa.array([1], pa.int32()), "s": ["n"]}),
        fact / "part-9-new.parquet",
    )
    si.build_index(str(fact), spark=spark)  # the new file indexed: still not in the view
    listings.clear()
    asked.clear()
    before = _same(spark, query)  # the view does not see the new file yet
    assert 9500 not in {row.id for row in before.frame.collect()}
    assert not listings, "si.sql listed the folder its view holds"
    spark.sql("REFRESH TABLE fact")
    after = _same(spark, query)
    assert 9500 in {row.id for row in after.frame.collect()}
    assert listings == [str(fact)]  # once, for Spark's new listing
    spark.catalog.refreshTable("fact")
    _same(spark, query)
    assert len(listings) == 2
    _same(spark, query)
    assert len(listings) == 2
    assert not asked


def test_paths_and_partition_folders_keep_sparks_schema(spark, tmp_path):
    folder = _write(tmp_path / "parts", files=6, partitioned=True)
    si.build_index(str(folder), [si.MinMax("id")], spark=spark)
    si.register(spark, "parts", str(folder))
    for table in ("parts", f"parquet.`{folder}`"):
        plan = _same(spark, f"SELECT * FROM {table} WHERE id < 40")
        assert plan.references[0].replaced, plan.explain()
        plan = _same(spark, f"SELECT p, count(*) FROM {table} WHERE p = 1 AND id > 120 GROUP BY p")
        assert plan.references[0].replaced


def test_a_registered_delta_table_is_its_snapshot(spark, tmp_path):
    root = tmp_path / "events"
    for start in range(0, 400, 100):
        ids = pa.array(range(start, start + 100), pa.int64())
        write_deltalake(
            str(root), pa.table({"id": ids, "v": pa.array([start] * 100)}), mode="append"
        )
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    si.register(spark, "events", str(root))
    plan = _same(spark, "SELECT sum(v), count(*) FROM events WHERE id >= 250")
    assert plan.references[0].replaced
    assert plan.references[0].result is not None
    assert plan.references[0].result.kept == 2
    DeltaTable(str(root)).delete("id < 50")  # a new commit: the view still shows its snapshot
    plan = _same(spark, "SELECT count(*) FROM events WHERE id < 80")
    assert not plan.references[0].replaced
    assert "new commits" in plan.explain()
    # delta.`path` names the current snapshot, whether or not Spark has Delta's connector.
    rows = si.sql(spark, f"SELECT count(*) FROM delta.`{root}` WHERE id < 80").collect()
    assert rows[0][0] == 30


def test_layout_dependent_and_unparsed_queries_run_as_written(spark, fact):
    plan = si.sql_plan(spark, "SELECT id, rand(7) AS r FROM fact WHERE id < 10")
    assert "rand" in plan.note.lower()
    assert exact_rows(plan.frame) == exact_rows(
        spark.sql("SELECT id, rand(7) AS r FROM fact WHERE id < 10")
    )
    plan = si.sql_plan(spark, "SHOW TABLES")
    assert plan.note
    assert plan.frame.count() >= 1


def test_case_sensitive_session(spark, tmp_path):
    folder = tmp_path / "cased"
    folder.mkdir()
    for f in range(3):
        pq.write_table(
            pa.table({"Id": pa.array(range(f * 10, f * 10 + 10), pa.int64())}),
            folder / f"p{f}.parquet",
        )
    si.build_index(str(folder), [si.MinMax("Id")], spark=spark)
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        si.register(spark, "Cased", str(folder))
        plan = _same(spark, "SELECT Id FROM Cased WHERE Id < 10")
        assert plan.references[0].replaced
    finally:
        # A view made in a case-sensitive session breaks Spark's listTables() in a
        # case-insensitive one (PARSE_EMPTY_STATEMENT): gone before the setting is.
        spark.catalog.dropTempView("Cased")
        spark.conf.set("spark.sql.caseSensitive", "false")


def test_sql_by_row_groups_returns_the_same_rows(spark, fact, used_row_groups):
    plan = _same(spark, "SELECT * FROM fact WHERE id = 3 OR id = 77")
    assert plan.references[0].replaced
    assert used_row_groups, plan.explain()


def test_the_sql_command(spark, fact, capsys):
    query = "SELECT id FROM fact WHERE id < 3 ORDER BY id"
    assert main(["sql", query, "--table", f"fact={fact}", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["rows"] == [{"id": 0}, {"id": 1}, {"id": 2}]
    assert document["plan"]["references"][0]["kept"] == 1
    assert main(["sql", query, "--table", f"fact={fact}", "--explain", "--limit", "0"]) == 0
    assert "kept 1 of 4 files" in capsys.readouterr().out


def test_each_pruned_reference_is_logged_once_as_sql(spark, fact, dim, tmp_path):
    from skipindex.store import query_log

    log = str(tmp_path / "queries.db")
    query_log.use_query_log(log)
    try:
        _same(spark, "SELECT f.id FROM fact f JOIN dim d ON f.k = d.k WHERE d.tag = 't1'")
    finally:
        query_log.use_query_log(None)
    logged = query_log.queries(log, str(dim)) + query_log.queries(log, str(fact))
    assert {r.source for r in logged} == {"sql"}
    assert [r.predicate for r in query_log.queries(log, str(dim))] == ["(`tag` = 't1')"]
