"""Row-level bitmaps combined across conditions, against DuckDB.

Exact kinds (bit-sliced everywhere, or equality bitmaps within max_distinct)
must keep *exactly* the files holding a matching row; any mixture of kinds must
keep at least those."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.indexes import _selection
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning import evaluate
from skipindex.store.cache import batch_cache
from tests._support import (
    duckdb_matching_row_groups,
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


def _run(
    tables,
    predicates,
    specs,
    row_level="auto",
    exact_rows=False,
    dense=True,
    restrict=False,
    stream=False,
) -> list[tuple[str, set[str], set[str]]]:
    """Per predicate: the files holding a match (DuckDB) and the files kept. Rows
    and row groups (3 rows each) are checked on the way: every matching row is
    among a kept file's rows and its row group among its row groups, and exactly
    those with ``exact_rows``. ``dense=False`` combines row sets file by file
    only, so both walks answer (skipindex.pruning.evaluate.DENSE_WALK); ``restrict``
    runs the row-level pass on the files left alive alone, however many they are
    (evaluate.RESTRICT_BELOW), as it does where few are left; ``stream`` reads and
    evaluates the payloads a segment row group at a time (pruning/streamed.py), as
    a prune does where they exceed what the cache may hold."""
    root = Path(tempfile.mkdtemp(prefix="bitmaps-"))
    try:
        paths = write_files(root / "t", tables)
        build_with(str(root / "t"), specs, InProcessRunner())
        out = []  # a file holds a match iff one of its rows does: one query
        for p, rows_by_file in zip(
            predicates, duckdb_matching_row_groups(paths, predicates, group_rows=1), strict=True
        ):
            restrict_below = 1 << 40 if restrict else evaluate.RESTRICT_BELOW
            with (
                mock.patch.object(evaluate, "DENSE_WALK", dense),
                mock.patch.object(evaluate, "RESTRICT_BELOW", restrict_below),
                mock.patch.object(batch_cache, "max_bytes", 0 if stream else batch_cache.max_bytes),
            ):
                streaming = si.PruneOptions(working_bytes=0)  # a segment row group at a time
                result = si.prune(str(root / "t"), p, row_level=row_level, options=streaming)
            kept = {Path(f).name: f for f in result.files}
            _check_rows(p, result, kept, rows_by_file, exact_rows)
            out.append((p, set(rows_by_file), set(kept)))
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _check_rows(predicate, result, kept, rows_by_file, exact) -> None:
    assert set(result.row_groups) <= set(result.files)
    assert set(result.rows) <= set(result.files)
    assert all(result.row_groups.values()), "a kept file with no row group"
    for name, rows in rows_by_file.items():
        if name not in kept:
            continue  # a dropped file is the files check's business
        rows_answer = result.rows_of(kept[name])
        groups_answer = result.row_groups_of(kept[name])
        for answer, truth in (
            (None if rows_answer is None else set(rows_answer.tolist()), rows),
            (None if groups_answer is None else set(groups_answer), {r // 3 for r in rows}),
        ):
            if answer is None:
                continue  # any row (row group) may match
            assert truth <= answer, (predicate, name, truth, answer)
            if exact:
                assert answer == truth, (predicate, name, truth, answer)


@settings(max_examples=examples(90))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
    exact_kind=st.sampled_from([si.BitSlicedBitmap, si.EqualityBitmap]),
    dense=st.booleans(),
    row_level=st.sampled_from(["auto", "always"]),
    restrict=st.booleans(),
    stream=st.booleans(),
)
def test_exact_bitmaps_keep_exactly_the_files_holding_a_match(
    tables, predicates, exact_kind, dense, row_level, restrict, stream
):
    """With the default arguments too: exactness is what the default gives."""
    specs = [exact_kind(c) for c in COLUMNS]
    exact_rows = row_level == "always"  # "auto" may leave a sure file's rows unnarrowed
    runs = _run(tables, predicates, specs, row_level, exact_rows, dense, restrict, stream)
    for predicate, matching, kept in runs:
        assert kept == matching, predicate


@settings(max_examples=examples(60))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
    row_level=st.sampled_from(["auto", "always"]),
)
def test_long_in_lists_read_from_each_rows_code_are_exact(tables, predicates, row_level):
    """Every IN list taken as long (no code ranges): bit-sliced files answer it
    by reading each candidate row's code (indexes._dense_members), exactly."""
    specs = [si.BitSlicedBitmap(c) for c in COLUMNS]
    with mock.patch.object(_selection, "MAX_IN_VALUES", 0):
        runs = _run(tables, predicates, specs, row_level, exact_rows=row_level == "always")
    for predicate, matching, kept in runs:
        assert kept == matching, predicate


