"""Putting a verified cluster in place, and finishing or undoing an interrupted
one. What readers make of a swap in progress is :mod:`skipindex.store.swaps`."""

from __future__ import annotations

from contextlib import suppress

from skipindex.errors import ConflictError
from skipindex.store.cluster_plan import (
    ClusterPlan,
    Move,
    plans_dir,
    save_plan,
)
from skipindex.store.location import TableLocation
from skipindex.store.swaps import new_file_name, replaced_dir, staging_dir

__all__ = ["finish", "moves_in_place", "moves_to", "new_file_name", "roll_back", "staging_dir"]


def finish(location: TableLocation, target: TableLocation, plan: ClusterPlan) -> ClusterPlan:
    """Make the plan's moves (``target`` holds them: the destination, or the table
    itself in place). Moves already made are skipped, so this also resumes."""
    for move in plan.moves:
        if target.exists(move.source):
            target.fs.create_dir(move.target.rsplit("/", 1)[0], recursive=True)
            target.fs.move(move.source, move.target)
        elif not target.exists(move.target):
            raise ConflictError(
                f"cluster plan {plan.plan_id}: {move.source} is gone and {move.target} "
                "was never written; the plan cannot be completed"
            )
    with suppress(FileNotFoundError):
        target.fs.delete_dir(staging_dir(target, plan.plan_id))
    return save_plan(location, plan.advance("completed"))


def roll_back(
    location: TableLocation, target: TableLocation, plan: ClusterPlan, why: str
) -> ClusterPlan:
    """Delete what the plan staged; the table was never touched before ``committing``."""
    with suppress(FileNotFoundError):
        target.fs.delete_dir(f"{plans_dir(target)}/{plan.plan_id}")
    return save_plan(location, plan.advance("rolled_back", message=why))


def moves_in_place(location: TableLocation, plan: ClusterPlan) -> tuple[Move, ...]:
    """New files in first, then old files out: never a moment with neither."""
    staged = staging_dir(location, plan.plan_id)
    arrive = [
        Move(f"{staged}/{path}", location.fs_path(path)) for g in plan.groups for path in g.written
    ]
    leave = [
        Move(location.fs_path(path), f"{replaced_dir(location, plan.plan_id)}/{path}")
        for path in plan.rewritten
    ]
    return (*arrive, *leave)


def moves_to(destination: TableLocation, plan: ClusterPlan, copied: list[str]) -> tuple[Move, ...]:
    staged = staging_dir(destination, plan.plan_id)
    written = [path for g in plan.groups for path in g.written]
    return tuple(
        Move(f"{staged}/{path}", destination.fs_path(path)) for path in [*written, *copied]
    )
