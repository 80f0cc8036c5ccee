"""Cluster plans without Spark: grouping, bin-packing, saving, and settled listings."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.cli import main
from skipindex.errors import ConflictError, IndexCorruptError
from skipindex.store import swaps
from skipindex.store.cluster_plan import (
    ClusterPlan,
    Group,
    bin_pack,
    cluster_groups,
    load_plans,
    new_plan_id,
    plans_dir,
    save_plan,
)
from skipindex.store.location import DataFile, Listing, locate

MB = 1 << 20


def _files(sizes: dict[str, int]) -> list[DataFile]:
    return [DataFile(path, size, 0) for path, size in sizes.items()]


def test_bin_packing_fills_bins_per_partition_and_leaves_large_files():
    files = _files(
        {
            **{f"p=1/s{i}.parquet": 10 * MB for i in range(25)},
            "p=1/big.parquet": 200 * MB,
            "p=2/a.parquet": 30 * MB,
            "p=2/b.parquet": 200 * MB,
        }
    )
    groups = bin_pack(files, 128 * MB)
    assert {g.partition for g in groups} == {"p=1"}  # p=2 has one small file: nothing to pack
    assert sorted(len(g.files) for g in groups) == [12, 12]  # 25th file alone: left as it is
    assert all(g.bytes <= 128 * MB and g.outputs == 1 for g in groups)
    assert not any("big" in f for g in groups for f in g.files)


def test_cluster_groups_size_outputs_by_the_target():
    files = _files({"x=a/1.parquet": 300 * MB, "x=a/2.parquet": 100 * MB, "x=b/3.parquet": MB})
    assert [(g.partition, g.outputs) for g in cluster_groups(files, 128 * MB)] == [
        ("x=a", 3),
        ("x=b", 1),
    ]
    aligned = cluster_groups(files, 128 * MB, power_of_two=True)
    assert [g.outputs for g in aligned] == [4, 1]  # 3.1 files' worth: 2^2
    assert [g.outputs for g in cluster_groups(files, 30 * MB, power_of_two=True)] == [16, 1]


def _plan(tmp_path: Path, groups: tuple[Group, ...], state: str = "committing") -> ClusterPlan:
    location = locate(tmp_path)
    plan = ClusterPlan(
        plan_id=new_plan_id(),
        state=state,
        source=str(tmp_path),
        destination=None,
        by=("a",),
        curve="hilbert",
        target_file_bytes=MB,
        groups=groups,
        untouched=(),
        created_ms=1,
    )
    return save_plan(location, plan)


def _write(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"a": [1]}), root / path)


def test_plans_round_trip_and_damage_is_named(tmp_path):
    plan = _plan(tmp_path, (Group("", ("a.parquet",), 5, 1, ("si-x.parquet",)),))
    assert load_plans(locate(tmp_path)) == [plan]
    path = Path(plans_dir(locate(tmp_path))) / f"{plan.plan_id}.json"
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "state": "half-done"}))
    with pytest.raises(IndexCorruptError, match=plan.plan_id):
        load_plans(locate(tmp_path))


def test_settled_listing_shows_each_group_old_or_new_never_both(tmp_path, monkeypatch):
    plan_id = new_plan_id()
    new = [f"p=1/{swaps.new_file_name(plan_id, n)}" for n in range(2)]
    group = Group("p=1", ("p=1/old1.parquet", "p=1/old2.parquet"), 10, 2, tuple(new))
    plan = replace(_plan(tmp_path, (group,)), plan_id=plan_id)
    save_plan(locate(tmp_path), plan)
    location = locate(tmp_path)

    def settled(*present: str) -> tuple[list[str], list[str]]:
        listing = Listing.of(_files(dict.fromkeys(present, 1)))
        files, hidden = swaps.settled_listing(location, listing, lambda: listing)
        return [f.path for f in files.files()], hidden

    old = list(group.files)
    assert settled(*old, "q.parquet") == ([*old, "q.parquet"], [])  # before the commit
    assert settled(*old, new[0]) == (old, [new[0]])  # one new file in: old view
    assert settled(*old, *new) == (new, old)  # all in: new view
    assert settled(old[1], *new) == (new, [old[1]])  # old leaving: new view
    assert settled(*new) == (new, [])  # done
    monkeypatch.setattr(swaps, "RELIST_ATTEMPTS", 3)
    monkeypatch.setattr(swaps, "RELIST_PAUSE_S", 0)
    with pytest.raises(ConflictError, match="kept changing"):
        settled(old[0], new[0])  # half of each: no consistent reading exists


def test_a_listing_that_missed_a_moving_groups_old_and_new_files_is_taken_again(tmp_path):
    """A listing is no snapshot: one taken while a group's files moved can miss the
    new file (moved in behind it) and the old ones (moved out ahead of it). Such a
    listing names no file of the plan; the plan's folder says it is moving."""
    plan_id = new_plan_id()
    new = swaps.new_file_name(plan_id, 0)
    group = Group("", ("old1.parquet", "old2.parquet"), 10, 1, (new,))
    plan = replace(_plan(tmp_path, (group,), state="completed"), plan_id=plan_id)
    location = locate(tmp_path)
    save_plan(location, plan)
    (Path(plans_dir(location)) / plan_id / "replaced").mkdir(parents=True)
    _write(tmp_path, new, "other.parquet")
    missed = Listing.of(_files({"other.parquet": 1}))
    whole = Listing.of(_files({"other.parquet": 1, new: 1}))
    relists: list[int] = []

    def relist() -> Listing:
        relists.append(1)
        return whole

    files, hidden = swaps.settled_listing(location, missed, relist)
    assert sorted(f.path for f in files.files()) == sorted(["other.parquet", new])
    assert relists
    assert hidden == []
    (tmp_path / new).unlink()  # a later plan packed it away: both gone, nothing missed
    files, _ = swaps.settled_listing(location, missed, relist)
    assert [f.path for f in files.files()] == ["other.parquet"]
    # A plan still staging (its folder there, nothing moved) leaves the old files be.
    staging = Group("", ("other.parquet",), 1, 1, ())
    inflight = replace(plan, plan_id=new_plan_id(), state="inflight", groups=(staging,))
    save_plan(location, inflight)
    (Path(plans_dir(location)) / inflight.plan_id / "staged").mkdir(parents=True)
    files, hidden = swaps.settled_listing(location, missed, relist)
    assert ([f.path for f in files.files()], hidden) == (["other.parquet"], [])


