"""Advice handed to the service: written into a maintenance policy, or carried out now.

:func:`to_policy` writes an :class:`~skipindex.advise.plan.Advice` into the
``[[table]]`` entry of a policy file that names the advised table, for the
service to build on its next pass (the file is rewritten from its parsed form,
so comments in it are lost; the previous file is kept beside it as
``<file>.bak``). :func:`apply_advice` (``si.apply_advice``) does that or
:func:`~skipindex.advise.apply.apply`.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from typing import Any

import tomli_w

from skipindex.advise.apply import Applied, apply
from skipindex.advise.plan import Advice
from skipindex.errors import InvalidSpecError
from skipindex.maintain.policy import load_policy
from skipindex.store.location import TablePath

__all__ = ["apply_advice", "to_policy"]


def apply_advice(
    advice: Advice,
    *,
    dst: TablePath | None = None,
    policy: str | os.PathLike[str] | None = None,
    spark: Any = None,
) -> Applied | dict[str, Any]:
    """Carry out ``advice``: into the maintenance ``policy`` file if given (its
    ``[[table]]`` entry, as written), else now (:func:`apply`)."""
    if policy is not None:
        return to_policy(advice, policy)
    return apply(advice, dst=dst, spark=spark)


def to_policy(advice: Advice, policy: str | os.PathLike[str]) -> dict[str, Any]:
    """Write the advice into the ``[[table]]`` of ``policy`` that names the
    advised table; returns that entry as written."""
    source = os.fspath(policy)
    name = load_policy(source).table(advice.path).name  # raises if the table is not there
    with open(source, "rb") as handle:
        document = tomllib.load(handle)
    base = os.path.dirname(os.path.abspath(source))
    for entry in document.get("table", []):
        spelled = entry.get("path") or entry.get("name")
        if spelled is None:
            continue
        resolved = spelled if "://" in spelled else os.path.abspath(os.path.join(base, spelled))
        if name in (spelled, resolved):
            entry.update(advice.policy_entry())
            if advice.layout is None:
                entry.pop("cluster_by", None)
            break
    else:
        raise InvalidSpecError(f"{source}: no [[table]] entry for {advice.path}")
    shutil.copyfile(source, f"{source}.bak")
    temporary = f"{source}.tmp"
    with open(temporary, "wb") as handle:
        tomli_w.dump(document, handle)
    load_policy(temporary)  # what is written must load
    os.replace(temporary, source)
    return dict(entry)
