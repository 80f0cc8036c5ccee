"""``cluster``: rewrite a table's rows so that close values share files.

1. Plan (driver, no Spark): the files to rewrite, in groups per partition, and
   how many files each group becomes. With ``by``: every selected file of a
   partition, into about ``bytes / target_file_bytes`` files. Without: small
   files bin-packed toward the target, large ones left alone.
2. Fit (Spark sample): per-column boundaries, then per group the curve keys
   where one output file ends and the next begins.
3. Write (one Spark job): every row gets its output file, one Spark partition
   per output file, sorted by key, written to a hidden staging folder.
4. Verify: row count and order-independent checksums of the staged rows against
   the rows they replace, both read by Spark as readers will read them.
5. Commit: moves recorded in the plan first, then made (see :mod:`.commit`);
   then the result is indexed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import pyarrow.fs as pafs

from skipindex.errors import InvalidSpecError, UnsupportedTableError, VerificationError
from skipindex.layout import commit, job
from skipindex.layout.keys import KeyModel, fit, packing
from skipindex.layout.recover import recover, resolve_by
from skipindex.layout.refusals import refuse_delta, refuse_iceberg
from skipindex.spark.view import open_file
from skipindex.store.cluster_plan import (
    PENDING,
    ClusterPlan,
    bin_pack,
    cluster_groups,
    load_plans,
    new_plan_id,
    save_plan,
)
from skipindex.store.location import DataFile, StorageOptions, TableLocation, TablePath, locate
from skipindex.store.vacuum import in_flight

__all__ = ["ClusterReport", "cluster"]

Curve = Literal["hilbert", "zorder", "linear"]
DEFAULT_TARGET_BYTES = 128 * 1024 * 1024
SAMPLE_ROWS = 200_000


@dataclass(frozen=True)
class ClusterReport:
    plan: ClusterPlan
    files_written: int
    rows: int
    seconds: float
    recovered: tuple[str, ...] = ()
    indexed: str = ""

    def __str__(self) -> str:
        lines = [*self.recovered, self.plan.summary()]
        if self.plan.state == "requested":
            lines.extend(self.plan.details())
        if self.plan.state == "completed":
            lines.append(
                f"wrote {self.files_written} files, {self.rows:,} rows verified; "
                f"{self.seconds:.1f} s"
            )
        if self.indexed:
            lines.append(self.indexed)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["plan"] = self.plan.to_json()
        return doc


def cluster(
    src: TablePath,
    dst: TablePath | None = None,
    *,
    by: Sequence[str] | None = None,
    curve: Curve = "hilbert",
    target_file_bytes: int = DEFAULT_TARGET_BYTES,
    where: str | None = None,
    indexes: Sequence[Any] | None = None,
    noise: bool = True,
    dry_run: bool = False,
    spark: Any = None,
    storage_options: StorageOptions | None = None,
    catalog: Any = None,
) -> ClusterReport:
    """Lay ``src`` out so that rows with close ``by`` values share files.

    ``dst``: write the clustered table there (files ``where`` leaves out, and
    files bin-packing leaves alone, are copied as they are); ``None`` rewrites
    ``src`` in place, through a staged swap that readers going through
    :func:`~skipindex.prune` / :func:`~skipindex.read` never see half done.
    ``by=None``: bin-packing only. ``where`` selects the files to cluster (those
    ``prune`` keeps for it: usually a partition predicate). The result is
    indexed with ``indexes`` (default: min-max on the ``by`` columns).
    An interrupted cluster is rolled back (or, if it was moving files into place,
    finished) by the next one on the same table. An Iceberg table (``catalog=``,
    or a metadata.json) is refused: its layout changes only through a commit of
    Iceberg's own, which needs an Iceberg writer (``rewrite_data_files``).
    """
    refuse_iceberg(str(src), catalog is not None)
    started = time.perf_counter()
    if curve not in ("hilbert", "zorder", "linear"):
        raise InvalidSpecError(f"curve must be hilbert, zorder or linear, not {curve!r}")
    if target_file_bytes < 1:
        raise InvalidSpecError(f"target_file_bytes must be positive, not {target_file_bytes}")
    by = tuple(by or ())
    if len(by) > 8:
        raise InvalidSpecError(f"cluster takes 1 to 8 columns in by=, not {len(by)}")
    location = locate(src, storage_options)
    target = _target(location, dst, storage_options)
    recovered: tuple[str, ...] = ()
    if not dry_run:
        recovered = tuple(
            recover(location, lambda d: location if d is None else locate(d, storage_options))
        )
    files = location.list_data_files()
    settings = (by, str(curve), target_file_bytes)
    destination = None if target is location else target.user_root  # absolute, for recovery
    plan = _plan(location, files, destination, settings, _selection(where, spark), storage_options)
    if dry_run or not plan.groups:
        return ClusterReport(plan, 0, 0, time.perf_counter() - started, recovered)
    if spark is None:
        from skipindex.spark.session import active_or_local_session

        spark = active_or_local_session()
    with in_flight(location, plan.plan_id):
        plan = save_plan(location, plan)
        try:
            plan, rows = _stage_and_verify(spark, location, target, plan, noise)
        except BaseException as exc:  # KeyboardInterrupt too: undo what was staged
            commit.roll_back(location, target, plan, f"{type(exc).__name__}: {exc}")
            raise
        plan = commit.finish(location, target, plan)
    indexed = _index(spark, target, plan, indexes, storage_options)
    written = sum(len(g.written) for g in plan.groups)
    return ClusterReport(plan, written, rows, time.perf_counter() - started, recovered, indexed)


def _target(
    location: TableLocation, dst: TablePath | None, options: StorageOptions | None
) -> TableLocation:
    """Where the new files go: the table itself, or an empty destination."""
    if dst is None:
        if not isinstance(location.fs, pafs.LocalFileSystem | pafs.HadoopFileSystem):
            raise UnsupportedTableError(
                f"{location.user_root}: clustering in place needs atomic renames, which "
                f"{type(location.fs).__name__} does not have; write to a new location (dst=...)"
            )
        refuse_delta(location, in_place=True)
        return location
    refuse_delta(location, in_place=False)
    target = locate(dst, options)
    if target.uri == location.uri:
        raise InvalidSpecError(
            "cluster destination is the source itself: leave dst=None for in place"
        )
    if target.exists(target.root):
        data = target.list_data_files()
        if data:
            raise InvalidSpecError(
                f"cluster destination {target.user_root} already holds {len(data)} data "
                f"files (e.g. {data[0].path}); give an empty or new folder"
            )
    return target


def _plan(
    location: TableLocation,
    files: list[DataFile],
    destination: str | None,
    settings: tuple[tuple[str, ...], str, int],
    where: tuple[str, str | None, bool | None] | None,
    options: StorageOptions | None,
) -> ClusterPlan:
    by, curve, target_file_bytes = settings
    busy = {f for p in load_plans(location) if p.state in PENDING for f in p.rewritten}
    selected = [f for f in files if f.path not in busy]  # a live plan holds these
    if where is not None:
        from skipindex.pruning.prune import prune

        text, zone, case_sensitive = where
        result = prune(
            location.user_root,
            text,
            time_zone=zone,
            case_sensitive=case_sensitive,
            storage_options=options,
        )
        kept = set(result.files)
        selected = [f for f in selected if location.user_path(f.path) in kept]
    by = resolve_by(location, files, by)
    if by:
        groups = cluster_groups(selected, target_file_bytes, power_of_two=curve != "linear")
    else:
        groups = bin_pack(selected, target_file_bytes)
    rewritten = {f for g in groups for f in g.files}
    return ClusterPlan(
        plan_id=new_plan_id(),
        state="requested",
        source=location.user_root,
        destination=destination,
        by=by,
        curve=curve if by else "none",
        target_file_bytes=target_file_bytes,
        groups=tuple(groups),
        untouched=tuple(f.path for f in files if f.path not in rewritten),
        created_ms=int(time.time() * 1000),
    )


def _selection(where: str | None, spark: Any) -> tuple[str, str | None, bool | None] | None:
    """``where`` with the session's time zone and case sensitivity, when there is
    a session (a dry run may have none: then prune's defaults)."""
    if where is None:
        return None
    if spark is None:
        return where, None, None
    from skipindex.spark.settings import SparkView

    view = SparkView.of_session(spark)
    return where, view.time_zone, view.case_sensitive


def _stage_and_verify(
    spark: Any, location: TableLocation, target: TableLocation, plan: ClusterPlan, noise: bool
) -> tuple[ClusterPlan, int]:
    """Write the new files to staging and check them; the plan, ready to commit."""
    plan = save_plan(location, plan.advance("inflight"))
    schema = _table_schema(spark, location)
    source = job.read_files(
        spark, location.user_root, _user_paths(location, plan.rewritten), schema
    )
    staged = commit.staging_dir(target, plan.plan_id)
    partitions = _partition_keys(location, plan)
    job.write_groups(
        source,
        _key_model(spark, location, plan, source, noise),
        plan.outputs,
        [c for c in schema.fieldNames() if c.lower() in partitions],
        _user_path(target, f"{staged}/_raw"),
        f"skipindex: cluster {len(plan.rewritten)} files of {location.user_root}",
    )
    plan = _arrange(target, plan, staged)
    copied = [] if target is location else list(plan.untouched)
    for path in copied:  # files left as they are still belong in the destination
        pafs.copy_files(location.fs_path(path), f"{staged}/{path}", location.fs, target.fs)
    new_files = [*(p for g in plan.groups for p in g.written), *copied]
    rows = _verify(
        spark,
        schema,
        (location, [*plan.rewritten, *copied]),
        (_retarget(target, staged), new_files),
    )
    moves = (
        commit.moves_in_place(location, plan)
        if target is location
        else commit.moves_to(target, plan, copied)
    )
    return save_plan(location, plan.advance("committing", moves=moves, rows=rows)), rows


def _key_model(
    spark: Any, location: TableLocation, plan: ClusterPlan, source: Any, noise: bool
) -> KeyModel:
    outputs = [g.outputs for g in plan.groups]
    group_of_file = {path: g for g, group in enumerate(plan.groups) for path in group.files}
    slots = job.hash_slots(spark, sum(outputs))
    if not plan.by:
        return packing(group_of_file, outputs, slots)
    fraction = min(1.0, SAMPLE_ROWS / max(_row_count(location, plan.rewritten), 1))
    sampled = job.sample(source, plan.by, fraction, seed=17)
    return fit(sampled, plan.by, plan.curve, group_of_file, outputs, slots, noise=noise)


Files = tuple[TableLocation, list[str]]  # a table root, and files relative to it


def _verify(spark: Any, schema: Any, old: Files, new: Files) -> int:
    """The row count, after checking that the new files hold exactly the old rows."""

    def read(files: Files) -> Any:
        location, paths = files
        return job.read_files(spark, location.user_root, _user_paths(location, paths), schema)

    before, after = job.fingerprint(read(old)), job.fingerprint(read(new))
    if before != after:
        raise VerificationError(
            f"cluster of {old[0].user_root}: the new files' rows differ from the source's "
            f"({before[0]:,} rows before, {after[0]:,} after; row checksums "
            f"{'equal' if before[1:] == after[1:] else 'differ'}); nothing was replaced"
        )
    return before[0]


def _retarget(location: TableLocation, fs_path: str) -> TableLocation:
    """The same file system, rooted at ``fs_path`` (the staging folder as a table)."""
    return replace(location, root=fs_path, user_root=_user_path(location, fs_path))


def _arrange(target: TableLocation, plan: ClusterPlan, staged: str) -> ClusterPlan:
    """Spark's ``_raw/_si_group=G/_si_file=F/part-*.parquet`` become
    ``<partition>/si-cluster-<plan>-<n>.parquet`` in staging, named for readers."""
    raw = f"{staged}/_raw"
    written: list[list[str]] = [[] for _ in plan.groups]
    entries = target.fs.get_file_info(pafs.FileSelector(raw, recursive=True))
    outputs = sorted(
        e.path for e in entries if e.type == pafs.FileType.File and e.base_name.endswith(".parquet")
    )
    for number, path in enumerate(outputs):
        group = int(path.removeprefix(raw + "/").split("/")[0].removeprefix("_si_group="))
        partition = plan.groups[group].partition
        relative = f"{partition}/{commit.new_file_name(plan.plan_id, number)}".lstrip("/")
        target.fs.create_dir(f"{staged}/{partition}".rstrip("/"), recursive=True)
        target.fs.move(path, f"{staged}/{relative}")
        written[group].append(relative)
    target.fs.delete_dir(raw)
    groups = tuple(replace(g, written=tuple(w)) for g, w in zip(plan.groups, written, strict=True))
    return replace(plan, groups=groups)


def _table_schema(spark: Any, location: TableLocation) -> Any:
    """The whole table's Spark schema, partition columns typed over every folder."""
    if location.is_delta:
        from skipindex.reading.read import delta_spark_schema

        return delta_spark_schema(location)
    return spark.read.option("basePath", location.user_root).parquet(location.user_root).schema


def _row_count(location: TableLocation, paths: Sequence[str]) -> int:
    """Rows in ``paths``, from their footers."""
    return sum(open_file(location.fs_path(p), location.fs).metadata.num_rows for p in paths)


def _partition_keys(location: TableLocation, plan: ClusterPlan) -> set[str]:
    """The table's partition column names, lower-cased (Spark matches them so)."""
    first = [DataFile(g.files[0], 0, 0) for g in plan.groups[:1]]
    return {n.lower() for n in location.partition_names(first)}


def _user_path(location: TableLocation, fs_path: str) -> str:
    return location.user_path(fs_path.removeprefix(location.root + "/"))


def _user_paths(location: TableLocation, relative: Sequence[str]) -> list[str]:
    return [location.user_path(p) for p in relative]


def _index(
    spark: Any,
    target: TableLocation,
    plan: ClusterPlan,
    indexes: Sequence[Any] | None,
    options: StorageOptions | None,
) -> str:
    """Index the result with ``indexes``, else min-max on the ``by`` columns that
    are not partition columns; an existing index is refreshed either way."""
    from skipindex.indexes.minmax import MinMax
    from skipindex.indexing.build import build_index
    from skipindex.store.manifest import load_latest

    partitions = _partition_keys(target, plan)
    specs = (
        list(indexes)
        if indexes is not None
        else [MinMax(c) for c in plan.by if c.lower() not in partitions]
    )
    if not specs and load_latest(target) is None:
        return ""  # bin-packing a table nobody indexed: leave it so
    report = build_index(target.user_root, specs or None, spark=spark, storage_options=options)
    return str(report)
