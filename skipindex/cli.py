"""``skipindex build|prune|describe|drop|vacuum|repair|cluster|sql|maintain|advise|demo``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from skipindex import __version__, commands
from skipindex.errors import SkipIndexError
from skipindex.indexes import KINDS
from skipindex.options import parse_index_option
from skipindex.pruning.evaluate import ROW_LEVELS
from skipindex.reading.policy import DEFAULT as PLANNING

__all__ = ["main", "parse_index_option"]


_PATH_HELP = "table root folder or URI (s3://, s3a://, gs://, abfs://, hdfs://, file://)"
_JSON_HELP = "print the result as one JSON document (errors too, on stderr)"
_CATALOG_HELP = (
    "an Iceberg table's catalog (PATH is then its identifier, db.table): a name pyiceberg's "
    "configuration knows, or a JSON object of the catalog's properties "
    '(\'{"name": "lake", "type": "sql", "uri": "sqlite:///lake.db"}\'); '
    "a PATH ending in metadata.json names an Iceberg table without one"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skipindex",
        description="Secondary indexes for data skipping on Parquet tables.",
        epilog="Index kinds and their parameters:\n" + _kinds_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"skipindex {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, help_text: str, run: Any, **kwargs: Any) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text, **kwargs)
        sub.add_argument("path", help=_PATH_HELP)
        sub.add_argument("--json", action="store_true", help=_JSON_HELP)
        sub.add_argument("--catalog", metavar="CATALOG", help=_CATALOG_HELP)
        sub.set_defaults(run=run)
        return sub

    build = verb(
        "build",
        "build or refresh a table's index (runs Spark)",
        commands.build,
        epilog="Index kinds and their parameters:\n" + _kinds_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="KIND:COLUMN[:k=v,...]",
        help=f"an index to add, e.g. bloom:l_partkey:fpp=0.01; KIND is one of {', '.join(KINDS)} "
        "(repeatable). An expression index: KIND[:k=v,...]:expr=EXPRESSION, e.g. "
        "'equality_bitmap:expr=weekofyear(lo_orderdate)' (the expression is the rest of the "
        "text). Without --index: refresh the existing definitions, or on a table with "
        "no index yet, choose indexes from the schema and the data and say why",
    )
    build.add_argument("--cores", default="*", help="local Spark cores (default: all)")

    prune = verb("prune", "list the files that may hold rows matching WHERE", commands.prune)
    prune.add_argument("where", help='a Spark SQL boolean expression, e.g. "l_partkey = 4242"')
    prune.add_argument("--explain", action="store_true", help="say what each index ruled out")
    prune.add_argument(
        "--keep-on-damage",
        action="store_true",
        help="on a damaged index, warn and keep every file instead of failing",
    )
    prune.add_argument(
        "--snapshot-id",
        type=int,
        metavar="ID",
        help="an Iceberg table: prune as of this snapshot (default: the current one)",
    )
    prune.add_argument(
        "--as-of",
        metavar="TIME",
        help="an Iceberg table: prune as of the snapshot current at TIME (ISO 8601 with an "
        "offset, e.g. 2024-06-01T12:00:00Z)",
    )
    prune.add_argument(
        "--row-level",
        choices=ROW_LEVELS,
        default="auto",
        help="auto (the default): exactly the files holding a match where every condition "
        "has a bitmap, row sets narrowed except where a sample shows many matches; always: "
        "narrow every kept file's rows; estimate: keep files predicted to match unexamined "
        "(cheaper, may keep files holding no match)",
    )

    verb("describe", "definitions, coverage and size of the index", commands.describe)

    drop = verb("drop", "drop index definitions (never touches data)", commands.drop)
    drop.add_argument(
        "--column",
        action="append",
        default=[],
        help="drop indexes on this column (or expression, as written in --index ...:expr=)",
    )
    drop.add_argument("--kind", action="append", default=[], help="drop indexes of this kind")
    drop.add_argument("--all", action="store_true", help="drop the whole index")

    verb(
        "vacuum",
        "remove superseded index files and what crashed builds left behind",
        commands.vacuum,
    )

    repair = verb(
        "repair",
        "make a damaged index readable again (last good version), then re-index what was lost",
        commands.repair,
    )
    repair.add_argument(
        "--no-rebuild",
        action="store_true",
        help="only fall back and drop damaged parts; do not start Spark to re-index",
    )

    cluster = verb(
        "cluster",
        "rewrite a table so that rows with close values share files (runs Spark)",
        commands.cluster,
    )
    target = cluster.add_mutually_exclusive_group()
    target.add_argument("--dst", help="write the clustered table here (a new or empty folder)")
    target.add_argument(
        "--in-place", action="store_true", help="rewrite the table itself, by a staged swap"
    )
    cluster.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="COL[,COL...]",
        help="columns to cluster by (1 to 8); without --by: only bin-pack small files",
    )
    cluster.add_argument("--curve", choices=["hilbert", "zorder", "linear"], default="hilbert")
    cluster.add_argument(
        "--target-mb", type=float, default=128, help="target file size in MiB (default 128)"
    )
    cluster.add_argument("--where", help="cluster only the files that may hold matching rows")
    cluster.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="KIND:COLUMN[:k=v,...]",
        help="index the result with these (default: minmax on the --by columns)",
    )
    cluster.add_argument(
        "--no-noise", action="store_true", help="do not spread one heavy key over several files"
    )
    cluster.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    cluster.add_argument("--cores", default="*", help="local Spark cores (default: all)")

    query = verbs.add_parser(
        "sql",
        help="run a Spark SQL query, each indexed table pruned (runs Spark)",
        description="Run a Spark SQL query with every reference to an indexed table pruned: "
        "tables are --table NAME=PATH views, or parquet.`/path` and delta.`/path` in the query.",
    )
    query.add_argument("query", help="one Spark SQL query")
    query.add_argument(
        "--table", action="append", default=[], metavar="NAME=PATH", help="register a table"
    )
    query.add_argument("--explain", action="store_true", help="say how each table was pruned")
    query.add_argument("--limit", type=int, default=20, help="rows to print (0: none)")
    query.add_argument(
        "--dynamic-keys",
        type=int,
        default=None,
        help=f"join keys that may prune the other side (default {PLANNING.max_keys}, "
        f"{PLANNING.row_code_keys} on bit-sliced bitmaps; 0: none)",
    )
    query.add_argument("--time-zone", help="the session time zone (default UTC)")
    query.add_argument("--json", action="store_true", help=_JSON_HELP)
    query.add_argument("--cores", default="*", help="local Spark cores (default: all)")
    query.set_defaults(run=commands.sql)

    _maintain_parser(verbs)
    _gateway_parser(verbs)
    _advise_parser(verbs)

    demo = verbs.add_parser("demo", help="generate TPC-H data, index it, prune sample queries")
    demo.add_argument("--dir", default="demo-data", help="where to write the sample table")
    demo.add_argument("--scale", type=float, default=0.1, help="TPC-H scale factor")
    demo.add_argument("--files", type=int, default=24, help="number of data files")
    demo.set_defaults(run=commands.demo, json=False)
    return parser


def _advise_parser(verbs: Any) -> None:
    advise = verbs.add_parser(
        "advise",
        help="choose indexes and a layout from the workload (simulated on samples)",
        description="Choose index kinds per column, and the clustering keys and curve, from "
        "the workload: the queries of --queries FILE (SQL statements or predicates, ended by "
        "';', each optionally preceded by a '-- name' line) or the query log. Estimates come "
        "from simulation on samples of the table; nothing changes unless --apply.",
    )
    advise.add_argument("table", help="table folder")
    advise.add_argument("--queries", metavar="FILE", help="the workload (default: the query log)")
    advise.add_argument("--log", help="the query log (default: $SKIPINDEX_QUERY_LOG)")
    advise.add_argument(
        "--name", action="append", default=[], help="the table's name in the SQL (repeatable)"
    )
    advise.add_argument("--budget-mb", type=float, help="at most this many MB of index")
    advise.add_argument(
        "--budget-seconds", type=float, help="at most this much build time (one core)"
    )
    advise.add_argument("--no-layout", action="store_true", help="advise indexes only")
    advise.add_argument("--target-file-mb", type=float, help="file size if clustered")
    advise.add_argument("--sample-files", type=int, default=32, help="files simulated on")
    advise.add_argument("--time-zone", default="UTC", help="the session time zone of the queries")
    advise.add_argument(
        "--apply", action="store_true", help="cluster and build as advised (runs Spark)"
    )
    advise.add_argument("--dst", help="with --apply: cluster into this copy instead")
    advise.add_argument(
        "--policy", help="with --apply: write the plan into this maintenance policy instead"
    )
    advise.add_argument("--json", action="store_true", help=_JSON_HELP)
    advise.add_argument("--cores", default="*", help="local Spark cores (default: all)")
    advise.set_defaults(run=commands.advise)


def _maintain_parser(verbs: Any) -> None:
    maintain = verbs.add_parser(
        "maintain",
        help="keep tables indexed and laid out as commits land (a service)",
        description="Keep the tables of a policy file indexed, bin-packed and clustered as "
        "commits land: run (until stopped), once (one pass, for cron or Airflow), status, "
        "notify (a writer says a table changed).",
    )
    steps = maintain.add_subparsers(dest="step", required=True, metavar="STEP")
    for name, text in [
        ("run", "run the service until SIGTERM/SIGINT (the running job is finished first)"),
        ("once", "one pass: look for commits, run every due job, exit (1 if a job failed)"),
        ("status", "per table: last commit, files not yet covered, queue, running job, outcomes"),
        ("notify", "queue a refresh of TABLE now (a writer's 'table changed')"),
    ]:
        step = steps.add_parser(name, help=text, description=text)
        if name == "notify":
            step.add_argument("table", help="the table as the policy names it (path or db.table)")
        step.add_argument("--policy", help="the policy file (default: $SKIPINDEX_MAINTAIN_POLICY)")
        step.add_argument("--json", action="store_true", help=_JSON_HELP)
        if name in ("run", "once"):
            step.add_argument(
                "--table", action="append", default=[], help="only this table (repeatable)"
            )
            step.add_argument("--master", help="Spark master URL (instead of the policy's)")
        step.set_defaults(run=commands.maintain)


def _gateway_parser(verbs: Any) -> None:
    text = (
        "a Spark Connect server of skipindex's own: every call forwarded to the real "
        "server, plans over indexed tables rewritten to read only the files that can match"
    )
    gateway = verbs.add_parser("gateway", help=text, description=text)
    gateway.add_argument("--policy", help="TOML: [gateway] upstream, listen; [tables] name = path")
    gateway.add_argument("--upstream", help="the Spark Connect server, sc://host:port")
    gateway.add_argument("--listen", help="host:port to listen on (default: 127.0.0.1:15003)")
    gateway.add_argument(
        "--table", action="append", default=[], help="NAME=PATH, a catalog table's folder"
    )
    gateway.add_argument(
        "--min-table-mb",
        type=float,
        help="queries naming no indexed table this large go as sent (default 256)",
    )
    gateway.add_argument("--json", action="store_true", help=_JSON_HELP)
    gateway.set_defaults(run=commands.gateway)


def _kinds_help() -> str:
    lines = []
    for name, kind in KINDS.items():
        spec = kind.spec
        params = [f for f in dataclasses.fields(spec) if f.name not in ("column", "expr")]
        shown = ", ".join(f"{f.name}={f.default!r}" for f in params) or "no parameters"
        doc = (spec.__doc__ or "").strip().splitlines()[0]
        lines.append(f"  {name:<17} {shown}: {doc}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.run(args))
    except SkipIndexError as exc:
        if args.json:
            error = {"error": {"type": type(exc).__name__, "message": str(exc)}}
            print(json.dumps(error), file=sys.stderr)
        else:
            print(f"skipindex: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `skipindex describe t | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush stays quiet
        return 0


def _show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
    """Warnings as messages, not as the Python source line that raised them."""
    text = str(message).removeprefix("skipindex: ")
    print(f"skipindex: warning: {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
