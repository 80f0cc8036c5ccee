"""Which plans the gateway rewrites, and the account of what it did.

Only what runs now is rewritten: an ``ExecutePlan``'s root relation and the
input of a write. A view being created, a ``sql_command`` (Spark analyses a
query there, reading nothing), ``AnalyzePlan`` and everything else go as sent:
a view of kept files would go stale as its table changes. Inside a plan, each
``SQL`` relation (not the root of ``WithRelations``: its text names the
client's own relations) and each run of ``Filter`` over a ``Read`` may be
replaced (:mod:`.sql_node`, :mod:`.read_node`). Any failure sends the plan as
the client sent it: never wrong, never refused.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from skipindex.gateway.plans import plan_ids, renumbered, spliced
from skipindex.gateway.read_node import rewrite_filtered_read
from skipindex.gateway.sql_node import may_name_an_index, rewrite_sql
from skipindex.store import query_log

__all__ = ["ACCOUNT_JSON_KEY", "ACCOUNT_KEY", "Rewriter"]

ACCOUNT_KEY = "skipindex.gateway.lastPlan"  # spark.conf.get(...) through the gateway
ACCOUNT_JSON_KEY = "skipindex.gateway.lastPlanJson"  # the same, as JSON
_LOG = logging.getLogger("skipindex.gateway")
_WRITES = ("write_operation", "write_operation_v2")
_ACCOUNTS = 10_000
_ZSTD = 1  # spark.connect.CompressionCodec.COMPRESSION_CODEC_ZSTD
_OP_RELATION, _OP_COMMAND = 1, 2  # spark.connect.Plan.CompressedOperation.OpType


class Rewriter:
    """Rewrites ``ExecutePlanRequest`` messages; keeps each session's last account."""

    def __init__(
        self, tables: Mapping[str, str], session_for: Callable[..., Any], min_bytes: int = 0
    ) -> None:
        self._tables, self._session_for = dict(tables), session_for
        self._min_bytes = min_bytes
        # The last account per client session, the least recently written dropped past
        # _ACCOUNTS: a gateway that runs for months sees many sessions come and go.
        self._accounts: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def account(self, session_id: str) -> str:
        """What the gateway did to the session's last rewritten plan, in words."""
        found = self.account_of(session_id)
        if found is None:
            return "skipindex gateway: no plan rewritten yet"
        lines = [f"skipindex gateway: plan rewritten in {found['seconds'] * 1000:.0f} ms"]
        for part in found["parts"]:
            if part["kind"] == "sql":
                lines.append(part["explanation"])
            else:
                lines.append(f"read {part['table']}: kept {part['kept']} of {part['total']} files")
        return "\n".join(lines)

    def account_of(self, session_id: str) -> dict[str, Any] | None:
        """The same as a document: ``seconds`` and ``parts``, one per relation
        replaced (``kind`` ``sql``: :meth:`SqlPlan.to_dict`; ``read``: ``table``,
        ``kept``, ``total``)."""
        with self._lock:
            return self._accounts.get(session_id)

    def execute_plan(self, request: Any, headers: list[tuple[str, Any]]) -> Any | None:
        """The request to send instead of ``request`` (None: send it as it is)."""
        started = time.perf_counter()
        try:
            with query_log.source("gateway"):
                rewritten, parts = self._rewrite(request, headers)
        except Exception as exc:  # never refuse a plan for the gateway's own failure
            _LOG.warning("plan sent as written: %s: %s", type(exc).__name__, exc)
            return None
        if rewritten is None:
            return None
        self._remember(request.session_id, time.perf_counter() - started, parts)
        _LOG.info("%s", self.account(request.session_id))
        return rewritten

    def _remember(self, session_id: str, seconds: float, parts: list[dict[str, Any]]) -> None:
        with self._lock:
            self._accounts[session_id] = {"seconds": seconds, "parts": parts}
            self._accounts.move_to_end(session_id)
            while len(self._accounts) > _ACCOUNTS:
                self._accounts.popitem(last=False)

    def _rewrite(
        self, request: Any, headers: list[tuple[str, Any]]
    ) -> tuple[Any, list[dict[str, Any]]]:
        plan = request.plan
        root, command = _operation(plan)
        lines: list[dict[str, Any]] = []
        session: list[Any] = []

        def session_for() -> Any:
            if not session:
                user = request.user_context.user_id
                session.append(self._session_for(request.session_id, user, headers))
            return session[0]

        taken = plan_ids(root if root is not None else command)
        counter = [max(taken, default=0) + 1_000_000]

        def replace(node: Any) -> Any | None:
            which = node.WhichOneof("rel_type")
            if which == "sql" and may_name_an_index(node.sql.query, self._tables):
                done = rewrite_sql(session_for, node, self._tables, self._min_bytes)
                if done is None:
                    return None
                lines.append({"kind": "sql", **done.plan.to_dict()})
                return fit(done.relation, node)
            if which == "filter":
                found = rewrite_filtered_read(session_for, node, fit, self._min_bytes)
                if found is None:
                    return None
                result = found.pruned.result
                kept, total = (result.kept, result.total) if result is not None else (None, None)
                lines.append({"kind": "read", "table": found.path, "kept": kept, "total": total})
                return found.relation
            return None

        def fit(replacement: Any, replaced: Any) -> Any:
            """``replacement`` with plan ids none of the client's, answering to
            ``replaced``'s own id."""
            fitted = renumbered(replacement, counter[0])
            counter[0] += len(plan_ids(replacement)) + 1
            fitted.common.CopyFrom(replaced.common)
            return fitted

        if root is not None:
            new_root, count = spliced(root, replace, skip=_is_with_relations_sql)
            if not count:
                return None, []
            out = type(request)()
            out.CopyFrom(request)
            out.plan.root.CopyFrom(new_root)
            return out, lines
        which = command.WhichOneof("command_type") if command is not None else None
        if which not in _WRITES:
            return None, []
        write = getattr(command, which)
        new_input, count = spliced(write.input, replace, skip=_is_with_relations_sql)
        if not count:
            return None, []
        out = type(request)()
        out.CopyFrom(request)
        out.plan.command.CopyFrom(command)
        getattr(out.plan.command, which).input.CopyFrom(new_input)
        return out, lines


def _operation(plan: Any) -> tuple[Any | None, Any | None]:
    """(root relation, command) of a plan, a compressed one decompressed."""
    which = plan.WhichOneof("op_type")
    if which == "root":
        return plan.root, None
    if which == "command":
        return None, plan.command
    if which != "compressed_operation":
        return None, None
    compressed = plan.compressed_operation
    if compressed.compression_codec != _ZSTD:
        return None, None
    import zstandard
    from pyspark.sql.connect.proto import commands_pb2, relations_pb2

    data = zstandard.ZstdDecompressor().decompress(compressed.data)
    if compressed.op_type == _OP_RELATION:
        return relations_pb2.Relation.FromString(data), None
    if compressed.op_type == _OP_COMMAND:
        return None, commands_pb2.Command.FromString(data)
    return None, None


def _is_with_relations_sql(node: Any) -> bool:
    """``WithRelations`` whose root is SQL: the text names the relations it brings."""
    if node.WhichOneof("rel_type") != "with_relations":
        return False
    return bool(node.with_relations.root.WhichOneof("rel_type") == "sql")
