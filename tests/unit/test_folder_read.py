"""When read() may reuse the schema Spark inferred for a table folder (no JVM here:
the session is a stand-in that only reports its settings)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from skipindex._folder_read import _key, folder_frame, schema_cache
from skipindex.result import PruneResult

FILES = [f"/t/p{k}.parquet" for k in range(3)]


def _session(settings: str = "Map(spark.sql.parquet.mergeSchema -> false)") -> Any:
    conf = SimpleNamespace(getAllConfs=lambda: SimpleNamespace(toString=lambda: settings))
    state = SimpleNamespace(conf=lambda: conf)
    return SimpleNamespace(_jsparkSession=SimpleNamespace(sessionState=lambda: state))


def _result(**changes: Any) -> PruneResult:
    every = PruneResult(files=FILES, total=3, predicate="p", bound="p", covered=3, version=4)
    return replace(every, **changes)


class _Reader:
    """Records how Spark was asked to read the folder."""

    def __init__(self) -> None:
        self.given: list[Any] = []

    def schema(self, schema: Any) -> _Reader:
        self.given.append(schema)
        return self

    def parquet(self, root: str) -> Any:
        return SimpleNamespace(schema=f"inferred {root}", given=list(self.given))


def test_only_a_folder_of_exactly_the_indexed_files_has_a_key():
    spark = _session()
    assert _key(spark, "/t", _result()) is not None
    assert _key(spark, "/t", _result(covered=2)) is None  # a file added or changed
    assert _key(spark, "/t", _result(files=FILES[:2])) is None  # a file not kept
    assert _key(spark, "/t", _result(version=None)) is None  # no index
    assert _key(spark, "/t", _result(not_parquet=["notes.txt"])) is None
    assert _key(spark, "/t", _result(swapping=["p1.parquet"])) is None
    assert _key(SimpleNamespace(), "/t", _result()) is None  # Spark Connect: no JVM session
    summaries = _session("Map(spark.sql.parquet.respectSummaryFiles -> true)")
    assert _key(summaries, "/t", _result()) is None  # may infer from _common_metadata


def test_the_key_follows_files_version_table_and_settings():
    spark = _session()
    key = _key(spark, "/t", _result())
    moved = [*FILES[:2], "/t/q2.parquet"]
    assert _key(spark, "/t", _result(files=moved)) != key
    assert _key(spark, "/t", _result(version=5)) != key
    assert _key(spark, "/u", _result()) != key
    assert _key(_session("Map(spark.sql.parquet.mergeSchema -> true)"), "/t", _result()) != key
    assert _key(_session(), "/t", _result()) == key


@pytest.fixture
def empty_cache() -> None:
    schema_cache.clear()


def test_the_second_read_of_a_folder_gives_spark_the_first_one_s_schema(empty_cache):
    spark = _session()
    first, second = _Reader(), _Reader()
    assert folder_frame(spark, first, "/t", _result()).given == []
    assert folder_frame(spark, second, "/t", _result()).given == ["inferred /t"]
    changed = _Reader()
    assert folder_frame(spark, changed, "/t", _result(covered=2)).given == []
