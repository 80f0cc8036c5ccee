"""Relations Spark holds: a folder listed and its schema inferred once, reused.

Plain Spark at its best holds a table's listing and schema in the relation a
DataFrame view or a catalog table keeps (``spark.read.parquet(path)`` lists the
folder and reads footers once; every query over the view reuses them). This
module holds the same for skipindex: one relation per folder, session and state
of the folder, and the kept files of a prune given to Spark as that relation
without the skipped files' rows.

Skipped files leave by a filter on ``_metadata.file_path``, which Spark's file
index applies to its held listing before any file is opened (no new listing,
no path looked up). Spark still evaluates it on every row it reads, and plans
the relation's joins by the whole folder's size, so the reader uses it only
while the kept files are small (``reading/read.py``: ``_filter_pays``) and
names larger kept sets instead. The filter names the files to leave out
(``NOT IN``), never the files to keep: a path spelled otherwise than Spark
spells it leaves that file in, a missed skip and never a lost row. For si.sql
the filter is written into the query's text instead (:class:`LeftOut`, over the
relation with each row's file as a column), so Spark analyses it once with the
query. A table with a column of its own named ``_metadata`` gets neither: Spark
gives the name to that column, so its kept files are named instead.
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs
from sqlglot import exp

from skipindex.pruning.result import PruneResult
from skipindex.store.location import TableLocation
from skipindex.store.swaps import plans_in_flux

__all__ = [
    "FILE_COLUMN",
    "Held",
    "LeftOut",
    "folder_state",
    "held_folder",
    "held_is_safe",
    "left_out",
    "not_in_files_sql",
    "session_settings",
    "shadows_metadata",
    "spark_file_path",
    "without_files",
]


@dataclass(frozen=True)
class Held:
    """A relation Spark holds, and its schema (asked once: a DataFrame's schema
    never changes, and asking costs a call into the JVM and a JSON parse)."""

    frame: Any
    schema: Any

    @classmethod
    def of(cls, frame: Any) -> Held:
        return cls(frame, frame.schema)


# Per session: folder root -> (its state when held, the relation).
_held: weakref.WeakKeyDictionary[Any, dict[str, tuple[Any, Held]]] = weakref.WeakKeyDictionary()

# What java.net.URI leaves as it is in a path: unreserved, punctuation, "/" and "@"
# (other ASCII is escaped as %XX; other characters are kept unless spaces or controls).
_URI_PATH_ASCII = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'(),;:$&+=/@"
)


def spark_file_path(path: str) -> str:
    """How Spark spells local file ``path`` in ``_metadata.file_path``: Hadoop's
    ``Path.toUri().toString()``, ``file:`` and the path with what a URI path may
    not hold escaped (``/t/a b#1.parquet`` -> ``file:/t/a%20b%231.parquet``)."""
    out = []
    for char in path:
        if char in _URI_PATH_ASCII or (ord(char) > 127 and not (char.isspace() or _control(char))):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "file:" + "".join(out)


def _control(char: str) -> bool:
    return ord(char) < 32 or 127 <= ord(char) < 160


def without_files(frame: Any, location: TableLocation, skipped: list[str]) -> Any | None:
    """``frame`` (a relation over ``location``'s folder) without the rows of the
    ``skipped`` files (full paths as prune returns them); None where Spark's
    spelling of the paths is not known here (a file system other than local) or
    a data column takes the name ``_metadata``."""
    if not skipped:
        return frame
    if not isinstance(location.fs, pafs.LocalFileSystem) or shadows_metadata(frame.schema):
        return None
    return frame.where(not_in_files_sql(skipped))


# The column a relation held for SQL text carries each row's file in.
FILE_COLUMN = "__skipindex_file"

# Per held relation: the same relation with FILE_COLUMN (made once, as it is held).
_with_files: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class LeftOut:
    """A held relation less the skipped files' rows, as SQL text for the query to
    hold: ``(SELECT <columns> FROM <relation> WHERE <condition>)``. Spark analyses
    it with the query, where ``where()`` on the relation costs an analysis of its
    own each prune (8-20 ms, a reference pruned again in every key round)."""

    frame: Any  # the held relation and FILE_COLUMN, each row's file as Spark spells it
    columns: str  # the relation's columns, quoted, in order
    condition: str  # FILE_COLUMN NOT IN (...)


def left_out(frame: Any, location: TableLocation, skipped: list[str]) -> Any:
    """:func:`without_files` as a :class:`LeftOut` (or what ``without_files``
    gives, where no file is skipped or the text cannot be written)."""
    if (
        not skipped
        or not isinstance(location.fs, pafs.LocalFileSystem)
        or shadows_metadata(frame.schema)
        or any(field.name.lower() == FILE_COLUMN for field in frame.schema.fields)
    ):
        return without_files(frame, location, skipped)
    names = [field.name for field in frame.schema.fields]
    with_files = _with_files.get(frame)
    if with_files is None:
        path = frame.metadataColumn("_metadata").getField("file_path")
        with_files = _with_files[frame] = frame.select("*", path.alias(FILE_COLUMN))
    columns = ", ".join(exp.column(n, quoted=True).sql(dialect="spark") for n in names)
    return LeftOut(with_files, columns, not_in_files_sql(skipped, FILE_COLUMN))


def shadows_metadata(schema: Any) -> bool:
    """Whether a data column is named ``_metadata`` (in any case): Spark then
    resolves ``_metadata.file_path`` to that column, a table's own data (lineage
    kept from another table, say), so a filter on it would drop rows, not files."""
    return any(field.name.lower() == "_metadata" for field in schema.fields)


def not_in_files_sql(skipped: list[str], column_name: str | None = None) -> str:
    """``_metadata.file_path NOT IN (...)`` (or ``column_name NOT IN``) as Spark
    SQL text: one call for Spark to parse, where ``Column.isin`` makes a py4j call
    per path (35 ms for 40 paths). sqlglot escapes the literals as si.sql's
    rewritten text escapes them; a path it spelled otherwise would only stay in,
    a missed skip."""
    column = (
        exp.column("file_path", table="_metadata")
        if column_name is None
        else exp.column(column_name, quoted=True)
    )
    literals = [exp.Literal.string(spark_file_path(path)) for path in skipped]
    return exp.not_(exp.In(this=column, expressions=literals)).sql(dialect="spark")


def folder_state(location: TableLocation, settings: Any) -> tuple[Any, ...] | None:
    """What Spark's relation over the folder depends on: its files (path, size,
    mtime), summary files beside them and the session's ``settings`` (None: not
    known, ask Spark again)."""
    try:
        listing = location.list_table()
        summaries = location.fs.get_file_info(
            [f"{location.root}/_metadata", f"{location.root}/_common_metadata"]
        )
    except Exception:
        return None
    files = hashlib.sha256()
    for part in (listing.paths.to_pylist(), listing.sizes.tolist(), listing.mtimes_ms.tolist()):
        files.update(repr(part).encode())
    stamps = tuple((int(i.type), i.size, i.mtime_ns) for i in summaries)
    return files.hexdigest(), tuple(listing.not_parquet), stamps, settings


def session_settings(spark: Any) -> str | None:
    """Every SQL setting of a classic session as one string; None on Spark Connect
    (or wherever the JVM session is out of reach)."""
    try:
        return str(spark._jsparkSession.sessionState().conf().getAllConfs().toString())
    except Exception:
        return None


def held_is_safe(location: TableLocation, result: PruneResult) -> bool:
    """Whether a relation holding the folder's listing may stand for ``result``'s
    kept files: it names every skipped file, none is another format's (Spark
    would fail on it) and no in-place cluster is moving files (a held listing
    would name files moved away; the kept files, named, are found again)."""
    return (
        len(result.skipped_files) == result.skipped
        and not (result.not_parquet or result.swapping)
        and not plans_in_flux(location)
    )


def held_folder(spark: Any, location: TableLocation) -> Held | None:
    """A relation over every Parquet file of ``location``'s folder, as
    ``spark.read.parquet(folder)`` reads it: made once, and again only when the
    folder's files or the session's settings changed (:func:`folder_state`),
    so a query over the same folder lists nothing and infers no schema. None on
    Spark Connect (whose server analyses a plan afresh each time it runs), where
    the folder holds files named as another format or changed while Spark listed
    it, and where Spark cannot read it whole."""
    settings = session_settings(spark)
    if settings is None:
        return None
    state = folder_state(location, settings)
    if state is not None and state[1]:
        return None  # files named as another format (x.csv): Spark would fail on them
    held = _held.setdefault(spark, {})
    found = held.get(location.user_root)
    if state is not None and found is not None and found[0] == state:
        return found[1]
    from skipindex.spark.session import escape_glob

    try:
        frame = spark.read.parquet(escape_glob(location.user_root))
    except Exception:  # a footer Spark cannot read, say: the kept files are named instead
        return None
    if state is None or folder_state(location, settings) != state:
        # Changed while Spark listed it (a writer, a swap): Spark's listing may hold
        # half of the change. Not held: the kept files are named instead.
        return None
    found = held[location.user_root] = (state, Held.of(frame))
    return found[1]
