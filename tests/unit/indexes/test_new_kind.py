"""Adding an index kind: one module, one registry line, its tests, nothing else.

The kind below lives only in this test. It is a complete kind: a spec users
write (``Parity("x")``), a payload, a build from one file's column, and a
file-level answer to ``x = v`` and ``x IN (...)``. The only other line it needs
is its entry in ``skipindex.indexes.KINDS`` (here set by ``monkeypatch``, in the
package one line of the tuple that builds ``KINDS``): build, the manifest, the
segments, prune and explain() then handle it like any built-in kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex._types import Domain
from skipindex.expressions.nodes import BoundComparison, BoundIn, BoundLeaf, Op
from skipindex.indexes import KINDS
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes.base import FileBatch, FileLevelKind, IndexSpec
from skipindex.indexing.build import InProcessRunner, build_with

# ---------------------------------------------------------------- the whole module


@dataclass(frozen=True)
class Parity(IndexSpec):
    """Per file: does the integer column hold an even value, an odd value?"""

    kind: ClassVar[str] = "parity"


class ParityKind(FileLevelKind):
    spec = Parity
    domains = frozenset({Domain.INT})

    def payload_type(self) -> pa.StructType:
        return pa.struct([("even", pa.bool_()), ("odd", pa.bool_())])

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        odd = pc.drop_null(pc.bit_wise_and(values, 1)).to_numpy(zero_copy_only=False)
        return {"even": bool((odd == 0).any()), "odd": bool((odd == 1).any())}

    def answers(self, leaf: BoundLeaf) -> bool:
        equal = isinstance(leaf, BoundComparison) and leaf.op is Op.EQ
        member = isinstance(leaf, BoundIn) and not leaf.negated
        return leaf.column.name == self.column and (equal or member)

    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> np.ndarray:
        assert isinstance(leaf, BoundComparison | BoundIn)
        values = leaf.values if isinstance(leaf, BoundIn) else (leaf.value,)
        parities = {int(v) % 2 for v in values}  # type: ignore[call-overload]
        hit = np.zeros(len(files), dtype=bool)
        for name, parity in (("even", 0), ("odd", 1)):
            if parity in parities:
                flags = files.payloads.field(name).fill_null(True)
                hit |= np.asarray(flags.to_numpy(zero_copy_only=False), dtype=bool)
        return hit | ~files.known()


# ---------------------------------------------------------------- its tests


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, ParityKind.kind, ParityKind)  # the one registry line


def test_a_kind_from_one_module_builds_prunes_and_explains(registered: None, tmp_path: Path):
    root = tmp_path / "t"
    root.mkdir()
    for name, values in {"even": [2, 4], "odd": [1, 3], "both": [5, 6], "nulls": [None]}.items():
        pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), root / f"{name}.parquet")
    report = build_with(str(root), [Parity("x")], InProcessRunner())
    assert report.files_indexed == 4
    assert ParityKind.kind == "parity"  # taken from the spec, written once

    def kept(where: str) -> set[str]:
        return {Path(f).stem for f in si.prune(str(root), where, time_zone="UTC").files}

    assert kept("x = 8") == {"even", "both"}
    assert kept("x IN (7, 9)") == {"odd", "both"}
    assert kept("x > 100") == {"even", "odd", "both", "nulls"}  # not answered: might match
    result = si.prune(str(root), "x = 8", time_zone="UTC")
    assert "parity ruled out 2 files" in result.explain()
    assert [d["kind"] for d in si.describe(str(root)).indexes] == ["parity"]


def test_the_kind_validates_like_a_built_in_one(registered: None, tmp_path: Path):
    root = tmp_path / "t"
    root.mkdir()
    pq.write_table(pa.table({"s": ["a"]}), root / "f.parquet")
    with pytest.raises(si.UnsupportedTypeError, match="'parity' cannot index column 's'"):
        build_with(str(root), [Parity("s")], InProcessRunner())
