"""The Spark Connect gateway: clients connected through it get exactly the rows of
a session connected straight to the server, and the server reads fewer files.

One Connect server (tests/conftest.py, token authentication) holds the tables as
catalog tables; the gateway runs in this process on a loopback port. Each test
compares a client of the gateway with a direct client, in the same zone.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import skipindex as si
from skipindex.cli import parse_index_option
from skipindex.gateway import ACCOUNT_KEY
from tests._sql_queries import INDEXES, queries, write_tables
from tests._support import six_event_files

pytestmark = pytest.mark.spark

ZONES = ["UTC", "America/Los_Angeles", "Asia/Kathmandu"]
_ZONED = re.compile(r"\bts\b|timestamp|interval|date_trunc|select\s+\*|\.\*", re.IGNORECASE)


@pytest.fixture(scope="module")
def lake(
    spark: Any, connect_server: tuple[int, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The server, its tables, a gateway in front of it, and a session of each."""
    port, token = connect_server
    root = tmp_path_factory.mktemp("gateway")
    events = six_event_files(root / "events")
    si.build_index(
        str(events),
        [si.MinMax("id"), si.MinMax("day"), si.MinMax("ts"), si.EqualityBitmap("mode")],
        spark=spark,
    )
    folders = write_tables(root / "generated")
    for name, folder in folders.items():
        specs = [parse_index_option(f"{kind}:{column}") for kind, column in INDEXES[name]]
        si.build_index(str(folder), specs, spark=spark)
    tables = {"events": str(events), **{n: str(f) for n, f in folders.items() if n != "pt"}}
    os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
    from pyspark.sql.connect.session import SparkSession

    # Test tables are kilobytes: no floor (a test below checks the default one).
    running = si.gateway(
        f"sc://localhost:{port}", tables=tables, listen="127.0.0.1:0", min_table_mb=0
    )
    try:
        direct = SparkSession.builder.remote(f"sc://localhost:{port}").create()
        through = SparkSession.builder.remote(running.address).create()
        for name, folder in tables.items():
            # The server outlives this fixture: a second set-up on the same worker (the
            # module's tests split between workers) must not keep the first one's folder.
            direct.sql(f"DROP TABLE IF EXISTS {name}").collect()  # external: no data lost
            direct.sql(f"CREATE TABLE {name} USING parquet LOCATION '{folder}'").collect()
        yield {
            "direct": direct,
            "through": through,
            "gateway": running,
            "events": str(events),
            "folders": folders,
            "port": port,
            "token": token,
        }
        # stop(), not only the channel: the first session created became PySpark's
        # default and active one, which the next module's getOrCreate() would reuse.
        through.stop()
        direct.stop()
    finally:
        running.stop()
        os.environ.pop("SPARK_CONNECT_AUTHENTICATE_TOKEN", None)


def _rows(frame: Any) -> list[str]:
    return sorted(repr(tuple(r)) for r in frame.collect())


def _both(lake: dict[str, Any], zone: str) -> tuple[Any, Any]:
    for side in ("direct", "through"):
        lake[side].conf.set("spark.sql.session.timeZone", zone)
    return lake["direct"], lake["through"]


def _kept(account: str) -> list[tuple[int, int]]:
    return [(int(k), int(n)) for k, n in re.findall(r"kept (\d+) of (\d+) files", account)]


@pytest.mark.parametrize("zone", ZONES)
def test_sql_through_the_gateway_is_spark_sql_reading_fewer_files(lake, zone):
    direct, through = _both(lake, zone)
    cases = [
        ("SELECT id, mode FROM events WHERE id BETWEEN 120 AND 150", 1),
        ("SELECT count(*) FROM events WHERE day = DATE '2024-01-12'", 1),
        ("SELECT id, ts FROM events WHERE ts < TIMESTAMP '2024-03-10 02:00:00'", None),
        ("SELECT e.mode, count(*) FROM events e WHERE e.mode = 'RAIL' GROUP BY e.mode", 2),
        ("SELECT * FROM events WHERE id IN (5, 505) ORDER BY id", 2),
    ]
    for query, files in cases:
        assert _rows(through.sql(query)) == _rows(direct.sql(query)), (zone, query)
        kept = _kept(through.conf.get(ACCOUNT_KEY))
        assert kept, (zone, query)
        assert all(k < n for k, n in kept), (zone, query, kept)
        if files is not None:
            assert kept == [(files, 6)], (zone, query)
    # A DataFrame made by spark.sql, with more on top: the SQL inside is pruned too.
    query = "SELECT * FROM events WHERE id < 100"
    assert (
        through.sql(query).filter("mode = 'AIR'").count()
        == direct.sql(query).filter("mode = 'AIR'").count()
    )
    assert _kept(through.conf.get(ACCOUNT_KEY)) == [(1, 6)]
    # ... and the client's references to that DataFrame (its plan id) still resolve.
    frames = [session.sql(query) for session in (direct, through)]
    narrowed = [f.filter(f["id"] > 50).select(f["id"], "day") for f in frames]
    assert _rows(narrowed[1]) == _rows(narrowed[0])
    assert _kept(through.conf.get(ACCOUNT_KEY)) == [(1, 6)]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kathmandu"])
