"""The one small interface every index kind implements.

A kind is built per data file from one Arrow array (the file's column, already
cast to the table type and in physical form: see :func:`skipindex._types.to_physical`)
into one *payload*: a dict matching :meth:`IndexKind.payload_type`. Payloads of
many files are stored as one struct column of a segment (a null struct means
"unknown for this file": every question about it is answered "might match").

At prune time a kind answers one bound leaf predicate for many files at once:

* file-level kinds (:class:`FileLevelKind`) implement ``might_match`` and
  return one boolean per file, vectorised over the payload column;
* row-level kinds (:class:`RowLevelKind`) implement ``matching_rows`` and
  return, per requested file, the Roaring bitmap of row positions that satisfy
  the leaf (or ``None`` when they cannot tell, meaning all rows might).

Answers are always supersets: a kind that is unsure says "might match".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap

from skipindex._types import Domain, domain_of, spark_type_name
from skipindex.errors import InvalidSpecError, UnsupportedTypeError
from skipindex.expressions.calls import parse_expression
from skipindex.expressions.nodes import BoundLeaf

if TYPE_CHECKING:
    from skipindex.indexes._column_work import ColumnWork

__all__ = ["FileBatch", "FileLevelKind", "IndexKind", "IndexSpec", "RowLevelKind"]

_SUBJECT = ("column", "expr")  # what an index is on; every other field is a parameter


@dataclass(frozen=True)
class IndexSpec:
    """What a user asks for: ``MinMax("col")``, ``Bloom("col", fpp=0.01)``...,
    or the same over a Spark SQL expression of columns instead of a column:
    ``EqualityBitmap(expr="weekofyear(lo_orderdate)")`` (an expression index:
    its values are computed by Spark when the index is built).

    Subclasses set ``kind`` and add their parameters as dataclass fields.
    """

    column: str = ""
    expr: str | None = field(default=None, kw_only=True)
    kind: ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> IndexSpec:
        # Checked here, before the dataclass __init__, so a misspelt parameter gets
        # the list of valid ones instead of "unexpected keyword argument".
        names = [f.name for f in fields(cls)]
        unknown = [k for k in kwargs if k not in names]
        takes = ", ".join(n for n in names if n != "expr")  # positionally
        if unknown or len(args) > len(names) - 1:
            what = f"unknown parameter {unknown[0]!r}" if unknown else "too many arguments"
            raise InvalidSpecError(
                f"{cls.__name__}(...): {what}; it takes {takes} "
                f"(e.g. {cls.__name__}('l_partkey')), or expr= instead of column "
                f"(e.g. {cls.__name__}(expr='lower(email)'))"
            )
        return super().__new__(cls)

    def __post_init__(self) -> None:
        name = type(self).__name__
        if self.expr is not None:
            if self.column:
                raise InvalidSpecError(
                    f"{name}(...): give a column or expr=, not both "
                    f"(got {self.column!r} and expr={self.expr!r})"
                )
            if not isinstance(self.expr, str) or not self.expr.strip():
                raise InvalidSpecError(
                    f"{name}(expr=...): the expression must be Spark SQL text such as "
                    f"'weekofyear(lo_orderdate)', got {self.expr!r}"
                )
            try:
                parse_expression(self.expr)
            except ValueError as exc:
                raise InvalidSpecError(f"{name}(expr=...): {exc}") from None
            return
        if not isinstance(self.column, str) or not self.column:
            raise InvalidSpecError(
                f"{name}(...): the column must be a column name such as "
                f"'l_partkey' (or 's.f' for a struct field), or expr= a Spark SQL expression "
                f"of columns such as expr='lower(email)', got {self.column!r}"
            )

    @property
    def subject(self) -> str:
        """What the index is on, for messages: the column, or ``expr=<text>``."""
        return self.column if self.expr is None else f"expr={self.expr}"

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _SUBJECT}


@dataclass(frozen=True)
class FileBatch:
    """The files a kind is asked about at prune time.

    ``num_rows[i]`` is file i's row count; ``payloads[i]`` its payload struct
    (null when the index does not know the file).
    """

    num_rows: np.ndarray
    payloads: pa.StructArray = field(repr=False)
    # What kinds derive from the payloads (decoded bitmaps, code arrays): prune
    # keeps a batch across calls, so this is worked out once per process.
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    # How many bytes of decoded bitmaps kinds may keep for as long as the batch
    # lives; beyond it they decode on use, so memory does not grow with the files.
    decode_budget: int = 1 << 62

    def __len__(self) -> int:
        return len(self.num_rows)

    @property
    def nbytes(self) -> int:
        """What a cache should count: the payloads and what kinds decoded from them."""
        return int(self.payloads.nbytes) + int(self.num_rows.nbytes) + self.decoded_nbytes

    @property
    def decoded_nbytes(self) -> int:
        """What kinds decoded from the payloads and keep."""
        return sum(int(getattr(v, "nbytes", 0)) for v in self.memo.values())

    def known(self) -> np.ndarray:
        """True where the file has a payload."""
        return np.asarray(self.payloads.is_valid().to_numpy(zero_copy_only=False), dtype=bool)

    def take(self, positions: np.ndarray) -> FileBatch:
        """The files at ``positions``, in that order (what kinds derived from the
        whole batch is not carried over: they derive it again for these)."""
        return FileBatch(
            self.num_rows[positions],
            self.payloads.take(pa.array(positions, pa.int64())),
            decode_budget=self.decode_budget,
        )


class IndexKind(ABC):
    """Base of the index kinds: one subclass per module in this package, derived
    from :class:`FileLevelKind` or :class:`RowLevelKind`. ``kind`` is the spec's."""

    kind: ClassVar[str]
    spec: ClassVar[type[IndexSpec]]
    row_level: ClassVar[bool]
    domains: ClassVar[frozenset[Domain]] = frozenset(Domain)
    # True when build() of a string or binary column depends only on its distinct
    # non-null values and its null count (a superset of the values only makes the
    # index less selective): such a kind may be given a column's dictionary
    # values and its nulls instead of its rows (see spark_view.read_columns).
    values_only: ClassVar[bool] = False
    # True when build() takes a string or binary column as a DictionaryArray (one
    # index per row into a dictionary that may hold values no row has).
    dictionary_rows: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is not None:  # the kind id is written once, on the spec users see
            cls.kind = spec.kind

    def __init__(self, column: str, arrow_type: pa.DataType, params: dict[str, Any]) -> None:
        self.column = column
        self.arrow_type = arrow_type
        self.domain: Domain = self.indexed_domain(column, arrow_type)
        self.params = dict(params)
        self.options: IndexSpec = self._options(column, params)

    def indexed_domain(self, column: str, arrow_type: pa.DataType) -> Domain:
        """The domain of the values this kind indexes in a column of ``arrow_type``
        (the column's own; an array's elements for the element kinds), or an
        error naming the column and what the kind takes."""
        domain = domain_of(arrow_type)
        if domain is None or domain not in self.domains:
            accepted = ", ".join(sorted(d.value for d in self.domains))
            raise UnsupportedTypeError(
                f"index kind '{self.kind}' cannot index column '{column}' of type "
                f"{spark_type_name(arrow_type)}; it takes {accepted} columns"
            )
        return domain

    def _options(self, column: str, params: dict[str, Any]) -> IndexSpec:
        """The spec these parameters describe: one validation for both the
        user-facing spec and parameters read back from a manifest."""
        allowed = sorted(f.name for f in fields(self.spec) if f.name not in _SUBJECT)
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise InvalidSpecError(
                f"index kind '{self.kind}' on '{column}': unknown parameter(s) {unknown}; "
                f"it takes {allowed}"
            )
        return self.spec(column, **params)

    @abstractmethod
    def payload_type(self) -> pa.StructType:
        """The struct type of this kind's column in a segment."""

    @abstractmethod
    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        """The payload for one file from its whole column (physical form).
        ``work``, when given, is shared work on these same values: the indexer
        passes one per column so that kinds on one column sort it once."""

    @abstractmethod
    def answers(self, leaf: BoundLeaf) -> bool:
        """Whether this kind can narrow ``leaf`` at all (else it is not asked)."""


