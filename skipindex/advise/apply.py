"""Carrying out advice: cluster and build now, or hand it to the maintenance service.

:func:`apply` lays the table out as advised (``cluster``, in place, or into
``dst`` to try it on a copy) and builds the advised indexes (added to those the
table has: nothing is dropped behind the user's back). :func:`to_policy`
writes the advice into a maintenance policy's ``[[table]]`` entry instead, for
the service to build on its next pass (the policy file is rewritten from its
parsed form, so comments in it are lost; the previous file is kept beside it
as ``<file>.bak``).
"""

from __future__ import annotations

import os
import shutil
import tomllib
from dataclasses import dataclass
from typing import Any

import tomli_w

from skipindex.advise.plan import Advice
from skipindex.errors import InvalidSpecError
from skipindex.indexing.build import BuildReport, build_index
from skipindex.layout.cluster import ClusterReport, cluster
from skipindex.maintain.policy import load_policy
from skipindex.store.location import TablePath

__all__ = ["Applied", "apply", "apply_advice", "to_policy"]


@dataclass(frozen=True)
class Applied:
    path: str  # where the advice now holds (``dst`` if given)
    cluster: ClusterReport | None
    build: BuildReport

    def __str__(self) -> str:
        done = [] if self.cluster is None else [str(self.cluster)]
        built = self.build
        note = f"{built.files_indexed} files indexed" if built.files_indexed else "up to date"
        return "\n".join([*done, f"{self.path}: index version {built.version} ({note})"])


def apply(advice: Advice, *, dst: TablePath | None = None, spark: Any = None) -> Applied:
    """Cluster (if advised) and build the advised indexes, on ``advice.path`` or
    on a copy at ``dst`` (clustered there; unclustered advice copies nothing)."""
    target = str(dst) if dst is not None else advice.path
    report = None
    if advice.layout is not None:
        curve, by = advice.layout
        report = cluster(
            advice.path,
            dst,
            by=list(by),
            curve=curve,  # type: ignore[arg-type]  # hilbert, zorder or linear
            target_file_bytes=advice.target_file_bytes,
            indexes=advice.specs,
            spark=spark,
        )
    elif dst is not None:
        raise InvalidSpecError(
            f"the advice for {advice.path} keeps its layout: there is nothing to write to {dst}; "
            "apply it to the table itself"
        )
    build = build_index(target, advice.specs, spark=spark)
    return Applied(target, report, build)


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
