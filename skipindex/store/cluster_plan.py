"""Cluster plans: which files become how many files, and how far that has got.

A plan is saved as ``_skipindex/cluster/<plan_id>.json`` in the source table
and validated by ``schemas/cluster_plan.schema.json`` when it is read. It is
saved again at every step, so after a crash the next ``cluster`` (or
``describe``) knows what was under way:

``requested`` -> ``inflight`` (writing and checking the new files in a hidden
staging folder) -> ``committing`` (moving them into place; every move is in
the plan) -> ``completed``. An ``inflight`` plan is rolled back: its staging
folder is deleted, and the table was never touched. A ``committing`` plan is
resumed: the recorded moves that have not happened yet are made.
"""

from __future__ import annotations

import json
import math
import posixpath
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import jsonschema
import pyarrow.fs as pafs

from skipindex.errors import IndexCorruptError
from skipindex.store.location import CLUSTER_DIR, DataFile, TableLocation
from skipindex.store.schemas import validator

__all__ = [
    "ClusterPlan",
    "Group",
    "Move",
    "bin_pack",
    "cluster_groups",
    "load_plan",
    "load_plans",
    "plans_dir",
    "save_plan",
]

FORMAT_VERSION = 1
State = Literal["requested", "inflight", "committing", "completed", "rolled_back"]
PENDING: tuple[State, ...] = ("requested", "inflight", "committing")
# Bin-packing leaves alone files at least this share of the target: rewriting them
# would cost a full read and write for little gain.
SMALL_FILE_SHARE = 0.75


@dataclass(frozen=True)
class Group:
    """Source files (relative paths, one partition) that become ``outputs`` files."""

    partition: str
    files: tuple[str, ...]
    bytes: int
    outputs: int
    written: tuple[str, ...] = ()  # the new files (relative paths), once they are staged


@dataclass(frozen=True)
class Move:
    """A rename the commit makes (relative to the source table's root when ``to``
    is in place, else to the destination's root)."""

    source: str
    target: str


@dataclass(frozen=True)
class ClusterPlan:
    plan_id: str
    state: State
    source: str
    destination: str | None  # None: in place
    by: tuple[str, ...]
    curve: str
    target_file_bytes: int
    groups: tuple[Group, ...]
    untouched: tuple[str, ...]  # files left as they are (copied as they are to a destination)
    created_ms: int
    moves: tuple[Move, ...] = ()
    rows: int | None = None
    message: str = ""
    format_version: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rewritten(self) -> list[str]:
        return [f for g in self.groups for f in g.files]

    @property
    def outputs(self) -> int:
        return sum(g.outputs for g in self.groups)

    def advance(self, state: State, **changes: Any) -> ClusterPlan:
        return replace(self, state=state, **changes)

    def summary(self) -> str:
        by = f"by {', '.join(self.by)} ({self.curve})" if self.by else "bin-packing"
        where = f"into {self.destination}" if self.destination else "in place"
        return (
            f"cluster plan {self.plan_id} [{self.state}], {by}, {where}: "
            f"{len(self.rewritten)} files ({sum(g.bytes for g in self.groups) / 1e6:.1f} MB) "
            f"in {len(self.groups)} group{'s' if len(self.groups) != 1 else ''} become "
            f"{self.outputs} files of about "
            f"{self.target_file_bytes / 2**20:.3g} MiB; {len(self.untouched)} files untouched"
        )

    def details(self, limit: int = 20) -> list[str]:
        """One line per group (the first ``limit``), for ``--dry-run`` and ``describe``."""
        lines = [
            f"  {g.partition or '(table root)'}: {len(g.files)} files, {g.bytes / 1e6:.1f} MB "
            f"-> {g.outputs} files"
            for g in self.groups[:limit]
        ]
        if len(self.groups) > limit:
            lines.append(f"  ... and {len(self.groups) - limit} more groups")
        return lines

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(json.dumps(asdict(self)))  # tuples become lists
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ClusterPlan:
        return cls(
            **{
                **doc,
                "by": tuple(doc["by"]),
                "groups": tuple(
                    Group(**{**g, "files": tuple(g["files"]), "written": tuple(g["written"])})
                    for g in doc["groups"]
                ),
                "untouched": tuple(doc["untouched"]),
                "moves": tuple(Move(**m) for m in doc["moves"]),
            }
        )


def new_plan_id() -> str:
    return f"{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"


