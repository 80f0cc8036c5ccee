"""The maintenance policy: one TOML file naming the tables and what to keep up.

Read with :mod:`tomllib`, validated by ``schemas/maintain_policy.schema.json``,
then checked for what a schema cannot say (a table named twice, an index kind
that does not exist, clustering an Iceberg table). Every error names the file,
the table and the key. Paths in the file (tables, the state database, the query
log, the log file) are relative to the file's folder.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skipindex.errors import InvalidSpecError
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec
from skipindex.store.schemas import read_toml, validator

__all__ = [
    "POLICY_VERSION",
    "Policy",
    "ServicePolicy",
    "TablePolicy",
    "load_policy",
    "policy_from",
]

MB = 1024 * 1024
POLICY_VERSION = 1  # the policy file's format: ``version = 1`` (optional) at its top
SETTINGS = {  # per-table settings and their defaults ([defaults] overrides these)
    "indexes": "suggest",
    "target_file_mb": 128.0,
    "binpack": True,
    "binpack_min_small_files": 10,
    "cluster_by": [],
    "curve": "hilbert",
    "recluster_decay": 1.5,
    "recluster_min_queries": 5,
    "recluster_unclustered_share": None,
    "recluster_min_minutes": 60.0,
}


@dataclass(frozen=True)
class ServicePolicy:
    """``[service]``: where the queue lives and how jobs run."""

    state: str  # the SQLite database of the queue, leases and history
    spark_master: str = "local[2]"
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    poll_seconds: float = 10.0  # how often each table is checked for new commits
    lease_seconds: float = 60.0  # a table's lease lapses this long after the last heartbeat
    max_attempts: int = 5
    retry_seconds: float = 30.0  # backoff after a failure, doubling per attempt
    retry_max_seconds: float = 3600.0
    query_log: str | None = None  # the query log whose predicates measure decay
    log_file: str | None = None
    history: int = 1000  # finished jobs kept in the database


@dataclass(frozen=True)
class TablePolicy:
    """One ``[[table]]``: the table and what the service keeps up on it."""

    name: str  # the table's key: its absolute path or URI, or its Iceberg identifier
    path: str  # what the verbs take: the path, or the identifier
    catalog: str | Mapping[str, str] | None = None
    indexes: tuple[IndexSpec, ...] | None = None  # None: chosen ("suggest"), then kept
    advise: bool = False  # indexes = "advise": chosen from the query log's workload
    target_file_bytes: int = 128 * MB
    binpack: bool = True
    binpack_min_small_files: int = 10
    cluster_by: tuple[str, ...] = ()
    curve: str = "hilbert"
    recluster_decay: float = 1.5
    recluster_min_queries: int = 5
    recluster_unclustered_share: float | None = None
    recluster_min_seconds: float = 3600.0

    @property
    def is_iceberg(self) -> bool:
        return self.catalog is not None or self.path.endswith(".metadata.json")


@dataclass(frozen=True)
class Policy:
    source: str  # the file it was read from ("<dict>" when given as a mapping)
    service: ServicePolicy
    tables: tuple[TablePolicy, ...]

    def table(self, name: str) -> TablePolicy:
        here = os.path.dirname(self.source) if self.source != "<dict>" else os.getcwd()
        keys = {name, table_key(name, os.getcwd()), table_key(name, here)}
        for table in self.tables:  # as written, or relative to here or to the policy file
            if table.name in keys or table.path in keys:
                return table
        known = ", ".join(t.name for t in self.tables)
        raise InvalidSpecError(f"{self.source}: no table {name!r} in the policy (tables: {known})")


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """The policy in the TOML file at ``path``."""
    document, source = read_toml(path, "policy file")
    return policy_from(document, source, os.path.dirname(source))


def policy_from(document: Mapping[str, Any], source: str = "<dict>", base: str = "") -> Policy:
    """A policy from its document (the TOML as a mapping); relative paths from ``base``."""
    base = base or os.getcwd()
    version = document.get("version", POLICY_VERSION)
    if isinstance(version, int) and version > POLICY_VERSION:
        raise InvalidSpecError(
            f"{source}: key 'version': {version} is a policy format newer than this "
            f"skipindex reads ({POLICY_VERSION}); upgrade skipindex"
        )
    _validate(document, source)
    defaults = {**SETTINGS, **document.get("defaults", {})}
    service = _service(document.get("service", {}), source, base)
    tables = tuple(
        _table(raw, defaults, source, base, n) for n, raw in enumerate(document["table"])
    )
    seen: dict[str, int] = {}
    for n, table in enumerate(tables):
        if table.name in seen:
            raise InvalidSpecError(
                f"{source}: table[{n}] ({table.name}) is table[{seen[table.name]}] again; "
                "name each table once"
            )
        seen[table.name] = n
    return Policy(source, service, tables)


def _service(raw: Mapping[str, Any], source: str, base: str) -> ServicePolicy:
    here = os.path.dirname(source) if source != "<dict>" else base
    state = _local(raw.get("state", "skipindex-maintain.db"), here)
    options = {k: v for k, v in raw.items() if k not in ("state", "spark_conf")}
    for key in ("query_log", "log_file"):
        if key in options:
            options[key] = _local(options[key], here)
    conf = {str(k): _conf_text(v) for k, v in raw.get("spark_conf", {}).items()}
    return ServicePolicy(state=state, spark_conf=conf, **options)


def _table(
    raw: Mapping[str, Any], defaults: Mapping[str, Any], source: str, base: str, n: int
) -> TablePolicy:
    settings = {**defaults, **raw}
    where = f"{source}: table[{n}]"
    path, name, catalog = raw.get("path"), raw.get("name"), raw.get("catalog")
    if (path is None) == (name is None):
        raise InvalidSpecError(
            f"{where}: give either path = '<folder or metadata.json>' or name = '<db.table>' "
            "with catalog = ... (an Iceberg table)"
        )
    if name is not None and catalog is None:
        raise InvalidSpecError(
            f"{where} ({name}): key 'catalog' is missing: name is an Iceberg "
            "identifier and needs its catalog"
        )
    if path is not None and catalog is not None:
        raise InvalidSpecError(
            f"{where} ({path}): key 'catalog' goes with name = '<db.table>', not with path"
        )
    spelled = str(name) if name is not None else _resolved(str(path), base)
    where = f"{where} ({spelled})"
    cluster_by = tuple(settings["cluster_by"])
    iceberg = catalog is not None or spelled.endswith(".metadata.json")
    if iceberg and cluster_by:
        raise InvalidSpecError(
            f"{where}: key 'cluster_by': an Iceberg table's layout changes only through an "
            "Iceberg commit (an Iceberg writer's rewrite_data_files); the service keeps its "
            "index fresh only"
        )
    share = settings["recluster_unclustered_share"]
    return TablePolicy(
        name=spelled if name is not None else table_key(spelled, base),
        path=spelled,
        catalog=dict(catalog) if isinstance(catalog, Mapping) else catalog,
        indexes=_indexes(settings["indexes"], where),
        advise=settings["indexes"] == "advise",
        target_file_bytes=max(1, int(float(settings["target_file_mb"]) * MB)),
        binpack=bool(settings["binpack"]) and not iceberg,
        binpack_min_small_files=int(settings["binpack_min_small_files"]),
        cluster_by=cluster_by,
        curve=str(settings["curve"]),
        recluster_decay=float(settings["recluster_decay"]),
        recluster_min_queries=int(settings["recluster_min_queries"]),
        recluster_unclustered_share=None if share is None else float(share),
        recluster_min_seconds=float(settings["recluster_min_minutes"]) * 60,
    )


def _indexes(raw: Any, where: str) -> tuple[IndexSpec, ...] | None:
    if raw in ("suggest", "advise"):
        return None
    specs = []
    for n, entry in enumerate(raw):
        at = f"{where}: key 'indexes'[{n}]"
        params = {k: v for k, v in entry.items() if k not in ("kind", "column", "expr")}
        kind = KINDS.get(entry["kind"])
        if kind is None:
            raise InvalidSpecError(
                f"{at}: unknown kind {entry['kind']!r}; kinds: {', '.join(KINDS)}"
            )
        if ("column" in entry) == ("expr" in entry):
            raise InvalidSpecError(f"{at}: give exactly one of column = '...' or expr = '...'")
        try:
            if "expr" in entry:
                specs.append(kind.spec(expr=entry["expr"], **params))
            else:
                specs.append(kind.spec(entry["column"], **params))
        except (TypeError, InvalidSpecError) as exc:
            raise InvalidSpecError(f"{at}: {exc}") from None
    return tuple(specs)


def table_key(path: str, base: str) -> str:
    """How the service names a table given by path: absolute, no trailing slash."""
    return _resolved(path, base)


def _resolved(path: str, base: str) -> str:
    if "://" in path:
        return path.rstrip("/")
    return posixpath.normpath(posixpath.join(base, os.path.expanduser(path)))


def _local(path: str, here: str) -> str:
    return posixpath.normpath(posixpath.join(here, os.path.expanduser(path)))


def _conf_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _validate(document: Mapping[str, Any], source: str) -> None:
    errors = sorted(
        validator("maintain_policy").iter_errors(document), key=lambda e: list(e.absolute_path)
    )
    if not errors:
        return
    error = errors[0]
    raise InvalidSpecError(f"{source}: {_where(document, list(error.absolute_path))}{_what(error)}")


def _where(document: Mapping[str, Any], at: Sequence[Any]) -> str:
    """``table[2] (/lake/x): key 'target_file_mb': `` for the error's place."""
    parts: list[str] = []
    node: Any = document
    for n, step in enumerate(at):
        if isinstance(step, int):
            label = f"{parts.pop() if parts else ''}[{step}]"
            node = node[step]
            if n == 1 and at[0] == "table" and isinstance(node, Mapping):
                label += f" ({node.get('path') or node.get('name') or '?'})"
            parts.append(label)
        else:
            parts.append(str(step) if n == 0 else f"key {step!r}")
            node = node.get(step) if isinstance(node, Mapping) else None
    return ": ".join(parts) + ": " if parts else ""


def _what(error: Any) -> str:
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        known = sorted(_known_keys(error.schema))
        return f"{error.message}; known keys: {', '.join(known)}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is missing")
    if error.validator == "oneOf" and error.absolute_path and error.absolute_path[-1] == "indexes":
        return "must be 'suggest' or a list of {kind = ..., column = ... | expr = ...}"
    return str(error.message)


def _known_keys(schema: Mapping[str, Any]) -> set[str]:
    keys = set(schema.get("properties", {}))
    if "$ref" in schema:  # a table: its own keys and the settings'
        keys |= set(SETTINGS)
    return keys