class FileLevelKind(IndexKind):
    """A kind that knows, per file, whether a leaf might match (min-max, Bloom)."""

    row_level = False

    @abstractmethod
    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> np.ndarray:
        """Per file, False only if no row can satisfy ``leaf``."""


class RowLevelKind(IndexKind):
    """A kind that knows which rows of a file satisfy a leaf (the bitmaps)."""

    row_level = True
    # When several row-level kinds on one column can answer a leaf, the highest wins.
    precision: ClassVar[int] = 0

    def selectivity(self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray) -> np.ndarray:
        """Per file in ``positions``, about which share of its rows satisfy ``leaf``
        (1.0 when unknown). Only an estimate: it decides where the exact answer is
        worth computing, never what is kept."""
        return np.ones(len(positions))

    @abstractmethod
    def matching_rows(
        self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray
    ) -> list[AbstractBitMap | None]:
        """Per file in ``positions``, the rows satisfying ``leaf`` (None: all might)."""

    def joint_selectivity(
        self, leaves: Sequence[BoundLeaf], files: FileBatch, positions: np.ndarray
    ) -> np.ndarray:
        """:meth:`selectivity` of the conjunction of ``leaves`` (on this column)."""
        shares = [self.selectivity(leaf, files, positions) for leaf in leaves]
        return np.asarray(np.minimum.reduce(shares))

    def dense_rows(
        self,
        leaves: Sequence[BoundLeaf],
        files: FileBatch,
        positions: np.ndarray,
        within: np.ndarray | None = None,
        words: slice | None = None,
    ) -> np.ndarray | None:
        """The rows satisfying every one of ``leaves`` (:meth:`matching_rows` for
        one leaf; several only where :meth:`combines` them) as one row of 64-bit
        words per file, all rows set where all might match; or None: only the
        per-file answer is available. ``within`` (words, one row per file in
        ``positions``): the only rows the caller still needs, so rows outside it
        may be left out or not, as is cheaper (the caller ANDs the answer in).
        ``words``: answer only at these word columns of every file (a sample of
        its rows; ``within`` then has those columns too), exactly as the full
        answer has them there."""
        return None

    def combines(self, leaves: Sequence[BoundLeaf], files: FileBatch) -> bool:
        """Whether :meth:`dense_rows` answers the conjunction of ``leaves`` (all on
        this kind's column) at once, reading each bitmap once for all of them."""
        return False
