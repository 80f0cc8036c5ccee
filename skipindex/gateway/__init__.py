"""The Spark Connect gateway: skipping for every Connect client, with nothing but
the connection string changed (see docs/user-guide.md, "The gateway")."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from skipindex.errors import InvalidSpecError
from skipindex.gateway.policy import (
    DEFAULT_LISTEN,
    DEFAULT_MIN_TABLE_MB,
    GatewayPolicy,
    load_gateway_policy,
)
from skipindex.gateway.rewrite import ACCOUNT_JSON_KEY, ACCOUNT_KEY, Rewriter

__all__ = [
    "ACCOUNT_JSON_KEY",
    "ACCOUNT_KEY",
    "DEFAULT_LISTEN",
    "Gateway",
    "GatewayPolicy",
    "gateway",
    "load_gateway_policy",
]


class Gateway:
    """A running gateway. ``address`` is the ``sc://`` URL clients connect to."""

    def __init__(self, policy: GatewayPolicy) -> None:
        import grpc
        from pyspark.sql.connect.client.core import DefaultChannelBuilder

        from skipindex.gateway.proxy import serve
        from skipindex.gateway.sessions import ClientSessions

        if not policy.upstream:
            raise InvalidSpecError(
                "the gateway needs an upstream Spark Connect server: --upstream sc://host:port "
                "or upstream in the policy's [gateway]"
            )
        if policy.query_log:
            from skipindex.store.query_log import use_query_log

            use_query_log(policy.query_log)
        parsed = DefaultChannelBuilder(policy.upstream)
        # TLS where the server speaks it (use_ssl); a token alone is the client's to send.
        target, secure = parsed.endpoint, parsed.use_ssl
        options = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
        if secure:
            channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(), options=options)
        else:
            channel = grpc.insecure_channel(target, options=options)
        self._channel = channel
        self._sessions = ClientSessions(target, secure)
        min_bytes = int(policy.min_table_mb * 2**20)
        self.rewriter = Rewriter(policy.tables, self._sessions.session, min_bytes)
        self._server, self.port = serve(policy.listen, channel, self.rewriter)
        host = policy.listen.rsplit(":", 1)[0].strip("[]")
        local = host in ("127.0.0.1", "0.0.0.0", "")  # noqa: S104 -- a name to dial, not a bind
        self.address = f"sc://{'localhost' if local else host}:{self.port}"
        logging.getLogger("skipindex.gateway").info(
            "skipindex gateway on %s, forwarding to %s", policy.listen, policy.upstream
        )

    def wait(self) -> None:
        self._server.wait_for_termination()

    def stop(self, grace: float = 5.0) -> None:
        self._server.stop(grace).wait()
        self._sessions.close()
        self._channel.close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def gateway(
    upstream: str,
    *,
    tables: Mapping[str, str] | None = None,
    listen: str = DEFAULT_LISTEN,
    query_log: str | None = None,
    min_table_mb: float | None = None,
    policy: Any = None,
) -> Gateway:
    """Start a gateway in this process: Spark Connect on ``listen`` (loopback by
    default; port 0 picks a free one), every call forwarded to ``upstream``
    (``sc://host:port``), plans over indexed tables rewritten to read only the
    files that can match. ``tables`` maps catalog table names to their Parquet
    folders. A query naming no indexed table of ``min_table_mb`` (default 256)
    goes as sent: the gateway's planning would cost more than it saves.
    ``policy`` (a file, as ``skipindex gateway --policy``) gives all of it."""
    if policy is not None:
        loaded = load_gateway_policy(policy)
        return Gateway(
            GatewayPolicy(
                upstream or loaded.upstream,
                listen if listen != DEFAULT_LISTEN else loaded.listen,
                dict(loaded.tables) | {k.lower(): v for k, v in (tables or {}).items()},
                query_log or loaded.query_log,
                loaded.min_table_mb if min_table_mb is None else min_table_mb,
            )
        )
    named = {k.lower(): v for k, v in (tables or {}).items()}
    floor = DEFAULT_MIN_TABLE_MB if min_table_mb is None else min_table_mb
    return Gateway(GatewayPolicy(upstream, listen, named, query_log, floor))
