"""The audit trail end to end: an `api.request` record for every API request (the gateway: who, which route,
which ids, which model, what status) and a `response.turn` record for every turn (the executor and llm-d: the
response, its model and status, the tools it ran by name, the approvals it granted or denied), read back by
admins from `GET /v1/organization/audit_logs` in OpenAI's audit-log shape, filtered and paged.

Arguments, inputs and outputs never reach the trail, nor do keys. Each test has a tenant of its own; records
reach the state service within about a second, hence the polling."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from agentic_local.stack import llm_d_secrets
from anthropic import Anthropic
from openai import OpenAI
from websockets.sync.client import connect

from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text

MODEL = "smollm2"
RUN = secrets.token_hex(3)
TENANTS = ("turns", "passthrough", "mcp", "pages", "socket", "filters", "bounds")
ADMIN = f"sk-audit-admin-{RUN}"
SECRET = f"never-in-the-trail-{RUN}"
Record = dict[str, Any]


def tenant(name: str) -> str:
    return f"audit-{name}-{RUN}"


def key(name: str) -> str:
    return f"sk-audit-{name}-{RUN}"


def key_id(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


@pytest.fixture(scope="module")
def gateway(stack) -> str:
    return stack.add_gateway(AGENTIC_GATEWAY_API_KEYS=",".join(f"{key(name)}={tenant(name)}" for name in TENANTS),
                             AGENTIC_GATEWAY_ADMIN_KEYS=f"{ADMIN}=ops")


def sdk(gateway: str, name: str) -> OpenAI:
    return OpenAI(base_url=gateway + "/v1", api_key=key(name), max_retries=0, timeout=30)


def audit_logs(gateway: str, secret: str = ADMIN, **params: Any) -> httpx.Response:
    return httpx.get(f"{gateway}/v1/organization/audit_logs", params=params,
                     headers={"authorization": f"Bearer {secret}"}, timeout=10)


def page(gateway: str, **params: Any) -> dict[str, Any]:
    reply = audit_logs(gateway, **params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def records_until(gateway: str, project: str, done: Callable[[list[Record]], bool], **params: Any) -> list[Record]:
    """The project's records (newest first) once `done` says they are all there."""
    deadline = time.monotonic() + 20
    while True:
        data = page(gateway, **{"project_ids[]": project, "limit": 100, **params})["data"]
        if done(data):
            return data
        if time.monotonic() > deadline:
            raise AssertionError(f"records of {project}: {json.dumps(data, indent=1)}")
        time.sleep(0.25)


def of_type(records: list[Record], kind: str) -> list[Record]:
    return [record for record in records if record["type"] == kind]


def test_a_turn_is_recorded_by_the_gateway_and_the_executor(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("echo", json.dumps({"text": SECRET})), Text(f"The tool said {SECRET}."))
    started = int(time.time())
    with sdk(gateway, "turns") as client:
        raw = client.responses.with_raw_response.create(model=MODEL, input=f"echo {SECRET}",
                                                        tools=[{"type": "operator", "name": "echo"}])
    response, request_id = raw.parse(), raw.headers["x-request-id"]
    records = records_until(gateway, tenant("turns"), lambda data: len(data) == 2)
    assert [record["type"] for record in records] == ["response.turn", "api.request"] or \
        [record["type"] for record in records] == ["api.request", "response.turn"]
    request, turn = of_type(records, "api.request")[0], of_type(records, "response.turn")[0]

    assert request["api.request"] == {"method": "POST", "route": "/v1/responses", "status": 200,
                                      "request_id": request_id}
    assert turn["response.turn"] == {
        "response_id": response.id, "conversation_id": None, "previous_response_id": None, "model": MODEL,
        "status": "completed", "tools": ["echo"], "approvals": {"granted": [], "denied": [], "requested": []},
        "request_id": request_id,
    }
    for record in records:
        assert record["id"].startswith("audit_") and started - 1 <= record["effective_at"] <= time.time() + 1
        assert record["project"] == {"id": tenant("turns"), "name": tenant("turns")}
        assert record["actor"]["type"] == "api_key"
        assert record["actor"]["api_key"]["id"] == key_id(key("turns"))
        assert record["actor"]["api_key"]["type"] == "service_account"
    text = json.dumps(records)
    assert SECRET not in text and key("turns") not in text  # no argument, input, output or key


