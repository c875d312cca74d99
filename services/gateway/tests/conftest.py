"""A real gRPC server on loopback for the gateway's peers (the executor, the state service's Usage and Audit), with
the servicers a test gives it, and the `Peer` the gateway would call it through."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest
from agentic_runtime.grpc.client import Peer
from agentic_runtime.grpc.server import GrpcService
from agentic_runtime.tls import transport_security

PEER_TIMEOUT_SECONDS = 5.0
Serve = Callable[[str, Callable[[grpc.aio.Server], None]], Awaitable[Peer]]


@pytest.fixture()
async def serve() -> AsyncIterator[Serve]:
    """`await serve(name, register)`: `register` adds the servicers; the peer has a default deadline of
    `PEER_TIMEOUT_SECONDS`. Each server and peer is closed after the test."""
    started: list[tuple[GrpcService, Peer]] = []

    async def start(name: str, register: Callable[[grpc.aio.Server], None]) -> Peer:
        service = GrpcService([], transport_security({}))
        service.add(register)
        port = await service.start("127.0.0.1", 0)
        peer = Peer(name, f"127.0.0.1:{port}", PEER_TIMEOUT_SECONDS, transport_security({}))
        started.append((service, peer))
        return peer

    yield start
    for service, peer in started:
        await peer.close()
        await service.drain(0)
