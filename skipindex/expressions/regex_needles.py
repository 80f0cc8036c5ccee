"""The LIKE pattern every value holding a match of a regular expression matches.

``x RLIKE r`` holds where Java's ``Pattern.compile(r).matcher(x).find()`` finds a
match anywhere in ``x``. Where ``r`` must match literal text (``timeout``,
``/checkout/[0-9]+``, ``err(or)?: disk``), every such value holds that text, in
the order ``r`` asks it: ``x LIKE '%timeout%'``, ``'%/checkout/%'``,
``'%err%: disk%'``. That pattern holds wherever ``r`` finds a match, so the
indexes that answer LIKE (n-gram Bloom filters by its runs, equality bitmaps
value by value) answer ``RLIKE r`` with more rows, never fewer.

Only a subset of Java's syntax is read, where Java and this reading surely
agree on which characters are literal: characters, escaped punctuation, ``.``,
character classes (not nested, no ``&&``), the class escapes (``\\d``, ``\\w``,
``\\s`` and their negations), anchors and word boundaries, groups (capturing or
``(?:``), alternation, and the quantifiers ``? * + {m} {m,} {m,n}`` (greedy,
lazy or possessive). Anything else (flags such as ``(?i)``, lookarounds,
back-references, ``\\Q...\\E``, ``\\p{...}``, hex, octal and control escapes)
gives None: the condition might match. Whatever is not a literal character
(a class, ``.``, an optional or repeated part, an alternation) is a ``%`` gap,
and a repeated literal keeps only its first copies in its run: runs never
overlap, so a value holding a match always holds them in order.
"""

from __future__ import annotations

from dataclasses import dataclass

from skipindex.expressions.patterns import LikePattern, PatternError, parse_like

__all__ = ["implied_pattern"]

# One gap: text of any length, in place of what is not a literal character.
_GAP = None
_META = frozenset("\\[](){}.*+?^$|")
_CLASS_ESCAPES = frozenset("dDwWsS")
_ZERO_WIDTH_ESCAPES = frozenset("bBAzZG")
_CONTROL = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}

Item = str | None  # a literal character, or a gap


class _UnreadError(Exception):
    """Syntax this reading does not follow."""


@dataclass
class _Reader:
    text: str
    at: int = 0

    def peek(self) -> str | None:
        return self.text[self.at] if self.at < len(self.text) else None

    def take(self) -> str:
        char = self.text[self.at]
        self.at += 1
        return char


def implied_pattern(regex: str) -> LikePattern | None:
    """The LIKE pattern (default escape) every value where ``regex`` finds a match
    matches, or None where it asks no literal text or its syntax is not read."""
    try:
        reader = _Reader(regex)
        items = _alternation(reader)
        if reader.peek() is not None:
            return None  # an unmatched ')'
    except _UnreadError:
        return None
    runs, current = [], ""
    for item in items:
        if item is _GAP:
            runs.append(current)
            current = ""
        else:
            current += item
    runs.append(current)
    if not any(runs):
        return None
    text = "%" + "%".join(_escaped(run) for run in runs if run) + "%"
    try:
        return parse_like(text, "\\")
    except PatternError:
        return None


def _escaped(run: str) -> str:
    return run.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _alternation(reader: _Reader) -> list[Item]:
    branches = [_sequence(reader)]
    while reader.peek() == "|":
        reader.take()
        branches.append(_sequence(reader))
    return branches[0] if len(branches) == 1 else [_GAP]


def _sequence(reader: _Reader) -> list[Item]:
    items: list[Item] = []
    while reader.peek() not in (None, "|", ")"):
        atom = _atom(reader)
        least, most = _quantifier(reader)
        if least == most == 1:
            items.extend(atom)
        elif least == 0 or not atom:
            items.append(_GAP)
        elif most == least and all(i is not _GAP for i in atom):
            items.extend(atom * least)  # exactly so many copies, all literal
        else:
            items.extend(atom)  # the first copy, then whatever repeats
            items.append(_GAP)
    return items


def _atom(reader: _Reader) -> list[Item]:
    char = reader.take()
    if char == "(":
        if reader.text.startswith("?", reader.at):
            if not reader.text.startswith("?:", reader.at):
                raise _UnreadError  # flags, lookarounds, named groups
            reader.at += 2
        inner = _alternation(reader)
        if reader.peek() != ")":
            raise _UnreadError
        reader.take()
        return inner
    if char == "[":
        _skip_class(reader)
        return [_GAP]
    if char == ".":
        return [_GAP]
    if char in "^$":
        return []  # zero width
    if char == "\\":
        return _escape(reader)
    if char in "{*+?":
        raise _UnreadError  # a quantifier with nothing to repeat
    return [char]


def _escape(reader: _Reader) -> list[Item]:
    if reader.peek() is None:
        raise _UnreadError
    char = reader.take()
    if not char.isascii() or not char.isalnum():
        return [char]  # escaped punctuation (or any non-ASCII character): itself
    if char in _CLASS_ESCAPES:
        return [_GAP]
    if char in _ZERO_WIDTH_ESCAPES:
        return []
    if char in _CONTROL:
        return [_CONTROL[char]]
    raise _UnreadError  # back-references, \Q, \p, \x, \u, \0, \c, \h, \R ...


def _skip_class(reader: _Reader) -> None:
    """Past a character class's closing ``]`` (its opening one taken)."""
    if reader.peek() == "^":
        reader.take()
    if reader.peek() == "]":
        raise _UnreadError  # a leading ']': read otherwise by some engines
    while True:
        char = reader.peek()
        if char is None or char == "[":
            raise _UnreadError  # unclosed, or a nested class
        reader.take()
        if char == "]":
            return
        if char == "&" and reader.peek() == "&":
            raise _UnreadError  # an intersection
        if char == "\\":
            escaped = reader.peek()
            if escaped is None:
                raise _UnreadError
            named = escaped.isascii() and escaped.isalnum()
            if named and escaped not in _CLASS_ESCAPES and escaped not in _CONTROL:
                raise _UnreadError
            reader.take()


def _quantifier(reader: _Reader) -> tuple[int, int | None]:
    """The repeat counts after an atom ((1, 1) where none), and its lazy or
    possessive mark taken."""
    char = reader.peek()
    if char == "?":
        counts: tuple[int, int | None] = (0, 1)
    elif char == "*":
        counts = (0, None)
    elif char == "+":
        counts = (1, None)
    elif char == "{":
        return _braces(reader)
    else:
        return 1, 1
    reader.take()
    _mark(reader)
    return counts


def _braces(reader: _Reader) -> tuple[int, int | None]:
    end = reader.text.find("}", reader.at)
    if end < 0:
        raise _UnreadError
    body = reader.text[reader.at + 1 : end]
    low, comma, high = body.partition(",")
    if not low.isdigit() or (high and not high.isdigit()) or not low.isascii():
        raise _UnreadError
    reader.at = end + 1
    _mark(reader)
    least = int(low)
    most = int(high) if high else (None if comma else least)
    if most is not None and most < least:
        raise _UnreadError
    return min(least, 64), most  # a run of a few copies says as much as thousands


def _mark(reader: _Reader) -> None:
    if reader.peek() in ("?", "+"):
        reader.take()
