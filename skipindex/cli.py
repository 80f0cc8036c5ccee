"""``skipindex build|prune|describe|drop|vacuum|demo``: the library's verbs on the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from skipindex import __version__
from skipindex.errors import InvalidSpecError, SkipIndexError
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec

__all__ = ["main", "parse_index_option"]


def parse_index_option(text: str) -> IndexSpec:
    """``KIND:COLUMN[:param=value,...]``, e.g. ``bloom:l_partkey:fpp=0.01``."""
    kind, _, rest = text.partition(":")
    column, _, params_text = rest.partition(":")
    if kind not in KINDS or not column:
        raise InvalidSpecError(
            f"bad --index {text!r}: expected KIND:COLUMN[:param=value,...] "
            f"with KIND one of {', '.join(KINDS)}"
        )
    params: dict[str, Any] = {}
    for item in filter(None, params_text.split(",")):
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidSpecError(f"bad parameter {item!r} in --index {text!r}: use name=value")
        params[name] = json.loads(value) if value[:1].isdigit() or value[:1] in "-." else value
    try:
        return KINDS[kind].spec(column, **params)
    except TypeError as exc:
        raise InvalidSpecError(f"bad parameters in --index {text!r}: {exc}") from exc


def _build(args: argparse.Namespace) -> int:
    from skipindex._spark import local_session
    from skipindex.build import build_index, check_specs

    specs = [parse_index_option(i) for i in args.index] or None
    check_specs(args.path, specs)  # before Spark starts
    spark = local_session(args.cores)
    spark.sparkContext.setLogLevel("ERROR")
    print(build_index(args.path, specs, spark=spark))
    return 0


def _prune(args: argparse.Namespace) -> int:
    from skipindex.prune import prune

    result = prune(args.path, args.where, on_damaged="keep" if args.keep_on_damage else "raise")
    if args.json:
        print(json.dumps({"files": result.files, "total": result.total, "kept": result.kept}))
    elif args.explain:
        print(result.explain())
    else:
        print("\n".join(result.files))
        print(f"kept {result.kept} of {result.total} files", file=sys.stderr)
    return 0


def _describe(args: argparse.Namespace) -> int:
    from skipindex.describe import describe

    description = describe(args.path)
    print(json.dumps(description.to_dict(), indent=2) if args.json else description)
    return 0


def _drop(args: argparse.Namespace) -> int:
    from skipindex.drop import drop_index

    if not (args.column or args.kind or args.all):
        raise InvalidSpecError("say what to drop: --column, --kind, or --all for the whole index")
    dropped = drop_index(
        args.path, columns=args.column or None, kinds=args.kind or None, all=args.all
    )
    for d in dropped:
        print(f"dropped {d.kind} on {d.column}")
    if not dropped:
        print("nothing to drop")
    return 0


def _vacuum(args: argparse.Namespace) -> int:
    from skipindex.store.vacuum import vacuum

    removed = vacuum(args.path)
    print("\n".join(removed) if removed else "nothing to remove")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from skipindex.demo import run_demo

    run_demo(args.dir, scale=args.scale, files=args.files)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skipindex", description="Secondary indexes for data skipping on Parquet tables."
    )
    parser.add_argument("--version", action="version", version=f"skipindex {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True)

    build = verbs.add_parser("build", help="build or refresh a table's index (runs Spark)")
    build.add_argument("path", help="table root folder or URI")
    build.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="KIND:COLUMN[:k=v,...]",
        help=f"an index to add; KIND is one of {', '.join(KINDS)} (repeatable). "
        "Without --index, refresh the existing definitions.",
    )
    build.add_argument("--cores", default="*", help="local Spark cores (default: all)")
    build.set_defaults(run=_build)

    prune = verbs.add_parser("prune", help="list the files that may hold matching rows")
    prune.add_argument("path")
    prune.add_argument("where", help="a Spark SQL boolean expression")
    prune.add_argument("--explain", action="store_true", help="say what each index skipped")
    prune.add_argument("--json", action="store_true", help="print files and counts as JSON")
    prune.add_argument(
        "--keep-on-damage",
        action="store_true",
        help="on a damaged index, warn and keep every file instead of failing",
    )
    prune.set_defaults(run=_prune)

    describe = verbs.add_parser("describe", help="definitions, coverage and size of the index")
    describe.add_argument("path")
    describe.add_argument("--json", action="store_true")
    describe.set_defaults(run=_describe)

    drop = verbs.add_parser("drop", help="drop index definitions (never touches data)")
    drop.add_argument("path")
    drop.add_argument("--column", action="append", default=[])
    drop.add_argument("--kind", action="append", default=[])
    drop.add_argument("--all", action="store_true", help="drop the whole index")
    drop.set_defaults(run=_drop)

    vacuum = verbs.add_parser(
        "vacuum", help="remove superseded index files and what crashed builds left behind"
    )
    vacuum.add_argument("path")
    vacuum.set_defaults(run=_vacuum)

    demo = verbs.add_parser("demo", help="generate TPC-H data, index it, prune sample queries")
    demo.add_argument("--dir", default="demo-data", help="where to write the sample table")
    demo.add_argument("--scale", type=float, default=0.1, help="TPC-H scale factor")
    demo.add_argument("--files", type=int, default=24, help="number of data files")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args))
    except SkipIndexError as exc:
        print(f"skipindex: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `skipindex describe t | head`: the reader left, nothing is wrong
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush stays quiet
        return 0


if __name__ == "__main__":
    sys.exit(main())
