"""Calls to our gRPC peers. `Peer` is the one place a failed call becomes a domain error: a peer's
`AgenticError` comes back with its exact status and body, an unreachable peer is a 503, a late one a 504
(`error_from_rpc`). Every call carries the current trace.

A peer's calls are spread over every address its name resolves to (`round_robin`): in Kubernetes the name is
a headless Service (`dns:///<service>-headless.<namespace>.svc.<cluster domain>:<port>`) whose DNS answers with
one address per ready pod. The servers close connections after a maximum age (`server.server_options`),
which makes the client resolve the name again and connect to pods added since. A plain `host:port` works the
same way (gRPC's default resolver is DNS), one address or many."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import grpc

from agentic_runtime.grpc.errors import error_from_rpc
from agentic_runtime.grpc.server import CHANNEL_OPTIONS, is_serving
from agentic_runtime.settings import TransportSecuritySettings
from agentic_runtime.tls import channel_credentials, channel_options
from agentic_runtime.tracing import carrier

Request = TypeVar("Request")
Reply = TypeVar("Reply")
Message = TypeVar("Message")

# One subchannel per resolved address, calls taken in turn; gRPC's default (`pick_first`) would send every
# call of the process to the first address only.
SERVICE_CONFIG: dict[str, object] = {"loadBalancingConfig": [{"round_robin": {}}]}
CLIENT_OPTIONS = (
    *CHANNEL_OPTIONS,
    ("grpc.service_config", json.dumps(SERVICE_CONFIG)),
    # A name's own service config (DNS TXT records) must not replace ours.
    ("grpc.service_config_disable_resolution", 1),
    # The floor between two resolutions of a name (default 30 s): a connection closed by a pod that went
    # away, or aged out, resolves again within this.
    ("grpc.dns_min_time_between_resolutions_ms", 5_000),
)


def peer_channel(target: str, security: TransportSecuritySettings) -> grpc.aio.Channel:
    """A channel that spreads calls over every address of `target` (`host:port`, `dns:///host:port`, `ipv4:a:p,b:p`);
    TLS (mTLS with a certificate) when `security` names a CA (`AGENTIC_GRPC_TLS_CA_FILE`)."""
    credentials = channel_credentials(security)
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=CLIENT_OPTIONS)
    return grpc.aio.secure_channel(target, credentials, options=(*CLIENT_OPTIONS, *channel_options(security)))


class ReplyStream(Generic[Message]):
    """A server stream whose failure, at any message, raises the domain error it stands for."""

    def __init__(self, call: Any, peer: str) -> None:
        self._call = call
        self._messages: AsyncIterator[Message] = call.__aiter__()
        self._peer = peer

    def __aiter__(self) -> ReplyStream[Message]:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self._messages.__anext__()
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, self._peer) from None

    def cancel(self) -> None:
        self._call.cancel()


class Peer:
    """One peer service: its channel, its name in error messages, its default deadline."""

    def __init__(self, name: str, target: str, timeout: float, security: TransportSecuritySettings) -> None:
        self.name = name
        self.channel = peer_channel(target, security)
        self.timeout = timeout

    async def call(self, method: Callable[..., Awaitable[Reply]], request: Request, *,
                   timeout: float | None = None) -> Reply:
        try:
            return await method(request, timeout=timeout or self.timeout, metadata=tuple(carrier().items()))
        except grpc.aio.AioRpcError as exc:
            raise error_from_rpc(exc, self.name) from None

    def stream(self, method: Callable[..., Any], request: Request, *, timeout: float | None = None,
               metadata: tuple[tuple[str, str], ...] | None = None) -> ReplyStream[Any]:
        call = method(request, timeout=timeout or self.timeout,
                      metadata=metadata if metadata is not None else tuple(carrier().items()))
        return ReplyStream(call, self.name)

    async def serving(self, timeout: float) -> bool:
        return await is_serving(self.channel, timeout)

    async def close(self) -> None:
        await self.channel.close()
