"""The audit trail at the gateway: one `api.request` record per authenticated API request (who, which route
template, which ids, what status), kept when the response starts and sent to the state service in batches; and
`GET /v1/organization/audit_logs`, where admins read the trail in OpenAI's audit-log shape.

A request refused before it is authenticated leaves no record (it is counted in
`agentic_gateway_auth_failures_total`): what an anonymous caller sends never reaches the trail, and every string
a record takes from a request is bounded (route templates, ids and model names cut to `MAX_FIELD_CHARS`)."""

from __future__ import annotations

import uuid
from typing import Any, cast

import orjson
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.ids import is_identifier
from agentic_runtime.state.audit import AuditBounds, AuditRecorder
from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentic_gateway.context import AdminPrincipal, Gateway, gateway_of
from agentic_gateway.http import json_response

router = APIRouter()

# The ids a path names; each becomes a field of the record.
_PATH_IDS = ("response_id", "conversation_id", "item_id")
_TIME_BOUNDS = ("gt", "gte", "lt", "lte")
_REQUEST_ID = b"x-request-id"
MAX_FIELD_CHARS = 128  # ids, a model name, a relayed request id: ours are far shorter, a client's may be 60 kB
UNMATCHED_ROUTE = "unmatched"  # the route of a request no route served: never its raw path
AUDIT_MODEL = "audit_model"  # a request state key: the model a pass-through request relayed to


class AuditTrail:
    """ASGI middleware: records every authenticated `/v1/` HTTP request once its status is known (a list append).
    The records go to the state service once a second, and at shutdown before the gateway's peers close.

    Every request has an `X-Request-Id`: the client's (a plain id), else one given here before the routes read
    it, so the executor's `response.turn` record of the turn names the same id; the response carries it too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, _flushing_at_shutdown(scope, receive), send)
            return
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
    audit_recorder(scope["app"]).record("api.request", principal, details)


def audit_recorder(app: Any) -> AuditRecorder:
    """The process's recorder of the gateway's records (made on first use, on the state service's channel)."""
    recorder = getattr(app.state, "audit_recorder", None)
    if recorder is None:
        gateway = cast(Gateway, app.state.gateway)
        recorder = app.state.audit_recorder = AuditRecorder(gateway.peers.state_peer, AuditBounds.of(gateway.settings))
    return cast(AuditRecorder, recorder)


def record_socket_turn(app: Any, principal: common_pb2.Principal, status: int, request_id: str, model: Any) -> None:
    """A WebSocket `response.create`: recorded like `POST /v1/responses`, its method `WEBSOCKET`; one whose
    authentication failed (a key revoked since the upgrade) is counted, not recorded."""
    if status == 401:
        return
    details: dict[str, Any] = {"method": "WEBSOCKET", "route": "/v1/responses", "status": status,
                               "request_id": request_id}
    if isinstance(model, str) and model:
        details["model"] = _bounded(model)
    audit_recorder(app).record("api.request", principal, details)


def _flushing_at_shutdown(scope: Scope, receive: Receive) -> Receive:
    async def receiving() -> Message:
        message = await receive()
        if message["type"] == "lifespan.shutdown":
            recorder = getattr(scope["app"].state, "audit_recorder", None)
            if recorder is not None:
                await recorder.close()  # before the app's lifespan closes the state channel
        return message

    return receiving


def _integer(request: Request, name: str) -> int:
    value = request.query_params.get(name)
    if value is None:
        return 0
    if not value.isdigit():
        raise InvalidRequest(f"'{name}' must be a Unix time in seconds.", param=name, code="invalid_value")
    return int(value)


def _list(request: Request, name: str) -> list[str]:
    """`name[]=a&name[]=b` (OpenAI's form), `name=a`, or `name=a,b`."""
    values = request.query_params.getlist(f"{name}[]") + request.query_params.getlist(name)
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def audit_query(request: Request) -> audit_pb2.AuditQuery:
    """OpenAI's parameters: `project_ids[]` (tenants), `event_types[]` (`api.request`, `response.turn`),
    `resource_ids[]` (response or conversation ids), `effective_at[gt|gte|lt|lte]`,
    `limit` (1–100, default 20), `after` / `before` (record ids)."""
    params = request.query_params
    limit = params.get("limit", "20")
    if not limit.isdigit() or not 1 <= int(limit) <= 100:
        raise InvalidRequest("'limit' must be an integer from 1 to 100.", param="limit", code="invalid_value")
    bounds = {bound: _integer(request, f"effective_at[{bound}]") for bound in _TIME_BOUNDS}
    return audit_pb2.AuditQuery(
        tenants=_list(request, "project_ids"), types=_list(request, "event_types"),
        resource_ids=_list(request, "resource_ids"), limit=int(limit),
        after=params.get("after", ""), before=params.get("before", ""), **bounds,
    )


def audit_log_object(record: audit_pb2.AuditRecord, effective_at: int) -> dict[str, Any]:
    """A record as OpenAI's audit log object: the actor is the API key (or token) and the project the tenant."""
    principal = record.principal
    return {
        "id": record.id, "type": record.type, "effective_at": effective_at,
        "project": {"id": principal.tenant, "name": principal.tenant},
        "actor": {"type": "api_key", "api_key": {
            "id": principal.key_id, "type": "admin" if principal.admin else "service_account",
            "service_account": {"id": principal.subject},
        }},
        record.type: orjson.loads(record.details or b"{}"),
    }


@router.get("/v1/organization/audit_logs")
async def list_audit_logs(request: Request, principal: AdminPrincipal) -> Response:
    peers = gateway_of(request).peers
    page: audit_pb2.AuditPage = await peers.state_peer.call(audit_pb2_grpc.AuditStub(peers.state_peer.channel).List,
                                                            audit_query(request))
    data = [audit_log_object(record, at) for record, at in zip(page.records, page.effective_at, strict=True)]
    return json_response(orjson.dumps({
        "object": "list", "data": data, "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None, "has_more": page.has_more,
    }))
