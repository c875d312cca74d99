"""Calls to our gRPC peers. `Peer` is the one place a failed call becomes a domain error: a peer's
`AgenticError` comes back with its exact status and body, an unreachable peer is a 503, a late one a 504
(`error_from_rpc`). Every call carries the current trace."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import grpc

from agentic_runtime.grpc_errors import error_from_rpc
from agentic_runtime.grpc_server import insecure_channel, is_serving
from agentic_runtime.tracing import carrier

Request = TypeVar("Request")
Reply = TypeVar("Reply")
Message = TypeVar("Message")


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

    def __init__(self, name: str, target: str, timeout: float) -> None:
        self.name = name
        self.channel = insecure_channel(target)
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
