"""What a listing taken during an in-place cluster may show, and the files
such a cluster leaves behind. No Spark here: every prune settles its listing.

An in-place commit moves each group's new files in, then its old files out to
``_skipindex/cluster/<plan_id>/replaced/``. A listing taken meanwhile can show
a group old and new at once. Because a listing is no snapshot of the folder, it
can also show a group half gone, or neither old nor new (it passed a new file's
place before the file moved in, and the old ones left before it reached
theirs): a CI run lost rows so, 2026-11-27. :func:`settled_listing` turns any
listing into a consistent one: where all of a group's new files are listed its
old ones are hidden, else, where all its old ones are, its new ones; any other
listing of a plan that is moving files (or has a folder: it may have just
moved them) is taken again, unless the new files are gone from the disk too
(a later plan packed them away).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pyarrow.compute as pc
import pyarrow.fs as pafs

from skipindex.errors import ConflictError
from skipindex.store.cluster_plan import load_plan, load_plans, plans_dir
from skipindex.store.location import Listing, TableLocation

__all__ = [
    "clean_replaced",
    "moved_out",
    "new_file_name",
    "plan_of_file",
    "plans_in_flux",
    "replaced_dir",
    "settled_listing",
    "staging_dir",
]

_NEW_FILE_PREFIX = "si-cluster-"
_NEW_FILE = re.compile(r"^si-cluster-(\d+-[0-9a-f]{8})-\d+\.parquet$")
RELIST_ATTEMPTS = 100
# The states in which a plan's files may have moved: earlier ones only stage them
# under _skipindex, and a rolled-back plan never touched the table.
_MOVING = ("committing", "completed")
RELIST_PAUSE_S = 0.05


def new_file_name(plan_id: str, number: int) -> str:
    return f"si-cluster-{plan_id}-{number:05d}.parquet"


def plan_of_file(path: str) -> str | None:
    """The cluster plan that wrote the data file at ``path`` (by its name), if any."""
    found = _NEW_FILE.match(_base(path))
    return found.group(1) if found else None


def staging_dir(location: TableLocation, plan_id: str) -> str:
    """Where new files are written and checked: hidden from every reader."""
    return f"{plans_dir(location)}/{plan_id}/staged"


def replaced_dir(location: TableLocation, plan_id: str) -> str:
    return f"{plans_dir(location)}/{plan_id}/replaced"


def clean_replaced(location: TableLocation) -> list[str]:
    """Delete the old files completed in-place plans moved aside (their paths)."""
    removed: list[str] = []
    for plan in load_plans(location):
        folder = replaced_dir(location, plan.plan_id)
        if plan.state != "completed" or not location.exists(folder):
            continue
        entries = location.fs.get_file_info(pafs.FileSelector(folder, recursive=True))
        removed.extend(e.path for e in entries if e.type == pafs.FileType.File)
        location.fs.delete_dir(folder)
    return removed


def settled_listing(
    location: TableLocation, listing: Listing, relist: Callable[[], Listing]
) -> tuple[Listing, list[str]]:
    """The listing as it is before or after each in-place cluster swap it catches in
    the middle, and the files hidden to make it so."""
    for _ in range(RELIST_ATTEMPTS):
        # One vectorised scan: this runs on every prune.
        candidates = listing.paths.filter(pc.match_substring(listing.paths, _NEW_FILE_PREFIX))
        plan_ids = {m.group(1) for p in candidates.to_pylist() if (m := _NEW_FILE.match(_base(p)))}
        plan_ids |= plans_in_flux(location)
        if not plan_ids:
            return listing, []
        names = set(listing.paths.to_pylist())
        hidden: set[str] = set()
        settled = True
        for plan_id in sorted(plan_ids):
            plan = load_plan(location, plan_id)
            if plan is None or plan.destination is not None or plan.state not in _MOVING:
                continue  # not in place, or nothing moved (yet, or ever): the old files are it
            for group in plan.groups:
                old, new = set(group.files), set(group.written)
                if new <= names:
                    hidden |= old & names
                elif old <= names:
                    hidden |= new & names
                elif old & names or _any_there(location, new - names):
                    # Half of each, or new files the listing missed: a listing is no
                    # snapshot, and one taken while the files moved can miss a file
                    # moved in behind it and the old ones moved out ahead of it.
                    settled = False
                # else both are gone: a later plan packed the new files away
        if settled:
            return listing.without(hidden), sorted(hidden)
        time.sleep(RELIST_PAUSE_S)
        listing = relist()
    raise ConflictError(
        f"{location.user_root}: the listing kept changing under an in-place cluster commit; "
        "try again"
    )


def moved_out(location: TableLocation, paths: list[str]) -> list[str]:
    """Those of ``paths`` (full paths, as read() hands them to Spark) no longer in
    place, where the table has ever had an in-place cluster (none elsewhere: one
    stat of its plans folder).

    Spark checks that each path it is given exists, then lists it; a path gone in
    between it takes for a folder deleted "very recently" and drops without a
    word. A kept file an in-place cluster moved out in that instant would take
    its rows out of the answer. A moved file never comes back (every new file
    has a new name), so every path still in place after Spark listed them all
    was listed."""
    if not paths or not location.exists(plans_dir(location)):
        return []
    infos = location.fs.get_file_info([location.fs_path(location.relative(p)) for p in paths])
    return [p for p, i in zip(paths, infos, strict=True) if i.type == pafs.FileType.NotFound]


def plans_in_flux(location: TableLocation) -> set[str]:
    """In-place plans whose files may be moving or just moved: those with a folder
    (staged files, or old files moved aside until a vacuum cleans them). A listing
    that missed every new file of such a plan names no file of it."""
    selector = pafs.FileSelector(plans_dir(location), allow_not_found=True)
    try:
        entries = location.fs.get_file_info(selector)
    except OSError:
        return set()
    return {e.base_name for e in entries if e.type == pafs.FileType.Directory}


def _any_there(location: TableLocation, paths: set[str]) -> bool:
    if not paths:
        return False
    infos = location.fs.get_file_info([location.fs_path(p) for p in sorted(paths)])
    return any(i.type != pafs.FileType.NotFound for i in infos)


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]
