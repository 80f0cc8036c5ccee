"""Every candidate index built once on a sample table; files kept per query for any subset.

Each kind is built in its own pass (in this process, no Spark), so that its
cost is measured: the seconds of a pass are shared among its columns by the
bytes each one's index takes. Sizes and seconds are scaled from the sample's
files to the table's. :meth:`Simulation.kept` answers "how many of the
table's files would each query keep with these indexes" with real prunes of
the sample (:func:`skipindex.pruning.simulate.kept_with`), remembered per
query and per subset of the indexes that query can use.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skipindex.admin.describe import describe
from skipindex.advise.sample import SampleTable
from skipindex.advise.workload import Query
from skipindex.indexes.base import IndexSpec
from skipindex.indexing.build import build_with
from skipindex.indexing.runners import InProcessRunner
from skipindex.pruning.simulate import IndexKey, kept_with

__all__ = ["Candidate", "Simulation"]


@dataclass(frozen=True)
class Candidate:
    """One index the advisor may choose, with its estimated cost on the whole table."""

    column: str
    kind: str
    bytes: float
    seconds: float  # build time on one core

    @property
    def key(self) -> IndexKey:
        return (self.column, self.kind)

    def __str__(self) -> str:
        return f"{self.kind} on {self.column}"


class Simulation:
    """``queries`` against ``sample`` with any subset of the candidate indexes."""

    def __init__(
        self,
        sample: SampleTable,
        queries: Sequence[Query],
        specs: Mapping[str, Sequence[IndexSpec]],
        columns_of: Mapping[str, frozenset[str]],
    ) -> None:
        self.sample = sample
        self.queries = list(queries)
        self.scale = sample.stands_for / max(1, sample.files)
        self.candidates = self._build(specs)
        self._columns_of = columns_of  # per query label: the columns its predicate names
        self._memo: dict[tuple[int, frozenset[IndexKey]], float] = {}

    def _build(self, specs: Mapping[str, Sequence[IndexSpec]]) -> list[Candidate]:
        seconds: dict[str, float] = {}
        for kind, kind_specs in specs.items():
            if not kind_specs:
                continue
            started = time.perf_counter()
            build_with(self.sample.path, list(kind_specs), InProcessRunner())
            seconds[kind] = time.perf_counter() - started
        found = describe(self.sample.path).indexes
        out: list[Candidate] = []
        for kind, spent in seconds.items():
            mine = [d for d in found if d["kind"] == kind]
            total = sum(d["bytes"] for d in mine) or 1
            out.extend(
                Candidate(
                    d["column"],
                    kind,
                    d["bytes"] * self.scale,
                    spent * d["bytes"] / total * self.scale,
                )
                for d in mine
            )
        return out

    def kept(self, config: frozenset[IndexKey]) -> np.ndarray:
        """Per query, the table's files it would keep with the indexes ``config``."""
        return np.array([self.kept_by(q, config) for q in range(len(self.queries))])

    def kept_by(self, number: int, config: frozenset[IndexKey]) -> float:
        query = self.queries[number]
        if query.where is None or self.sample.files == 0:
            return float(self.sample.stands_for)
        names = self._columns_of.get(query.label, frozenset())
        usable = frozenset(k for k in config if k[0].lower() in names)
        memo = (number, usable)
        if memo not in self._memo:
            result = kept_with(self.sample.path, query.where, usable, time_zone=query.time_zone)
            self._memo[memo] = result.kept * self.scale
        return self._memo[memo]
