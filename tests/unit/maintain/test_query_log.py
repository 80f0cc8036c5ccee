"""The query log: off by default, one row per prune, bounded in size, and never
the reason a prune fails."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store import query_log


@pytest.fixture
def table(tmp_path: Path) -> str:
    root = tmp_path / "t"
    root.mkdir()
    for k in range(4):
        pq.write_table(pa.table({"id": list(range(k * 10, k * 10 + 10))}), root / f"p{k}.parquet")
    build_with(str(root), [si.MinMax("id")], InProcessRunner())
    return str(root)


@pytest.fixture(autouse=True)
def no_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(query_log.ENV, raising=False)
    yield
    query_log.use_query_log(None)


def _rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT predicate, files_total, files_kept, source FROM queries"
        ).fetchall()


def test_off_unless_asked(table: str, tmp_path: Path) -> None:
    assert query_log.log_path() is None
    si.prune(table, "id = 3")
    assert not list(tmp_path.glob("*.db"))


def test_each_prune_is_one_row(table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log" / "q.db"
    monkeypatch.setenv(query_log.ENV, str(path))
    si.prune(table, "id = 3")
    si.prune(table, "id > 15 AND id < 25")
    si.prune(table, "TRUE")  # a listing, not a query: not logged
    with query_log.paused():
        si.prune(table, "id = 4")
    with query_log.source("read"):
        si.prune(table, "id = 5")
    assert _rows(path) == [
        ("id = 3", 4, 1, "prune"),
        ("id > 15 AND id < 25", 4, 2, "prune"),
        ("id = 5", 4, 1, "read"),
    ]
    found = query_log.queries(str(path), table, newest_first=False)
    assert [q.predicate for q in found] == ["id = 3", "id > 15 AND id < 25", "id = 5"]
    assert found[0].columns == ("id",)
    assert found[0].kept_share == 0.25
    assert query_log.queries(str(path), "/elsewhere") == []


def test_bounded_in_rows(table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "q.db"
    query_log.use_query_log(path)
    monkeypatch.setenv(query_log.ROWS_ENV, "10")
    for n in range(300):
        si.prune(table, f"id = {n % 40}")
    kept = len(_rows(path))
    assert kept <= 10 + query_log._TRIM_EVERY
    assert len(query_log.queries(str(path), table, limit=1000)) == kept
    newest = query_log.queries(str(path), table, limit=1)[0]
    assert newest.predicate == "id = 19"  # the newest row survives trimming


@pytest.mark.parametrize("kind", ["a folder", "not a database", "read-only", "locked"])
def test_a_broken_log_never_fails_a_prune(table: str, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "q.db"
    locker = None
    if kind == "a folder":
        path.mkdir()
    elif kind == "not a database":
        path.write_bytes(b"this is not SQLite" * 100)
    elif kind == "read-only":
        path = tmp_path / "ro" / "q.db"
        path.parent.mkdir()
        path.parent.chmod(0o500)
    else:
        query_log.connect_log(str(path)).close()
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")  # a writer that holds the database
    query_log.use_query_log(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                assert len(si.prune(table, "id = 3").files) == 1
    finally:
        if locker is not None:
            locker.execute("ROLLBACK")
            locker.close()
        if kind == "read-only":
            path.parent.chmod(0o700)
    if kind == "read-only" and path.exists():  # running as root: the folder was writable
        return
    said = [str(w.message) for w in caught if "query log" in str(w.message)]
    assert len(said) == 1, said  # said once, not once per prune
    assert "prunes go on unlogged" in said[0]


def test_a_result_that_cannot_be_logged_is_not_an_error(tmp_path: Path) -> None:
    query_log.use_query_log(tmp_path / "q.db")

    class Odd:
        predicate = "x = 1"

        @property
        def columns(self) -> list[str]:
            raise RuntimeError("no columns")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        query_log.record("/t", None, Odd())  # no exception
