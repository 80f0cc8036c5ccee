"""What each ``skipindex`` verb does with its parsed arguments (the parser is
:mod:`skipindex.cli`). Each imports its wing when it runs, so ``skipindex prune``
never loads Spark."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from skipindex.errors import InvalidSpecError
from skipindex.options import parse_index_option

__all__ = [
    "advise",
    "build",
    "cluster",
    "demo",
    "describe",
    "drop",
    "maintain",
    "prune",
    "repair",
    "sql",
    "vacuum",
]


def build(args: argparse.Namespace) -> int:
    from skipindex.indexing.build import SparkRunner, build_with, check_specs

    specs = [parse_index_option(i) for i in args.index] or None
    catalog = _catalog(args)
    check_specs(args.path, specs, catalog=catalog)  # before Spark starts
    runner = SparkRunner(_spark(args.cores), progress=not args.json)
    report = build_with(args.path, specs, runner, catalog=catalog)
    _emit(args, report.to_dict(), str(report))
    return 0


def _spark(cores: str) -> Any:
    from skipindex.spark.session import local_session

    return local_session(cores)


def _catalog(args: argparse.Namespace) -> Any:
    """``--catalog``: a catalog name, or a JSON object of its properties."""
    text = getattr(args, "catalog", None)
    if text is None or not text.lstrip().startswith("{"):
        return text
    try:
        properties = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidSpecError(f"--catalog {text!r} is not a JSON object: {exc}") from None
    if not isinstance(properties, dict):
        raise InvalidSpecError(f"--catalog {text!r} is not a JSON object")
    return {str(k): str(v) for k, v in properties.items()}


def _emit(args: argparse.Namespace, document: Any, text: str) -> None:
    print(json.dumps(document, indent=2) if args.json else text)


def prune(args: argparse.Namespace) -> int:
    from skipindex.pruning.prune import prune

    result = prune(
        args.path,
        args.where,
        on_damaged="keep" if args.keep_on_damage else "raise",
        row_level=args.row_level,
        catalog=_catalog(args),
        snapshot_id=args.snapshot_id,
        as_of=args.as_of,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    elif args.explain:
        print(result.explain())
    else:
        print("\n".join(result.files))
        print(f"kept {result.kept} of {result.total} files", file=sys.stderr)
    return 0


def describe(args: argparse.Namespace) -> int:
    from skipindex.admin.describe import describe

    description = describe(args.path, catalog=_catalog(args))
    _emit(args, description.to_dict(), str(description))
    return 0


def drop(args: argparse.Namespace) -> int:
    from skipindex.admin.drop import drop_index

    if not (args.column or args.kind or args.all):
        raise InvalidSpecError("say what to drop: --column, --kind, or --all for the whole index")
    dropped = drop_index(
        args.path,
        columns=args.column or None,
        kinds=args.kind or None,
        all=args.all,
        catalog=_catalog(args),
    )
    lines = [f"dropped {d.kind} on {d.subject}" for d in dropped] or ["nothing to drop"]
    document = {
        "dropped": [
            {"column": d.column, "kind": d.kind, "params": d.params}
            | ({"expression": d.expression} if d.expression is not None else {})
            for d in dropped
        ]
    }
    _emit(args, document, "\n".join(lines))
    return 0


def vacuum(args: argparse.Namespace) -> int:
    from skipindex.store.vacuum import vacuum

    vacuumed = vacuum(args.path, catalog=_catalog(args))
    _emit(args, vacuumed.to_dict(), str(vacuumed))
    return 0


def repair(args: argparse.Namespace) -> int:
    from skipindex.admin.repair import repair

    # Spark starts only if files lost their entries and must be re-indexed.
    report = repair(args.path, rebuild=not args.no_rebuild)
    _emit(args, report.to_dict(), str(report))
    return 0


def cluster(args: argparse.Namespace) -> int:
    from skipindex.layout.cluster import cluster

    if not (args.dst or args.in_place or args.dry_run):
        raise InvalidSpecError(
            "say where the clustered table goes: --dst FOLDER, or --in-place to rewrite it"
        )
    options = {
        "by": [c for item in args.by for c in item.split(",") if c] or None,
        "curve": args.curve,
        "target_file_bytes": int(args.target_mb * 1024 * 1024),
        "where": args.where,
        "indexes": [parse_index_option(i) for i in args.index] or None,
        "noise": not args.no_noise,
    }
    if args.dry_run:
        report = cluster(args.path, args.dst, dry_run=True, **options)
    else:
        report = cluster(args.path, args.dst, spark=_spark(args.cores), **options)
    _emit(args, report.to_dict(), str(report))
    return 0


def sql(args: argparse.Namespace) -> int:
    from skipindex.sql.catalog import register
    from skipindex.sql.query import sql_plan

    spark = _spark(args.cores)
    if args.time_zone:
        spark.conf.set("spark.sql.session.timeZone", args.time_zone)
    for item in args.table:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InvalidSpecError(f"bad --table {item!r}: expected NAME=PATH")
        register(spark, name, path)
    plan = sql_plan(spark, args.query, dynamic_keys=args.dynamic_keys)
    rows = [r.asDict() for r in plan.frame.limit(args.limit).collect()] if args.limit else []
    if args.json:
        document = {"columns": plan.frame.columns, "rows": rows, "plan": plan.to_dict()}
        print(json.dumps(document, indent=2, default=str))
        return 0
    if args.explain:
        print(plan.explain())
    if args.limit:
        print("\t".join(plan.frame.columns))
        print("\n".join("\t".join(str(v) for v in row.values()) for row in rows))
    return 0


def maintain(args: argparse.Namespace) -> int:
    from skipindex.maintain.command import run_step

    notify = args.step == "notify"  # its TABLE, where run and once take --table ...
    table = getattr(args, "table", None)  # status takes neither
    return run_step(
        args.step,
        args.policy,
        tables=table if isinstance(table, list) else (),
        master=getattr(args, "master", None),
        as_json=args.json,
        table=table if notify else None,
    )


def advise(args: argparse.Namespace) -> int:
    from skipindex.advise.advise import advise as advise_table
    from skipindex.advise.workload import read_queries
    from skipindex.maintain.advice import apply_advice

    advice = advise_table(
        args.table,
        read_queries(args.queries) if args.queries else None,
        log=args.log,
        names=args.name,
        time_zone=args.time_zone,
        budget_bytes=None if args.budget_mb is None else args.budget_mb * 1e6,
        budget_seconds=args.budget_seconds,
        layouts_too=not args.no_layout,
        target_file_bytes=None if args.target_file_mb is None else int(args.target_file_mb * 2**20),
        sample_files=args.sample_files,
    )
    print(json.dumps(advice.to_dict(), indent=2) if args.json else advice)
    if args.apply:
        spark = None if args.policy else _spark(args.cores)
        done = apply_advice(advice, dst=args.dst, policy=args.policy, spark=spark)
        if not args.json:
            print(f"written into {args.policy}: {done}" if args.policy else done)
    return 0


def gateway(args: argparse.Namespace) -> int:
    import logging

    from skipindex.gateway import DEFAULT_LISTEN
    from skipindex.gateway import gateway as start

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    tables = {}
    for item in args.table:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InvalidSpecError(f"--table {item!r}: expected NAME=PATH")
        tables[name] = path
    running = start(
        args.upstream or "",
        tables=tables,
        listen=args.listen or DEFAULT_LISTEN,
        min_table_mb=args.min_table_mb,
        policy=args.policy,
    )
    print(f"skipindex gateway: clients connect to {running.address}", flush=True)
    try:
        running.wait()
    except KeyboardInterrupt:
        running.stop()
    return 0


def demo(args: argparse.Namespace) -> int:
    from skipindex.demo import run_demo

    run_demo(args.dir, scale=args.scale, files=args.files)
    return 0
