"""The gateway's process-wide objects, typed, and the dependencies that hand them to routes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, cast

from agentic.v1 import common_pb2
from agentic_core.routing import ModelRouter
from agentic_runtime.upstream_http import UpstreamHttp
from fastapi import Depends, Request

from agentic_gateway.auth import Authenticator
from agentic_gateway.clients import Peers
from agentic_gateway.native_messages import NativeMessagesVerdicts
from agentic_gateway.settings import GatewaySettings


@dataclass
class Gateway:
    settings: GatewaySettings
    auth: Authenticator
    peers: Peers
    router: ModelRouter
    upstream: UpstreamHttp
    native_messages: NativeMessagesVerdicts = field(default_factory=NativeMessagesVerdicts)


def gateway_of(request: Request) -> Gateway:
    return cast(Gateway, request.app.state.gateway)


async def authenticated(request: Request) -> common_pb2.Principal:
    """The caller's principal; every API router depends on it, so no route runs (or reads a body) unauthenticated.
    Async, so that FastAPI runs it on the event loop, not in its thread pool."""
    return gateway_of(request).auth.authenticate(request.headers.get("authorization"), request.headers.get("x-api-key"))


Principal = Annotated[common_pb2.Principal, Depends(authenticated)]
API_DEPENDENCIES = [Depends(authenticated)]
