"""Where a join's keys may come from: pure decisions over measured sides.

The key rounds (:mod:`.key_rounds`, :mod:`.key_sources`) measure each join's
two sides (the bytes each reads, the rows the key side's index says match,
whether the pruned side relays keys to a third table) and ask these functions
what to do; nothing here reads a file or calls Spark, so every rule is a
function of its inputs and of the :class:`~.policy.PlanningPolicy`, and is
tested as one.

Keys come from one of two sources, at very different prices: the key side's
kept rows read in the driver (milliseconds, where its bitmaps narrowed it), or
a Spark key query scanning the key side (0.15-0.3 s). A choice says whether
keys are wanted at all, and whether the Spark query is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from skipindex.reading.policy import PlanningPolicy
from skipindex.sql.sizes import fits

__all__ = ["Attempt", "KeyChoice", "Retry", "Sides", "choose_keys", "retry", "why_not_ask"]

_LARGER = "its side is not much smaller than the one to prune"
_SMALL = "its other side is too small for a Spark key query to pay"


@dataclass(frozen=True)
class Sides:
    """What was measured of a join's two sides."""

    matching_rows: int  # about how many key-side rows its index says match (0: unknown)
    relay: bool  # the pruned side's keys reach a third table's files
    read: int | None  # bytes the pruned side reads (None: unknown, or a relay)
    key_read: int | None  # bytes the key side reads (None: unknown, or a relay)
    # a relay that is one file, and the key side reads more than it
    relay_larger: bool = False
    # files of the pruned side its keys are expected to skip (None: not estimated;
    # :mod:`.key_spread`)
    likely_skips: float | None = None


@dataclass(frozen=True)
class KeyChoice:
    """Whether keys are wanted, and from where."""

    why_none: str | None  # none are wanted: why
    local_only: bool = False  # only from the key side's kept rows (no Spark query)
    # where none are read locally, why no Spark query is run either (None: it may be)
    why_not_asked: str | None = None


class Attempt(Enum):
    """How a join is tried in a round of key passing."""

    FIRST = "first"  # never tried: keys from the key side's kept rows, or a Spark query
    REREAD = "reread"  # tried, its key side narrowed since: kept rows again, no Spark query
    RANGES = "ranges"  # tried, its key side narrowed since: its kept files' min-max only
    NONE = "none"  # tried as it is, or nothing its keys could still skip


@dataclass(frozen=True)
class Retry:
    """What is known of a join at the start of a round (its attempt's inputs)."""

    tried: bool  # tried in an earlier round
    fed_by_pruned_side: bool  # the key side was narrowed by the pruned side's own keys
    by_ranges: bool  # ranges answer the pruned column (min-max or partition values)
    pruned_whole: bool  # the pruned side still keeps every file
    pruned_large: bool  # the pruned side reads at least ``key_query_bytes``


def retry(known: Retry) -> Attempt:
    """How to try a join this round. Once tried, its key side narrowed since: the
    min-max of that side's kept files, which costs no read, where ranges answer the
    pruned column; and its kept rows read again only where nothing narrowed the
    pruned side yet and it is large enough for its skipped files to repay another
    prune (a few megabytes of returns did not: 62 fewer files for 0.3-0.4 s more
    planning). Never a second Spark key query: over the long lists earlier rounds
    added to its conditions, one costs seconds where reading them costs
    milliseconds."""
    if not (known.tried or known.fed_by_pruned_side):
        return Attempt.FIRST
    if known.pruned_whole and known.pruned_large:
        return Attempt.REREAD
    return Attempt.RANGES if known.by_ranges else Attempt.NONE


def choose_keys(
    sides: Sides, bound: int, spans: bool, local_only: bool, policy: PlanningPolicy
) -> KeyChoice:
    """Whether a join's keys (at most ``bound`` of them) are worth finding, and
    where. ``spans``: ranges of the keys answer the pruned column (its files are
    clustered by it), so even many keys are useful as a few ranges;
    ``local_only``: the round allows no Spark query."""
    many = sides.matching_rows > policy.rows_per_key_bound * bound
    if many and not spans:
        return KeyChoice(f"its index says about {sides.matching_rows:,} rows match")
    if sides.likely_skips is not None and sides.likely_skips < policy.least_skips:
        return KeyChoice(
            f"its keys are expected in every file it would prune "
            f"(about {sides.likely_skips:.1f} skipped)"
        )
    # A side not much smaller than the one it prunes: its keys only where they are
    # read from its kept rows, and only from a few kept files.
    larger = _not_much_smaller(sides, policy)
    if larger and (sides.key_read is None or sides.key_read >= policy.local_key_side_bytes):
        return KeyChoice(_LARGER)
    # A relay narrows a side that passes keys on however small, but not one file
    # by a larger side's keys.
    if sides.relay_larger:
        return KeyChoice("its side is larger than the one file it would narrow")
    small = _too_small_to_ask(sides, policy)
    local = local_only or many  # many keys: as ranges, read locally
    why_not_asked = None
    if (small or larger) and not local:
        why_not_asked = _LARGER if larger else _SMALL
    return KeyChoice(None, local or small or larger, why_not_asked)


def why_not_ask(sides: Sides, policy: PlanningPolicy) -> str | None:
    """Why a Spark key query held until a round's local keys had pruned is not
    run now (None: it is): the side it would prune has become too small for it
    to pay, or the key side is no longer much smaller than it."""
    if _too_small_to_ask(sides, policy):
        return "its other side, pruned by other keys, is too small for a key query to pay"
    if _not_much_smaller(sides, policy):
        return "its side is not much smaller than the one to prune, pruned by other keys"
    return None


def _too_small_to_ask(sides: Sides, policy: PlanningPolicy) -> bool:
    """The pruned side reads less than a Spark key query costs to pay for."""
    return sides.read is not None and sides.read < policy.key_query_bytes


def _not_much_smaller(sides: Sides, policy: PlanningPolicy) -> bool:
    """The key side is not at most 1 / ``key_side_share`` of the pruned side (a
    relay is narrowed whatever the sizes)."""
    return not sides.relay and not fits(sides.key_read, sides.read, policy.key_side_share)
