"""Expression indexes without a JVM: specs, keys, the manifest's format version,
binding by zone, and whole builds whose expression values a pyarrow stand-in for
Spark computes (the Spark job itself: ``tests/spark/test_expression_indexes.py``).

The stand-in hands the expression task rows exactly as the Spark job does: per
file, sorted by row position, the file named by a percent-encoded ``file:`` URI.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.cli import _kinds_help, main, parse_index_option
from skipindex.errors import IndexCorruptError, IndexFormatVersionError
from skipindex.expressions import prepare
from skipindex.expressions.indexed import define_expression, expression_field
from skipindex.expressions.nodes import BoundComparison, Unsupported
from skipindex.indexing.build import InProcessRunner, build_with, check_specs
from skipindex.indexing.expression_task import (
    ExpressionJob,
    ExpressionType,
    FileMatcher,
    index_rows,
)
from skipindex.store.listing import DataFile
from skipindex.store.location import locate
from skipindex.store.manifest import IndexDef, Manifest, load_latest

# --------------------------------------------------------------------------- stand-in

Compute = Callable[[pa.Table], pa.Array]
_EXPRESSIONS: dict[str, tuple[pa.DataType, Compute]] = {
    "lower(s)": (pa.string(), lambda t: pc.utf8_lower(t["s"])),
    "a + b": (pa.int64(), lambda t: pc.add(t["a"].cast(pa.int64()), t["b"].cast(pa.int64()))),
    "concat(s, s)": (pa.string(), lambda t: pc.binary_join_element_wise(t["s"], t["s"], "")),
}


class PyArrowExpressions:
    """Spark's SQL engine for the expressions above, in pyarrow; ``short`` names
    files of which it reads one row too few (as if Spark had skipped a corrupt tail)."""

    def __init__(self, short: tuple[str, ...] = ()) -> None:
        self.short = short
        self.files_seen: list[str] = []

    def types(self, texts: Any, zone: str) -> list[ExpressionType]:
        return [ExpressionType(_EXPRESSIONS[t][0], False) for t in texts]

    def rows(self, job: ExpressionJob, files: list[DataFile]) -> Iterator[pa.RecordBatch]:
        location = locate(job.uri)
        for data_file in sorted(files, key=lambda f: f.path):
            self.files_seen.append(data_file.path)
            table = pq.read_table(location.fs_path(data_file.path))
            if data_file.path in self.short:
                table = table.slice(0, len(table) - 1)
            uri = "file:" + quote(f"{job.user_root}/{data_file.path}", safe="/")
            columns = {
                "file_path": pa.array([uri] * len(table), pa.string()),
                "row_index": pa.array(range(len(table)), pa.int64()),
            }
            for at, text in enumerate(job.texts):
                columns[f"v{at}"] = _EXPRESSIONS[text][1](table)
            yield from pa.table(columns).to_batches(max_chunksize=3)


def _runner(**kwargs: Any) -> InProcessRunner:
    return InProcessRunner(expressions=PyArrowExpressions(**kwargs))


def _files(kept: list[str]) -> set[str]:
    return {Path(f).name for f in kept}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """Folders whose names Spark percent-encodes, one file per letter."""
    root = tmp_path / "t"
    for k, folder in enumerate(["p=a b", "p=x%25y", "p=h#sh", "p=é"]):
        (root / folder).mkdir(parents=True)
        pq.write_table(
            pa.table(
                {
                    "s": [f"Ab{k}", f"ÄB{k}", None, "x"],
                    "a": pa.array([k, k + 1, None, 100], pa.int32()),
                    "b": pa.array([10, 20, 30, 1], pa.int64()),
                }
            ),
            root / folder / f"f {k}%#é.parquet",
        )
    return root


def _truth(root: Path, text: str, test: Callable[[Any], bool]) -> set[str]:
    compute = _EXPRESSIONS[text][1]
    out = set()
    for path in root.rglob("*.parquet"):
        if "_skipindex" in path.parts:
            continue
        if any(v is not None and test(v) for v in compute(pq.read_table(path)).to_pylist()):
            out.add(path.name)
    return out


# --------------------------------------------------------------------------- specs, keys


def test_specs_take_an_expression_instead_of_a_column():
    spec = si.Bloom(expr="lower(email)", fpp=0.05)
    assert (spec.column, spec.expr) == ("", "lower(email)")
    assert spec.params() == {"fpp": 0.05, "max_bytes": 1 << 20}
    assert si.MinMax("x").expr is None
    with pytest.raises(si.InvalidSpecError, match="not both"):
        si.MinMax("x", expr="lower(x)")
    with pytest.raises(si.InvalidSpecError, match="not deterministic"):
        si.EqualityBitmap(expr="rand() + x")
    with pytest.raises(si.InvalidSpecError, match="reads no column"):
        si.EqualityBitmap(expr="1 + 2")
    with pytest.raises(si.InvalidSpecError, match="cannot parse"):
        si.EqualityBitmap(expr="lower(")
    with pytest.raises(si.InvalidSpecError, match="or expr="):
        si.MinMax()
    with pytest.raises(si.InvalidSpecError, match="it takes column, fpp, max_bytes"):
        si.Bloom(expr="lower(s)", fp=0.1)


def test_the_cli_takes_an_expression_after_expr():
    spec = parse_index_option("equality_bitmap:expr=weekofyear(lo_orderdate)")
    assert (spec.kind, spec.expr) == ("equality_bitmap", "weekofyear(lo_orderdate)")
    spec = parse_index_option("bloom:fpp=0.05:expr=date_format(ts, 'HH:mm:ss, z')")
    assert (spec.kind, spec.expr, spec.params()["fpp"]) == (
        "bloom",
        "date_format(ts, 'HH:mm:ss, z')",
        0.05,
    )
    assert parse_index_option("bloom:l_partkey:fpp=0.01").column == "l_partkey"
    with pytest.raises(si.InvalidSpecError, match="expr=EXPRESSION"):
        parse_index_option("nokind:expr=lower(s)")
    with pytest.raises(si.InvalidSpecError, match="not deterministic"):
        parse_index_option("minmax:expr=rand() * x")
    assert "expr=" not in _kinds_help()


KEYED = pa.schema([("Email", pa.string()), ("d", pa.date32()), ("a", pa.string())])


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("lower(email)", "LOWER( Email )"),
        ("lower(email)", "lcase(email)"),
        ("day(d)", "dayofmonth(d)"),
        ("DAY( D )", "dayofmonth(d)"),
        ("email || a", "concat(Email, a)"),
        ("email || a || 'x'", "concat(email, concat(a, 'x'))"),
        ("weekofyear(d)", "WeekOfYear(d)"),
    ],
)
def test_one_key_names_an_expression_however_it_is_written(one, other):
    assert define_expression(one, KEYED)[0] == define_expression(other, KEYED)[0]


def test_keys_tell_different_expressions_apart():
    keys = {define_expression(t, KEYED)[0] for t in ["lower(email)", "upper(email)",
            "lower(a)", "concat(a, email)", "concat(email, a)", "month(d)"]}  # fmt: skip
    assert len(keys) == 6
    with pytest.raises(si.UnknownColumnError, match="unknown column 'nope'"):
        define_expression("lower(nope)", KEYED)
    with pytest.raises(si.InvalidSpecError, match="plain column"):
        define_expression("email", KEYED)


# --------------------------------------------------------------------------- binding


def _bound(where: str, schema: pa.Schema, zone: str) -> Any:
    return prepare(where, schema, time_zone=zone)


@pytest.mark.parametrize("dependent", [True, False])
def test_an_expression_field_binds_only_in_a_zone_that_gives_its_values(dependent):
    key = define_expression("hour(ts)", pa.schema([("ts", pa.timestamp("us", "UTC"))]))[0]
    schema = pa.schema(
        [
            ("ts", pa.timestamp("us", "UTC")),
            expression_field(key, pa.int32(), "hour(ts)", "America/New_York", dependent),
        ]
    )
    at_home = _bound("HOUR(ts) = 3", schema, "America/New_York")
    assert isinstance(at_home, BoundComparison)
    assert (at_home.column.name, str(at_home)) == (key, "hour(ts) = 3")
    away = _bound("hour(ts) = 3", schema, "Asia/Kolkata")
    if dependent:
        assert isinstance(away, Unsupported)
        assert "America/New_York" in away.reason
        assert "Asia/Kolkata" in away.reason
    else:
        assert isinstance(away, BoundComparison)


def test_a_column_is_never_resolved_to_an_expression_field():
    schema = pa.schema(
        [("x", pa.int32()), expression_field("x2", pa.int32(), "x * 2", "UTC", False)]
    )
    with pytest.raises(si.UnknownColumnError):
        _bound("x2 = 4", schema, "UTC")


# --------------------------------------------------------------------------- manifests


def _manifest_doc(root: Path, version: int = 1) -> dict[str, Any]:
    return dict(json.loads((root / "_skipindex" / f"v{version}.json").read_text()))


def test_format_version_2_only_while_an_expression_is_indexed(table):
    build_with(table, [si.MinMax("a")], _runner())
    assert _manifest_doc(table, 1)["format_version"] == 1
    assert "expression" not in _manifest_doc(table, 1)["indexes"][0]
    build_with(table, [si.EqualityBitmap(expr="lower(s)")], _runner())
    doc = _manifest_doc(table, 2)
    assert doc["format_version"] == 2
    assert doc["indexes"][1]["expression"] == "lower(s)"
    assert doc["indexes"][1]["column"] == "LOWER(`s`)"
    assert doc["indexes"][1]["time_zone"] == "UTC"
    si.drop_index(table, columns=["LOWER(s)"])
    assert _manifest_doc(table, 3)["format_version"] == 1
    manifest = load_latest(locate(table))
    assert manifest is not None
    assert [f.name for f in manifest.arrow_schema] == ["s", "a", "b"]


def test_a_version_1_reader_refuses_version_2_and_this_one_refuses_3(table):
    build_with(table, [si.EqualityBitmap(expr="lower(s)")], _runner())
    doc = _manifest_doc(table)
    doc["format_version"] = 1  # what a version-1 reader would take for a column index
    with pytest.raises(IndexCorruptError, match="format_version"):
        Manifest.from_json(doc, "v1.json")
    doc["format_version"] = 3
    with pytest.raises(IndexFormatVersionError, match="upgrade skipindex"):
        Manifest.from_json(doc, "v1.json")


def test_a_version_1_manifest_reads_as_before(table):
    build_with(table, [si.MinMax("a")], InProcessRunner())
    doc = _manifest_doc(table)
    old = dict(doc)
    old["indexes"] = [
        {k: d[k] for k in ("id", "column", "kind", "params", "arrow_type", "field")}
        for d in doc["indexes"]
    ]
    manifest = Manifest.from_json(old, "v1.json")
    assert [(d.column, d.expression, d.time_zone) for d in manifest.indexes] == [("a", None, None)]
    assert manifest.to_json()["indexes"] == old["indexes"]
    assert si.prune(table, "a = 100").kept == 4


# --------------------------------------------------------------------------- builds


def test_an_in_process_build_says_an_expression_needs_spark(table):
    with pytest.raises(si.InvalidSpecError, match=r"expr='lower\(s\)' needs Spark"):
        build_with(table, [si.EqualityBitmap(expr="lower(s)")], InProcessRunner())
    build_with(table, [si.EqualityBitmap(expr="lower(s)")], _runner())
    build_with(table, None, InProcessRunner())  # nothing new: nothing to compute
    pq.write_table(pa.table({"s": ["new"], "a": [1], "b": [2]}), table / "p=é" / "new.parquet")
    with pytest.raises(si.InvalidSpecError, match=r"expr='lower\(s\)' needs Spark.*1 new"):
        build_with(table, None, InProcessRunner())


def test_specs_are_checked_before_spark_starts(table):
    check_specs(table, [si.EqualityBitmap(expr="lower(s)")])
    with pytest.raises(si.UnknownColumnError, match="unknown column 'nope'"):
        check_specs(table, [si.EqualityBitmap(expr="lower(nope)")])
    with pytest.raises(si.UnknownColumnError, match="partition column"):
        check_specs(table, [si.EqualityBitmap(expr="concat(p, s)")])


def test_expression_indexes_prune_exactly_and_keep_up_with_the_table(table):
    runner = _runner()
    build_with(table, [si.EqualityBitmap(expr="lower(s)"), si.MinMax("b")], runner)
    for value in ["ab0", "äb2", "x", "nope"]:
        kept = si.prune(table, f"LOWER(s) = '{value}'")
        assert _files(kept.files) == _truth(table, "lower(s)", lambda v, x=value: v == x), value
        assert "lower(s)" in kept.explain()
    assert si.prune(table, "lower(s) IS NULL").kept == 4
    # a new file, then an index added to the existing ones (widening every segment)
    pq.write_table(
        pa.table({"s": ["NEW"], "a": pa.array([7], pa.int32()), "b": [5]}),
        table / "p=a b" / "n.parquet",
    )
    report = build_with(table, None, runner)
    assert report.files_indexed == 1
    assert _files(si.prune(table, "lower(s) = 'new'").files) == {"n.parquet"}
    report = build_with(table, [si.BitSlicedBitmap(expr="a + b")], runner)
    assert report.files_indexed == 5
    for bound in [11, 21, 101, 12, 1000]:
        kept = si.prune(table, f"a + b = {bound}")
        assert _files(kept.files) == _truth(table, "a + b", lambda v, x=bound: v == x), bound
    both = si.prune(table, "a + b = 22 AND lower(s) = 'äb1'")
    assert _files(both.files) == {"f 1%#é.parquet"}
    assert si.prune(table, "a + b = 11 AND lower(s) = 'äb1'").kept == 0  # not in one row
    # describe, and dropping one as written, another written otherwise
    described = {d["expression"]: d for d in si.describe(table).to_dict()["indexes"] if
                 d.get("expression")}  # fmt: skip
    assert described["a + b"]["spark_type"] == "BIGINT"
    assert described["lower(s)"]["column"] == "LOWER(`s`)"
    assert described["lower(s)"]["zone_dependent"] is False
    assert "expr lower(s)" in str(si.describe(table))
    dropped = si.drop_index(table, columns=["lower(s)", "`a`+`b`"])
    assert sorted(d.expression or "" for d in dropped) == ["a + b", "lower(s)"]
    assert si.prune(table, "lower(s) = 'new'").kept == 5
    with pytest.raises(si.UnknownColumnError, match="has no index"):
        si.drop_index(table, columns=["upper(s)"])


def test_files_spark_reads_otherwise_get_no_payload(table):
    """A file of which Spark reads rows other than its footer's, one with no rows,
    and one that is not Parquet: never skipped, and the first says why."""
    (table / "p=é" / "empty.parquet").write_bytes(b"")
    pq.write_table(pa.table({"s": pa.array([], pa.string())}), table / "p=é" / "none.parquet")
    short = "p=h#sh/f 2%#é.parquet"
    build_with(table, [si.EqualityBitmap(expr="lower(s)")], _runner(short=(short,)))
    kept = si.prune(table, "lower(s) = 'ab2'")
    assert _files(kept.files) == {"f 2%#é.parquet", "empty.parquet"}
    assert any("read 3 rows of it, its footer says 4" in w for w in kept.warnings)
    assert _files(si.prune(table, "lower(s) = 'ab0'").files) == {
        "f 0%#é.parquet",
        "f 2%#é.parquet",
        "empty.parquet",
    }


def test_the_cli_builds_describes_and_drops_expressions(table, capsys):
    build_with(table, [si.EqualityBitmap(expr="concat(s, s)")], _runner())
    assert main(["describe", str(table)]) == 0
    assert "expr concat(s, s) [key CONCAT(`s`, `s`)" in capsys.readouterr().out
    assert main(["drop", str(table), "--column", "s || s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dropped"][0]["expression"] == "concat(s, s)"


# --------------------------------------------------------------------------- the task


@pytest.mark.parametrize(
    "uri",
    [
        "file:/lake/t/p=a%20b/f%200%25%23é.parquet",  # Spark's encoding
        "file:///lake/t/p=a%20b/f%200%25%23%C3%A9.parquet",
        "/lake/t/p=a b/f 0%#é.parquet",
    ],
)
def test_spark_uris_map_back_to_the_builds_files(uri):
    files = [DataFile("p=a b/f 0%#é.parquet", 1, 2), DataFile("f 0%#é.parquet", 1, 2)]
    assert FileMatcher("/lake/t", files)(uri) == files[0]
    s3 = FileMatcher("s3://bucket/t", files)
    assert s3("s3a://bucket/t/p=a%20b/f%200%25%23é.parquet") == files[0]
    assert s3("s3a://bucket/t/f%200%25%23é.parquet") == files[1]
    assert s3("s3a://bucket/other/x.parquet") is None


def test_a_name_that_looks_encoded_is_not_another_files_name():
    literal, spaced = DataFile("f%20x.parquet", 1, 1), DataFile("f x.parquet", 1, 1)
    for files in ([literal, spaced], [spaced, literal]):
        matcher = FileMatcher("/t", files)
        assert matcher("file:/t/f%2520x.parquet") == literal
        assert matcher("file:/t/f%20x.parquet") == spaced


def test_rows_that_are_not_the_files_rows_0_to_n_are_not_indexed(tmp_path):
    schema = pa.schema([expression_field("K", pa.int64(), "a + 1", "UTC", False)])
    job = ExpressionJob(
        uri=str(tmp_path),
        user_root=str(tmp_path),
        schema=schema,
        definitions=(IndexDef(0, "K", "minmax", {}, "int64", "minmax_0", "a + 1", "UTC"),),
        keys=("K",),
        files=(DataFile("a.parquet", 1, 1), DataFile("b.parquet", 1, 1)),
        build_id="b",
        texts=("a + 1",),
    )
    rows = pa.table(
        {
            "file_path": [f"file:{tmp_path}/a.parquet"] * 2 + [f"file:{tmp_path}/b.parquet"] * 2,
            "row_index": pa.array([0, 0, 0, 1], pa.int64()),
            "v0": pa.array([5, 6, 7, 8], pa.int64()),
        }
    )
    written = index_rows(job, rows.to_batches(max_chunksize=3))
    assert written is not None
    assert written.segment.files == 2
    segment = pq.read_table(tmp_path / "_skipindex" / written.segment.path)
    by_path = {r["path"]: r for r in segment.to_pylist()}
    assert by_path["a.parquet"]["minmax_0"] is None
    assert by_path["a.parquet"]["error"]
    assert by_path["b.parquet"]["minmax_0"]["min"] == 7


def test_expression_field_metadata_round_trips_through_a_manifest(table):
    build_with(table, [si.EqualityBitmap(expr="lower(s)")], _runner())
    doc = _manifest_doc(table)
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(doc["table"]["arrow_schema"])))
    field = schema.field("LOWER(`s`)")
    assert field.metadata[b"skipindex.expression"] == b"lower(s)"
    # zone-independent: used in a session in any zone
    assert si.prune(table, "lower(s) = 'ab1'", time_zone="Asia/Tokyo").kept == 1
