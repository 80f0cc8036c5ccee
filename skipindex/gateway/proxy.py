"""The gateway: a gRPC server that speaks the Spark Connect service and forwards
every call to the real server.

Every method of ``spark.connect.SparkConnectService`` (read from PySpark's
descriptor, so a method added later forwards too) is passed through as bytes:
the client's metadata (its token and headers) unchanged, the server's headers,
trailers and errors back unchanged, a cancelled call cancelled upstream. Two
methods are looked into: ``ExecutePlan``, whose plan :class:`.Rewriter` may
replace, and ``Config``, where a get of ``skipindex.gateway.lastPlan`` (or
``lastPlanJson``) is answered with the session's last account (sent on as a get with that default,
so the server's own session ids come back as the client expects).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc

from skipindex.gateway.rewrite import ACCOUNT_JSON_KEY, ACCOUNT_KEY, Rewriter
from skipindex.gateway.sessions import forwarded_headers

__all__ = ["SERVICE", "serve"]

SERVICE = "spark.connect.SparkConnectService"
_STATUS = frozenset({"grpc-status", "grpc-message"})  # gRPC sets these from abort()
# Connect clients ping every 60 s even between calls (PySpark, the JVM client);
# gRPC's server default (one ping in 5 min) would answer GOAWAY "too_many_pings".
_CLIENT_PINGS = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 0),
]
_UNLIMITED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]


def serve(listen: str, upstream: grpc.Channel, rewriter: Rewriter) -> tuple[grpc.Server, int]:
    """A started server on ``listen`` (``host:port``; port 0 picks one) and its port."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32), options=_UNLIMITED + _CLIENT_PINGS
    )
    server.add_generic_rpc_handlers((_Forwarder(upstream, rewriter),))
    port = server.add_insecure_port(listen)
    if port == 0:
        raise OSError(f"the gateway cannot listen on {listen}")
    server.start()
    return server, port


class _Forwarder(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, upstream: grpc.Channel, rewriter: Rewriter) -> None:
        from pyspark.sql.connect.proto import base_pb2

        self._upstream, self._rewriter = upstream, rewriter
        self._base = base_pb2
        service = base_pb2.DESCRIPTOR.services_by_name["SparkConnectService"]
        self._methods = {
            f"/{SERVICE}/{m.name}": (m.name, m.client_streaming, m.server_streaming)
            for m in service.methods
        }

    def service(self, handler_call_details: Any) -> Any:
        found = self._methods.get(handler_call_details.method)
        if found is None:
            return None  # UNIMPLEMENTED, as the server would answer
        name, client_streaming, server_streaming = found
        method = handler_call_details.method
        if server_streaming and not client_streaming:
            return grpc.unary_stream_rpc_method_handler(self._unary_stream(method, name))
        if client_streaming and not server_streaming:
            return grpc.stream_unary_rpc_method_handler(self._stream_unary(method))
        if client_streaming:
            return grpc.stream_stream_rpc_method_handler(self._stream_stream(method))
        return grpc.unary_unary_rpc_method_handler(self._unary_unary(method, name))

    def _request(self, name: str, request: bytes, headers: list[tuple[str, Any]]) -> bytes:
        """The request to forward: a rewritten plan or an answered config get."""
        if name == "ExecutePlan":
            message = self._base.ExecutePlanRequest.FromString(request)
            rewritten = self._rewriter.execute_plan(message, headers)
            return bytes(rewritten.SerializeToString()) if rewritten is not None else request
        if name == "Config":
            return self._config(request)
        return request

    def _config(self, request: bytes) -> bytes:
        message = self._base.ConfigRequest.FromString(request)
        operation = message.operation
        if operation.WhichOneof("op_type") != "get":
            return request
        keys = list(operation.get.keys)
        if not keys or any(not k.startswith("skipindex.gateway.") for k in keys):
            return request
        answers = {
            ACCOUNT_KEY: self._rewriter.account(message.session_id),
            ACCOUNT_JSON_KEY: json.dumps(self._rewriter.account_of(message.session_id)),
        }
        operation.ClearField("get")
        for key in keys:
            operation.get_with_default.pairs.add(key=key, value=answers.get(key, ""))
        return bytes(message.SerializeToString())

    def _unary_unary(self, method: str, name: str) -> Any:
        call = self._upstream.unary_unary(method)

        def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
            headers = forwarded_headers(context.invocation_metadata())
            try:
                forwarded = self._request(name, request, headers)
                response, outcome = call.with_call(forwarded, metadata=headers)
            except grpc.RpcError as error:
                _fail(context, error)
                raise  # unreachable: abort raises
            context.send_initial_metadata(_back(outcome.initial_metadata()))
            context.set_trailing_metadata(_back(outcome.trailing_metadata()))
            return bytes(response)

        return handle

    def _unary_stream(self, method: str, name: str) -> Any:
        call = self._upstream.unary_stream(method)

        def handle(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
            headers = forwarded_headers(context.invocation_metadata())
            forwarded = self._request(name, request, headers)
            responses = call(forwarded, metadata=headers)
            context.add_callback(responses.cancel)
            try:
                context.send_initial_metadata(_back(responses.initial_metadata()))
                yield from responses
                context.set_trailing_metadata(_back(responses.trailing_metadata()))
            except grpc.RpcError as error:
                _fail(context, error)

        return handle

    def _stream_unary(self, method: str) -> Any:
        call = self._upstream.stream_unary(method)

        def handle(requests: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
            headers = forwarded_headers(context.invocation_metadata())
            try:
                response, outcome = call.with_call(requests, metadata=headers)
            except grpc.RpcError as error:
                _fail(context, error)
                raise
            context.send_initial_metadata(_back(outcome.initial_metadata()))
            context.set_trailing_metadata(_back(outcome.trailing_metadata()))
            return bytes(response)

        return handle

    def _stream_stream(self, method: str) -> Any:
        call = self._upstream.stream_stream(method)

        def handle(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
            headers = forwarded_headers(context.invocation_metadata())
            responses = call(requests, metadata=headers)
            context.add_callback(responses.cancel)
            try:
                yield from responses
            except grpc.RpcError as error:
                _fail(context, error)

        return handle


def _back(metadata: Any) -> list[tuple[str, Any]]:
    return forwarded_headers(list(metadata or ()))


def _fail(context: grpc.ServicerContext, error: grpc.RpcError) -> None:
    """The server's error, as the server sent it (its details in the trailers)."""
    call = error if isinstance(error, grpc.Call) else None
    trailers = list(call.trailing_metadata() or ()) if call is not None else []
    code = call.code() if call is not None else grpc.StatusCode.UNKNOWN
    details = call.details() if call is not None else str(error)
    kept = [(k, v) for k, v in trailers if k not in _STATUS and not k.startswith(":")]
    context.set_trailing_metadata(kept)  # grpc-status-details-bin: Spark's error, whole
    context.abort(code, details or "")
