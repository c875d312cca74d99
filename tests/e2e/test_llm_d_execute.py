"""llm-d's execute step: a coordinator runs inference itself and the gateway's tools through us."""

from __future__ import annotations

import httpx
import orjson
import pytest
from agentic_local.stack import llm_d_secrets
from openai import OpenAI

from tests.llm_d.coordinator import TENANT_HEADER, TOKEN_HEADER, LlmD
from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text

EXECUTE = {"x-agentic-split-execute": "true"}


@pytest.fixture()
def llm_d(stack, upstream: FakeUpstream) -> LlmD:
    signing_key, token = llm_d_secrets(stack.data_dir)
    return LlmD(stack.urls["llm-d"], signing_key, token, upstream.base_url)


def _post(llm_d: LlmD, path: str, body: dict, extra: dict | None = None) -> httpx.Response:
    headers = {TOKEN_HEADER: llm_d.token, TENANT_HEADER: "tenant-a", "content-type": "application/json", **(extra or {})}
    return httpx.post(llm_d.base_url + path, content=orjson.dumps(body), headers=headers, timeout=60)


def test_without_the_header_gateway_tools_are_still_refused(llm_d: LlmD) -> None:
    reply = _post(llm_d, "/v1alpha/responses/hydrate", {"model": "smollm2", "input": "x", "tools": [{"type": "web_search"}]})
    assert reply.status_code == 400 and "not supported for split execution" in reply.json()["error"]["message"]


def test_hydrate_execute_persist_then_the_gateway_continues(llm_d: LlmD, upstream: FakeUpstream, client: OpenAI) -> None:
    tools = [{"type": "operator", "name": "echo"}]
    hydrated = _post(llm_d, "/v1alpha/responses/hydrate", {"model": "smollm2", "input": "use echo", "tools": tools}, EXECUTE)
    assert hydrated.status_code == 200, hydrated.text
    request, context = hydrated.json()["request"], hydrated.json()["context"]
    assert request["tools"][0]["name"] == "echo" and request["tools"][0]["type"] == "function"

    upstream.script(FunctionCall("echo", '{"text": "split"}'), Text("Echoed split."))
    first_round = llm_d.call_model(request)  # the coordinator's own inference
    calls = [item for item in first_round["output"] if item["type"] == "function_call"]
    executed = _post(llm_d, "/v1alpha/responses/execute", {"context": context, "calls": calls, "request": request})
    assert executed.status_code == 200, executed.text
    step = executed.json()
    assert orjson.loads(step["outputs"][0]["output"]) == {"echoed": "split"}
    assert [item["type"] for item in step["request"]["input"][-2:]] == ["function_call", "function_call_output"]
    assert step["request"]["tool_choice"] == "auto"

    final_round = llm_d.call_model(step["request"])
    persisted = _post(llm_d, "/v1alpha/responses/persist", {"context": step["context"], "response": final_round})
    assert persisted.status_code == 200, persisted.text
    stored = persisted.json()
    assert [item["type"] for item in stored["output"]] == ["function_call", "function_call_output", "message"]

    # The gateway continues the chain: the model sees the call and its output once.
    client.responses.create(model="smollm2", input="and then?", previous_response_id=stored["id"])
    history = upstream.requests[-1]["input"]
    assert [item["type"] for item in history] == ["message", "function_call", "function_call_output", "message", "message"]


def test_execute_refuses_client_calls_reused_ids_and_plain_contexts(llm_d: LlmD, upstream: FakeUpstream) -> None:
    body = {"model": "smollm2", "input": "x", "tools": [{"type": "operator", "name": "echo"},
                                                          {"type": "function", "name": "mine", "parameters": {}}]}
    hydrated = _post(llm_d, "/v1alpha/responses/hydrate", body, EXECUTE).json()
    call = {"type": "function_call", "name": "mine", "call_id": "c1", "arguments": "{}"}
    refused = _post(llm_d, "/v1alpha/responses/execute", {"context": hydrated["context"], "calls": [call],
                                                           "request": hydrated["request"]})
    assert refused.status_code == 400 and "client" in refused.json()["error"]["message"]
    echo = {"type": "function_call", "name": "echo", "call_id": "c2", "arguments": '{"text": "a"}'}
    step = _post(llm_d, "/v1alpha/responses/execute", {"context": hydrated["context"], "calls": [echo],
                                                        "request": hydrated["request"]}).json()
    again = _post(llm_d, "/v1alpha/responses/execute", {"context": step["context"], "calls": [echo], "request": step["request"]})
    assert again.status_code == 400 and again.json()["error"]["param"] == "calls[0].call_id"
    plain = _post(llm_d, "/v1alpha/responses/hydrate", {"model": "smollm2", "input": "x"}).json()
    refused = _post(llm_d, "/v1alpha/responses/execute", {"context": plain["context"], "calls": [echo], "request": plain["request"]})
    assert refused.status_code == 400 and refused.json()["error"]["message"].startswith("context rejected")
