"""The client's own Spark session, as seen from the gateway.

Everything a plan's meaning depends on (the session's time zone and case
sensitivity, its temporary views, what a table name resolves to, the schema
Spark gives a folder) is the server's, asked of it in the client's own session:
the gateway opens a Spark Connect client bound to that session id and user,
sending the client's own headers (its token among them) unchanged. The key
queries of dynamic pruning run there too, so they can read no more than the
client can. The binding never stops or releases the client's session: it only
closes its own channel.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, cast

__all__ = ["ClientSessions", "forwarded_headers"]

# Headers that belong to one HTTP/2 hop or to gRPC itself, never forwarded as
# call metadata (gRPC sets its own).
_HOP = ("grpc-", ":")
_HOP_NAMES = frozenset({"user-agent", "content-type", "te", "host"})
_MAX_SESSIONS = 64


def forwarded_headers(metadata: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The client's call metadata, minus what belongs to the hop."""
    return [
        (key, value)
        for key, value in metadata
        if key not in _HOP_NAMES and not key.startswith(_HOP)
    ]


class ClientSessions:
    """A PySpark Connect session per (client session id, user, headers), the
    least recently used closed past ``_MAX_SESSIONS``."""

    def __init__(self, target: str, secure: bool) -> None:
        self._target, self._secure = target, secure
        self._lock = threading.Lock()
        self._open: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def session(self, session_id: str, user_id: str, headers: Sequence[tuple[str, Any]]) -> Any:
        key = (session_id, user_id, tuple(headers))
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                self._open.move_to_end(key)
                return found
        made = _bound_session(self._target, self._secure, session_id, user_id, headers)
        with self._lock:
            self._open[key] = made
            while len(self._open) > _MAX_SESSIONS:
                _, oldest = self._open.popitem(last=False)
                _close(oldest)
        return made

    def close(self) -> None:
        with self._lock:
            while self._open:
                _close(self._open.popitem()[1])


def _close(session: Any) -> None:
    # The channel only: never release the client's session. Already closed or
    # broken: nothing of the client's to lose.
    with contextlib.suppress(Exception):
        session.client.close()


def _bound_session(
    target: str, secure: bool, session_id: str, user_id: str, headers: Sequence[tuple[str, Any]]
) -> Any:
    import grpc
    from pyspark.sql.connect.client.core import ChannelBuilder
    from pyspark.sql.connect.session import SparkSession

    class _ClientChannel(ChannelBuilder):
        def __init__(self) -> None:
            super().__init__(
                params={
                    ChannelBuilder.PARAM_SESSION_ID: session_id,
                    ChannelBuilder.PARAM_USER_ID: user_id,
                }
            )

        def toChannel(self) -> Any:  # noqa: N802 -- PySpark's name
            if secure:
                return self._secure_channel(target, grpc.ssl_channel_credentials())
            return self._insecure_channel(target)

        @property
        def host(self) -> str:
            return target

        def metadata(self) -> list[tuple[str, Any]]:
            return list(headers)

    session = SparkSession(connection=cast(Any, _ClientChannel()), userId=user_id)
    session.release_session_on_close = False  # never the client's session
    return session
