"""The LIKE pattern a regular expression implies (``expressions/regex_needles.py``):
wherever the regex finds a match, the pattern matches, for regexes of the syntax
it reads, random text, and the regex's own matches planted in it; syntax it does
not read gives no pattern; RLIKE and NOT RLIKE as predicates, negation kept safe."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex.expressions.nodes import Match, Unsupported
from skipindex.expressions.regex_needles import implied_pattern
from skipindex.expressions.rewrite import rewrite_not
from skipindex.expressions.sql import parse_sql

_CHARS = "ab.-x0\n%_\\é😀"
_META = set("\\[](){}.*+?^$|")


def _literal(char: str) -> str:
    return "\\" + char if char in _META else char


atoms = st.deferred(
    lambda: st.one_of(
        st.sampled_from(_CHARS).map(_literal),
        st.sampled_from([".", "[ab]", "[^a.]", "[a-c\\d]", "\\d", "\\w", "\\S", "\\t", "\\n"]),
        st.sampled_from(["^", "$", "\\b", "\\B", "\\A", "\\z"]),
        sequences.map(lambda s: f"({s})"),
        sequences.map(lambda s: f"(?:{s})"),
        st.tuples(sequences, sequences).map(lambda t: f"({t[0]}|{t[1]})"),
    )
)
quantifiers = st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{1,3}", "{2,}", "+?", "*+"])
sequences = st.lists(st.tuples(atoms, quantifiers).map("".join), max_size=4).map("".join)


@given(regex=sequences, text=st.text(alphabet=_CHARS, max_size=12), at=st.integers(0, 12))
def test_wherever_the_regex_finds_a_match_its_pattern_matches(regex, text, at):
    try:
        compiled = re.compile(regex)
    except re.error:
        return  # not a regex (a quantified anchor, say): Spark would refuse it too
    implied = implied_pattern(regex)
    # plant one of the regex's own matches, where it has a short one
    for candidate in ("ab", "a.b", "aa", "0", "x-", "a\nb", "", "é😀", "%_\\"):
        found = compiled.search(candidate)
        if found is not None:
            text = text[:at] + found.group(0) + text[at:]
            break
    if implied is None or compiled.search(text) is None:
        return
    assert implied.matches_text(text), (regex, text, str(implied))


@pytest.mark.parametrize(
    ("regex", "pattern"),
    [
        ("timeout", "%timeout%"),
        ("/checkout/[0-9]+", "%/checkout/%"),
        ("err(or)?: disk", "%err%: disk%"),
        ("^GET /api/v[12]/", "%GET /api/v%/%"),
        ("xa+y", "%xa%y%"),
        ("ab{3}c", "%abbbc%"),
        ("a\\.b%_", "%a.b\\%\\_%"),
    ],
)
def test_literal_text_a_regex_needs(regex, pattern):
    implied = implied_pattern(regex)
    assert implied is not None
    assert str(implied) == pattern


@pytest.mark.parametrize(
    "regex",
    ["(?i)timeout", "a|b", "\\Qa.b\\E", "[a-z&&[^b]]x", "[[a]]x", "[]a]x", "\\p{L}x", "(a)\\1",
     "x(?=y)", "\\x41", "\\u0041", "\\0101", "a{,3}", "(ab", "ab)", "*a", ".*", ""],
)  # fmt: skip
def test_syntax_not_read_or_no_literal_gives_no_pattern(regex):
    assert implied_pattern(regex) is None


def test_rlike_prunes_by_its_text_and_not_rlike_by_nothing():
    found = rewrite_not(parse_sql("s RLIKE 'time(out)?s'"))
    matches = [p for p in found.children if isinstance(p, Match)]
    assert [str(m.pattern) for m in matches] == ["%time%s%"]
    assert any(isinstance(p, Unsupported) for p in found.children)
    negated = rewrite_not(parse_sql("s NOT RLIKE 'timeout'"))
    # NOT (pattern AND itself): the pattern's NOT OR the regex's NOT, which might match
    assert any(isinstance(p, Unsupported) for p in negated.children)
    assert all(isinstance(p, Match | Unsupported) for p in negated.children)
    assert isinstance(parse_sql("s RLIKE '(?i)timeout'"), Unsupported)
    assert isinstance(parse_sql("regexp(s, 'a|b')"), Unsupported)
