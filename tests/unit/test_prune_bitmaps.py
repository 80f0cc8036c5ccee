"""Row-level bitmaps combined across conditions, against DuckDB.

Exact kinds (bit-sliced everywhere, or equality bitmaps within max_distinct)
must keep *exactly* the files holding a matching row; any mixture of kinds must
keep at least those."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from tests._support import (
    duckdb_matching_files,
    examples,
    files_strategy,
    predicate_strategy,
    write_files,
)

COLUMNS = ("i", "n", "dec", "f", "s", "dt", "ts", "b")
KINDS = {
    "minmax": si.MinMax,
    "bloom": si.Bloom,
    "equality": si.EqualityBitmap,
    "range": si.RangeBitmap,
    "bitsliced": si.BitSlicedBitmap,
}


def _run(tables, predicates, specs) -> list[tuple[str, set[str], set[str]]]:
    root = Path(tempfile.mkdtemp(prefix="bitmaps-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), specs, InProcessRunner())
        truth = duckdb_matching_files(paths, predicates)
        return [
            (p, matching, {Path(f).name for f in si.prune(str(root / "t"), p).files})
            for p, matching in zip(predicates, truth, strict=True)
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)


@settings(max_examples=examples(120))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
    exact_kind=st.sampled_from([si.BitSlicedBitmap, si.EqualityBitmap]),
)
def test_exact_bitmaps_keep_exactly_the_files_holding_a_match(tables, predicates, exact_kind):
    specs = [exact_kind(c) for c in COLUMNS]
    for predicate, matching, kept in _run(tables, predicates, specs):
        assert kept == matching, predicate


@settings(max_examples=examples(120))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
    choice=st.lists(
        st.sets(st.sampled_from(sorted(KINDS))), min_size=len(COLUMNS), max_size=len(COLUMNS)
    ),
)
def test_any_mixture_of_kinds_never_drops_a_matching_file(tables, predicates, choice):
    specs = [
        KINDS[k](c)
        for c, kinds in zip(COLUMNS, choice, strict=True)
        for k in sorted(kinds)
        if not (k == "bloom" and c == "b")
    ]
    if not specs:
        specs = [si.MinMax("i")]
    for predicate, matching, kept in _run(tables, predicates, specs):
        assert matching <= kept, f"{predicate}: dropped {sorted(matching - kept)}"


@pytest.mark.parametrize("kind", [si.EqualityBitmap, si.RangeBitmap, si.BitSlicedBitmap])
def test_conjunction_skips_a_file_where_no_single_row_matches_both(tmp_path, kind):
    root = tmp_path / "t"
    root.mkdir()
    # a = 1 on rows 0-1, b = 2 on rows 2-3: each condition matches, never together.
    pq.write_table(pa.table({"a": [1, 1, 0, 0], "b": [0, 0, 2, 2]}), root / "f0.parquet")
    pq.write_table(pa.table({"a": [1, 0], "b": [2, 0]}), root / "f1.parquet")  # row 0 has both
    build_with(str(root), [kind("a"), kind("b")], InProcessRunner())
    assert {Path(f).name for f in si.prune(str(root), "a = 1 AND b = 2").files} == {"f1.parquet"}
    assert len(si.prune(str(root), "a = 1 OR b = 2").files) == 2
    minmax = tmp_path / "m"
    shutil.copytree(root, minmax, ignore=shutil.ignore_patterns("_skipindex"))
    build_with(str(minmax), [si.MinMax("a"), si.MinMax("b")], InProcessRunner())
    assert len(si.prune(str(minmax), "a = 1 AND b = 2").files) == 2  # min-max cannot tell
