"""``skipindex.sql`` against ``spark.sql``: generated queries over small indexed tables
(NULLs, duplicates, skew; several files each, so that some are skipped) return
exactly Spark's rows, as multisets, with exactly Spark's schema, in three session
time zones (UTC, Los Angeles with its daylight-saving gap and overlap, Kathmandu at
+05:45).

CI (``HYPOTHESIS_PROFILE=ci``) runs 240 distinct queries in each zone; a developer's
run 60. The queries come from tests/_sql_queries.py, seeded (the same every run), in
groups that workers share; ``SQL_DIFFERENTIAL_SEED=<n>`` draws others, and a soak
(``HYPOTHESIS_PROFILE=soak``) ten times CI's under a seed of its own, named in every
failure. A query whose text no zone changes (no timestamp column, literal or
function, no ``*``) is read in UTC, and in another zone only where that zone's plan
reads other files, row groups or rows than UTC's: the same reads under such a text
are the same rows. A plan that skips no file reads every table whole: its schema is
compared, and its rows are spark.sql's own (a table read whole with the schema
si.sql holds is proven to be its view row for row in
tests/spark/test_sql_whole_reads.py).
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import skipindex as si
from skipindex.cli import parse_index_option
from skipindex.indexing.build import InProcessRunner, build_with
from tests._sql_queries import INDEXES, queries, write_tables
from tests._support import SOAK_FACTOR, exact_rows, full_run, soak_run, what_is_read

pytestmark = pytest.mark.spark

ZONES = ["UTC", "America/Los_Angeles", "Asia/Kathmandu"]
COUNT = 240 * (SOAK_FACTOR if soak_run() else 1) if full_run() else 60


def _seed() -> int:
    """CI's queries are always the same; a soak hunts new ones, under one seed for
    every worker of the run (drawn from xdist's run id), which repeats it."""
    given = os.environ.get("SQL_DIFFERENTIAL_SEED")
    if given:
        return int(given)
    if not soak_run():
        return 20240
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return random.Random(run).randrange(10**6) if run else random.randrange(10**6)


SEED = _seed()
GROUPS = 4
# What can make a query's rows depend on the session's zone (conservatively: a star
# may bring in the timestamp column, an interval or date_trunc make timestamps).
_ZONED = re.compile(
    r"\bts\b|timestamp|interval|current_|now\s*\(|unix|utc|date_format|date_trunc|to_date"
    r"|select\s+\*|\.\*",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folders = write_tables(tmp_path_factory.mktemp("sql"))
    for name, folder in folders.items():
        specs = [parse_index_option(f"{kind}:{column}") for kind, column in INDEXES[name]]
        # built in this process: the task code a Spark build runs (runners only hand
        # out the files), in Spark's default settings (this session's), with no job per worker
        build_with(str(folder), specs, InProcessRunner())
        si.register(spark, name, str(folder))
    return folders


def _spellings(folders: dict[str, Path]) -> list[dict[str, str]]:
    views = {name: name for name in folders}
    paths = {**views, "pt": f"parquet.`{folders['pt']}`"}
    return [views, paths]


@pytest.fixture
def every_skip_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read kept files instead of the table wherever any file is skipped, and by
    row groups wherever any row group is: the paths where a wrong answer could hide."""
    from dataclasses import replace

    from skipindex.reading import policy

    everywhere = replace(policy.DEFAULT, folder_share=1.0, min_bytes_saved=1)
    monkeypatch.setattr(policy, "DEFAULT", replace(everywhere, where_bytes_factor=1e9))


@pytest.mark.parametrize("group", range(GROUPS))
def test_sql_returns_sparks_rows(
    spark: Any, tables: dict[str, Path], group: int, every_skip_read: None
) -> None:
    chosen = queries(COUNT, _spellings(tables), SEED)[group::GROUPS]
    in_utc: dict[str, list[Any]] = {}
    seen: Counter[str] = Counter()
    for zone in ZONES:
        spark.conf.set("spark.sql.session.timeZone", zone)
        try:
            for query in chosen:
                plan = si.sql_plan(spark, query)
                reads = what_is_read(plan)
                if zone != ZONES[0] and not _ZONED.search(query) and reads == in_utc[query]:
                    seen["same reads as in UTC"] += 1
                    continue
                in_utc.setdefault(query, reads)
                expected = spark.sql(query)
                assert plan.frame.schema == expected.schema, (
                    f"{query} (seed {SEED})\n{plan.explain()}"
                )
                if zone == ZONES[0]:
                    _count(seen, plan)
                if not any(r.replaced for r in plan.references):
                    # No file skipped: every table is read whole, as written or with
                    # the schema si.sql holds (tests/spark/test_sql_whole_reads.py
                    # proves those the views' rows): spark.sql's own rows again.
                    seen["read whole"] += 1
                    continue
                assert exact_rows(plan.frame) == exact_rows(expected), (
                    f"{query} ({zone}, seed {SEED})\n{plan.explain()}"
                )
        finally:
            spark.conf.set("spark.sql.session.timeZone", "UTC")
    print(dict(seen))
    # The test means something only if pruning happened in many of the queries.
    assert seen["pruned"] >= len(chosen) // 3, seen
    assert seen["dynamic"] >= len(chosen) // 20, seen


def _count(seen: Counter[str], plan: Any) -> None:
    replaced = [r for r in plan.references if r.replaced]
    seen["queries"] += 1
    seen["pruned"] += bool(replaced)
    seen["skipped files"] += sum(r.result.skipped for r in replaced if r.result)
    seen["dynamic"] += any(j.keys is not None for j in plan.joins)
    seen["row groups"] += any(r.result and r.result.row_groups for r in replaced)
