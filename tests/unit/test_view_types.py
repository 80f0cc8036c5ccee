"""Files whose Arrow schema holds view types (string_view, binary_view: what
parquet-rs, delta-rs, DataFusion and Polars write) or large types: every path
that reads data with pyarrow takes them, and answers as for plain strings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.advise.advise import advise
from skipindex.indexing.build import build_with
from skipindex.indexing.runners import InProcessRunner
from skipindex.spark.view import normalise_type, without_views

FILES, ROWS = 8, 300
CLERKS = [f"Clerk#{n:09d}" for n in range(40)]
STATUS = ["F", "O", "P"]


def write_table(folder: Path, string_type: pa.DataType, binary_type: pa.DataType) -> Path:
    """Orders-like files: status and priority of few values, a clerk that rises
    with the file (so min-max skips), a key, and binary tags."""
    generator = np.random.default_rng(3)
    folder.mkdir()
    for number in range(FILES):
        # sorted: a clerk's rows sit in one or two of the file's three row groups
        clerks = sorted(CLERKS[number * 5 + int(i)] for i in generator.integers(0, 5, ROWS))
        table = pa.table(
            {
                "o_orderkey": pa.array(np.arange(ROWS) + number * ROWS, pa.int64()),
                "o_orderstatus": pa.array(
                    [STATUS[int(i)] for i in generator.integers(0, 3, ROWS)], string_type
                ),
                "o_orderpriority": pa.array(
                    [f"{int(i)}-PRIO" for i in generator.integers(1, 6, ROWS)], string_type
                ),
                "o_clerk": pa.array(clerks, string_type),
                "o_tag": pa.array([c.encode()[-2:] for c in clerks], binary_type),
            }
        )
        pq.write_table(table, folder / f"part-{number:03d}.parquet", row_group_size=100)
    return folder


TYPES = [
    pytest.param(pa.string_view(), pa.binary_view(), id="view"),
    pytest.param(pa.large_string(), pa.large_binary(), id="large"),
]
WORKLOAD = {
    "status": "SELECT count(*) FROM orders WHERE o_orderstatus = 'F'",
    "priority": "SELECT count(*) FROM orders WHERE o_orderpriority IN ('1-PRIO', '2-PRIO')",
    "clerk": "SELECT count(*) FROM orders WHERE o_clerk = 'Clerk#000000012'",
}


def test_view_types_read_as_their_large_twins() -> None:
    assert normalise_type(pa.string_view()) == pa.large_string()
    assert normalise_type(pa.struct([("a", pa.binary_view())])) == pa.struct(
        [("a", pa.large_binary())]
    )
    assert normalise_type(pa.list_view(pa.string_view())) == pa.large_list(pa.large_string())
    table = pa.table({"s": pa.array(["b", None, "a"], pa.string_view()), "n": [1, 2, 3]})
    plain = without_views(table)
    assert plain.schema.field("s").type == pa.large_string()
    assert plain.filter(pc.field("n") > 1).column("s").to_pylist() == [None, "a"]
    assert without_views(plain) is plain  # nothing to cast: the same table


@pytest.mark.parametrize(("string_type", "binary_type"), TYPES)
def test_advise_takes_view_and_large_types(tmp_path, string_type, binary_type) -> None:
    """The issue's crash: advise sampled rows with Table.filter, which has no
    kernel for string_view; the layout simulation reads and takes rows too."""
    table = write_table(tmp_path / "orders", string_type, binary_type)
    advice = advise(table, WORKLOAD, sample_files=FILES)
    assert {c.column for c in advice.indexes} & {"o_orderstatus", "o_clerk", "o_orderpriority"}
    assert si.suggest_indexes(str(table))


@pytest.mark.parametrize(("string_type", "binary_type"), TYPES)
def test_every_kind_on_view_and_large_columns_prunes_to_the_brute_force_files(
    tmp_path, string_type, binary_type
) -> None:
    table = write_table(tmp_path / "orders", string_type, binary_type)
    specs = [
        si.MinMax("o_clerk"),
        si.Bloom("o_clerk"),
        si.EqualityBitmap("o_orderstatus"),
        si.RangeBitmap("o_orderpriority"),
        si.BitSlicedBitmap("o_clerk"),
        si.MinMax("o_tag"),
        si.Bloom("o_tag"),
    ]
    build_with(str(table), specs, InProcessRunner())
    cases = {
        "o_clerk = 'Clerk#000000012'": pc.field("o_clerk") == "Clerk#000000012",
        "o_orderstatus = 'P' AND o_clerk >= 'Clerk#000000030'": (pc.field("o_orderstatus") == "P")
        & (pc.field("o_clerk") >= "Clerk#000000030"),
        "o_orderpriority < '2' AND o_clerk < 'Clerk#000000006'": (pc.field("o_orderpriority") < "2")
        & (pc.field("o_clerk") < "Clerk#000000006"),
        "o_tag = X'3131'": pc.field("o_tag") == b"11",
    }
    for where, expression in cases.items():
        holding = set()
        for path in sorted(table.glob("*.parquet")):
            rows = without_views(pq.read_table(path)).filter(expression)
            if rows.num_rows:
                holding.add(str(path))
        kept = set(si.prune(str(table), where, time_zone="UTC").files)
        assert holding <= kept, where
        assert len(kept) < FILES, f"{where}: nothing skipped"
