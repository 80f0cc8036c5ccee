"""Substring predicates against Spark's own answers: files Spark writes, random
strings (unicode, wildcards and escapes in the data, empty strings, NULLs, very
long values) and random patterns (``%``, ``_``, the escape, ``ESCAPE``,
``contains``, ``endswith``, ``startswith``, ``instr``), ``RLIKE`` and ``NOT
RLIKE`` (literals, classes, groups, alternation, quantifiers), ``ILIKE`` and
``lower(s) LIKE`` (capitals, KELVIN SIGN and DOTTED CAPITAL I, which ``lower``
turns into ASCII), in two session zones.

Two indexes of the same files: n-gram Bloom filters (with min-max), which must
keep every file Spark finds a match in, and equality bitmaps, which must keep
exactly those files (ILIKE: at least those, as non-ASCII values might match;
RLIKE: at least those, as only the literal text a regex needs is answered).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from tests._support import examples, files_matching, kept_files

pytestmark = pytest.mark.spark

ZONES = ["UTC", "Asia/Kathmandu"]
# Pieces values and patterns are made of: words that recur across files, the
# wildcards and the escape as data, a newline, two-, three- and four-byte characters.
_PIECES = ["time", "out", "err", "or", "%", "_", "\\", "\n", "é", "€", "😀", "'", "a", "b", " ",
           "TIME", "Out", "ERR", "\u212a", "\u0130", "k", "I", "\u0131"]  # fmt: skip


def _value(rng: random.Random) -> str | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.12:
        return ""
    if roll < 0.14:  # a very long value
        return "".join(rng.choice(_PIECES) for _ in range(2000))
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 6)))


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    rng = random.Random(65)
    rows = [(n, _value(rng)) for n in range(600)]
    grams = tmp_path_factory.mktemp("substring") / "grams"
    frame = spark.createDataFrame(rows, "n INT, s STRING").repartition(8, "n")
    frame.write.parquet(str(grams))
    exact = grams.parent / "exact"
    shutil.copytree(grams, exact)
    si.build_index(str(grams), [si.NgramBloom("s", n=3), si.MinMax("s")], spark=spark)
    si.build_index(str(exact), [si.EqualityBitmap("s")], spark=spark)
    return grams, exact


@st.composite
def patterns(draw: st.DrawFn) -> tuple[str, str]:
    """A valid pattern and the escape it is written with."""
    escape = draw(st.sampled_from(["\\", "!"]))
    parts = draw(
        st.lists(
            st.one_of(
                st.sampled_from(["%", "_", f"{escape}%", f"{escape}_", escape * 2]),
                st.sampled_from([p for p in _PIECES if p not in ("%", "_", escape)]),
            ),
            max_size=5,
        )
    )
    return "".join(parts), escape


_REGEX_META = set("\\[](){}.*+?^$|")
# Regex pieces beside the literal ones: what is not a literal character.
_REGEX_PARTS = [".", ".*", "[ab]", "[^a]", "\\d", "(time|err)", "(out)?", "a+", "b{2}", "(or)+",
                "^", "$", "\\s", "(?:err)"]  # fmt: skip


@st.composite
def regexes(draw: st.DrawFn) -> str:
    """A regular expression of literal pieces (metacharacters escaped) and other parts."""
    literal = st.sampled_from(_PIECES).map(
        lambda p: "".join("\\" + c if c in _REGEX_META else c for c in p)
    )
    return "".join(draw(st.lists(st.one_of(literal, st.sampled_from(_REGEX_PARTS)), max_size=5)))


def _literal(text: str) -> str:
    """``text`` as a Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@st.composite
def predicates(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["like", "not like", "contains", "endswith", "startswith",
                                  "instr", "ilike", "not ilike", "lower like", "rlike",
                                  "not rlike"]))  # fmt: skip
    if shape in ("rlike", "not rlike"):
        return f"s {shape.upper()} {_literal(draw(regexes()))}"
    if shape in ("like", "not like", "ilike", "not ilike", "lower like"):
        pattern, escape = draw(patterns())
        escaped = f" ESCAPE {_literal(escape)}" if escape != "\\" else ""
        if shape == "lower like":
            return f"lower(s) LIKE {_literal(pattern)}{escaped}"
        return f"s {shape.upper()} {_literal(pattern)}{escaped}"
    needle = "".join(draw(st.lists(st.sampled_from(_PIECES), max_size=3)))
    if shape == "instr":
        return f"instr(s, {_literal(needle)}) > 0"
    return f"{shape}(s, {_literal(needle)})"


