"""Carrying out advice now: :func:`apply` lays the table out as advised
(``cluster``, in place, or into ``dst`` to try it on a copy) and builds the
advised indexes (added to those the table has: nothing is dropped behind the
user's back). Handing it to the maintenance service instead is
:mod:`skipindex.maintain.advice`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skipindex.advise.plan import Advice
from skipindex.errors import InvalidSpecError
from skipindex.indexing.build import BuildReport, build_index
from skipindex.layout.cluster import ClusterReport, cluster
from skipindex.store.location import TablePath

__all__ = ["Applied", "apply"]


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
