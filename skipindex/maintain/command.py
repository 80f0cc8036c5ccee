"""``skipindex maintain run|once|status|notify``: the steps behind the command
(the parser is :mod:`skipindex.cli`)."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
from collections.abc import Sequence

from skipindex.errors import InvalidSpecError
from skipindex.maintain.policy import Policy, load_policy
from skipindex.maintain.scheduler import log
from skipindex.maintain.service import maintain, run_service, table_changed
from skipindex.maintain.status import status

__all__ = ["POLICY_ENV", "run_step"]

POLICY_ENV = "SKIPINDEX_MAINTAIN_POLICY"


def run_step(
    step: str,
    policy_path: str | None,
    *,
    tables: Sequence[str] = (),
    master: str | None = None,
    as_json: bool = False,
    table: str | None = None,
) -> int:
    policy = _policy(policy_path, master)
    if step == "status":
        found = status(policy)
        print(found.to_json() if as_json else str(found))
        return 0
    if step == "notify":
        assert table is not None
        job = table_changed(table, policy=policy)
        name = policy.table(table).name
        print(
            json.dumps({"table": name, "job": job})
            if as_json
            else f"{name}: refresh queued (job {job})"
        )
        return 0
    _log_to(policy, quiet=as_json)
    if step == "once":
        report = maintain(list(tables) or None, policy=policy)
        print(json.dumps(report.to_dict(), indent=2) if as_json else str(report))
        return 1 if any(j["result"] == "failed" for j in report.jobs) else 0
    run_service(policy, tables=list(tables) or None)
    return 0


def _policy(path: str | None, master: str | None) -> Policy:
    path = path or os.environ.get(POLICY_ENV)
    if not path:
        raise InvalidSpecError(f"name the policy file: --policy FILE (or {POLICY_ENV}=FILE)")
    policy = load_policy(path)
    if master:
        service = dataclasses.replace(policy.service, spark_master=master)
        policy = dataclasses.replace(policy, service=service)
    return policy


def _log_to(policy: Policy, quiet: bool) -> None:
    """Every event on stderr (and in the policy's log file): one line each."""
    formatter = logging.Formatter("%(asctime)s %(message)s")
    handlers: list[logging.Handler] = []
    if not quiet:
        handlers.append(logging.StreamHandler(sys.stderr))
    if policy.service.log_file:
        os.makedirs(os.path.dirname(policy.service.log_file) or ".", exist_ok=True)
        handlers.append(logging.FileHandler(policy.service.log_file))
    for handler in [h for h in log.handlers if getattr(h, "skipindex_maintain", False)]:
        log.removeHandler(handler)  # a second call (in one process) replaces the first's
        handler.close()
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.skipindex_maintain = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
