"""Test support: random tables split over files, random predicates, and oracles
that say which files really hold a matching row (Spark and DuckDB)."""

from __future__ import annotations

import functools
import math
import os
import shutil
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hypothesis import strategies as st

NAN, INF = float("nan"), float("inf")


# ``HYPOTHESIS_PROFILE=soak`` hunts for wrong answers: ten times CI's examples.
SOAK_FACTOR = 10


def full_run() -> bool:
    """CI (``HYPOTHESIS_PROFILE=ci``, set by ``.ci/run``) runs every example and
    round; a developer's run fewer, so ``./dev test -m "not spark"`` stays fast."""
    return os.environ.get("HYPOTHESIS_PROFILE") in ("ci", "soak")


def soak_run() -> bool:
    """A run hunting wrong answers (``HYPOTHESIS_PROFILE=soak``): ten times CI's."""
    return os.environ.get("HYPOTHESIS_PROFILE") == "soak"


def examples(count: int) -> int:
    """Hypothesis examples for a property test: all in CI, ten times as many in a
    soak run, a twentieth (at least 8) else."""
    if soak_run():
        return count * SOAK_FACTOR
    return count if full_run() else max(8, count // 20)


SCHEMA = pa.schema(
    [
        ("i", pa.int64()),
        ("n", pa.int32()),
        ("dec", pa.decimal128(9, 2)),
        ("f", pa.float64()),
        ("g", pa.float32()),
        ("s", pa.string()),
        ("dt", pa.date32()),
        ("ts", pa.timestamp("us", tz="UTC")),
        ("b", pa.bool_()),
    ]
)

# Small pools so that equal values, ties at bounds and absent literals all occur.
POOLS: dict[str, list[Any]] = {
    "i": [-3, -1, 0, 1, 2, 3, 7, 2**62, -(2**62)],
    "n": [-2, 0, 1, 2, 5, 2**31 - 1],
    "dec": [Decimal(v) for v in ("-1.50", "0.00", "0.10", "1.25", "1.50", "99.99")],
    "f": [0.0, -0.0, 1.5, -1.5, 2.0, NAN, INF, -INF, 1e300],
    "g": [0.0, -0.0, 0.5, 1.5, NAN, INF, -2.25],
    "s": ["", "a", "ab", "b", "B", "é", "zz", "日本", "a" * 70 + "x", "a" * 70 + "y"],
    "dt": [date(1970, 1, 1), date(1999, 12, 31), date(2000, 1, 1), date(2024, 2, 29)],
    "ts": [
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2000, 1, 1, 12, 0, 0, 123456, tzinfo=UTC),
        datetime(2000, 1, 1, 12, 0, 1, tzinfo=UTC),
        datetime(2024, 6, 30, 23, 59, 59, tzinfo=UTC),
    ],
    "b": [True, False],
}
# Literals the data never holds, to probe gaps between values and beyond the ends.
ABSENT: dict[str, list[Any]] = {
    "i": [-100, 4, 10**12],
    "n": [-7, 3],
    "dec": [Decimal("0.05"), Decimal("2.00"), Decimal("-9.99")],
    "f": [0.75, -3.0, 5e299],
    "g": [0.25, 3.0],
    "s": ["aa", "c", "ä", "a" * 70, "a" * 71, "zzz"],
    "dt": [date(1985, 5, 5), date(2030, 1, 1)],
    "ts": [datetime(2000, 1, 1, 12, 0, 0, 123457, tzinfo=UTC), datetime(1990, 1, 1, tzinfo=UTC)],
    "b": [],
}


# Strategies are built once per column and reused: building (and validating) one
# per drawn cell or leaf was a third of the oracle tests' time.
@functools.cache
def column_values(name: str) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.sampled_from(POOLS[name]))


@st.composite
def files_strategy(
    draw: st.DrawFn, columns: tuple[str, ...] = tuple(SCHEMA.names)
) -> list[pa.Table]:
    """1-6 files of 0-8 rows; a file may lack some columns entirely."""
    tables = []
    for number in range(draw(st.integers(1, 6))):
        rows = draw(st.integers(0, 8))
        # ~10% of columns missing from later files; the first file defines the schema.
        present = [c for c in columns if number == 0 or draw(st.integers(0, 9)) > 0]
        present = present or [columns[-1]]  # DuckDB cannot read a file with no columns
        arrays = [
            pa.array([draw(column_values(c)) for _ in range(rows)], type=SCHEMA.field(c).type)
            for c in present
        ]
        tables.append(
            pa.Table.from_arrays(arrays, schema=pa.schema([SCHEMA.field(c) for c in present]))
        )
    return tables


