"""TPC-DS's 99 queries through ``si.sql`` return exactly ``spark.sql``'s rows, in
two session time zones, over small TPC-DS data (DuckDB's tpcds extension,
SF 0.01) indexed as bench/tpcds.py indexes SF1: each fact table in date order in
several files, min-max on every key (``_sk``, order and ticket numbers),
bit-sliced bitmaps on the facts' date, item and customer keys and order and ticket
numbers, equality bitmaps
on dimension strings and bit-sliced bitmaps on dimension numbers and dates.

Spark's own rows are computed once, in UTC (TPC-DS names no timestamp, so no
zone changes them: checked), and kept beside the data for every worker.
si.sql plans each query in each zone; its rows are read in UTC, and in another
zone wherever that zone's plan reads other files, row groups or rows than
UTC's (the same reads under a text no zone changes are the same rows); a query
where nothing is replaced runs as written, and only its schema is compared. The
queries are split in groups so that workers share them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import exact_rows, what_is_read
from tests._tpcds import exclusive, queries, register, tpcds, tpcds_indexes

pytestmark = [pytest.mark.spark, pytest.mark.slow]

GROUPS = 6
# UTC and a zone of an odd offset: TPC-DS names no timestamp, so a zone can only change
# how a date literal is planned, which one zone away from UTC shows (the SQL
# differential, whose queries compare timestamps, runs three).
ZONES = ["UTC", "Asia/Kathmandu"]
_ZONED = re.compile(
    r"\bcurrent_(date|timestamp)\b|\bnow\s*\(|\btimestamp\b|unix_|from_utc|to_utc|date_format",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def warehouse(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data, its indexes and the queries in Spark's dialect, made once for all
    workers (the session's temp folder is shared), registered in this worker's session."""
    shared = tmp_path_factory.getbasetemp().parent / "tpcds-sf0_01"
    folder = _once(shared, lambda staging: _indexed_warehouse(spark, staging))
    register(spark, folder)
    texts = queries(folder, spark)
    assert len(texts) == 99
    assert not [n for n, q in texts.items() if _ZONED.search(q)]  # no zone changes Spark's rows
    return folder


def _indexed_warehouse(spark: Any, folder: Path) -> None:
    tpcds(folder, 0.01, fact_files=6)
    for table in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "queries"):
        build_with(str(table), tpcds_indexes(table), InProcessRunner())
    queries(folder, spark)  # transpiled here, before any worker reads them


def _once(target: Path, make: Any) -> Path:
    """``target``, made by ``make`` once for every worker (the others wait for it)."""
    with exclusive(target.with_name(f"{target.name}.lock")):
        if not target.exists():
            staging = target.with_name(f"{target.name}.making")
            shutil.rmtree(staging, ignore_errors=True)
            make(staging)
            staging.rename(target)
    return target


def _expected(spark: Any, folder: Path, name: str, query: str) -> tuple[str, list[str]]:
    """Spark's schema (JSON) and rows of query ``name`` in UTC, computed once for
    every worker."""
    kept = folder.with_name(f"{folder.name}-expected") / f"{name}.json"
    if kept.exists():
        schema, rows = json.loads(kept.read_text())
        return schema, rows
    frame = spark.sql(query)
    schema, rows = frame.schema.json(), exact_rows(frame)
    kept.parent.mkdir(exist_ok=True)
    staging = kept.with_name(f"{name}.{os.getpid()}.json")
    staging.write_text(json.dumps([schema, rows]))
    staging.replace(kept)
    return schema, rows


@pytest.mark.parametrize("group", range(GROUPS))
def test_every_query_returns_sparks_rows(spark: Any, warehouse: Path, group: int):
    texts = queries(warehouse, spark)
    names = sorted(texts)[group::GROUPS]
    in_utc: dict[str, list[Any]] = {}
    for zone in ZONES:  # zone by zone: a session's settings changed cost each view's schema
        spark.conf.set("spark.sql.session.timeZone", zone)
        try:
            for name in names:
                plan = si.sql_plan(spark, texts[name])
                reads = what_is_read(plan)
                if reads == in_utc.setdefault(name, reads) and zone != ZONES[0]:
                    # The same files, row groups and rows as in UTC, under a text no zone
                    # changes: the rows are UTC's, checked already.
                    continue
                if any(r.replaced for r in plan.references):
                    schema, expected = _expected(spark, warehouse, name, texts[name])
                    assert plan.frame.schema.json() == schema, f"{name} ({zone})\n{plan.explain()}"
                    _same_rows(spark, name, texts[name], plan, expected, zone)
                else:  # nothing replaced: the text runs as written (no rows to compare)
                    assert plan.frame.schema == spark.sql(texts[name]).schema, name
        finally:
            spark.conf.set("spark.sql.session.timeZone", "UTC")
    pruned = sum(any(r[1] for r in reads) for reads in in_utc.values())
    assert pruned >= len(names) // 3, f"only {pruned} queries read fewer files"


def _same_rows(spark: Any, name: str, text: str, plan: Any, expected: list[str], zone: str) -> None:
    got = exact_rows(plan.frame)
    if got != expected and "limit" in text.lower():
        # Two plans may break a tie at a LIMIT's edge differently (both right): such
        # a query is compared whole.
        whole = text[: text.lower().rfind("limit")]
        got, expected = exact_rows(si.sql(spark, whole)), exact_rows(spark.sql(whole))
    assert got == expected, f"{name} ({zone})\n{plan.explain()}"
