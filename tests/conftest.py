"""Shared fixtures. Unit tests need no JVM; Spark tests take the ``spark`` fixture
(one session-scoped local[2] session for the whole run) and the ``spark`` marker."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", parent=settings.get_profile("default"), print_blob=True)
settings.register_profile("soak", parent=settings.get_profile("ci"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Every JVM the tests start (each worker's session, the Connect server, the
# maintenance service's restarts, child builds) lives for seconds to minutes on
# small data, with two of them sharing two cores: C2's compiles and G1's threads
# cost more CPU than they win back. With the client compiler only and the serial
# collector, TPC-DS's 99 queries took 225 s instead of 269 s on two workers (CPU
# 423 s instead of 523 s). Speed only: no test's answer depends on it.
_TEST_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
_given = os.environ.get("JAVA_TOOL_OPTIONS", "")
if "TieredStopAtLevel" not in _given:  # a caller's own choice stands
    os.environ["JAVA_TOOL_OPTIONS"] = f"{_given} {_TEST_JVM}".strip()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from skipindex.spark.session import local_session

    session = local_session(cores=2)
    yield session
    session.stop()


# A Spark Connect server (pyspark's own plugin on a local[2] session) in a process of
# its own, with token authentication; its sessions start in New York's zone.
_CONNECT_SERVER = """
import sys, time
from pyspark.sql import SparkSession
SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false") \\
    .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin") \\
    .config("spark.connect.grpc.binding.port", sys.argv[1]) \\
    .config("spark.driver.memory", "1g") \\
    .config("spark.sql.session.timeZone", "America/New_York").getOrCreate()
print("ready", flush=True)
while True:
    time.sleep(3600)
"""


@pytest.fixture(scope="session")
def connect_server() -> Iterator[tuple[int, str]]:
    """(port, token) of a Spark Connect server, shared by the tests of a worker."""
    import subprocess
    import uuid

    from tests._support import free_port

    port, token = free_port(), uuid.uuid4().hex
    # Not the classic session's gateway (PYSPARK_GATEWAY_*): a JVM of its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    env.update(PYSPARK_PYTHON=sys.executable, SPARK_CONNECT_AUTHENTICATE_TOKEN=token)
    server = subprocess.Popen(
        [sys.executable, "-c", _CONNECT_SERVER, str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "ready", "the Connect server did not start"
        yield port, token
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(autouse=True)
def _key_queries_on_small_tables(request: pytest.FixtureRequest) -> Iterator[None]:
    """Test tables are kilobytes: si.sql runs its Spark key queries on them as on
    tables past the policy's ``key_query_bytes`` (a test of that bound sets it)."""
    if "spark" not in request.fixturenames:
        yield
        return
    import importlib
    from dataclasses import replace

    policy = importlib.import_module("skipindex.reading.policy")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(policy, "DEFAULT", replace(policy.DEFAULT, key_query_bytes=0))
        yield


# What each folder of tests needs beyond Python (pytest -m unit: none of it).
_FOLDER_MARKS = {"unit": "unit", "spark": "spark", "objectstore": "server", "lifecycle": "process"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.relative_to(Path(__file__).parent).parts[:1]
        mark = _FOLDER_MARKS.get(folder[0]) if folder else None
        if mark is not None:
            item.add_marker(getattr(pytest.mark, mark))
        # Anything that takes the spark fixture is a Spark test, wherever it is.
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
    # Modules with long tests first (each kept whole, for its module fixtures):
    # workers take what is left as they free up, so a run ends on short tests, not
    # on one worker finishing a minute-long TPC-DS group alone.
    long_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in long_modules)
    unit = [item for item in items if item.get_closest_marker("unit")]
    for item in unit:
        if any(item.get_closest_marker(m) for m in ("spark", "server", "process")):
            raise pytest.UsageError(f"{item.nodeid}: a unit test needs no JVM, server or process")


@pytest.fixture
def used_row_groups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each read() handed its row-group data source (test tables
    are small: any row group skipped makes the row-group read worth it here)."""
    from dataclasses import replace

    from skipindex.reading import policy, source

    eager = replace(policy.DEFAULT, min_bytes_saved=1, where_bytes_factor=1e9)
    monkeypatch.setattr(policy, "DEFAULT", eager)

    calls: list[int] = []
    load = source.load

    def counting(spark: Any, schema: Any, splits: Any, view: Any) -> Any:
        calls.append(len(splits))
        return load(spark, schema, splits, view)

    monkeypatch.setattr(source, "load", counting)
    return calls