def test_streamed_messages_and_failed_requests_are_recorded(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("streamed"), Text("relayed"), Text("translated"))
    with sdk(gateway, "passthrough") as client:
        events = list(client.responses.create(model=MODEL, input="x", stream=True))
        client.responses.create(model=MODEL, input="y", store=False)  # relayed to the model server
    with Anthropic(base_url=gateway, api_key=key("passthrough"), max_retries=0, timeout=30) as anthropic:
        anthropic.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "z"}])
    missing = httpx.get(f"{gateway}/v1/responses/resp_{RUN}", headers={"authorization": f"Bearer {key('passthrough')}"},
                        timeout=10)
    assert missing.status_code == 404
    records = records_until(gateway, tenant("passthrough"), lambda data: len(of_type(data, "api.request")) == 4
                            and len(of_type(data, "response.turn")) == 1)
    requests = [record["api.request"] for record in reversed(of_type(records, "api.request"))]
    assert [(request["method"], request["route"], request["status"], request.get("model")) for request in requests] == [
        ("POST", "/v1/responses", 200, None),  # the executor's turn names its model
        ("POST", "/v1/responses", 200, MODEL),
        ("POST", "/v1/messages", 200, MODEL),
        ("GET", "/v1/responses/{response_id}", 404, None),
    ]
    assert requests[-1]["response_id"] == f"resp_{RUN}"
    turn = of_type(records, "response.turn")[0]["response.turn"]
    assert turn["response_id"] == events[-1].response.id and turn["status"] == "completed" and turn["tools"] == []
    # Records of a response are found by its id.
    by_id = page(gateway, **{"resource_ids[]": f"resp_{RUN}"})["data"]
    assert [record["api.request"]["status"] for record in by_id] == [404]


