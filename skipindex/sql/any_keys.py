"""The keys of a group of joins a row must match one of: a CTE's references.

A CTE referenced several times serves each reference from the same table rows
(one reference joins one year's weeks, the other the next year's).
Where every reference joins the CTE's column to a filtered side
(:attr:`~skipindex.sql.derive.Derivation.any_joins`), a row of the table behind
that column counts only if its key is among *some* reference's keys: the union
of their keys prunes it, and only once every reference has given its keys (one
reference's alone would drop the rows another keeps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import Keys

__all__ = ["union_keys"]


def union_keys(group: Sequence[EquiJoin], found: Sequence[Keys | None], bound: int) -> Keys:
    """The keys of ``group`` (one join each reference) from each join's ``found``
    keys: their union where every one has a list of at most ``bound`` in all,
    else none, and why."""
    join = replace(group[0], text=" / ".join(j.text for j in group))
    seconds = sum(k.seconds for k in found if k is not None)
    lists = [k.values for k in found if k is not None and isinstance(k.values, list)]
    if len(lists) < len(group):
        why = "not every reference of the CTE gave keys"
        notes = [k.note for k in found if k is not None and k.values is None and k.note]
        return Keys(join, None, f"{why} ({notes[0]})" if notes else why, seconds)
    union = sorted(set().union(*lists))
    if len(union) > bound:
        return Keys(join, None, f"more than {bound:,} keys over its references", seconds)
    note = f"the union over the CTE's {len(group)} references"
    return Keys(join, union, note, seconds)
