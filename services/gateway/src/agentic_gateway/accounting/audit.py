"""The audit trail at the gateway: one `api.request` record per authenticated API request (who, which route
template, which ids, what status), kept when the response starts and sent to the state service in batches (admins read the trail at
`GET /v1/organization/audit_logs`, routes/audit_logs.py).

A request refused before it is authenticated leaves no record (it is counted in
`agentic_gateway_auth_failures_total`): what an anonymous caller sends never reaches the trail, and every string
a record takes from a request is bounded (route templates, ids and model names cut to `MAX_FIELD_CHARS`)."""

from __future__ import annotations

import uuid
from typing import Any

from agentic.v1 import common_pb2
from agentic_core.ids import is_identifier
from agentic_runtime.state.audit import AuditRecorder
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentic_gateway.context import app_gateway

# The ids a path names; each becomes a field of the record.
_PATH_IDS = ("response_id", "conversation_id", "item_id")
_REQUEST_ID = b"x-request-id"
MAX_FIELD_CHARS = 128  # ids, a model name, a relayed request id: ours are far shorter, a client's may be 60 kB
UNMATCHED_ROUTE = "unmatched"  # the route of a request no route served: never its raw path
AUDIT_MODEL = "audit_model"  # a request state key: the model a pass-through request relayed to


class AuditTrail:
    """ASGI middleware: records every authenticated `/v1/` HTTP request once its status is known (a list append).
    The records go to the state service once a second (the gateway's `audit` recorder), and at shutdown.

    Every request has an `X-Request-Id`: the client's (a plain id), else one given here before the routes read
    it, so the executor's `response.turn` record of the turn names the same id; the response carries it too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return

        request_id = _request_id(scope)

        async def send_and_record(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                relayed = next((value for name, value in headers if name == _REQUEST_ID), None)
                if relayed is None:
                    message = {**message, "headers": [*headers, (_REQUEST_ID, request_id.encode())]}
                _record(scope, message, relayed.decode("latin-1") if relayed is not None else request_id)
            await send(message)

        await self.app(scope, receive, send_and_record)


def _request_id(scope: Scope) -> str:
    """The client's request id when it is a plain id; else a new one, put in the request's headers."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for name, value in headers:
        if name == _REQUEST_ID:
            given = value.decode("latin-1")
            if is_identifier(given):
                return given
    request_id = uuid.uuid4().hex
    scope["headers"] = [*(header for header in headers if header[0] != _REQUEST_ID), (_REQUEST_ID, request_id.encode())]
    return request_id


def _bounded(value: str) -> str:
    return value[:MAX_FIELD_CHARS]


def _record(scope: Scope, start: Message, request_id: str) -> None:
    state = scope.get("state") or {}
    principal = state.get("principal")
    if principal is None:  # refused before authentication (401, an unknown route, ...): counted, not recorded
        return
    template = getattr(scope.get("route"), "path", None)  # `/v1/responses/{response_id}`, never the path itself
    route = _bounded(template) if isinstance(template, str) else UNMATCHED_ROUTE
    details: dict[str, Any] = {"method": scope["method"], "route": route, "status": start["status"]}
    for name, value in (scope.get("path_params") or {}).items():
        if name in _PATH_IDS and isinstance(value, str):
            details[name] = _bounded(value)
    if model := state.get(AUDIT_MODEL):
        details["model"] = _bounded(str(model))
    details["request_id"] = _bounded(request_id)  # the response's: ours, or a model server's on a relayed reply
    app_gateway(scope["app"]).audit.record("api.request", principal, details)


def record_socket_turn(recorder: AuditRecorder, principal: common_pb2.Principal, status: int, request_id: str, model: Any) -> None:
    """A WebSocket `response.create`: recorded like `POST /v1/responses`, its method `WEBSOCKET`; one whose
    authentication failed (a key revoked since the upgrade) is counted, not recorded."""
    if status == 401:
        return
    details: dict[str, Any] = {"method": "WEBSOCKET", "route": "/v1/responses", "status": status,
                               "request_id": request_id}
    if isinstance(model, str) and model:
        details["model"] = _bounded(model)
    recorder.record("api.request", principal, details)