def test_dataframe_filters_over_a_read_prune_with_the_clients_own_references(lake, zone):
    from pyspark.sql.connect import functions as F  # noqa: N812

    direct, through = _both(lake, zone)
    start = dt.datetime(2024, 3, 10, 4)  # a naive datetime: the client reads it in its zone
    frames = []
    for session in (direct, through):
        events = session.read.parquet(lake["events"])
        frames.append(
            events.filter(events["day"] == dt.date(2024, 1, 12))  # a plan-id reference
            .where(F.col("ts") >= F.lit(start))
            .select("id", "ts")
        )
    assert _rows(frames[1]) == _rows(frames[0])
    assert _kept(through.conf.get(ACCOUNT_KEY)) == [(1, 6)]
    by_text = [
        s.read.parquet(lake["events"]).where("id BETWEEN 101 AND 120") for s in (direct, through)
    ]
    assert _rows(by_text[1]) == _rows(by_text[0])
    assert _kept(through.conf.get(ACCOUNT_KEY)) == [(1, 6)]


def test_the_query_log_says_the_gateway_pruned(lake, tmp_path):
    from skipindex.store import query_log

    log = str(tmp_path / "queries.db")
    _, through = _both(lake, "UTC")
    query_log.use_query_log(log)
    try:
        through.sql("SELECT id FROM events WHERE id = 321").collect()
        events = through.read.parquet(lake["events"])
        events.filter(events["id"] == 42).collect()
    finally:
        query_log.use_query_log(None)
    logged = query_log.queries(log, lake["events"])
    assert [r.source for r in logged] == ["gateway", "gateway"]
    assert sorted(r.files_kept for r in logged) == [1, 1]


def test_what_the_gateway_cannot_vouch_for_goes_as_sent(lake):
    direct, through = _both(lake, "UTC")
    before = through.conf.get(ACCOUNT_KEY)
    # The client's own temporary view shadows the catalog table of that name.
    through.sql("CREATE OR REPLACE TEMPORARY VIEW events AS SELECT 999 AS id").collect()
    try:
        assert [r.id for r in through.sql("SELECT id FROM events WHERE id > 5").collect()] == [999]
    finally:
        through.sql("DROP VIEW events").collect()
    # A read with options of its own, and a parameterized query.
    read = through.read.option("mergeSchema", "true").parquet(lake["events"]).where("id = 7")
    assert [r.id for r in read.collect()] == [7]
    assert through.sql("SELECT id FROM events WHERE id = :k", args={"k": 7}).collect()[0].id == 7
    assert through.conf.get(ACCOUNT_KEY) == before
    # Under the default floor (256 MB of indexed data), kilobyte tables go as sent.
    from pyspark.sql.connect.session import SparkSession

    with si.gateway(
        f"sc://localhost:{lake['port']}", tables={"events": lake["events"]}, listen="127.0.0.1:0"
    ) as floored:
        client = SparkSession.builder.remote(floored.address).create()
        assert client.sql("SELECT id FROM events WHERE id = 7").collect()[0].id == 7
        assert floored.rewriter.account_of(client.session_id) is None
        client.stop()
    # Errors come back as the server sent them.
    from pyspark.errors import AnalysisException

    errors = []
    for session in (direct, through):
        with pytest.raises(AnalysisException) as raised:
            session.sql("SELECT nope FROM events WHERE id = 1").collect()
        errors.append(raised.value.getCondition())
    assert errors[0] == errors[1] == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    # Settings are the server's: set through the gateway, read straight from it.
    through.conf.set("spark.sql.shuffle.partitions", "3")
    assert through.conf.get("spark.sql.shuffle.partitions") == "3"


def test_a_raw_grpc_client_sends_a_sql_plan_with_its_own_token(lake):
    """Not PySpark's DataFrame API: the request built from the protos, as a Go or
    Rust client would; without the token the server refuses it through the gateway too."""
    import grpc
    from pyspark.sql.connect.proto import base_pb2, base_pb2_grpc

    query = "SELECT id, mode FROM events WHERE id BETWEEN 420 AND 430"
    request = base_pb2.ExecutePlanRequest(
        session_id=str(uuid.uuid4()), operation_id=str(uuid.uuid4())
    )
    request.user_context.user_id = "raw-client"
    request.client_type = "raw-grpc-test"
    request.plan.root.sql.query = query
    with grpc.insecure_channel(f"localhost:{lake['gateway'].port}") as channel:
        stub = base_pb2_grpc.SparkConnectServiceStub(channel)
        token = [("authorization", f"Bearer {lake['token']}")]
        batches = [
            pa.ipc.open_stream(r.arrow_batch.data).read_all()
            for r in stub.ExecutePlan(request, metadata=token)
            if r.HasField("arrow_batch")
        ]
        rows = sorted(tuple(row.values()) for b in batches for row in b.to_pylist())
        request.operation_id = str(uuid.uuid4())
        with pytest.raises(grpc.RpcError):
            list(stub.ExecutePlan(request))
    assert rows == sorted((i, "SHIP") for i in range(420, 431))
    assert _kept(lake["gateway"].rewriter.account(request.session_id)) == [(1, 6)]


def test_generated_queries_through_the_gateway(lake):
    """The SQL differential test's queries (joins, CTEs, set operations, NULLs):
    the gateway's rows are the direct session's, in each zone where the text
    can depend on it."""
    folders = lake["folders"]
    names = {name: name for name in folders}
    names["pt"] = f"parquet.`{folders['pt']}`"  # partitions the catalog would keep: by path
    generated = queries(12, [names], seed=44)
    skipped = 0
    for zone in ZONES:
        direct, through = _both(lake, zone)
        for query in generated:
            if zone != "UTC" and not _ZONED.search(query):
                continue
            before = through.conf.get(ACCOUNT_KEY)
            assert _rows(through.sql(query)) == _rows(direct.sql(query)), (zone, query)
            account = through.conf.get(ACCOUNT_KEY)
            skipped += account != before and any(k < n for k, n in _kept(account))
    assert skipped >= len(generated) // 4, "the generated queries should skip files"