@st.composite
def _sampled_files(draw: st.DrawFn) -> list[pa.Table]:
    """Files of 200-300 rows (4-5 words, so a one-word sample is not the whole
    file): a drawn head repeated over the first 64 rows or more (the sample),
    then a drawn tail, so that a match may lie in the sample, after it, or both."""
    heads = draw(files_strategy(COLUMNS))
    tails = draw(st.lists(files_strategy(COLUMNS), min_size=len(heads), max_size=len(heads)))
    out = []
    for head, drawn in zip(heads, tails, strict=True):
        if head.num_rows == 0:  # an empty file stays one
            out.append(head)
            continue
        tail = drawn[0] if drawn[0].schema == head.schema and drawn[0].num_rows else head
        first = draw(st.integers(64, 200))
        rows = [head.slice(r % head.num_rows, 1) for r in range(first)]
        rows += [tail.slice(r % tail.num_rows, 1) for r in range(first, 200 + first % 100)]
        out.append(pa.concat_tables(rows).combine_chunks())
    return out


@settings(max_examples=examples(60))
@given(
    tables=_sampled_files(),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=6),
    exact_kind=st.sampled_from([si.BitSlicedBitmap, si.EqualityBitmap]),
)
def test_a_file_kept_from_a_sample_of_its_rows_holds_a_match(tables, predicates, exact_kind):
    """The default pass samples each file's first word and keeps, without the
    full pass, a file where a sampled row matches: with the sample one word and
    one sampled match enough, every such decision is checked against DuckDB."""
    specs = [exact_kind(c) for c in COLUMNS]
    with (
        mock.patch.object(evaluate, "SAMPLE_WORDS", 1),
        mock.patch.object(evaluate, "SAMPLE_FROM_ROWS", 0.0),
        mock.patch.object(evaluate, "LIKELY_ROWS", 1.0),
    ):
        runs = _run(tables, predicates, specs, "auto")
    for predicate, matching, kept in runs:
        assert kept == matching, predicate


@settings(max_examples=examples(90))
@given(
    tables=files_strategy(COLUMNS),
    predicates=st.lists(predicate_strategy(COLUMNS), min_size=1, max_size=10),
    choice=st.lists(
        st.sets(st.sampled_from(sorted(KINDS))), min_size=len(COLUMNS), max_size=len(COLUMNS)
    ),
    row_level=st.sampled_from(["auto", "always", "estimate"]),
    dense=st.booleans(),
    restrict=st.booleans(),
    stream=st.booleans(),
)
def test_any_mixture_of_kinds_never_drops_a_matching_file(
    tables, predicates, choice, row_level, dense, restrict, stream
):
    specs = [
        KINDS[k](c)
        for c, kinds in zip(COLUMNS, choice, strict=True)
        for k in sorted(kinds)
        if not (k == "bloom" and c == "b")
    ]
    if not specs:
        specs = [si.MinMax("i")]
    runs = _run(tables, predicates, specs, row_level, dense=dense, restrict=restrict, stream=stream)
    for predicate, matching, kept in runs:
        assert matching <= kept, f"{predicate}: dropped {sorted(matching - kept)}"


@pytest.mark.parametrize("kind", [si.EqualityBitmap, si.RangeBitmap, si.BitSlicedBitmap])
def test_nan_rows_the_footer_statistics_leave_out_are_answered_as_spark_does(kind):
    # Statistics say max = 0.0 (writers leave NaN out); NaN sorts above every double,
    # so it matches f > 1 and never f < 1.5. The oracle must not trust the statistics.
    tables = [pa.table({"f": [None, 0.0, float("nan")]}), pa.table({"f": [2.0, -1.0, 0.5]})]
    predicates = ["f < 1.5", "f > 1", "f <= 0", "f = CAST('NaN' AS DOUBLE)", "f >= 0.0"]
    runs = _run(tables, predicates, [kind("f")], "always", exact_rows=True)
    found = {predicate: matching for predicate, matching, _ in runs}
    assert found["f > 1"] == {"part-000.parquet", "part-001.parquet"}
    for predicate, matching, kept in runs:
        assert kept == matching, predicate


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