def _mcp(fake_mcp: Any, approval: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": approval}


def test_approvals_granted_and_denied_are_recorded(gateway: str, upstream: FakeUpstream, fake_mcp: Any) -> None:
    upstream.script(FunctionCall("docs__echo", json.dumps({"text": SECRET})), Text("Echoed."),
                    FunctionCall("docs__add", '{"a": 1, "b": 2}'), Text("Not added."))
    tools = [_mcp(fake_mcp, "always")]
    with sdk(gateway, "mcp") as client:
        asked = client.responses.create(model=MODEL, input="echo", tools=tools)
        request = asked.output[-1]
        assert request.type == "mcp_approval_request"
        granted = client.responses.create(model=MODEL, tools=tools, previous_response_id=asked.id, input=[
            {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}])
        asked_again = client.responses.create(model=MODEL, input="add", tools=tools)
        denial = asked_again.output[-1]
        denied = client.responses.create(model=MODEL, tools=tools, previous_response_id=asked_again.id, input=[
            {"type": "mcp_approval_response", "approval_request_id": denial.id, "approve": False}])
    records = records_until(gateway, tenant("mcp"), lambda data: len(of_type(data, "response.turn")) == 4,
                            **{"event_types[]": "response.turn"})
    turns = {record["response.turn"]["response_id"]: record["response.turn"] for record in records}
    assert turns[asked.id]["approvals"] == {"granted": [], "denied": [], "requested": ["mcp:docs/echo"]}
    assert turns[asked.id]["tools"] == []  # held for approval: nothing ran
    assert turns[granted.id]["approvals"] == {"granted": [request.id], "denied": [], "requested": []}
    assert turns[granted.id]["tools"] == ["mcp:docs/echo"]
    assert turns[granted.id]["previous_response_id"] == asked.id
    assert turns[denied.id]["approvals"] == {"granted": [], "denied": [denial.id], "requested": []}
    assert turns[denied.id]["tools"] == []  # a denied call does not run
    assert SECRET not in json.dumps(records)


def test_filters_by_type_tenant_and_time(gateway: str, upstream: FakeUpstream) -> None:
    with sdk(gateway, "filters") as client:
        client.responses.create(model=MODEL, input="x", extra_headers={"x-request-id": f"req-{RUN}"})
    project = tenant("filters")
    records = records_until(gateway, project, lambda data: len(data) == 2)
    assert {record["project"]["id"] for record in records} == {project}
    # The client's request id names both records of its request.
    assert {record[record["type"]]["request_id"] for record in records} == {f"req-{RUN}"}
    only_turns = page(gateway, **{"project_ids[]": project, "event_types[]": "response.turn"})["data"]
    assert [record["type"] for record in only_turns] == ["response.turn"]
    both = page(gateway, project_ids=project, event_types="api.request,response.turn")["data"]
    assert len(both) == 2
    at = records[-1]["effective_at"]
    assert len(page(gateway, **{"project_ids[]": project, "effective_at[gte]": at})["data"]) == 2
    assert page(gateway, **{"project_ids[]": project, "effective_at[gt]": at + 60})["data"] == []
    assert page(gateway, **{"project_ids[]": project, "effective_at[lt]": at - 60})["data"] == []
    assert len(page(gateway, **{"project_ids[]": project, "effective_at[lte]": at + 60})["data"]) == 2
    # Another tenant's records are not this one's.
    assert all(record["project"]["id"] == tenant("turns")
               for record in page(gateway, **{"project_ids[]": tenant("turns")})["data"])


def test_pages_follow_after_and_before(gateway: str) -> None:
    auth = {"authorization": f"Bearer {key('pages')}"}
    for index in range(3):
        assert httpx.get(f"{gateway}/v1/responses/resp_page{index}", headers=auth, timeout=10).status_code == 404
    project = tenant("pages")
    records_until(gateway, project, lambda data: len(data) == 3)
    first = page(gateway, **{"project_ids[]": project, "limit": 2})
    assert first["object"] == "list" and first["has_more"] is True
    assert [record["api.request"]["response_id"] for record in first["data"]] == ["resp_page2", "resp_page1"]
    assert first["first_id"] == first["data"][0]["id"] and first["last_id"] == first["data"][1]["id"]
    rest = page(gateway, **{"project_ids[]": project, "limit": 2, "after": first["last_id"]})
    assert [record["api.request"]["response_id"] for record in rest["data"]] == ["resp_page0"]
    assert rest["has_more"] is False
    back = page(gateway, **{"project_ids[]": project, "limit": 2, "before": rest["first_id"]})
    assert [record["id"] for record in back["data"]] == [record["id"] for record in first["data"]]


def test_websocket_requests_are_recorded(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("stored"), Text("relayed"))
    url = gateway.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"authorization": f"Bearer {key('socket')}"}, open_timeout=10) as socket:
        for store in (True, False):
            socket.send(json.dumps({"type": "response.create", "model": MODEL, "input": "hi", "store": store}))
            while json.loads(socket.recv(timeout=30))["type"] not in ("response.completed", "error"):
                pass
    records = records_until(gateway, tenant("socket"), lambda data: len(of_type(data, "api.request")) == 2
                            and len(of_type(data, "response.turn")) == 1)
    assert [(record["api.request"]["method"], record["api.request"]["route"], record["api.request"]["status"],
             record["api.request"]["model"]) for record in of_type(records, "api.request")] == [
        ("WEBSOCKET", "/v1/responses", 200, MODEL)] * 2
    turn = of_type(records, "response.turn")[0]["response.turn"]
    assert turn["request_id"] in {record["api.request"]["request_id"] for record in of_type(records, "api.request")}


def test_llm_d_split_turns_are_recorded(stack, gateway: str, upstream: FakeUpstream) -> None:
    _, token = llm_d_secrets(stack.data_dir)
    project = f"audit-llm-d-{RUN}"
    headers = {"x-agentic-workload-token": token, "x-agentic-tenant": project}
    base = stack.urls["llm-d"] + "/v1alpha/responses"
    hydrated = httpx.post(base + "/hydrate", json={"model": MODEL, "input": "hi"}, headers=headers, timeout=30).json()
    upstream.script(Text("split answer"))
    answer = httpx.post(upstream.base_url + "/responses", json=hydrated["request"], timeout=30).json()
    persisted = httpx.post(base + "/persist", json={"context": hydrated["context"], "response": answer},
                           headers=headers, timeout=30)
    assert persisted.status_code == 200, persisted.text
    records = records_until(gateway, project, lambda data: len(data) == 1)
    assert records[0]["type"] == "response.turn"
    assert records[0]["response.turn"]["response_id"] == persisted.json()["id"]
    assert records[0]["response.turn"]["status"] == "completed" and records[0]["response.turn"]["model"] == MODEL
    assert records[0]["actor"]["api_key"]["service_account"]["id"] == "llm-d"


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 101}, {"effective_at[gt]": "yesterday"}])
def test_bad_parameters_are_400(gateway: str, params: dict[str, Any]) -> None:
    assert audit_logs(gateway, **params).status_code == 400


