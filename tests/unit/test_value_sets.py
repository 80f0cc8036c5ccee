"""String columns read as dictionaries for min-max and Bloom (spark_view.read_columns
``value_sets``): the payloads must cover every row's value exactly as a plain
read does, whatever the file's encoding (dictionary per row group, plain pages
after a dictionary fallback, no dictionary), with NULLs and other-case names."""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexes import KINDS
from skipindex.spark_view import SparkView, open_file, read_columns
from tests._support import examples

ENCODINGS = {
    "dictionary": {},
    "plain": {"use_dictionary": False},
    "fallback": {"dictionary_pagesize_limit": 64, "data_page_size": 64},
}


@settings(max_examples=examples(60), deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=60),
    row_group=st.integers(1, 20),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    binary=st.booleans(),
)
def test_value_sets_cover_exactly_the_values_a_plain_read_gives(
    tmp_path_factory, values, row_group, encoding, binary
):
    column_type = pa.binary() if binary else pa.string()
    data = [v.encode() if binary and v is not None else v for v in values]
    path = Path(tmp_path_factory.mktemp("sets")) / "f.parquet"
    table = pa.table({"Name": pa.array(data, column_type)})
    pq.write_table(table, path, row_group_size=row_group, **ENCODINGS[encoding])
    wanted = [(("name",), column_type)]  # the table spells it in lower case
    parquet = open_file(str(path))
    plain, _ = read_columns(parquet, wanted, SparkView())
    reopen = functools.partial(open_file, str(path), None)
    as_set, _ = read_columns(parquet, wanted, SparkView(), [("name",)], reopen)
    rows, stand_in = plain[("name",)], as_set[("name",)]
    assert isinstance(rows, pa.Array)
    assert isinstance(stand_in, pa.Array)
    assert stand_in.null_count == rows.null_count
    distinct = set(rows.drop_null().to_pylist())
    assert distinct <= set(stand_in.drop_null().to_pylist())
    # Read as dictionaries (one per row group), not row by row:
    groups = pq.ParquetFile(path).metadata.num_row_groups
    assert len(stand_in) - stand_in.null_count <= groups * len(distinct)
    for spec in (si.MinMax("name"), si.Bloom("name")):
        kind = KINDS[spec.kind]("name", column_type, spec.params())
        exact, built = kind.build(rows), kind.build(stand_in)
        if spec.kind == "minmax":
            assert built["null_count"] == exact["null_count"]
            if exact["min"] is not None:
                assert built["min"] <= exact["min"]
                assert built["max"] >= exact["max"]
        else:  # with the writers here the dictionaries hold exactly the values
            assert built == exact


def test_a_column_of_few_values_is_read_as_those_values(tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"s": ["a", "b", None] * 1000}), path, row_group_size=1000)
    reopen = functools.partial(open_file, str(path), None)
    wanted = [(("s",), pa.string())]
    as_set, _ = read_columns(open_file(str(path)), wanted, SparkView(), [("s",)], reopen)
    stand_in = as_set[("s",)]
    assert isinstance(stand_in, pa.Array)
    assert stand_in.null_count == 1000
    assert sorted(stand_in.drop_null().to_pylist()) == ["a", "a", "a", "b", "b", "b"]
