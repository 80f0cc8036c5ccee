"""skipindex: file-level secondary indexes for data skipping on Parquet lakes.

Build indexes with Spark (:func:`build_index`), then ask :func:`prune` which
files can hold matching rows, without Spark::

    import skipindex as si
    si.build_index("/lake/lineitem", [si.MinMax("l_shipdate"), si.Bloom("l_partkey")])
    si.prune("/lake/lineitem", "l_partkey = 4242").files
"""

from __future__ import annotations

from skipindex.admin.describe import Description, describe
from skipindex.admin.drop import drop_index
from skipindex.admin.repair import RepairReport, repair
from skipindex.advise.advise import advise
from skipindex.advise.plan import Advice
from skipindex.errors import (
    ConflictError,
    IndexCorruptError,
    IndexFormatVersionError,
    InvalidOptionError,
    InvalidPredicateError,
    InvalidSpecError,
    NotATableError,
    SessionChangedError,
    SkipIndexError,
    TableChangedError,
    UnknownColumnError,
    UnsupportedTableError,
    UnsupportedTypeError,
    VerificationError,
    WorkerEnvironmentError,
)
from skipindex.gateway import Gateway, gateway
from skipindex.indexes.bitsliced_bitmap import BitSlicedBitmap
from skipindex.indexes.bloom import Bloom
from skipindex.indexes.element_bitmap import ElementBitmap
from skipindex.indexes.element_bloom import ElementBloom
from skipindex.indexes.equality_bitmap import EqualityBitmap
from skipindex.indexes.minmax import MinMax
from skipindex.indexes.ngram_bloom import NgramBloom
from skipindex.indexes.range_bitmap import RangeBitmap
from skipindex.indexing.build import BuildReport, build_index
from skipindex.indexing.suggest import Suggestion, suggest_indexes
from skipindex.layout.cluster import ClusterReport, cluster
from skipindex.maintain.advice import apply_advice
from skipindex.maintain.service import MaintainReport, maintain, table_changed
from skipindex.pruning.options import PruneOptions
from skipindex.pruning.prune import PruneResult, prune
from skipindex.pruning.table import Table
from skipindex.reading.policy import PlanningPolicy
from skipindex.reading.read import read
from skipindex.sql.catalog import register
from skipindex.sql.plan import SqlPlan
from skipindex.sql.query import sql, sql_plan
from skipindex.store.vacuum import vacuum

__version__ = "0.1.0"

__all__ = [
    "Advice",
    "BitSlicedBitmap",
    "Bloom",
    "BuildReport",
    "ClusterReport",
    "ConflictError",
    "Description",
    "ElementBitmap",
    "ElementBloom",
    "EqualityBitmap",
    "Gateway",
    "IndexCorruptError",
    "IndexFormatVersionError",
    "InvalidOptionError",
    "InvalidPredicateError",
    "InvalidSpecError",
    "MaintainReport",
    "MinMax",
    "NgramBloom",
    "NotATableError",
    "PruneOptions",
    "PruneResult",
    "RangeBitmap",
    "RepairReport",
    "SessionChangedError",
    "SkipIndexError",
    "PlanningPolicy",
    "SqlPlan",
    "Table",
    "Suggestion",
    "TableChangedError",
    "UnknownColumnError",
    "UnsupportedTableError",
    "UnsupportedTypeError",
    "VerificationError",
    "WorkerEnvironmentError",
    "__version__",
    "build_index",
    "advise",
    "apply_advice",
    "cluster",
    "describe",
    "drop_index",
    "gateway",
    "maintain",
    "prune",
    "read",
    "register",
    "repair",
    "sql",
    "sql_plan",
    "suggest_indexes",
    "table_changed",
    "vacuum",
]
