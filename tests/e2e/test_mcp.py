"""MCP tools through the whole stack: discovery via mcp-bridge, calls over JetStream, approvals across turns."""

from __future__ import annotations

import httpx
import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"


def _mcp(fake_mcp, approval="never", **extra) -> dict:
    return {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": approval, **extra}


def _outputs(request: dict) -> list[str]:
    return [item["output"] for item in request["input"] if item.get("type") == "function_call_output"]


def test_discovered_tools_run_and_appear_as_mcp_items(client: OpenAI, upstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__echo", '{"text": "over mcp"}'), Text("It echoed."))
    response = client.responses.create(model=MODEL, input="echo it", tools=[_mcp(fake_mcp)])
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    listing, call = response.output[0], response.output[1]
    assert listing.server_label == "docs" and {tool.name for tool in listing.tools} >= {"echo", "add", "fail"}
    assert call.name == "echo" and call.server_label == "docs" and "over mcp" in call.output
    assert "docs__echo" in {tool["name"] for tool in upstream.requests[0]["tools"]}
    assert "over mcp" in _outputs(upstream.requests[1])[0]


def test_allowed_tools_narrow_what_the_model_sees(client: OpenAI, upstream, fake_mcp) -> None:
    client.responses.create(model=MODEL, input="x", tools=[_mcp(fake_mcp, allowed_tools=["add"])])
    assert [tool["name"] for tool in upstream.requests[0]["tools"]] == ["docs__add"]


def test_streamed_mcp_lifecycle(client: OpenAI, upstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__add", '{"a": 2, "b": 3}'), Text("5"))
    events = list(client.responses.create(model=MODEL, input="add", tools=[_mcp(fake_mcp)], stream=True))
    types = [event.type for event in events]
    for expected in ("response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
                     "response.mcp_call.in_progress", "response.mcp_call_arguments.done", "response.mcp_call.completed"):
        assert expected in types
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert [item.type for item in events[-1].response.output] == ["mcp_list_tools", "mcp_call", "message"]


def test_an_approval_is_asked_then_honoured_once_and_the_listing_not_repeated(client: OpenAI, upstream, fake_mcp) -> None:
    tools = [_mcp(fake_mcp, approval="always")]
    upstream.script(FunctionCall("docs__echo", '{"text": "approved text"}'), Text("Done after approval."))
    first = client.responses.create(model=MODEL, input="echo", tools=tools)
    request = first.output[-1]
    assert request.type == "mcp_approval_request" and request.name == "echo"
    assert len(upstream.requests) == 1  # nothing ran

    approval = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
    second = client.responses.create(model=MODEL, tools=tools, previous_response_id=first.id, input=[approval])
    assert [item.type for item in second.output] == ["mcp_call", "message"]  # no second mcp_list_tools
    assert "approved text" in second.output[0].output
    assert "approved text" in _outputs(upstream.requests[-1])[0]

    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, tools=tools, previous_response_id=second.id, input=[approval])
    assert raised.value.body["code"] == "approval_already_used"


def test_a_denied_call_is_reported_to_the_model(client: OpenAI, upstream, fake_mcp) -> None:
    tools = [_mcp(fake_mcp, approval={"always": {"tool_names": ["add"]}})]
    upstream.script(FunctionCall("docs__add", '{"a": 1, "b": 1}'), Text("Understood."))
    first = client.responses.create(model=MODEL, input="add", tools=tools)
    denial = {"type": "mcp_approval_response", "approval_request_id": first.output[-1].id, "approve": False}
    client.responses.create(model=MODEL, tools=tools, previous_response_id=first.id, input=[denial])
    assert "did not approve" in _outputs(upstream.requests[-1])[0]


def test_an_mcp_error_is_a_failed_call_fed_back(client: OpenAI, upstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__fail", '{"reason": "broken"}'), Text("It failed."))
    response = client.responses.create(model=MODEL, input="fail", tools=[_mcp(fake_mcp)])
    call = response.output[1]
    assert call.type == "mcp_call" and call.error and response.status == "completed"
    assert _outputs(upstream.requests[1])[0].startswith("Error:")


def test_authorization_reaches_the_server(client: OpenAI, upstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__whoami", "{}"), Text("ok"))
    response = client.responses.create(model=MODEL, input="who", tools=[_mcp(fake_mcp, authorization=fake_mcp.token)])
    assert response.output[1].error is None and response.output[1].output


def test_a_server_outside_the_allowlist_is_refused(gateway_url, auth_headers, upstream, fake_mcp) -> None:
    tool = {"type": "mcp", "server_label": "evil", "server_url": f"http://localhost:{fake_mcp.port}/mcp",
            "require_approval": "never"}
    reply = httpx.post(f"{gateway_url}/v1/responses", headers=auth_headers,
                       json={"model": MODEL, "input": "x", "tools": [tool]}, timeout=30)
    assert reply.status_code == 400, reply.text
    assert "allow" in reply.json()["error"]["message"].lower()
    assert upstream.requests == []


def test_too_many_servers_is_400_before_any_discovery(gateway_url, auth_headers, fake_mcp) -> None:
    tools = [{**_mcp(fake_mcp), "server_label": f"s{n}"} for n in range(65)]
    reply = httpx.post(f"{gateway_url}/v1/responses", headers=auth_headers, json={"model": MODEL, "input": "x", "tools": tools})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "too_many_mcp_servers"


def test_store_false_clients_approve_by_sending_the_request_back(client: OpenAI, upstream, fake_mcp) -> None:
    tools = [_mcp(fake_mcp, approval="always")]
    upstream.script(FunctionCall("docs__echo", '{"text": "manual state"}'), Text("Approved and done."))
    first = client.responses.create(model=MODEL, input="echo", tools=tools, store=False)
    request = first.output[-1]
    assert request.type == "mcp_approval_request"
    history = [{"role": "user", "content": "echo"}, request.model_dump(exclude_none=True),
               {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}]
    second = client.responses.create(model=MODEL, input=history, tools=tools, store=False)
    assert second.output_text == "Approved and done."
    sent = upstream.requests[-1]["input"]
    assert [item.get("type", "message") for item in sent] == ["message", "function_call", "function_call_output"]
    assert "manual state" in sent[-1]["output"]
