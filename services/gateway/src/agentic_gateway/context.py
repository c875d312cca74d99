"""The gateway's process-wide objects, typed, and the dependencies that hand them to routes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, cast

from agentic.v1 import common_pb2
from agentic_core.routing import ModelRouter
from agentic_runtime.http.service import LongLivedConnections
from agentic_runtime.http.upstream import UpstreamHttp
from agentic_runtime.state.audit import AuditRecorder
from fastapi import Depends, Request
from starlette.applications import Starlette
from starlette.requests import HTTPConnection

from agentic_gateway.accounting.accounting import Accounting
from agentic_gateway.auth.authenticator import Authenticator, PermissionDenied
from agentic_gateway.peers import Peers
from agentic_gateway.relay.model_lists import ModelLists
from agentic_gateway.relay.native_messages import NativeMessagesVerdicts
from agentic_gateway.settings import GatewaySettings


@dataclass
class Gateway:
    """Everything a route or middleware needs beyond its request, made once by the app's lifespan."""

    settings: GatewaySettings
    auth: Authenticator
    peers: Peers
    router: ModelRouter
    upstream: UpstreamHttp
    model_lists: ModelLists  # the model servers' listings, kept briefly
    accounting: Accounting  # usage, prices, quotas, open WebSockets
    audit: AuditRecorder  # the `api.request` records, sent to the state service in batches
    connections: LongLivedConnections  # the open WebSockets, which SIGTERM drains
    native_messages: NativeMessagesVerdicts = field(default_factory=NativeMessagesVerdicts)


def gateway_of(connection: HTTPConnection) -> Gateway:
    """The gateway of a request's or a WebSocket's app."""
    return app_gateway(connection.app)


def app_gateway(app: Starlette) -> Gateway:
    """The app's `Gateway`, which its lifespan sets: the one untyped read of the app's state."""
    return cast(Gateway, app.state.gateway)


async def authenticated(request: Request) -> common_pb2.Principal:
    """The caller's principal; every API router depends on it, so no route runs (or reads a body) unauthenticated.
    Async, so that FastAPI runs it on the event loop, not in its thread pool."""
    headers = request.headers
    principal = await gateway_of(request).auth.authenticate(headers.get("authorization"), headers.get("x-api-key"))
    request.state.principal = principal  # the audit trail's record of this request names it
    return principal


async def require_admin(principal: Annotated[common_pb2.Principal, Depends(authenticated)]) -> common_pb2.Principal:
    """An operator's principal (AGENTIC_GATEWAY_ADMIN_KEYS); anyone else gets 403."""
    if not principal.admin:
        raise PermissionDenied("This endpoint needs an admin key.")
    return principal


Principal = Annotated[common_pb2.Principal, Depends(authenticated)]
AdminPrincipal = Annotated[common_pb2.Principal, Depends(require_admin)]
API_DEPENDENCIES = [Depends(authenticated)]
