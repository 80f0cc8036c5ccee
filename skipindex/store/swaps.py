"""What a listing taken during an in-place cluster may show, and the files
such a cluster leaves behind. No Spark here: every prune settles its listing.

An in-place commit moves each group's new files in, then its old files out to
``_skipindex/cluster/<plan_id>/replaced/``. A listing taken meanwhile can show
a group old and new at once (never neither, because the old files leave only
after all new ones arrived). :func:`settled_listing` turns any listing into a
consistent one: where all of a group's new files are listed its old ones are
hidden, else its new ones are, and a listing that shows a group half gone (the
file system's listing was not one snapshot) is taken again.
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
    "new_file_name",
    "plan_of_file",
    "replaced_dir",
    "settled_listing",
    "staging_dir",
]

_NEW_FILE_PREFIX = "si-cluster-"
_NEW_FILE = re.compile(r"^si-cluster-(\d+-[0-9a-f]{8})-\d+\.parquet$")
RELIST_ATTEMPTS = 100
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
        if not plan_ids:
            return listing, []
        names = set(listing.paths.to_pylist())
        hidden: set[str] = set()
        settled = True
        for plan_id in sorted(plan_ids):
            plan = load_plan(location, plan_id)
            if plan is None or plan.destination is not None:
                continue
            for group in plan.groups:
                old, new = set(group.files), set(group.written)
                if not old & names:
                    continue
                if new <= names:
                    hidden |= old & names
                elif old <= names:
                    hidden |= new & names
                else:
                    settled = False
        if settled:
            return listing.without(hidden), sorted(hidden)
        time.sleep(RELIST_PAUSE_S)
        listing = relist()
    raise ConflictError(
        f"{location.user_root}: the listing kept changing under an in-place cluster commit; "
        "try again"
    )


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]
