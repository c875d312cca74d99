"""A gRPC aio server with the standard health service, reflection and our error interceptor."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from agentic_runtime.grpc.errors import ErrorInterceptor
from agentic_runtime.settings import TransportSecuritySettings
from agentic_runtime.tls import server_credentials

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
CHANNEL_OPTIONS = (
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_permit_without_calls", 1),
)
# Servers accept the clients' idle keepalive pings (every 30 s above) instead of answering them with
# GOAWAY "too_many_pings" (the default floor is 5 minutes).
SERVER_KEEPALIVE_OPTIONS = (("grpc.http2.min_ping_interval_without_data_ms", 20_000),)
# A client keeps one connection per server for as long as it lives, so pods added later would get no calls
# from it: a server closes each connection after about this age (gRPC adds ±10% jitter), the client
# re-resolves the name and connects to every current pod. In-flight calls finish on the old connection.
DEFAULT_MAX_CONNECTION_AGE_SECONDS = 300.0


def server_options(max_connection_age_seconds: float = DEFAULT_MAX_CONNECTION_AGE_SECONDS,
                   max_connection_age_grace_seconds: float = 0.0) -> tuple[tuple[str, int], ...]:
    """The server's channel options. An age of 0 keeps connections forever; a grace of 0 lets the calls on
    an aged connection run as long as they take (a streamed turn may take many minutes)."""
    options = [*CHANNEL_OPTIONS, *SERVER_KEEPALIVE_OPTIONS]
    if max_connection_age_seconds > 0:
        options.append(("grpc.max_connection_age_ms", int(max_connection_age_seconds * 1000)))
        if max_connection_age_grace_seconds > 0:
            options.append(("grpc.max_connection_age_grace_ms", int(max_connection_age_grace_seconds * 1000)))
    return tuple(options)


class GrpcService:
    """Owns one server: register servicers, flip health, drain on stop. It serves TLS when `security` gives it a
    certificate and key (`AGENTIC_GRPC_TLS_*`)."""

    def __init__(self, full_service_names: Iterable[str], security: TransportSecuritySettings, *,
                 max_connection_age_seconds: float = DEFAULT_MAX_CONNECTION_AGE_SECONDS,
                 max_connection_age_grace_seconds: float = 0.0) -> None:
        self.security = security
        options = server_options(max_connection_age_seconds, max_connection_age_grace_seconds)
        self.server = grpc.aio.server(interceptors=[ErrorInterceptor()], options=options)
        self.health = health.aio.HealthServicer()
        self.service_names = tuple(full_service_names)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            (*self.service_names, health.SERVICE_NAME, reflection.SERVICE_NAME), self.server
        )

    def add(self, register: Callable[[grpc.aio.Server], None]) -> None:
        register(self.server)

    async def start(self, host: str, port: int) -> int:
        credentials = server_credentials(self.security)  # TLS when a certificate is set
        if credentials is None:
            bound = self.server.add_insecure_port(f"{host}:{port}")
        else:
            bound = self.server.add_secure_port(f"{host}:{port}", credentials)
        await self.server.start()
        return bound

    async def set_serving(self, serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", *self.service_names):
            await self.health.set(name, status)

    async def drain(self, grace_seconds: float, unready_seconds: float = 0.0) -> None:
        """Readiness goes false first; the server keeps taking calls for `unready_seconds` (so load balancers
        stop sending), then in-flight calls get `grace_seconds` to finish."""
        await self.set_serving(False)
        if unready_seconds > 0:
            await asyncio.sleep(unready_seconds)
        await self.server.stop(grace_seconds)


def insecure_channel(target: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)


async def is_serving(channel: grpc.aio.Channel, timeout: float = 2.0, service: str = "") -> bool:
    """The standard health check against a peer; any failure reads as not serving."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        # types-grpcio-health-checking declares no methods on HealthStub
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)  # type: ignore[attr-defined]
    except grpc.aio.AioRpcError:
        return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