def test_cluster_refuses_bad_settings_before_spark(tmp_path, capsys):
    _write(tmp_path, "t/p=1/a.parquet")
    table = tmp_path / "t"
    with pytest.raises(si.InvalidSpecError, match="curve"):
        si.cluster(table, by=["a"], curve="peano")  # type: ignore[arg-type]
    with pytest.raises(si.UnknownColumnError, match="'nope'"):
        si.cluster(table, by=["nope"], dry_run=True)
    _write(tmp_path, "d/x.parquet")
    with pytest.raises(si.InvalidSpecError, match="already holds 1 data files"):
        si.cluster(table, tmp_path / "d", by=["a"])
    assert main(["cluster", str(table), "--by", "a"]) == 2
    assert "--dst FOLDER, or --in-place" in capsys.readouterr().err
    assert main(["cluster", str(table), "--by", "A", "--dry-run", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["plan"]["by"] == ["a"]
    assert document["plan"]["groups"][0]["files"] == ["p=1/a.parquet"]


def test_dropping_or_repairing_the_index_keeps_cluster_plans_and_their_files(tmp_path):
    """An interrupted in-place cluster may hold the only copy of rows under
    _skipindex/cluster/: neither drop --all nor repair may delete it."""
    from skipindex.indexing.build import InProcessRunner, build_with

    _write(tmp_path, "t/a.parquet", "t/b.parquet")
    table = tmp_path / "t"
    plan = _plan(table, (Group("", ("a.parquet",), 5, 1, ("si-x.parquet",)),))
    moved_aside = table / "_skipindex" / "cluster" / plan.plan_id / "replaced" / "a.parquet"
    _write(table, moved_aside.relative_to(table).as_posix())

    build_with(str(table), [si.MinMax("a")], InProcessRunner())
    si.drop_index(table, all=True)
    assert si.describe(table).version is None
    assert moved_aside.exists()
    assert load_plans(locate(table)) == [plan]

    build_with(str(table), [si.MinMax("a")], InProcessRunner())
    for manifest in (table / "_skipindex").glob("v*.json"):
        manifest.write_text("{ damaged")
    report = si.repair(table, rebuild=False)
    assert report.index_removed
    assert moved_aside.exists()
    assert load_plans(locate(table)) == [plan]
