"""Substring predicates: LIKE patterns as Spark reads them, the n-gram Bloom
kind, and the equality bitmap's exact answer, each against a brute-force oracle.

The oracle matches a pattern by dynamic programming over code points (not by
regular expressions, which the code under test uses): ``_`` one character,
``%`` any run, newlines included, the escape making the next character literal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.expressions.nodes import BoundColumn, BoundMatch
from skipindex.expressions.patterns import PatternError, parse_like
from skipindex.indexes._sbbf import Filters, build, might_contain_all, num_bytes, tight_bytes
from skipindex.indexes._xxh64 import hash_u64
from skipindex.indexes.ngram_bloom import NgramBloomKind, byte_grams
from skipindex.indexing.build import InProcessRunner, build_with
from tests._support import examples

# --------------------------------------------------------------------------- oracle


def like_oracle(value: str, pattern: str, escape: str = "\\") -> bool:
    """``value LIKE pattern ESCAPE escape`` (pattern valid), by dynamic programming."""
    tokens: list[tuple[str, str]] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == escape:
            tokens.append(("literal", pattern[at + 1]))
            at += 2
            continue
        tokens.append(
            ("any", "") if char == "%" else ("one", "") if char == "_" else ("literal", char)
        )
        at += 1
    reach = [True] + [False] * len(value)  # reach[j]: the tokens so far match value[:j]
    for kind, char in tokens:
        if kind == "any":
            reach = list(np.logical_or.accumulate(reach))
        else:
            reach = [False] + [
                reach[j] and (kind == "one" or value[j] == char) for j in range(len(value))
            ]
    return reach[-1]


# Few distinct characters, so patterns hit: wildcards, the escape, a newline,
# a two-byte, a three-byte and a four-byte character.
_ALPHABET = st.sampled_from(["a", "b", "%", "_", "\\", "\n", "é", "€", "😀", "'"])
_VALUES = st.text(_ALPHABET, max_size=8)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """A valid pattern: the escape only before a wildcard or itself."""
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["%", "_", "\\%", "\\_", "\\\\"]),
                st.text(
                    st.sampled_from(["a", "b", "é", "€", "😀", "\n", "'"]), min_size=1, max_size=3
                ),
            ),
            max_size=5,
        )
    )
    return "".join(parts)


# --------------------------------------------------------------------------- patterns


def test_a_pattern_is_its_literal_runs_between_wildcards():
    found = parse_like("ab%c_d\\%e%")
    assert found.runs == ("ab", "c", "d%e", "")
    assert found.gaps == ("%", "_", "%")
    assert found.prefix == "ab"
    assert found.needles == ("d%e", "ab", "c")
    assert parse_like("abc").literal
    assert parse_like("abc%%").prefix_only
    assert parse_like("%%").any_value
    assert not parse_like("%_").any_value


def test_a_named_escape_replaces_the_backslash():
    found = parse_like("a!%b\\%", escape="!")
    assert found.runs == ("a%b\\", "")
    assert found.gaps == ("%",)


@pytest.mark.parametrize("text", ["a\\b", "abc\\", "\\"])
def test_a_pattern_spark_rejects_is_an_error_naming_it(text: str):
    with pytest.raises(PatternError, match="escape character"):
        parse_like(text)


@given(pattern=patterns(), values=st.lists(_VALUES, max_size=12))
def test_a_pattern_matches_what_the_oracle_matches(pattern: str, values: list[str]):
    parsed = parse_like(pattern)
    found = parsed.matches(pa.array(values, pa.string())).to_pylist()
    assert found == [like_oracle(v, pattern) for v in values]
    assert [parsed.matches_text(v) for v in values] == found
    assert parse_like(str(parsed)) == parsed  # written back as Spark reads it


# --------------------------------------------------------------------------- n-grams


def test_grams_are_of_the_utf8_bytes_and_never_cross_two_values():
    grams = byte_grams(pa.array(["abc", "dé", None, "", "xy"]), 2)
    expected = {b"ab", b"bc", b"d\xc3", "é".encode(), b"xy"}
    packed = {int.from_bytes(g, "little") for g in expected}
    assert set(grams.tolist()) == packed  # no "cd", no "ex": values stay apart


def test_a_filter_holds_all_of_some_hashes_only_where_it_holds_each():
    hashes = hash_u64(np.array([1, 2, 3], dtype=np.uint64))
    both = build(hashes[:2], 1024)
    first = build(hashes[:1], 1024)
    filters = Filters.from_arrow(pa.array([both, first, None], pa.binary()))
    assert might_contain_all(filters, hashes[:2]).tolist() == [True, False, False]


def test_a_filter_of_whole_blocks_not_a_power_of_two_holds_what_it_was_given():
    hashes = hash_u64(np.arange(1000, dtype=np.uint64))
    size = tight_bytes(len(hashes), 0.01)
    assert size % 32 == 0
    assert size & (size - 1)  # 38 blocks: not a power of two
    assert size < num_bytes(len(hashes), 0.01)
    filters = Filters.from_arrow(pa.array([build(hashes, size)], pa.binary()))
    assert might_contain_all(filters, hashes).tolist() == [True]
    assert tight_bytes(10**9, 0.01, 1 << 20) == 1 << 20  # capped


def test_the_kind_declines_what_no_gram_can_answer():
    kind = NgramBloomKind("s", pa.string(), {"n": 3})
    column = BoundColumn("s", pa.string())
    assert kind.answers(BoundMatch(column, parse_like("%abc%")))
    assert not kind.answers(BoundMatch(column, parse_like("%ab%")))  # shorter than n
    assert not kind.answers(BoundMatch(column, parse_like("%abc%"), negated=True))


@pytest.mark.parametrize(
    ("params", "message"),
    [({"n": 0}, "n must be an int from 1 to 8"), ({"fpp": 1.5}, "fpp must be a number")],
)
def test_bad_parameters_name_the_column(params: dict[str, float], message: str):
    with pytest.raises(si.InvalidSpecError, match=f"'s'.*{message}"):
        si.NgramBloom("s", **params)


# --------------------------------------------------------------------------- prune


def _kept(root: Path, where: str) -> set[str]:
    return {Path(f).stem for f in si.prune(str(root), where, time_zone="UTC").files}


def _sql(pattern: str) -> str:
    return "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _indexed_twice(
    factory: pytest.TempPathFactory, files: list[list[str | None]], n: int
) -> tuple[Path, Path]:
    """The same files indexed twice: n-gram Blooms (and min-max), equality bitmaps."""
    root = factory.mktemp("t")
    for at, values in enumerate(files):
        pq.write_table(pa.table({"s": pa.array(values, pa.string())}), root / f"f{at}.parquet")
    build_with(str(root), [si.NgramBloom("s", n=n), si.MinMax("s")], InProcessRunner())
    exact = factory.mktemp("e")
    for path in root.glob("*.parquet"):
        (exact / path.name).write_bytes(path.read_bytes())
    build_with(str(exact), [si.EqualityBitmap("s")], InProcessRunner())
    return root, exact


@settings(max_examples=examples(40))
@given(
    files=st.lists(st.lists(st.one_of(st.none(), _VALUES), max_size=6), min_size=1, max_size=4),
    tests=st.lists(st.tuples(patterns(), st.booleans()), min_size=1, max_size=6),
    n=st.integers(1, 4),
)
def test_prune_keeps_every_file_with_a_match_and_bitmaps_exactly_those(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[str | None]],
    tests: list[tuple[str, bool]],
    n: int,
):
    root, exact = _indexed_twice(tmp_path_factory, files, n)
    for pattern, negated in tests:
        where = f"s {'NOT ' if negated else ''}LIKE {_sql(pattern)}"
        holding = {
            f"f{at}"
            for at, values in enumerate(files)
            if any(v is not None and like_oracle(v, pattern) != negated for v in values)
        }
        assert holding <= _kept(root, where), where
        assert _kept(exact, where) == holding, where  # the default call is exact


def test_contains_endswith_and_instr_are_substring_patterns(tmp_path: Path):
    values = {"a": ["connection timeout after 30s"], "b": ["GET /checkout/cart"], "c": [None]}
    for name, rows in values.items():
        pq.write_table(pa.table({"s": pa.array(rows, pa.string())}), tmp_path / f"{name}.parquet")
    build_with(str(tmp_path), [si.NgramBloom("s")], InProcessRunner())
    assert _kept(tmp_path, "contains(s, 'timeout')") == {"a"}
    assert _kept(tmp_path, "endswith(s, '/cart')") == {"b"}
    assert _kept(tmp_path, "instr(s, 'checkout') > 0") == {"b"}
    assert _kept(tmp_path, "locate('after', s) >= 1") == {"a"}
    assert _kept(tmp_path, "s LIKE '%30s!%%' ESCAPE '!'") == set()  # '30s%': no file
    explained = si.prune(str(tmp_path), "s LIKE '%timeout%'", time_zone="UTC").explain()
    assert "ngram_bloom ruled out 2 files" in explained  # b, and c (NULL only)


# --------------------------------------------------------------------------- ILIKE

# Capitals, and the characters lower() turns into ASCII (KELVIN SIGN -> k, DOTTED
# CAPITAL I -> i and a combining dot) or that only look like it (dotless i).
_CASES = st.sampled_from(
    ["a", "B", "k", "K", "i", "I", "\u212a", "\u0130", "\u0131", "é", "É", " "]
)
_CASED_VALUES = st.text(_CASES, max_size=8)
_CASED_PATTERNS = st.lists(st.one_of(_CASES, st.sampled_from(["%", "_"])), max_size=6).map("".join)


@settings(max_examples=examples(40))
@given(
    files=st.lists(
        st.lists(st.one_of(st.none(), _CASED_VALUES), max_size=6), min_size=1, max_size=4
    ),
    tests=st.lists(st.tuples(_CASED_PATTERNS, st.booleans()), min_size=1, max_size=6),
    n=st.integers(1, 3),
)
def test_ilike_keeps_every_file_lower_finds_a_match_in(
    tmp_path_factory: pytest.TempPathFactory,
    files: list[list[str | None]],
    tests: list[tuple[str, bool]],
    n: int,
):
    """Spark runs ``s ILIKE p`` as ``lower(s) LIKE lower(p)``; Python's lower()
    agrees with Java's on these characters (KELVIN SIGN and DOTTED CAPITAL I
    included). Equality bitmaps are exact where values and pattern are ASCII."""
    root, exact = _indexed_twice(tmp_path_factory, files, n)
    ascii_only = all(v is None or v.isascii() for f in files for v in f)
    for pattern, negated in tests:
        for where in (
            f"s {'NOT ' if negated else ''}ILIKE {_sql(pattern)}",
            f"{'NOT ' if negated else ''}lower(s) LIKE {_sql(pattern)}",
        ):
            lowered = pattern.lower() if "ILIKE" in where else pattern
            holding = {
                f"f{at}"
                for at, values in enumerate(files)
                if any(v is not None and like_oracle(v.lower(), lowered) != negated for v in values)
            }
            assert holding <= _kept(root, where), where
            by_values = _kept(exact, where)
            assert holding <= by_values, where
            if ascii_only and pattern.isascii() and "ILIKE" in where:
                assert by_values == holding, where  # exact on ASCII


def test_ilike_asks_for_any_case_of_each_gram(tmp_path: Path):
    for name, text in [("upper", "KERNEL PANIC"), ("mixed", "kErNeL pAnIc"), ("other", "kernel")]:
        pq.write_table(pa.table({"s": [text, "x"]}), tmp_path / f"{name}.parquet")
    build_with(str(tmp_path), [si.NgramBloom("s", n=3)], InProcessRunner())
    assert _kept(tmp_path, "s ILIKE '%kernel panic%'") == {"upper", "mixed"}
    assert _kept(tmp_path, "s LIKE '%kernel panic%'") == set()
    assert _kept(tmp_path, "lower(s) LIKE '%el pan%'") == {"upper", "mixed"}
