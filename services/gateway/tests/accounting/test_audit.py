"""The audit trail at the gateway (audit.py), as the state service receives it: one `api.request` record per
authenticated `/v1/` request, naming the route template (never the raw path), the path's ids, the status and the
request id the response carries; none for a request refused before authentication; strings from the client
bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import httpx
import orjson
import pytest
from agentic.v1 import audit_pb2, audit_pb2_grpc, common_pb2
from agentic_gateway.accounting.audit import AUDIT_MODEL, MAX_FIELD_CHARS, AuditTrail, record_socket_turn
from agentic_gateway.app import ERROR_SHAPES
from agentic_gateway.auth.authenticator import Authenticator
from agentic_gateway.context import API_DEPENDENCIES
from agentic_runtime.http.errors import install_error_handlers
from agentic_runtime.state.audit import AuditRecorder
from fastapi import APIRouter, FastAPI, Request

KEY = "sk-team-key-long-enough-0001"
AUTH = {"authorization": f"Bearer {KEY}"}


class Audit(audit_pb2_grpc.AuditServicer):
    def __init__(self) -> None:
        self.records: list[audit_pb2.AuditRecord] = []

    async def Append(self, request: audit_pb2.AuditBatch, context: Any) -> audit_pb2.AuditAppended:
        self.records.extend(request.records)
        return audit_pb2.AuditAppended()


class Trail:
    """The app behind the audit middleware, its recorder, and what the state service has received."""

    def __init__(self, recorder: AuditRecorder, servicer: Audit) -> None:
        self.recorder, self.servicer = recorder, servicer
        app = FastAPI()
        install_error_handlers(app, ERROR_SHAPES)
        app.state.gateway = SimpleNamespace(auth=Authenticator.of_keys(f"{KEY}=team"), audit=recorder)
        router = APIRouter(dependencies=API_DEPENDENCIES)

        @router.get("/v1/responses/{response_id}")
        async def retrieve(response_id: str) -> dict[str, str]:
            return {"id": response_id}

        @router.post("/v1/chat/completions")
        async def relayed(request: Request) -> dict[str, str]:
            setattr(request.state, AUDIT_MODEL, (await request.json())["model"])
            return {}

        app.include_router(router)
        app.add_middleware(AuditTrail)
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")

    async def details(self) -> list[dict[str, Any]]:
        await self.recorder.flush()
        return [{"type": record.type, "tenant": record.principal.tenant, **orjson.loads(record.details)}
                for record in self.servicer.records]


@pytest.fixture()
async def trail(serve: Any) -> AsyncIterator[Trail]:
    servicer = Audit()
    peer = await serve("state", lambda server: audit_pb2_grpc.add_AuditServicer_to_server(servicer, server))
    recorder = AuditRecorder(peer)
    trail = Trail(recorder, servicer)
    yield trail
    await trail.client.aclose()
    await recorder.close()


async def test_a_request_is_recorded_with_its_route_template_ids_status_and_request_id(trail: Trail) -> None:
    reply = await trail.client.get("/v1/responses/resp_abc", headers=AUTH)
    assert reply.status_code == 200
    request_id = reply.headers["x-request-id"]
    assert request_id
    assert await trail.details() == [{
        "type": "api.request", "tenant": "team", "method": "GET", "route": "/v1/responses/{response_id}",
        "status": 200, "response_id": "resp_abc", "request_id": request_id,
    }]


async def test_a_clients_plain_request_id_is_kept_and_any_other_replaced(trail: Trail) -> None:
    kept = await trail.client.get("/v1/responses/resp_1", headers={**AUTH, "x-request-id": "req_client_1"})
    assert kept.headers["x-request-id"] == "req_client_1"
    replaced = await trail.client.get("/v1/responses/resp_2", headers={**AUTH, "x-request-id": "not a plain id " * 20})
    assert replaced.headers["x-request-id"] != "" and " " not in replaced.headers["x-request-id"]
    assert [record["request_id"] for record in await trail.details()] == ["req_client_1", replaced.headers["x-request-id"]]


async def test_a_request_refused_before_authentication_leaves_no_record(trail: Trail) -> None:
    assert (await trail.client.get("/v1/responses/resp_1")).status_code == 401
    assert (await trail.client.get("/v1/responses/resp_1", headers={"authorization": "Bearer sk-wrong"})).status_code == 401
    assert await trail.details() == []


async def test_a_relayed_requests_model_is_recorded_and_bounded(trail: Trail) -> None:
    await trail.client.post("/v1/chat/completions", headers=AUTH, json={"model": "m" * 10_000})
    (record,) = await trail.details()
    assert record["route"] == "/v1/chat/completions" and record["model"] == "m" * MAX_FIELD_CHARS


async def test_a_websocket_turn_is_recorded_unless_its_authentication_failed(trail: Trail) -> None:
    principal = common_pb2.Principal(tenant="team", subject="me")
    record_socket_turn(trail.recorder, principal, 200, "req_1", "gpt-test")
    record_socket_turn(trail.recorder, principal, 401, "req_2", "gpt-test")
    assert await trail.details() == [{"type": "api.request", "tenant": "team", "method": "WEBSOCKET",
                                      "route": "/v1/responses", "status": 200, "request_id": "req_1",
                                      "model": "gpt-test"}]
