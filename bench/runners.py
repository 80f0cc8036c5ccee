"""Building indexes for the benchmarks without Spark, and reusing them between runs.

``PoolRunner`` runs skipindex's own task code (``skipindex.indexer.index_bins``,
what each Spark task runs) in a pool of worker processes: the same segments as a
Spark build, without a JVM. ``ensure_index`` rebuilds only when the index on disk
does not hold exactly the wanted definitions over every file.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from skipindex.indexer import IndexJob, SegmentWritten, index_bins
from skipindex.spark_view import SparkView
from skipindex.store.location import DataFile, TableLocation


def _one_bin(job: IndexJob, number: int, files: list[DataFile]) -> list[SegmentWritten]:
    return list(index_bins(job, iter([(number, files)])))


class PoolRunner:
    """Bins of files indexed by ``workers`` processes (a few bins per worker)."""

    def __init__(self, workers: int = 2, bins_per_worker: int = 3) -> None:
        self.workers = workers
        self.parallelism = workers * bins_per_worker

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        if len(bins) == 1:
            return _one_bin(job, 0, bins[0])
        with ProcessPoolExecutor(self.workers) as pool:
            futures = [pool.submit(_one_bin, job, i, b) for i, b in enumerate(bins)]
            return [d for f in futures for d in f.result()]

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None:
        return None

    def view(self) -> SparkView:
        return SparkView()  # Spark's defaults


def _wanted(specs: Sequence[Any]) -> set[tuple[str, str, str]]:
    return {(s.column, s.kind, repr(sorted(s.params().items()))) for s in specs}


def has_index(path: Path, specs: Sequence[Any]) -> bool:
    """True when ``path`` is indexed with exactly ``specs`` over all its files."""
    description = si.describe(str(path))
    if description.version is None:
        return False
    have = {
        (d["column"], d["kind"], repr(sorted(d["params"].items()))) for d in description.indexes
    }
    return have == _wanted(specs) and description.files_indexed == description.files_listed


def ensure_index(path: Path, specs: Sequence[Any], runner: Any = None) -> bool:
    """Build ``specs`` on ``path`` unless already there; True when it built."""
    if has_index(path, specs):
        return False
    si.drop_index(str(path), all=True)
    build_with(str(path), list(specs), runner or PoolRunner())
    return True


def rebuild(path: Path, specs: Sequence[Any], runner: Any = None) -> si.BuildReport:
    """Drop whatever index ``path`` has and build ``specs`` from scratch."""
    si.drop_index(str(path), all=True)
    return build_with(str(path), list(specs), runner or InProcessRunner())
