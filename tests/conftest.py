"""Shared fixtures. Unit tests need no JVM; Spark tests take the ``spark`` fixture
(one session-scoped local[2] session for the whole run) and the ``spark`` marker."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from skipindex._spark import local_session

    session = local_session(cores=2)
    yield session
    session.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Anything that takes the spark fixture is a Spark test, marked or not.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture
def used_row_groups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each read() handed its row-group data source (test tables
    are small: any row group skipped makes the row-group read worth it here)."""
    import skipindex._row_group_source as source
    import skipindex.row_group_read as planning

    monkeypatch.setattr(planning, "MIN_BYTES_SAVED", 1)
    monkeypatch.setattr(planning, "WHERE_BYTES_FACTOR", 1e9)

    calls: list[int] = []
    load = source.load

    def counting(spark: Any, schema: Any, splits: Any, view: Any) -> Any:
        calls.append(len(splits))
        return load(spark, schema, splits, view)

    monkeypatch.setattr(source, "load", counting)
    return calls
