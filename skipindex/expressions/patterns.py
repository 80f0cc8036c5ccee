"""LIKE patterns as Spark reads them: literal runs between wildcards.

Spark's ``x LIKE p [ESCAPE 'c']`` (``Like``, ``StringUtils.escapeLikeRegex``)
matches the whole string: ``_`` is exactly one character, ``%`` any run of
characters (newlines included: the regex is compiled with DOTALL), and the
escape character (a backslash unless ``ESCAPE`` names another) makes the next
``_``, ``%`` or escape character literal. An escape before anything else, or at
the end of the pattern, is an error Spark raises: such a pattern is never a
:class:`LikePattern` here (the leaf might match, and Spark says why).

A pattern is kept as ``runs[0] gaps[0] runs[1] ... gaps[k-1] runs[k]``: the
literal runs (possibly empty) and, between them, the wildcards (``%`` and
``_``, at least one). What each index needs follows from that: min-max its
prefix (``runs[0]``), a substring index the runs every matching value holds, an
exact index the whole pattern as a regular expression over its distinct values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "LikePattern",
    "PatternError",
    "ascii_lower",
    "contains_pattern",
    "ends_with_pattern",
    "parse_like",
]

_WILDCARDS = "%_"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# What splits a lowered run into texts a value holds as they are, up to case.
_UNFOLDABLE = re.compile(r"[ikIK]|[^\x00-\x7f]")


class PatternError(ValueError):
    """A pattern Spark rejects (an escape before anything but a wildcard or itself)."""


@dataclass(frozen=True)
class LikePattern:
    """``runs[0] gaps[0] runs[1] ... runs[-1]``: literal runs and wildcard gaps."""

    runs: tuple[str, ...]
    gaps: tuple[str, ...]  # each a non-empty string of '%' and '_'

    def __post_init__(self) -> None:
        assert len(self.runs) == len(self.gaps) + 1
        assert all(gap and set(gap) <= set(_WILDCARDS) for gap in self.gaps)

    @property
    def literal(self) -> bool:
        """No wildcard: the pattern is an equality."""
        return not self.gaps

    @property
    def prefix(self) -> str:
        """The text every matching value starts with."""
        return self.runs[0]

    @property
    def prefix_only(self) -> bool:
        """``'text%'`` (``%`` alone after the prefix): a range of strings."""
        return len(self.gaps) == 1 and set(self.gaps[0]) == {"%"} and not self.runs[1]

    @property
    def any_value(self) -> bool:
        """Only ``%`` (``'%'``, ``'%%'``): every non-NULL value matches (the
        empty pattern matches the empty string alone)."""
        return bool(self.gaps) and not any(self.runs) and all(set(g) == {"%"} for g in self.gaps)

    @property
    def needles(self) -> tuple[str, ...]:
        """The literal runs every matching value holds, longest first."""
        return tuple(sorted({run for run in self.runs if run}, key=len, reverse=True))

    @property
    def is_ascii(self) -> bool:
        return all(run.isascii() for run in self.runs)

    @property
    def folded_needles(self) -> tuple[str, ...]:
        """For ``ILIKE``: the texts every matching value holds up to the case of
        their ASCII letters. ``lower()`` makes ASCII of no other character than
        the ASCII letters, KELVIN SIGN (``k``) and DOTTED CAPITAL I (``i`` and a
        combining dot), so a run's ASCII stretches without ``i`` or ``k`` stand
        in the value as they are, but for case; every other character splits them."""
        pieces = {piece for run in self.runs for piece in _UNFOLDABLE.split(run) if piece}
        return tuple(sorted(pieces, key=len, reverse=True))

    @cached_property
    def regex(self) -> str:
        """The pattern as a regular expression over a whole value, in the syntax
        Python's ``re`` and RE2 (pyarrow) share: ASCII punctuation as ``\\xHH``,
        every other character as itself, ``_`` as ``.``, ``%`` as ``.*``, DOTALL."""
        parts = [_escape(self.runs[0])]
        for gap, run in zip(self.gaps, self.runs[1:], strict=True):
            parts.append("".join(".*" if char == "%" else "." for char in gap))
            parts.append(_escape(run))
        return "^(?s:" + "".join(parts) + ")$"

    def matches(self, values: pa.Array) -> pa.Array:
        """Per string, whether the whole of it matches (NULL for NULL)."""
        return pc.match_substring_regex(values, self.regex)

    def matches_text(self, value: str) -> bool:
        """:meth:`matches` for one Python string (tests, explain)."""
        return re.fullmatch(self.regex[1:-1], value) is not None

    def __str__(self) -> str:
        """The pattern as Spark SQL text with the default escape (a backslash)."""
        parts = [_literal(self.runs[0])]
        for gap, run in zip(self.gaps, self.runs[1:], strict=True):
            parts.extend((gap, _literal(run)))
        return "".join(parts)


def parse_like(text: str, escape: str = "\\") -> LikePattern:
    """``text`` as ``LIKE text ESCAPE escape`` reads it (:class:`PatternError` where
    Spark raises one)."""
    if len(escape) != 1:
        raise PatternError(f"the escape must be one character, got {escape!r}")
    runs: list[str] = []
    gaps: list[str] = []
    run: list[str] = []
    gap: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == escape:
            following = text[at + 1 : at + 2]
            if following not in (*_WILDCARDS, escape):  # "" at the end is not in it either
                raise PatternError(
                    f"the escape character {escape!r} must be followed by '%', '_' or itself "
                    f"in the LIKE pattern {text!r}"
                )
            char, at = following, at + 2
            literal = True
        else:
            at += 1
            literal = char not in _WILDCARDS
        if literal:
            if gap:
                runs.append("".join(run))
                gaps.append("".join(gap))
                run, gap = [], []
            run.append(char)
        else:
            gap.append(char)
    runs.append("".join(run))
    if gap:
        gaps.append("".join(gap))
        runs.append("")
    return LikePattern(tuple(runs), tuple(gaps))


def contains_pattern(needle: str) -> LikePattern:
    """``contains(x, needle)``: ``x LIKE '%needle%'`` (the empty needle: any value)."""
    return LikePattern(("", needle, ""), ("%", "%")) if needle else LikePattern(("", ""), ("%",))


def ends_with_pattern(suffix: str) -> LikePattern:
    """``endswith(x, suffix)``: ``x LIKE '%suffix'``."""
    return LikePattern(("", suffix), ("%",))


def ascii_lower(text: str) -> str:
    """``text`` with its ASCII letters lowered, every other character as it is
    (what Spark's ``lower`` does to ASCII text, in any locale)."""
    return text.translate(_ASCII_LOWER)


def _escape(text: str) -> str:
    """Literal text for both regex engines: non-alphanumeric ASCII as ``\\xHH``."""
    return "".join(
        f"\\x{ord(char):02x}" if ord(char) < 128 and not char.isalnum() else char for char in text
    )


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
