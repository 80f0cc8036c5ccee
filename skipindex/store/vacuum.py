"""Removing what no current version needs, and never what a live build needs.

A build announces itself with ``_skipindex/_inflight/<build_id>.json`` (host,
pid, start time) while it writes segments. Cleanup keeps the newest
``KEEP_VERSIONS`` manifests and every segment they name, and deletes other
segments only when the build that wrote them is no longer alive: its marker is
gone, or names a dead process on this host, or is older than ``STALE_AFTER_MS``.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress

import pyarrow.fs as pafs

from skipindex.errors import IndexCorruptError
from skipindex.store.damage import repairable
from skipindex.store.location import (
    CLUSTER_DIR,
    CatalogSpec,
    StorageOptions,
    TableLocation,
    TablePath,
    locate,
)
from skipindex.store.manifest import (
    CLAIM_TTL_MS,
    CLAIMS_DIR,
    load_version,
    manifest_path,
    manifest_versions,
)

__all__ = [
    "Vacuumed",
    "collect",
    "delete_index",
    "delete_paths",
    "delete_segments",
    "in_flight",
    "new_build_id",
    "pid_alive",
    "running_builds",
    "vacuum",
]

KEEP_VERSIONS = 2  # the newest, and the one a concurrent reader may still be reading
STALE_AFTER_MS = 6 * 3600 * 1000


def new_build_id() -> str:
    """``<ms>-<random>``: segment names start with it, so cleanup can tell who wrote them."""
    return f"{_now_ms():013d}-{uuid.uuid4().hex[:12]}"


def _marker_dir(location: TableLocation) -> str:
    return f"{location.index_dir}/_inflight"


@contextmanager
def in_flight(location: TableLocation, build_id: str) -> Iterator[None]:
    """Mark ``build_id`` as running for the duration of the block."""
    location.fs.create_dir(_marker_dir(location), recursive=True)
    marker = f"{_marker_dir(location)}/{build_id}.json"
    body = {"host": socket.gethostname(), "pid": os.getpid(), "started_ms": _now_ms()}
    with location.fs.open_output_stream(marker) as out:
        out.write(json.dumps(body).encode())
    try:
        yield
    finally:
        _delete(location, [marker])
        _remove_if_empty(location, [_marker_dir(location), location.index_dir])


def _remove_if_empty(location: TableLocation, folders: list[str]) -> None:
    """Leave no empty ``_inflight/`` (nor an empty ``_skipindex/`` after a failed first
    build). Only local folders exist on their own; ``rmdir`` refuses a non-empty one,
    so a concurrent build's marker is never touched."""
    if not isinstance(location.fs, pafs.LocalFileSystem):
        return
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return


def collect(location: TableLocation) -> list[str]:
    """Delete superseded manifests, unreferenced segments of dead builds and
    stale temporary files. Returns what was deleted."""
    versions = manifest_versions(location)
    retained = versions[-KEEP_VERSIONS:]
    try:
        referenced = {
            f"{location.index_dir}/{s.path}"
            for v in retained
            for s in load_version(location, v).segments
        }
    except IndexCorruptError:
        return []  # never delete on the word of a manifest we cannot read
    live = _live_builds(location)
    doomed = [manifest_path(location, v) for v in versions if v not in retained]
    selector = pafs.FileSelector(f"{location.index_dir}/segments", allow_not_found=True)
    for entry in location.fs.get_file_info(selector):
        build = "-".join(entry.base_name.split("-")[:2])
        if entry.path not in referenced and build not in live:
            doomed.append(entry.path)
    now = _now_ms()
    claims = pafs.FileSelector(f"{location.index_dir}/{CLAIMS_DIR}", allow_not_found=True)
    doomed.extend(  # claims of writers that crashed mid-commit
        e.path
        for e in location.fs.get_file_info(claims)
        if now - e.mtime_ns // 10**6 > 10 * CLAIM_TTL_MS
    )
    folder = pafs.FileSelector(location.index_dir, allow_not_found=True)
    for entry in location.fs.get_file_info(folder):
        if not entry.base_name.startswith(".tmp-"):
            continue
        build = "-".join(entry.base_name.removeprefix(".tmp-").split("-")[:2])
        if build not in live or now - entry.mtime_ns // 10**6 > STALE_AFTER_MS:
            doomed.append(entry.path)
    _delete(location, doomed)
    return doomed


