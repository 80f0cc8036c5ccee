"""read()'s row-group path without Spark: which files qualify, and that a split
passes on exactly its candidate rows, typed as Spark reads them."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

import skipindex as si
from skipindex.indexing.build import build_with
from skipindex.indexing.runners import InProcessRunner
from skipindex.reading import policy
from skipindex.reading import row_groups as planning
from skipindex.reading.row_groups import Split, plan_splits, worth_it
from skipindex.reading.split import read_split
from skipindex.spark.settings import SparkView
from skipindex.store.location import locate
from tests._support import SCHEMA, column_values, examples

# What Spark hands a Python data source for SCHEMA: the same types.
TARGET = SCHEMA


def _policy(monkeypatch: pytest.MonkeyPatch, **fields: float) -> None:
    """The planning policy's defaults with ``fields`` changed, for the rest of the test."""
    monkeypatch.setattr(policy, "DEFAULT", replace(policy.DEFAULT, **fields))


def _rows(table: pa.Table) -> list[str]:
    """Comparable rows: repr keeps NaN equal to NaN and -0.0 apart from 0.0."""
    return [repr(row) for row in table.to_pylist()]


@st.composite
def _file_and_rows(draw: st.DrawFn) -> tuple[pa.Table, int, list[int]]:
    rows = draw(st.integers(1, 30))
    arrays = [
        pa.array([draw(column_values(f.name)) for _ in range(rows)], type=f.type) for f in SCHEMA
    ]
    table = pa.Table.from_arrays(arrays, schema=SCHEMA)
    group_rows = draw(st.integers(1, 8))
    candidates = draw(st.lists(st.integers(0, rows - 1), unique=True))
    return table, group_rows, sorted(candidates)


