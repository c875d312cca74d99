"""`GET /v1/organization/audit_logs` (admin keys only): the audit trail (accounting/audit.py, and the executor's
`response.turn` records) in OpenAI's audit-log shape."""

from __future__ import annotations

from typing import Any

import orjson
from agentic.v1 import audit_pb2, audit_pb2_grpc
from agentic_core.errors import InvalidRequest
from fastapi import APIRouter, Request
from fastapi.responses import Response

from agentic_gateway.context import AdminPrincipal, gateway_of
from agentic_gateway.http import json_response, query_list

router = APIRouter()
_TIME_BOUNDS = ("gt", "gte", "lt", "lte")


def _integer(request: Request, name: str) -> int:
    value = request.query_params.get(name)
    if value is None:
        return 0
    if not value.isdigit():
        raise InvalidRequest(f"'{name}' must be a Unix time in seconds.", param=name, code="invalid_value")
    return int(value)


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
        tenants=query_list(request, "project_ids"), types=query_list(request, "event_types"),
        resource_ids=query_list(request, "resource_ids"), limit=int(limit),
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
    state = gateway_of(request).peers.state_peer
    page: audit_pb2.AuditPage = await state.call(audit_pb2_grpc.AuditStub(state.channel).List, audit_query(request))
    data = [audit_log_object(record, at) for record, at in zip(page.records, page.effective_at, strict=True)]
    return json_response(orjson.dumps({
        "object": "list", "data": data, "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None, "has_more": page.has_more,
    }))
