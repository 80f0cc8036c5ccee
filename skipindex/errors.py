"""One root exception for everything skipindex raises on purpose.

Each subclass also inherits the builtin a caller would expect (Ibis-style), so
``except ValueError`` keeps working for code that does not know skipindex.
"""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "IndexCorruptError",
    "IndexFormatVersionError",
    "InvalidOptionError",
    "InvalidPredicateError",
    "InvalidSpecError",
    "NotATableError",
    "SessionChangedError",
    "SkipIndexError",
    "TableChangedError",
    "UnknownColumnError",
    "UnsupportedTableError",
    "UnsupportedTypeError",
    "VerificationError",
    "WorkerEnvironmentError",
]


class SkipIndexError(Exception):
    """Root of every error skipindex raises deliberately."""


class UnknownColumnError(SkipIndexError, KeyError):
    """A predicate or index definition names a column the table does not have."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnsupportedTypeError(SkipIndexError, TypeError):
    """A column's type cannot be indexed by a kind, or compared with a literal."""


class InvalidOptionError(SkipIndexError, ValueError):
    """An option of a call, or the environment variable that sets it, is out of range."""


class InvalidPredicateError(SkipIndexError, ValueError):
    """The ``where`` expression is not valid SQL or not a boolean expression."""


class InvalidSpecError(SkipIndexError, ValueError):
    """An index definition has an invalid parameter (e.g. a Bloom ``fpp`` outside (0, 1))."""


class NotATableError(SkipIndexError, FileNotFoundError):
    """The path does not exist or holds no Parquet data files."""


class IndexCorruptError(SkipIndexError, ValueError):
    """An index file is truncated, damaged, missing or fails its schema."""


class IndexFormatVersionError(IndexCorruptError):
    """The index was written by a newer skipindex format version."""


class ConflictError(SkipIndexError, RuntimeError):
    """Another build committed first and retrying did not resolve the race."""


class WorkerEnvironmentError(SkipIndexError, RuntimeError):
    """Spark's Python workers cannot run skipindex (e.g. PYSPARK_PYTHON unset)."""


class SessionChangedError(SkipIndexError, RuntimeError):
    """A plan's DataFrame asked for after the session's time zone or another setting
    that changes what a literal means was changed: its files were pruned under the old."""


class TableChangedError(SkipIndexError, RuntimeError):
    """A file changed between prune and read: reading it by row numbers would be wrong."""


class UnsupportedTableError(SkipIndexError, ValueError):
    """A table skipindex refuses rather than risk a wrong answer (e.g. Delta deletion vectors)."""


class VerificationError(SkipIndexError, RuntimeError):
    """``cluster`` found the rewritten rows differ from the source's: nothing was replaced."""