@pytest.mark.parametrize("kind", [si.EqualityBitmap, si.BitSlicedBitmap])
def test_the_default_skips_a_file_its_value_ranges_predict_to_match(tmp_path, kind):
    """Half the rows have a = 1, the other half b = 2: by their value ranges (as
    if independent) a thousand rows match both, but no row does. The default
    combines the bitmaps and skips the file; only the opt-in "estimate" keeps
    it unexamined, and says so."""
    root = tmp_path / "t"
    root.mkdir()
    half = 4000  # 125 words: the default samples files this large first
    pq.write_table(
        pa.table({"a": [1] * half + [0] * half, "b": [0] * half + [2] * half}), root / "f.parquet"
    )
    build_with(str(root), [kind("a"), kind("b")], InProcessRunner())
    default = si.prune(str(root), "a = 1 AND b = 2")
    assert default.kept == 0
    assert default.row_level_files == 1
    assert default.row_level_sampled == 0
    guess = si.prune(str(root), "a = 1 AND b = 2", row_level="estimate")
    assert guess.kept == 1
    assert guess.row_level_likely == 1
    assert "may hold none" in guess.explain()
    with pytest.raises(ValueError, match="row_level"):
        si.prune(str(root), "a = 1", row_level="sometimes")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", [si.EqualityBitmap, si.BitSlicedBitmap])
def test_a_sample_full_of_matches_keeps_the_file_without_the_full_pass(tmp_path, kind):
    """Where the first rows already match the whole predicate many times over,
    the default keeps the file from that sample alone (its rows not narrowed);
    "always" narrows them, and both keep the same files."""
    root = tmp_path / "t"
    root.mkdir()
    rows = 8000
    a = [r % 2 for r in range(rows)]
    b = [r % 3 for r in range(rows)]
    pq.write_table(pa.table({"a": a, "b": b}), root / "many.parquet")
    pq.write_table(pa.table({"a": [0] * rows, "b": b}), root / "none.parquet")
    late = [1 if r == rows - 1 else 0 for r in range(rows)]  # one match, the last row
    pq.write_table(pa.table({"a": late, "b": [0] * rows}), root / "late.parquet")
    build_with(str(root), [kind("a"), kind("b")], InProcessRunner())
    where = "a = 1 AND b = 0"
    default = si.prune(str(root), where)
    names = {Path(f).name: f for f in default.files}
    assert set(names) == {"many.parquet", "late.parquet"}
    assert default.row_level_sampled == 1
    assert default.rows_of(names["many.parquet"]) is None
    assert default.rows_of(names["late.parquet"]).tolist() == [rows - 1]
    assert "kept from a sample of their rows" in default.explain()
    always = si.prune(str(root), where, row_level="always")
    assert always.files == default.files
    assert always.row_level_sampled == 0
    expected = [r for r in range(rows) if r % 2 == 1 and r % 3 == 0]
    assert always.rows_of(names["many.parquet"]).tolist() == expected


def test_an_and_reads_one_range_per_column_and_narrows_as_it_goes(tmp_path):
    """``a >= 40 AND a <= 42`` is one range for the bit-sliced index (each half
    alone keeps most rows), and ``b = 7``, evaluated after it, is asked only for
    the rows that range left."""
    from skipindex.indexes._dense_sliced import SlicedFiles

    root = tmp_path / "t"
    root.mkdir()
    for f in range(3):
        a = [(7 * r + f) % 100 for r in range(1000)]
        pq.write_table(
            pa.table({"a": a, "b": [r % 10 for r in range(1000)]}), root / f"{f}.parquet"
        )
    build_with(str(root), [si.BitSlicedBitmap("a"), si.BitSlicedBitmap("b")], InProcessRunner())
    calls: list[tuple[int, int | None]] = []  # (ranges asked, rows allowed or None)
    between = SlicedFiles.between

    def spy(self, starts, ends, within=None):
        allowed = None if within is None else sum(bin(int(w)).count("1") for w in within.ravel())
        calls.append((len(starts), allowed))
        return between(self, starts, ends, within)

    where = "a >= 40 AND b = 7 AND a <= 42"
    with mock.patch.object(SlicedFiles, "between", spy):
        result = si.prune(str(root), where, row_level="always")
    truth = {
        f"{f}.parquet": sorted(
            r for r in range(1000) if 40 <= (7 * r + f) % 100 <= 42 and r % 10 == 7
        )
        for f in range(3)
    }
    assert {Path(f).name: sorted(result.rows_of(f).tolist()) for f in result.files} == {
        name: rows for name, rows in truth.items() if rows
    }
    assert calls[0] == (1, None)  # the range on a, once, over every row
    assert len(calls) == 2
    assert calls[1][1] == 3 * 30  # b only within the 30 rows per file with a in 40..42