def _by_partition(files: Sequence[DataFile]) -> dict[str, list[DataFile]]:
    grouped: dict[str, list[DataFile]] = defaultdict(list)
    for f in files:
        grouped[posixpath.dirname(f.path)].append(f)
    return dict(sorted(grouped.items()))


def cluster_groups(
    files: Sequence[DataFile], target_file_bytes: int, *, power_of_two: bool = False
) -> list[Group]:
    """Every partition's files as one group, into about ``bytes / target`` files.

    ``power_of_two`` rounds that count to the nearest power of two (files of 0.71
    to 1.41 times the target). A curve's grid splits in halves, so 2^k equal
    stretches of the curve are 2^k boxes of the grid; any other count cuts
    stretches across boxes, and a file's ranges grow in every column."""
    groups = []
    for partition, members in _by_partition(files).items():
        size = sum(f.size for f in members)
        share = size / target_file_bytes
        if power_of_two:
            outputs = 2 ** max(0, round(math.log2(share))) if share >= 1 else 1
        else:
            outputs = max(1, round(share))
        groups.append(Group(partition, tuple(f.path for f in members), size, outputs))
    return groups


def bin_pack(files: Sequence[DataFile], target_file_bytes: int) -> list[Group]:
    """Small files packed first-fit-decreasing, per partition, into bins of at most
    the target; a bin of one file is left alone (rewriting it gains nothing)."""
    groups: list[Group] = []
    for partition, members in _by_partition(files).items():
        small = sorted(
            (f for f in members if f.size < SMALL_FILE_SHARE * target_file_bytes),
            key=lambda f: (-f.size, f.path),
        )
        bins: list[list[DataFile]] = []
        room: list[int] = []
        for f in small:
            slot = next((i for i, left in enumerate(room) if f.size <= left), None)
            if slot is None:
                bins.append([f])
                room.append(target_file_bytes - f.size)
            else:
                bins[slot].append(f)
                room[slot] -= f.size
        groups.extend(
            Group(partition, tuple(sorted(f.path for f in b)), sum(f.size for f in b), 1)
            for b in bins
            if len(b) > 1
        )
    return groups


def plans_dir(location: TableLocation) -> str:
    return f"{location.index_dir}/{CLUSTER_DIR}"


def save_plan(location: TableLocation, plan: ClusterPlan) -> ClusterPlan:
    """Write the plan whole (temporary file, then one rename) and return it."""
    doc = plan.to_json()
    validator("cluster_plan").validate(doc)
    folder = plans_dir(location)
    location.fs.create_dir(folder, recursive=True)
    tmp = f"{folder}/.tmp-{plan.plan_id}-{uuid.uuid4().hex}"
    with location.fs.open_output_stream(tmp) as out:
        out.write(json.dumps(doc, indent=1, sort_keys=True).encode())
    location.fs.move(tmp, f"{folder}/{plan.plan_id}.json")
    return plan


def _read(location: TableLocation, path: str) -> ClusterPlan:
    with location.fs.open_input_stream(path) as stream:
        raw = stream.read()
    try:
        doc = json.loads(raw)
        validator("cluster_plan").validate(doc)
    except (ValueError, jsonschema.ValidationError) as exc:
        raise IndexCorruptError(f"cluster plan {path} is damaged: {exc}") from exc
    if doc["format_version"] > FORMAT_VERSION:
        raise IndexCorruptError(
            f"cluster plan {path} has format version {doc['format_version']}; "
            "upgrade skipindex to read it"
        )
    return ClusterPlan.from_json(doc)


# Completed plans never change again: readers look them up once per process.
_completed: dict[tuple[str, str], ClusterPlan] = {}


def load_plan(location: TableLocation, plan_id: str) -> ClusterPlan | None:
    """The plan ``plan_id``, or None if it was never saved (or has been removed)."""
    key = (location.uri, plan_id)
    if key in _completed:
        return _completed[key]
    try:
        plan = _read(location, f"{plans_dir(location)}/{plan_id}.json")
    except FileNotFoundError:
        return None
    if plan.state == "completed":
        _completed[key] = plan
    return plan


def load_plans(location: TableLocation) -> list[ClusterPlan]:
    """Every saved plan, oldest first."""
    selector = pafs.FileSelector(plans_dir(location), allow_not_found=True)
    plans = [
        _read(location, entry.path)
        for entry in location.fs.get_file_info(selector)
        if entry.type == pafs.FileType.File and entry.base_name.endswith(".json")
    ]
    return sorted(plans, key=lambda p: (p.created_ms, p.plan_id))