class Vacuumed(list[str]):
    """What ``vacuum`` deleted: the paths, relative to the table root (a plain list
    otherwise). ``note`` says why there was nothing to do, when there was not even an
    index (``None`` when the table has one, whether or not anything was removed)."""

    def __init__(self, removed: Iterable[str] = (), note: str | None = None) -> None:
        super().__init__(removed)
        self.note = note

    def to_dict(self) -> dict[str, object]:
        """The ``--json`` document: ``removed`` (paths), ``count``, ``note``."""
        return {"removed": list(self), "count": len(self), "note": self.note}

    def __str__(self) -> str:
        return "\n".join(self) if self else (self.note or "nothing to remove")


def vacuum(
    path: TablePath,
    *,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> Vacuumed:
    """Remove superseded manifests and segments, and what dead builds left behind.

    Builds and ``drop_index`` do this themselves; call it after a crashed build
    or to reclaim space sooner. It also deletes the old data files that completed
    in-place ``cluster`` runs moved aside (kept until now so that a reader that
    listed them before the swap could still finish). Returns the deleted paths,
    relative to the table root. Files in the table itself are never touched:
    only ``_skipindex/`` is cleaned. A table with no ``_skipindex/`` (never indexed,
    or its index dropped) has nothing to vacuum: the result is empty and its
    ``note`` says so.
    """
    from skipindex.store.swaps import clean_replaced

    location = locate(path, storage_options, catalog=catalog)
    location.list_data_files()  # a path that is not a table is an error, not a no-op
    if not location.exists(location.index_dir):
        return Vacuumed(note=f"no index at {location.user_root}: nothing to vacuum")
    with repairable(location.user_root):
        for version in manifest_versions(location)[-KEEP_VERSIONS:]:
            load_version(location, version)  # damage is an error, not "nothing to remove"
    prefix = location.root + "/"
    removed = [*collect(location), *clean_replaced(location)]
    return Vacuumed(p.removeprefix(prefix) for p in removed)


def delete_index(location: TableLocation) -> None:
    """Delete the whole index, but not ``cluster/``: an interrupted in-place cluster
    keeps the only copy of rows, and the plan readers need, there."""
    entries = location.fs.get_file_info(pafs.FileSelector(location.index_dir, allow_not_found=True))
    for entry in entries:
        if entry.base_name == CLUSTER_DIR and entry.type == pafs.FileType.Directory:
            continue
        if entry.type == pafs.FileType.Directory:
            location.fs.delete_dir(entry.path)
        else:
            location.fs.delete_file(entry.path)
    if not any(e.base_name == CLUSTER_DIR for e in entries):
        with suppress(FileNotFoundError):
            location.fs.delete_dir(location.index_dir)


def delete_segments(location: TableLocation, relative: Iterable[str]) -> None:
    _delete(location, [f"{location.index_dir}/{r}" for r in relative])


def delete_paths(location: TableLocation, paths: Iterable[str]) -> None:
    """Delete these files (paths inside ``location.fs``); missing ones are fine."""
    _delete(location, paths)


def running_builds(location: TableLocation) -> set[str]:
    """Builds (and drops) in flight on this table now; dead ones' markers are removed."""
    return _live_builds(location)


def _live_builds(location: TableLocation) -> set[str]:
    host, now = socket.gethostname(), _now_ms()
    live, dead = set(), []
    selector = pafs.FileSelector(_marker_dir(location), allow_not_found=True)
    for entry in location.fs.get_file_info(selector):
        build = entry.base_name.removesuffix(".json")
        try:
            with location.fs.open_input_stream(entry.path) as stream:
                body = json.loads(stream.read())
            alive = now - int(body["started_ms"]) < STALE_AFTER_MS and (
                body["host"] != host or pid_alive(int(body["pid"]))
            )
        except (OSError, ValueError, KeyError, TypeError):
            alive = now - entry.mtime_ns // 10**6 < STALE_AFTER_MS  # half-written marker
        if alive:
            live.add(build)
        else:
            dead.append(entry.path)
    _delete(location, dead)
    return live


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs (a killed child not yet
    reaped still answers ``kill(pid, 0)``: a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _delete(location: TableLocation, paths: Iterable[str]) -> None:
    for path in paths:
        with suppress(FileNotFoundError):
            location.fs.delete_file(path)


def _now_ms() -> int:
    return int(time.time() * 1000)