def test_the_trail_is_for_admins_only(gateway: str) -> None:
    refused = audit_logs(gateway, key("turns"))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "permission_denied"
    assert audit_logs(gateway, "sk-wrong").status_code == 401


def _metric(stack, gateway: str, name: str, **labels: str) -> float:
    text = httpx.get(stack.gateway_metrics_url(gateway), timeout=10).text
    wanted = ",".join(f'{label}="{value}"' for label, value in labels.items())
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(f"{name}{{{wanted}}}"))


def test_refused_authentication_is_counted_not_recorded(stack, gateway: str) -> None:
    """What an anonymous caller sends (a 60 kB path, a made-up id) never reaches the trail."""
    before = {reason: _metric(stack, gateway, "agentic_gateway_auth_failures_total", reason=reason)
              for reason in ("invalid_api_key", "missing_credentials")}
    unknown_id = f"resp_anonymous_{RUN}"
    assert httpx.get(f"{gateway}/v1/responses/{unknown_id}", headers={"authorization": "Bearer sk-wrong"},
                     timeout=10).status_code == 401
    assert httpx.get(f"{gateway}/v1/responses/{unknown_id}", timeout=10).status_code == 401
    assert httpx.get(f"{gateway}/v1/anonymous-{RUN}/{'x' * 60_000}", timeout=10).status_code == 404
    assert _metric(stack, gateway, "agentic_gateway_auth_failures_total", reason="invalid_api_key") == \
        before["invalid_api_key"] + 1
    assert _metric(stack, gateway, "agentic_gateway_auth_failures_total", reason="missing_credentials") == \
        before["missing_credentials"] + 1
    # A record of the tenant made afterwards is in the trail: the refused requests' would be too by now.
    marker = httpx.get(f"{gateway}/v1/responses/resp_marker_{RUN}", headers={"authorization": f"Bearer {key('bounds')}"},
                       timeout=10)
    assert marker.status_code == 404
    records_until(gateway, tenant("bounds"), lambda data: any(
        record["api.request"].get("response_id") == f"resp_marker_{RUN}" for record in data))
    assert page(gateway, **{"resource_ids[]": unknown_id})["data"] == []
    newest = json.dumps(page(gateway, limit=100)["data"])
    assert f"anonymous-{RUN}" not in newest and "x" * 1000 not in newest


def test_records_keep_route_templates_and_ids_cut_to_a_bound(gateway: str) -> None:
    auth = {"authorization": f"Bearer {key('bounds')}"}
    long_id = f"resp_long_{RUN}_" + "r" * 5_000
    refused = httpx.get(f"{gateway}/v1/responses/{long_id}", headers=auth, timeout=10).status_code
    assert refused in (400, 404)
    assert httpx.get(f"{gateway}/v1/no-such-route-{RUN}/{'y' * 5_000}", headers=auth, timeout=10).status_code == 404
    records = records_until(gateway, tenant("bounds"), lambda data: any(
        record["api.request"].get("response_id", "").startswith(f"resp_long_{RUN}") for record in data))
    (request,) = [record["api.request"] for record in records
                  if record["api.request"].get("response_id", "").startswith(f"resp_long_{RUN}")]
    assert request["route"] == "/v1/responses/{response_id}" and request["status"] == refused
    assert request["response_id"] == long_id[:128]
    assert all(len(json.dumps(record)) < 2_000 for record in records)
    assert f"no-such-route-{RUN}" not in json.dumps(records)
