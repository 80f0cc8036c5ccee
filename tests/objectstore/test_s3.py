"""build, prune, describe, drop, vacuum and repair on S3 (a moto server on loopback),
through s3:// and s3a:// URIs, configured by environment variables or by options.

Spark here cannot read s3a:// (no hadoop-aws jar offline), so ``read()`` is not
exercised on S3; everything skipindex itself does through pyarrow is.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.errors import ConflictError
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.store import manifest as manifests
from skipindex.store.location import locate

FILES = 6


def _write_table(fs: pafs.S3FileSystem, root: str) -> dict[str, pa.Table]:
    tables = {}
    for k in range(FILES):
        ids = pa.array(range(k * 100, k * 100 + 100), pa.int64())
        table = pa.table({"id": ids, "mode": pa.array(["AIR", "SHIP"][k % 2] for _ in range(100))})
        name = f"part-{k:03d}.parquet"
        pq.write_table(table, f"{root}/{name}", filesystem=fs)
        tables[name] = table
    return tables


def _matching(tables: dict[str, pa.Table], key: int) -> set[str]:
    return {n for n, t in tables.items() if pc.any(pc.equal(t.column("id"), key)).as_py()}


def _names(files: list[str], prefix: str) -> set[str]:
    assert all(f.startswith(prefix) for f in files), files
    return {f.rsplit("/", 1)[1] for f in files}


def test_the_lifecycle_on_s3_with_environment_credentials(s3_env, bucket, s3fs):
    tables = _write_table(s3fs, f"{bucket}/lineitem")
    for scheme in ("s3", "s3a"):
        uri = f"{scheme}://{bucket}/lineitem"
        report = build_with(uri, [si.MinMax("id"), si.EqualityBitmap("mode")], InProcessRunner())
        assert report.files_indexed == (FILES if scheme == "s3" else 0)
        for key in (5, 250, 599, 10_000):
            result = si.prune(uri, f"id = {key}", time_zone="UTC")
            assert _names(result.files, f"{scheme}://{bucket}/lineitem/") == _matching(tables, key)
        assert si.prune(uri, "id < 150 AND mode = 'SHIP'", time_zone="UTC").kept == 1
    described = si.describe(f"s3://{bucket}/lineitem")
    assert (described.files_indexed, described.version) == (FILES, 2)  # refresh commits v2
    assert si.drop_index(f"s3a://{bucket}/lineitem", kinds=["equality_bitmap"])[0].column == "mode"
    assert si.prune(f"s3://{bucket}/lineitem", "mode = 'SHIP'").kept == FILES
    si.vacuum(f"s3://{bucket}/lineitem")
    manifests_left = [
        e.base_name for e in s3fs.get_file_info(pafs.FileSelector(f"{bucket}/lineitem/_skipindex"))
    ]
    assert {"v2.json", "v3.json"} <= set(manifests_left)
    si.drop_index(f"s3://{bucket}/lineitem", all=True)
    leftover = s3fs.get_file_info(
        pafs.FileSelector(f"{bucket}/lineitem/_skipindex", allow_not_found=True, recursive=True)
    )
    assert leftover == []
    data = s3fs.get_file_info(pafs.FileSelector(f"{bucket}/lineitem"))
    assert len(data) == FILES  # data untouched


def test_storage_options_instead_of_the_environment(s3_endpoint, bucket, s3fs, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    tables = _write_table(s3fs, f"{bucket}/t")
    options = {
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ACCESS_KEY_ID": "skipindex-test",
        "AWS_SECRET_ACCESS_KEY": "skipindex-secret",
        "AWS_REGION": "us-east-1",
    }
    uri = f"s3a://{bucket}/t"
    build_with(uri, [si.Bloom("id")], InProcessRunner(), storage_options=options)
    result = si.prune(uri, "id IN (7, 307)", time_zone="UTC", storage_options=options)
    assert _names(result.files, uri) == _matching(tables, 7) | _matching(tables, 307)
    with pytest.raises(si.InvalidSpecError, match="unknown storage option 'endpoint'"):
        si.prune(uri, "id = 1", storage_options={"endpoint": s3_endpoint})


def test_spark_workers_open_the_store_as_the_driver_did(spark, s3_env, bucket, s3fs):
    tables = _write_table(s3fs, f"{bucket}/t")
    report = si.build_index(f"s3a://{bucket}/t", [si.MinMax("id"), si.Bloom("id")], spark=spark)
    assert report.files_indexed == FILES
    assert _names(si.prune(f"s3a://{bucket}/t", "id = 421").files, "s3a://") == _matching(
        tables, 421
    )


def test_concurrent_commits_of_one_version_have_exactly_one_winner(s3_env, bucket, s3fs):
    _write_table(s3fs, f"{bucket}/t")
    build_with(f"s3://{bucket}/t", [si.MinMax("id")], InProcessRunner())
    location = locate(f"s3://{bucket}/t")
    base = manifests.load_latest(location)
    assert base is not None
    outcomes: list[Any] = [None] * 6
    barrier = threading.Barrier(len(outcomes))

    def attempt(i: int) -> None:
        candidate = manifests.Manifest(**{**base.__dict__, "version": 2, "build": {"writer": i}})
        barrier.wait()
        try:
            outcomes[i] = manifests.commit(location, candidate, f"writer-{i}")
        except ConflictError as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(len(outcomes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [o for o in outcomes if isinstance(o, manifests.Manifest)]
    assert len(winners) <= 1, "two writers both committed version 2"
    assert all(isinstance(o, ConflictError | manifests.Manifest) for o in outcomes)
    if winners:
        committed = manifests.load_version(location, 2)
        assert committed.build == winners[0].build


def test_concurrent_builds_lose_no_version(s3_env, bucket, s3fs):
    _write_table(s3fs, f"{bucket}/t")
    uri = f"s3://{bucket}/t"
    build_with(uri, [si.MinMax("id")], InProcessRunner())
    errors: list[BaseException] = []

    def build(spec: Any) -> None:
        try:
            build_with(uri, [spec], InProcessRunner())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=build, args=(spec,))
        for spec in (si.Bloom("id"), si.EqualityBitmap("mode"), si.BitSlicedBitmap("id"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    kinds = {d["kind"] for d in si.describe(uri).indexes}
    assert kinds == {"minmax", "bloom", "equality_bitmap", "bitsliced_bitmap"}  # none lost


def test_a_crashed_writers_claim_does_not_block_commits(s3_env, bucket, s3fs, monkeypatch):
    _write_table(s3fs, f"{bucket}/t")
    uri = f"s3://{bucket}/t"
    build_with(uri, [si.MinMax("id")], InProcessRunner())
    with s3fs.open_output_stream(f"{bucket}/t/_skipindex/_claims/v2-deadwriter") as out:
        out.write(b"")
    monkeypatch.setattr(manifests, "CLAIM_TTL_MS", 100_000)
    with pytest.raises(ConflictError):
        build_with(uri, [si.Bloom("id")], InProcessRunner())  # a live claim: retries give up
    monkeypatch.setattr(manifests, "CLAIM_TTL_MS", 1000)
    time.sleep(2.1)  # the dead claim is now older than the TTL: a crashed writer's
    assert build_with(uri, [si.Bloom("id")], InProcessRunner()).version == 2


def test_repair_on_s3(s3_env, bucket, s3fs):
    tables = _write_table(s3fs, f"{bucket}/t")
    uri = f"s3a://{bucket}/t"
    build_with(uri, [si.MinMax("id")], InProcessRunner())
    build_with(uri, [si.Bloom("id")], InProcessRunner())
    with s3fs.open_output_stream(f"{bucket}/t/_skipindex/v2.json") as out:
        out.write(b"{not json")
    with pytest.raises(si.IndexCorruptError, match=f"skipindex repair {uri}"):
        si.prune(uri, "id = 1")
    report = si.repair(uri, rebuild=False)
    assert report.damaged == ["_skipindex/v2.json"]
    assert report.version == 3
    assert _names(si.prune(uri, "id = 123").files, uri) == _matching(tables, 123)
