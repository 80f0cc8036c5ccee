"""String columns read as dictionaries (spark_view.read_columns ``dictionaries``):
min-max and Bloom get the dictionary's values plus the nulls (``value_set``),
equality and range bitmaps the dictionary-encoded rows. Their payloads must
cover every row's value as a plain read does (the bitmaps: be identical),
whatever the file's encoding (a dictionary per row group, plain pages after a
dictionary fallback, no dictionary), with NULLs and an other-case name."""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexes import KINDS
from skipindex.spark.settings import SparkView
from skipindex.spark.view import open_file, read_columns, rows_of, value_set
from tests._support import examples

ENCODINGS = {
    "dictionary": {},
    "plain": {"use_dictionary": False},
    "fallback": {"dictionary_pagesize_limit": 64, "data_page_size": 64},
}


def _read_both(path: Path, column_type: pa.DataType) -> tuple[pa.Array, pa.Array]:
    wanted = [(("name",), column_type)]  # the table spells it in lower case
    parquet = open_file(str(path))
    plain, _ = read_columns(parquet, wanted, SparkView())
    reopen = functools.partial(open_file, str(path), None)
    encoded, _ = read_columns(parquet, wanted, SparkView(), [("name",)], reopen)
    rows, dictionary = plain[("name",)], encoded[("name",)]
    assert isinstance(rows, pa.Array)
    assert isinstance(dictionary, pa.DictionaryArray)
    return rows, dictionary


@settings(max_examples=examples(60), deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=60),
    row_group=st.integers(1, 20),
    encoding=st.sampled_from(sorted(ENCODINGS)),
    binary=st.booleans(),
)
def test_dictionary_reads_give_the_kinds_what_a_plain_read_does(
    tmp_path_factory, values, row_group, encoding, binary
):
    column_type = pa.binary() if binary else pa.string()
    data = [v.encode() if binary and v is not None else v for v in values]
    path = Path(tmp_path_factory.mktemp("sets")) / "f.parquet"
    pq.write_table(
        pa.table({"Name": pa.array(data, column_type)}),
        path,
        row_group_size=row_group,
        **ENCODINGS[encoding],
    )
    rows, dictionary = _read_both(path, column_type)
    assert dictionary.type.value_type == column_type
    assert rows_of(dictionary).equals(rows)
    stand_in = value_set(dictionary)
    assert stand_in.null_count == rows.null_count
    assert set(rows.drop_null().to_pylist()) <= set(stand_in.drop_null().to_pylist())

    def build(spec: si.IndexSpec, values: pa.Array) -> dict:
        return KINDS[spec.kind]("name", column_type, spec.params()).build(values)

    for spec in (si.EqualityBitmap("name"), si.EqualityBitmap("name", max_distinct=3)):
        assert build(spec, dictionary) == build(spec, rows)
    assert build(si.RangeBitmap("name", bins=4), dictionary) == build(
        si.RangeBitmap("name", bins=4), rows
    )
    exact, built = build(si.MinMax("name"), rows), build(si.MinMax("name"), stand_in)
    assert built["null_count"] == exact["null_count"]
    if exact["min"] is not None:
        assert built["min"] <= exact["min"]
        assert built["max"] >= exact["max"]
    # With these writers the dictionaries hold exactly the rows' values.
    assert build(si.Bloom("name"), stand_in) == build(si.Bloom("name"), rows)


def test_a_column_of_few_values_is_read_as_those_values(tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"Name": ["a", "b", None] * 1000}), path, row_group_size=1000)
    _, dictionary = _read_both(path, pa.string())
    assert sorted(dictionary.dictionary.to_pylist()) == ["a", "b"]  # unified across groups
    stand_in = value_set(dictionary)
    assert stand_in.null_count == 1000
    assert sorted(stand_in.drop_null().to_pylist()) == ["a", "b"]


def test_a_binary_file_column_of_a_string_table_column_is_checked_as_utf8(tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"name": pa.array([b"ok", b"\xff"], pa.binary())}), path)
    parquet = open_file(str(path))
    reopen = functools.partial(open_file, str(path), None)
    wanted = [(("name",), pa.string())]
    plain, _ = read_columns(parquet, wanted, SparkView())
    encoded, _ = read_columns(parquet, wanted, SparkView(), [("name",)], reopen)
    assert isinstance(plain[("name",)], str)  # not valid UTF-8: not indexed, either way
    assert encoded[("name",)] == plain[("name",)]
