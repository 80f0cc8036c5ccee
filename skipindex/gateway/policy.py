"""The gateway's policy: one TOML file naming the upstream server and the tables.

    version = 1
    [gateway]
    upstream = "sc://spark-host:15002"    # the real Spark Connect server
    listen = "127.0.0.1:15003"            # loopback unless told otherwise
    query_log = "queries.db"              # optional: log what was pruned
    min_table_mb = 256                    # queries naming no larger indexed table: as sent

    [tables]                              # catalog table name -> its Parquet folder
    store_sales = "/lake/store_sales"

Validated by ``schemas/gateway_policy.schema.json``; every error names the file
and the key. Relative paths are relative to the file's folder. Any read path
holding ``_skipindex/`` is pruned as well: the tables are only the names.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skipindex.errors import InvalidSpecError
from skipindex.store.schemas import read_toml, validator

__all__ = [
    "DEFAULT_LISTEN",
    "DEFAULT_MIN_TABLE_MB",
    "GatewayPolicy",
    "load_gateway_policy",
    "gateway_policy_from",
]

POLICY_VERSION = 1
DEFAULT_LISTEN = "127.0.0.1:15003"
# A query naming no indexed table of this many MB goes as sent: the gateway's
# planning (a few round trips to the server, 0.1-0.5 s) would cost more than the
# files it could skip save (bench/GATEWAY-sf1.md).
DEFAULT_MIN_TABLE_MB = 256.0


@dataclass(frozen=True)
class GatewayPolicy:
    upstream: str = ""
    listen: str = DEFAULT_LISTEN
    tables: Mapping[str, str] = field(default_factory=dict)  # lower-cased name -> folder
    query_log: str | None = None
    min_table_mb: float = DEFAULT_MIN_TABLE_MB


def load_gateway_policy(path: str | os.PathLike[str]) -> GatewayPolicy:
    document, source = read_toml(path, "gateway policy file")
    return gateway_policy_from(document, source, os.path.dirname(source))


def gateway_policy_from(
    document: Mapping[str, Any], source: str = "<dict>", base: str = ""
) -> GatewayPolicy:
    base = base or os.getcwd()
    version = document.get("version", POLICY_VERSION)
    if isinstance(version, int) and version > POLICY_VERSION:
        raise InvalidSpecError(
            f"{source}: key 'version': {version} is a gateway policy format newer than "
            f"this skipindex reads ({POLICY_VERSION}); upgrade skipindex"
        )
    errors = sorted(
        validator("gateway_policy").iter_errors(document), key=lambda e: list(e.absolute_path)
    )
    if errors:
        where = ".".join(str(step) for step in errors[0].absolute_path)
        raise InvalidSpecError(f"{source}: {where + ': ' if where else ''}{errors[0].message}")
    settings = document.get("gateway", {})
    tables: dict[str, str] = {}
    for name, path in document.get("tables", {}).items():
        if name.lower() in tables:
            raise InvalidSpecError(f"{source}: tables: {name!r} is named twice (names ignore case)")
        tables[name.lower()] = _local(path, base)
    log = settings.get("query_log")
    return GatewayPolicy(
        upstream=settings.get("upstream", ""),
        listen=settings.get("listen", DEFAULT_LISTEN),
        tables=tables,
        query_log=_local(log, base) if log else None,
        min_table_mb=float(settings.get("min_table_mb", DEFAULT_MIN_TABLE_MB)),
    )


def _local(path: str, base: str) -> str:
    if "://" in path:
        return path
    return posixpath.normpath(posixpath.join(base, os.path.expanduser(path)))