def write_files(root: Path, tables: list[pa.Table]) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, table in enumerate(tables):
        path = root / f"part-{number:03d}.parquet"
        pq.write_table(table, path, row_group_size=3)
        paths.append(path)
    return paths


# ------------------------------------------------------------------ predicates


def sql_literal(value: Any, column: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        if value == 0 and math.copysign(1, value) < 0:
            return "CAST('-0.0' AS DOUBLE)"
        return repr(value) if "e" in repr(value) else f"{value!r}"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    return str(value)


@functools.cache
def literal_strategy(column: str) -> st.SearchStrategy[str]:
    values = POOLS[column] + ABSENT[column]
    plain = st.sampled_from(values).map(lambda v: sql_literal(v, column))
    extra: list[st.SearchStrategy[str]] = [plain]
    if column in ("i", "n"):
        extra.append(st.sampled_from(["2.5", "-0.5", "1.0", "3.00"]))  # decimal vs int column
    if column == "dec":
        extra.append(st.sampled_from(["1", "0", "1.255", "1.5"]))  # int / finer decimal
    if column == "ts":
        extra.append(st.sampled_from(["DATE '2000-01-01'", "DATE '1970-01-01'"]))
    if column == "dt":
        extra.append(st.sampled_from(["'2000-01-01'"]))  # string cast to date
    return st.one_of(*extra)


OPS = ["=", "!=", "<", "<=", ">", ">=", "<>"]


def leaf_strategy(columns: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(columns).flatmap(_leaves)


@functools.cache
def _leaves(name: str) -> st.SearchStrategy[str]:
    literal = literal_strategy(name)
    return st.one_of(
        st.tuples(st.sampled_from(OPS), literal).map(lambda t: f"{name} {t[0]} {t[1]}"),
        st.tuples(literal, literal).map(lambda t: f"{name} BETWEEN {t[0]} AND {t[1]}"),
        st.lists(literal, min_size=1, max_size=4).map(lambda v: f"{name} IN ({', '.join(v)})"),
        # past min-max's small-list limit (16): the vectorised long-list path
        st.lists(literal, min_size=17, max_size=20).map(lambda v: f"{name} IN ({', '.join(v)})"),
        st.lists(literal, min_size=1, max_size=3).map(lambda v: f"{name} NOT IN ({', '.join(v)})"),
        st.sampled_from([f"{name} IS NULL", f"{name} IS NOT NULL"]),
    )


def predicate_strategy(columns: tuple[str, ...] = tuple(SCHEMA.names)) -> st.SearchStrategy[str]:
    return st.recursive(
        leaf_strategy(columns),
        lambda inner: st.one_of(
            st.tuples(inner, inner).map(lambda t: f"({t[0]} AND {t[1]})"),
            st.tuples(inner, inner).map(lambda t: f"({t[0]} OR {t[1]})"),
            inner.map(lambda p: f"NOT ({p})"),
        ),
        max_leaves=5,
    )


# -------------------------------------------------------------------- oracles


def spark_matching_files(spark: Any, paths: list[Path], predicates: list[str]) -> list[set[str]]:
    """For each predicate, the names of the files where Spark finds a TRUE row."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(_spark_schema_json())
    return files_matching(spark.read.schema(schema).parquet(*[str(p) for p in paths]), predicates)


def files_holding(folder: Path, column: str, values: Any) -> set[str]:
    """The Parquet files of ``folder`` whose ``column`` holds one of ``values``
    (brute force, with pyarrow: for integer keys, read as Spark reads them)."""
    wanted = pa.array(sorted(values), pa.int64())
    return {
        str(path)
        for path in folder.glob("*.parquet")
        if pc.any(pc.is_in(pq.read_table(path)[column], wanted)).as_py()
    }


def files_matching(frame: Any, predicates: list[str]) -> list[set[str]]:
    """For each predicate, the names of the files of ``frame`` (a DataFrame read
    from files) where Spark finds a TRUE row."""
    from pyspark.sql import functions as F  # noqa: N812

    flags = [
        F.max(F.when(F.expr(p), 1).otherwise(0)).alias(f"p{i}") for i, p in enumerate(predicates)
    ]
    rows = frame.groupBy(F.input_file_name().alias("file")).agg(*flags).collect()
    return [
        {os.path.basename(r["file"]) for r in rows if r[f"p{i}"] == 1}
        for i in range(len(predicates))
    ]


def kept_files(table: Path, where: str, zone: str) -> set[str]:
    """The names of the files ``si.prune`` keeps for ``where`` read in ``zone``."""
    import skipindex as si

    return {os.path.basename(f) for f in si.prune(str(table), where, time_zone=zone).files}


def spark_write(frame: Any, path: Path, **options: str) -> None:
    """Write ``frame`` with Spark as the one Parquet file ``path`` (Spark as the
    writer: its encodings, its calendar metadata)."""
    staging = path.parent / f".staging-{path.stem}"
    frame.coalesce(1).write.options(**options).parquet(str(staging))
    [part] = staging.glob("part-*.parquet")
    part.rename(path)
    shutil.rmtree(staging)


def exact_rows(frame: Any) -> list[str]:
    """Every row of a Spark DataFrame exactly (``-0.0`` is not ``0.0``, NaN is NaN),
    in a fixed order: equal lists mean the same multiset of rows."""
    return sorted(repr(tuple(r)) for r in frame.collect())


def files_opened(frame: Any) -> int:
    """Files Spark's scans opened for ``frame`` (its collected plan's metrics)."""
    plan = frame._jdf.queryExecution().executedPlan()
    plan.executeCollect()  # this very plan's metrics (an action may plan anew)
    todo, opened = [plan], 0
    while todo:
        node = todo.pop()
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            todo.append(node.executedPlan())
            continue
        if name.endswith("QueryStageExec"):
            todo.append(node.plan())
            continue
        metric = node.metrics().get("numFiles")
        if metric.isDefined():
            opened += int(metric.get().value())
        children = node.children()
        todo.extend(children.apply(at) for at in range(children.size()))
    return opened


def what_is_read(plan: Any) -> list[Any]:
    """Per reference of ``plan``: whether it is replaced, and the files, row groups
    and rows its view reads (its frame is a function of these and the text)."""
    out = []
    for reference in plan.references:
        result = reference.result
        if not reference.replaced or result is None:
            out.append((reference.number, reference.replaced))
            continue
        rows = sorted((f, bytes(bitmap.serialize())) for f, bitmap in result.rows.items())
        groups = sorted((f, tuple(g)) for f, g in result.row_groups.items())
        out.append((reference.number, True, tuple(result.files), groups, rows))
    return out


def duckdb_oracle() -> Any:
    """A DuckDB connection whose answers agree with Spark's on the files tests write.

    UTC, as the test session. Statistics propagation off: DuckDB folds ``f < 1.5``
    to TRUE for every non-null row when the Parquet statistics say max = 0.0, but
    writers leave NaN out of double statistics, and NaN (larger than every double,
    in Spark as in DuckDB itself) does not match (DuckDB 2.0.1; Hypothesis found it).
    """
    return _duckdb_database().cursor()


@functools.cache
def _duckdb_database() -> Any:
    """One in-memory database per process, set up once (opening one costs 15 ms,
    and every example of a property test asks for a connection; a cursor costs
    microseconds and starts with no unfinished result)."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    con.execute("SET GLOBAL disabled_optimizers = 'statistics_propagation'")
    return con


def duckdb_matching_files(paths: list[Path], predicates: list[str]) -> list[set[str]]:
    """The same with DuckDB (only where its semantics agree with Spark's)."""
    con = duckdb_oracle()
    files = ", ".join(f"'{p}'" for p in paths)
    flags = ", ".join(f"bool_or(coalesce({p}, false)) AS p{i}" for i, p in enumerate(predicates))
    rows = con.execute(
        f"SELECT filename, {flags} FROM read_parquet([{files}], filename=true, union_by_name=true) "
        "GROUP BY filename"
    ).fetchall()
    return [{os.path.basename(r[0]) for r in rows if r[i + 1]} for i in range(len(predicates))]


def duckdb_matching_row_groups(
    paths: list[Path], predicates: list[str], group_rows: int = 3
) -> list[dict[str, set[int]]]:
    """Per predicate, file name -> the row groups holding a matching row, for files
    written by :func:`write_files` (``group_rows`` rows per row group)."""
    con = duckdb_oracle()
    files = ", ".join(f"'{p}'" for p in paths)
    flags = ", ".join(f"bool_or(coalesce({p}, false)) AS p{i}" for i, p in enumerate(predicates))
    rows = con.execute(
        f"SELECT filename, file_row_number // {group_rows}, {flags} FROM read_parquet("
        f"[{files}], filename=true, file_row_number=true, union_by_name=true) GROUP BY ALL"
    ).fetchall()
    out: list[dict[str, set[int]]] = [{} for _ in predicates]
    for name, group, *flags_of in rows:
        for i, flag in enumerate(flags_of):
            if flag:
                out[i].setdefault(os.path.basename(name), set()).add(int(group))
    return out


def _spark_schema_json() -> dict[str, Any]:
    spark_types = {
        "i": "long",
        "n": "integer",
        "dec": "decimal(9,2)",
        "f": "double",
        "g": "float",
        "s": "string",
        "dt": "date",
        "ts": "timestamp",
        "b": "boolean",
    }
    return {
        "type": "struct",
        "fields": [
            {"name": n, "type": spark_types[n], "nullable": True, "metadata": {}}
            for n in SCHEMA.names
        ],
    }


def days(n: int) -> timedelta:
    return timedelta(days=n)


def free_port() -> int:
    """A loopback port nothing listens on now, for servers the tests start."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ------------------------------------------------------------- bound predicates


def _order_key(value: Any) -> tuple[int, Any]:
    """Spark's order of a value: NaN above every other number, equal to itself."""
    return (1, 0.0) if isinstance(value, float) and math.isnan(value) else (0, value)


def bound_holds(pred: Any, row: dict[str, Any]) -> bool:
    """Whether a bound predicate in negation normal form may be TRUE for ``row``
    (column key -> value in the column's domain: days, micros...; None for NULL).
    Unsupported is "might be": TRUE. For checking that binding never loses a row."""
    from skipindex.expressions.nodes import (
        AlwaysFalse,
        AlwaysTrue,
        And,
        BoundComparison,
        BoundIn,
        BoundIsNull,
        Or,
        Unsupported,
    )

    if isinstance(pred, AlwaysTrue | Unsupported):
        return True
    if isinstance(pred, AlwaysFalse):
        return False
    if isinstance(pred, And):
        return all(bound_holds(c, row) for c in pred.children)
    if isinstance(pred, Or):
        return any(bound_holds(c, row) for c in pred.children)
    assert isinstance(pred, BoundComparison | BoundIn | BoundIsNull), pred
    value = row[pred.column.name]
    if isinstance(pred, BoundIsNull):
        return (value is None) != pred.negated
    if value is None:
        return False
    if isinstance(pred, BoundIn):
        return any(_order_key(value) == _order_key(v) for v in pred.values) != pred.negated
    left, right = _order_key(value), _order_key(pred.value)
    return {
        "=": left == right,
        "!=": left != right,
        "<": left < right,
        "<=": left <= right,
        ">": left > right,
        ">=": left >= right,
    }[pred.op.value]


def spark_date_field(name: str, day: date) -> int:
    """Spark's ``name(day)`` for a calendar field (``weekofyear``: ISO weeks;
    ``dayofweek``: 1 = Sunday; ``weekday``: 0 = Monday)."""
    iso = day.isocalendar()
    return {
        "year": day.year,
        "month": day.month,
        "quarter": (day.month - 1) // 3 + 1,
        "dayofmonth": day.day,
        "dayofyear": day.timetuple().tm_yday,
        "weekofyear": iso.week,
        "weekday": day.weekday(),
        "dayofweek": day.isoweekday() % 7 + 1,
    }[name]


def iceberg_catalog(root: Path) -> dict[str, str]:
    """An embedded pyiceberg SQL catalog (SQLite) with its warehouse under ``root``."""
    return {
        "name": "lake",
        "type": "sql",
        "uri": f"sqlite:///{root}/catalog.db",
        "warehouse": f"file://{root}/warehouse",
    }


def six_event_files(root: Path) -> Path:
    """Six Parquet files of 100 rows under ``root``: ``id`` (0..599, a hundred per file),
    ``day`` and UTC ``ts`` that rise file by file, ``mode`` one value per file and a
    struct ``s``: the table the Spark Connect and gateway tests share."""
    root.mkdir()
    start = datetime(2024, 3, 9, 12, tzinfo=UTC)
    for k in range(6):
        ids = list(range(k * 100, k * 100 + 100))
        pq.write_table(
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "day": pa.array(
                        [date(2024, 1, 1) + timedelta(days=k * 10 + i % 10) for i in ids]
                    ),
                    "ts": pa.array(
                        [start + timedelta(hours=k * 12 + i % 12) for i in ids],
                        pa.timestamp("us", "UTC"),
                    ),
                    "mode": pa.array([["AIR", "SHIP", "RAIL"][k % 3]] * 100),
                    "s": pa.array([{"f": i % 7} for i in ids]),
                }
            ),
            root / f"part-{k}.parquet",
        )
    return root