@settings(max_examples=examples(60))
@given(case=_file_and_rows(), int96=st.booleans(), upper=st.booleans(), pages=st.booleans())
def test_a_split_passes_on_exactly_its_candidate_rows(tmp_path_factory, case, int96, upper, pages):
    table, group_rows, candidates = case
    written = table.rename_columns([n.upper() if upper else n for n in table.column_names])
    path = tmp_path_factory.mktemp("split") / "f.parquet"
    # pages: a page per row, so few candidates are read from their pages alone
    paging = {"write_batch_size": 1, "data_page_size": 1} if pages else {}
    pq.write_table(
        written,
        path,
        row_group_size=group_rows,
        use_deprecated_int96_timestamps=int96,
        **paging,
    )
    groups = tuple(sorted({r // group_rows for r in candidates}))
    target = pa.schema([*TARGET, pa.field("absent", pa.int32())])
    stat = os.stat(path)
    stamp = (stat.st_size, stat.st_mtime_ns // 1_000_000)
    split = Split(str(path), *stamp, table.num_rows, groups, BitMap(candidates).serialize())
    batches = list(read_split(split, target, SparkView()))
    got = pa.Table.from_batches(batches, schema=target)
    expected = table.take(pa.array(candidates, pa.int64())).append_column(
        "absent", pa.nulls(len(candidates), pa.int32())
    )
    assert got.schema == target
    assert _rows(got) == _rows(expected)


def _table(root: Path, files: int = 3, rows: int = 1200) -> None:
    root.mkdir(parents=True)
    for k in range(files):
        ids = np.arange(k * rows, (k + 1) * rows, dtype=np.int64)
        table = pa.table(
            {"id": ids, "key": ids % 7, "day": pa.array(ids.astype("int32")).cast(pa.date32())}
        )
        pq.write_table(table, root / f"part-{k}.parquet", row_group_size=100)


def _plan(
    root: Path,
    where: str,
    target: pa.Schema | None = None,
    view: SparkView | None = None,
    row_level: str = "auto",
):
    result = si.prune(str(root), where, row_level=row_level)
    location = locate(str(root))
    schema = pq.read_schema(root / "part-0.parquet")
    return result, plan_splits(result, location, view or SparkView(), target or schema)


def test_files_whose_matches_sit_in_few_row_groups_are_read_by_row_groups(tmp_path):
    root = tmp_path / "t"
    _table(root)
    build_with(str(root), [si.EqualityBitmap("id"), si.EqualityBitmap("key")], InProcessRunner())
    result, (splits, whole) = _plan(root, "id IN (150, 1250, 1390) AND key = 3")
    by_file = {Path(s.path).name: s for s in splits}
    assert set(by_file) == {"part-0.parquet"}  # 1250 % 7 == 1390 % 7 == 4: only 150 matches
    split = by_file["part-0.parquet"]
    assert split.groups == (1,)
    assert list(BitMap.deserialize(split.rows)) == [150]
    assert 0 < split.group_rows < split.num_rows
    assert Split.from_json(split.to_json()) == split
    assert [Path(f).name for f in whole] == []
    assert result.kept == 1
    # A broad condition: the row groups that can match hold most rows, Spark reads it.
    _, (splits, whole) = _plan(root, "key = 3")
    assert splits == []
    assert len(whole) == 3


def test_wide_row_groups_against_a_narrow_predicate_are_read_whole(tmp_path, monkeypatch):
    # The source decodes every column of its row groups; Spark, for a count(),
    # only the predicate's. Half the row groups of wide text against one small
    # int column: Spark reading the whole file decodes far less.
    root = tmp_path / "t"
    root.mkdir()
    rows = 1200
    flag = (np.arange(rows) % 200 == 150).astype(np.int8)  # 1 in every other row group
    text = pa.array([f"{i:08d}-" * 20 for i in range(rows)])
    table = pa.table({"flag": flag, "a": text, "b": text})
    pq.write_table(table, root / "part-0.parquet", row_group_size=100)
    build_with(str(root), [si.EqualityBitmap("flag")], InProcessRunner())
    _policy(monkeypatch, min_bytes_saved=1)
    result, (splits, whole) = _plan(root, "flag = 1", row_level="always")
    assert result.columns == ("flag",)
    assert [s.groups for s in splits] == [tuple(range(1, 12, 2))]
    assert whole == []
    assert splits[0].group_bytes > 4 * splits[0].where_bytes > 0
    assert not worth_it(splits)
    _policy(monkeypatch, where_bytes_factor=1e9)
    assert worth_it(splits)


def test_row_groups_are_read_only_when_they_save_enough(monkeypatch):
    def split(group_bytes: int, where_bytes: int) -> Split:
        return Split("f", 1, 1, 600, (0,), b"", group_bytes=group_bytes, where_bytes=where_bytes)

    _policy(monkeypatch, where_bytes_factor=4.0)
    assert split(400, 100).bytes_saved == 0  # row groups as costly as Spark's scan
    assert Split.from_json(split(7, 3).to_json()) == split(7, 3)
    assert not worth_it([])
    _policy(monkeypatch, min_bytes_saved=1000)
    assert not worth_it([split(100, 200), split(100, 99)])  # 700 + 296 bytes saved
    assert worth_it([split(100, 200), split(100, 100)])  # 700 + 300
    assert not worth_it([split(100, 400), split(3000, 100)])  # 1,500 - 2,600
    _policy(monkeypatch, min_bytes_saved=0)
    assert not worth_it([])  # nothing to read by row groups


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("type", "a column of another type than the table's"),
        ("ambiguous", "two columns Spark matches to one name"),
        ("legacy", "dates rebased from the LEGACY calendar"),
        ("partitioned", "a partition column whose type Spark infers in ways not modelled"),
    ],
)
def test_files_pyarrow_would_not_read_as_spark_are_read_whole(tmp_path, case, why):
    root = tmp_path / "t"
    _table(root)
    part = root / "part-1.parquet"
    table = pq.read_table(part)
    target = None
    if case == "type":
        target = pa.schema([("id", pa.int32()), ("key", pa.int64()), ("day", pa.date32())])
    elif case == "ambiguous":
        pq.write_table(table.append_column("ID", table.column("id")), part, row_group_size=100)
    elif case == "legacy":
        legacy = table.replace_schema_metadata(
            {"org.apache.spark.version": "3.5.0", "org.apache.spark.legacyDateTime": ""}
        )
        pq.write_table(legacy, part, row_group_size=100)
    else:
        (root / "p=1e3").mkdir()  # Java's number spellings are not modelled
        for k in range(3):
            os.replace(root / f"part-{k}.parquet", root / "p=1e3" / f"part-{k}.parquet")
    build_with(str(root), [si.EqualityBitmap("id")], InProcessRunner())
    if case == "partitioned":
        result = si.prune(str(root), "id = 1390")
        schema = pq.read_schema(root / "p=1e3" / "part-1.parquet")
        splits, whole = plan_splits(result, locate(str(root)), SparkView(), schema)
    else:
        result, (splits, whole) = _plan(root, "id = 1390", target)
    assert result.row_groups, why
    assert splits == [], why
    assert whole == result.files, why


def test_a_file_changed_since_the_prune_is_refused(tmp_path):
    root = tmp_path / "t"
    _table(root)
    build_with(str(root), [si.EqualityBitmap("id")], InProcessRunner())
    result, (splits, _) = _plan(root, "id = 1390")
    [split] = splits
    target = pq.read_schema(split.path)
    os.utime(split.path, ns=(0, os.stat(split.path).st_mtime_ns + 10**9))  # same bytes, touched
    # Changed before the read is planned: Spark reads the file as it is now.
    assert plan_splits(result, locate(str(root)), SparkView(), target) == ([], result.files)
    # Changed after: the task refuses rather than read stale row numbers.
    with pytest.raises(si.TableChangedError, match="changed since it was pruned"):
        list(read_split(split, target, SparkView()))


def test_partition_values_are_passed_on_as_constants(tmp_path):
    root = tmp_path / "t"
    _table(root)
    for k, value in enumerate(["2020", "2021", "__HIVE_DEFAULT_PARTITION__"]):
        (root / f"year={value}").mkdir()
        os.replace(root / f"part-{k}.parquet", root / f"year={value}" / f"part-{k}.parquet")
    build_with(str(root), [si.EqualityBitmap("id")], InProcessRunner())
    result = si.prune(str(root), "id IN (150, 2450)")
    data = pq.read_schema(root / "year=2020" / "part-0.parquet")
    target = pa.schema([*data, pa.field("year", pa.int32())])
    splits, whole = plan_splits(result, locate(str(root)), SparkView(), target)
    assert (len(splits), whole) == (2, [])
    got = [
        row
        for split in splits
        for batch in read_split(split, target, SparkView())
        for row in batch.to_pylist()
    ]
    assert sorted((r["id"], r["year"]) for r in got) == [(150, 2020), (2450, None)]


def test_a_file_of_one_row_group_is_read_by_its_pages_when_few_of_them_can_match(tmp_path):
    # Spark writes row groups of 128 MB, so many files hold one: no row group to
    # skip, but a point query hits one page of each column.
    root = tmp_path / "t"
    root.mkdir()
    ids = np.arange(300_000, dtype=np.int64)
    table = pa.table({"id": ids, "key": ids % 7, "note": pa.array(ids.astype(str))})
    part = root / "part-0.parquet"
    pq.write_table(table, part, row_group_size=len(ids), use_dictionary=["key"])
    build_with(str(root), [si.EqualityBitmap("id", max_distinct=1 << 20)], InProcessRunner())
    result, (splits, whole) = _plan(root, "id = 123456")
    assert result.row_groups == {}  # nothing to skip by whole row groups
    [split] = splits
    assert (split.groups, whole) == ((0,), [])
    assert 0 < split.group_bytes < os.path.getsize(part) / 2  # a third of id's and note's pages
    [batch] = read_split(split, table.schema, SparkView())
    assert batch.to_pylist() == [{"id": 123456, "key": 123456 % 7, "note": "123456"}]
    # Rows in most pages: Spark reads the file.
    _, (splits, whole) = _plan(root, "id % 1000 = 0")
    assert (splits, len(whole)) == ([], 1)


def test_read_plans_nothing_it_would_not_use(tmp_path, monkeypatch):
    """plan_read decides from the priced footers when even the best case saves
    too little, before checking any file against the table's schema; where it
    does save enough, it plans what plan_splits plans."""
    root = tmp_path / "t"
    _table(root)
    build_with(str(root), [si.EqualityBitmap("id"), si.EqualityBitmap("key")], InProcessRunner())
    result = si.prune(str(root), "id IN (150, 1250, 1390) AND key = 3")
    location, schema = locate(str(root)), pq.read_schema(root / "part-0.parquet")
    checked: list[str] = []
    real = planning.spark_columns
    monkeypatch.setattr(planning, "spark_columns", lambda p, *a: checked.append(p) or real(p, *a))
    assert planning.plan_read(result, location, SparkView(), schema) is None  # 40 MB to save
    assert checked == []
    _policy(monkeypatch, min_bytes_saved=1)
    planned = planning.plan_read(result, location, SparkView(), schema)
    assert planned == plan_splits(result, location, SparkView(), schema)
    assert [Path(s.path).name for s in planned[0]] == ["part-0.parquet"]
    assert len(checked) == 1  # once per file version and schema, not per plan