def _spark_files(spark: Any, table: Path, wheres: list[str]) -> list[set[str]]:
    return files_matching(spark.read.parquet(str(table)), wheres)


@pytest.mark.parametrize("zone", ZONES)
def test_substring_predicates_keep_what_spark_finds(spark, tables, zone):
    grams, exact = tables
    spark.conf.set("spark.sql.session.timeZone", zone)

    @settings(max_examples=examples(16))
    @given(wheres=st.lists(predicates(), min_size=1, max_size=12))
    def check(wheres: list[str]) -> None:
        truth = _spark_files(spark, grams, wheres)
        for where, matching in zip(wheres, truth, strict=True):
            kept = kept_files(grams, where, zone)
            assert matching <= kept, f"{where}: dropped {sorted(matching - kept)}"
            by_values = kept_files(exact, where, zone)
            if "ILIKE" in where or "RLIKE" in where or where.startswith("lower("):
                assert matching <= by_values, f"{where}: dropped {sorted(matching - by_values)}"
            else:
                assert by_values == matching, f"{where}: not exact"

    try:
        check()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_a_needle_no_file_holds_skips_every_file(spark, tables):
    grams, _ = tables
    assert _spark_files(spark, grams, ["contains(s, 'zzzq')"]) == [set()]
    assert kept_files(grams, "contains(s, 'zzzq')", "UTC") == set()
    assert len(kept_files(grams, "s LIKE '%time%'", "UTC")) == 8  # a common word: every file


def test_si_sql_prunes_by_substrings_as_written(spark, tables):
    from tests._support import exact_rows

    grams, _ = tables
    si.register(spark, "logs", str(grams))
    for query, most in [
        ("SELECT n, s FROM logs WHERE contains(s, 'zzzq') OR s LIKE '%qq!%%' ESCAPE '!'", 0),
        ("SELECT l.n FROM logs l WHERE instr(l.s, 'timeouterror') > 0 AND l.n >= 0", 8),
        ("SELECT n FROM logs WHERE s RLIKE 'zz(zq)+' OR regexp_like(s, '^qqq[0-9]*yzz')", 0),
    ]:
        plan = si.sql_plan(spark, query)
        assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
        (reference,) = plan.references
        assert reference.result is not None, plan.explain()
        assert reference.result.kept <= most
        assert "ngram_bloom" in reference.result.explain()


def test_ilike_keeps_what_lower_makes_ascii(spark, tmp_path):
    """Spark's lower() makes KELVIN SIGN a 'k' and DOTTED CAPITAL I an 'i' (and a
    combining dot): such a value ILIKE '%kelvin%' is a match, and is kept."""
    rows = [(0, "\u212aELVIN"), (1, "ok"), (2, "K\u0130LN"), (3, "KELVIN")]
    table = tmp_path / "t"
    frame = spark.createDataFrame(rows, "n INT, s STRING")
    frame.repartitionByRange(4, "n").write.parquet(str(table))  # a file each
    si.build_index(str(table), [si.NgramBloom("s", n=3)], spark=spark)
    wheres = ["s ILIKE '%kelvin%'", "lower(s) LIKE '%elvi%'", "s ILIKE 'ki%'"]
    for where, matching in zip(wheres, _spark_files(spark, table, wheres), strict=True):
        assert matching, where  # Spark finds a match ("ki" + a combining dot + "ln")
        kept = kept_files(table, where, "UTC")
        assert matching <= kept, where
        if "elvi" in where:
            assert len(kept) == 2, where  # the files of "ok" and "KİLN" are skipped
    assert len(list(table.glob("*.parquet"))) == 4
