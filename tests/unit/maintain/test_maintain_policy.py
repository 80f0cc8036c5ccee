"""The policy file: defaults, paths relative to the file, and errors that name
the file, the table and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

import skipindex as si
from skipindex.errors import InvalidSpecError
from skipindex.maintain.policy import load_policy, policy_from


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    return path


def test_a_policy_with_defaults_and_relative_paths(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
[service]
state = "state/m.db"
query_log = "state/q.db"
spark_master = "spark://h:7077"
spark_conf = {"spark.executor.memory" = "1g", "spark.x" = true}

[defaults]
target_file_mb = 64
binpack_min_small_files = 4

[[table]]
path = "lake/orders"
indexes = [{kind = "minmax", column = "id"}, {kind = "bloom", column = "key", fpp = 0.05}]
cluster_by = ["a", "b"]
curve = "zorder"

[[table]]
path = "/abs/t/"
target_file_mb = 0.5
""",
    )
    policy = load_policy(path)
    assert policy.service.state == f"{tmp_path}/state/m.db"
    assert policy.service.query_log == f"{tmp_path}/state/q.db"
    assert dict(policy.service.spark_conf) == {"spark.executor.memory": "1g", "spark.x": "true"}
    orders, other = policy.tables
    assert orders.name == f"{tmp_path}/lake/orders"
    assert orders.indexes == (si.MinMax("id"), si.Bloom("key", fpp=0.05))
    assert (orders.cluster_by, orders.curve) == (("a", "b"), "zorder")
    assert orders.target_file_bytes == 64 * 2**20
    assert orders.binpack_min_small_files == 4
    assert other.name == "/abs/t"
    assert other.indexes is None  # "suggest", the default
    assert other.target_file_bytes == 2**19
    assert policy.table("/abs/t/") is other
    assert policy.table(f"{tmp_path}/lake/orders") is orders
    assert policy.table("lake/orders") is orders  # relative to the policy file
    with pytest.raises(InvalidSpecError, match="no table 'nope' in the policy"):
        policy.table("nope")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[table]]\npath = "t"\ntarget_file_mbs = 3',
            r"policy.toml: table\[0\] \(t\): .*'target_file_mbs'.*known keys: .*target_file_mb",
        ),
        (
            '[[table]]\npath = "a"\n[[table]]\npath = "t"\ntarget_file_mb = "big"',
            r"policy.toml: table\[1\] \(t\): key 'target_file_mb': 'big' is not of type 'number'",
        ),
        (
            '[[table]]\npath = "t"\ncurve = "peano"',
            r"table\[0\] \(t\): key 'curve': 'peano' is not one of",
        ),
        (
            '[[table]]\npath = "t"\nindexes = "all"',
            r"table\[0\] \(t\): key 'indexes': must be 'suggest' or a list",
        ),
        (
            '[[table]]\npath = "t"\nindexes = [{kind = "minmux", column = "x"}]',
            r"table\[0\] \(.*/t\): key 'indexes'\[0\]: unknown kind 'minmux'; kinds: minmax",
        ),
        (
            '[[table]]\npath = "t"\nindexes = [{kind = "minmax"}]',
            r"key 'indexes'\[0\]: give exactly one of column",
        ),
        (
            '[[table]]\npath = "t"\nindexes = [{kind = "bloom", column = "x", fpp = 7}]',
            r"table\[0\] \(.*/t\): key 'indexes'\[0\]: .*fpp",
        ),
        (
            '[[table]]\nname = "db.t"',
            r"table\[0\] \(db.t\): key 'catalog' is missing",
        ),
        (
            '[[table]]\nname = "db.t"\ncatalog = "c"\ncluster_by = ["a"]',
            r"table\[0\] \(db.t\): key 'cluster_by': an Iceberg table",
        ),
        ('[[table]]\npath = "t"\n[[table]]\npath = "./t"', r"table\[1\] \(.*/t\) is table\[0\]"),
        ("[service]\nstate = 'x.db'", r"policy.toml: 'table' is missing"),
        ('[service]\npoll_second = 1\n[[table]]\npath = "t"', r"service: .*'poll_second'"),
        ('[[table]]\npath = "t"\nname = "db.t"', r"table\[0\]: give either path"),
        ("[[table]\npath = 't'", r"policy.toml: not valid TOML"),
    ],
)
def test_errors_name_the_file_the_table_and_the_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(InvalidSpecError, match=expected):
        load_policy(_write(tmp_path, text))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError, match=r"policy file not found: .*nope\.toml"):
        load_policy(tmp_path / "nope.toml")


def test_a_policy_from_a_mapping(tmp_path: Path) -> None:
    policy = policy_from({"table": [{"path": "t"}]}, base=str(tmp_path))
    assert policy.tables[0].name == f"{tmp_path}/t"
    assert policy.service.spark_master == "local[2]"


def test_the_format_version(tmp_path: Path) -> None:
    assert load_policy(_write(tmp_path, 'version = 1\n[[table]]\npath = "t"')).tables
    with pytest.raises(InvalidSpecError, match=r"policy.toml: key 'version': 2 is a policy format"):
        load_policy(_write(tmp_path, 'version = 2\n[[table]]\npath = "t"\nnew_key = 1'))
    with pytest.raises(InvalidSpecError, match=r"policy.toml: version: 'one' is not of type"):
        load_policy(_write(tmp_path, 'version = "one"\n[[table]]\npath = "t"'))
