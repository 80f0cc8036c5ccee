"""Array columns: the element kinds against a brute-force oracle.

``array_contains(a, v)``, ``arrays_overlap(a, array(v, w))`` and ``exists(a, x
-> x = v)`` are TRUE for a row exactly when one of its array's non-NULL elements
equals a value. Element Bloom filters must keep every file holding such a row;
element bitmaps exactly those files, also for an AND of two such conditions
(a row must satisfy both).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import examples

_WORDS = ["a", "b", "é", "😀", "", "%"]
_ARRAYS = st.one_of(
    st.none(), st.lists(st.one_of(st.none(), st.sampled_from(_WORDS)), max_size=4)
)  # NULL arrays, empty arrays, NULL elements
_INTS = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=4))


def _holds(array: list[object] | None, values: list[object]) -> bool:
    return array is not None and any(e is not None and e in values for e in array)


def _literal(value: object) -> str:
    return "'" + value.replace("'", "\\'") + "'" if isinstance(value, str) else str(value)


@st.composite
def conditions(draw: st.DrawFn) -> tuple[str, str, list[object]]:
    """(SQL, column, values): one array condition."""
    column = draw(st.sampled_from(["tags", "ids"]))
    pool = st.sampled_from(_WORDS) if column == "tags" else st.integers(-4, 4)
    values = draw(st.lists(pool, min_size=1, max_size=3))
    shape = draw(st.sampled_from(["contains", "overlap", "exists"]))
    if shape == "contains":
        return f"array_contains({column}, {_literal(values[0])})", column, values[:1]
    if shape == "exists":
        return f"exists({column}, x -> x = {_literal(values[0])})", column, values[:1]
    listed = ", ".join(map(_literal, values))
    return f"arrays_overlap({column}, array({listed}))", column, values


@settings(max_examples=examples(40))
@given(
    files=st.lists(st.lists(st.tuples(_ARRAYS, _INTS), max_size=5), min_size=1, max_size=4),
    tests=st.lists(st.tuples(conditions(), st.one_of(st.none(), conditions())), max_size=5),
)
def test_element_kinds_keep_every_file_with_a_match_and_bitmaps_exactly_those(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[tuple[list[object] | None, list[object] | None]]],
    tests: list[tuple[tuple[str, str, list[object]], tuple[str, str, list[object]] | None]],
):
    blooms, bitmaps = tmp_path_factory.mktemp("b"), tmp_path_factory.mktemp("m")
    for at, rows in enumerate(files):
        table = pa.table(
            {
                "tags": pa.array([r[0] for r in rows], pa.list_(pa.string())),
                "ids": pa.array([r[1] for r in rows], pa.list_(pa.int32())),
            }
        )
        pq.write_table(table, blooms / f"f{at}.parquet")
        pq.write_table(table, bitmaps / f"f{at}.parquet")
    build_with(str(blooms), [si.ElementBloom("tags"), si.ElementBloom("ids")], InProcessRunner())
    build_with(str(bitmaps), [si.ElementBitmap("tags"), si.ElementBitmap("ids")], InProcessRunner())
    for first, second in tests:
        where = first[0] if second is None else f"{first[0]} AND {second[0]}"
        wanted = [first] if second is None else [first, second]
        holding = {
            f"f{at}"
            for at, rows in enumerate(files)
            if any(
                all(_holds(row[0 if c == "tags" else 1], v) for _, c, v in wanted) for row in rows
            )
        }
        assert holding <= _kept(blooms, where), where
        assert _kept(bitmaps, where) == holding, where


def _kept(root: Path, where: str) -> set[str]:
    return {Path(f).stem for f in si.prune(str(root), where, time_zone="UTC").files}


def test_what_an_element_index_cannot_answer_might_match(tmp_path: Path):
    pq.write_table(
        pa.table({"tags": pa.array([["a"]], pa.list_(pa.string()))}), tmp_path / "f.parquet"
    )
    build_with(str(tmp_path), [si.ElementBitmap("tags")], InProcessRunner())
    assert _kept(tmp_path, "NOT array_contains(tags, 'a')") == {"f"}  # not answered
    assert _kept(tmp_path, "array_contains(tags, 1)") == {"f"}  # Spark's own coercion
    assert _kept(tmp_path, "array_contains(tags, NULL)") == set()  # NULL: never TRUE
    assert _kept(tmp_path, "array_contains(tags, 'b')") == set()


def test_an_element_kind_refuses_a_column_that_is_no_array(tmp_path: Path):
    pq.write_table(pa.table({"s": ["a"]}), tmp_path / "f.parquet")
    with pytest.raises(si.UnsupportedTypeError, match="'element_bloom' cannot index column 's'"):
        build_with(str(tmp_path), [si.ElementBloom("s")], InProcessRunner())
