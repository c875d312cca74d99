"""Gateway-owned tools in the round loop, through the whole stack (executor → JetStream → tool runner)."""

from __future__ import annotations

import httpx
import openai
import orjson
import pytest
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Output, Text

MODEL = "smollm2"
ECHO = {"type": "operator", "name": "echo"}
CLIENT_TOOL = {"type": "function", "name": "ask_user", "parameters": {"type": "object", "properties": {}}}


def _outputs_sent(request: dict) -> list[dict]:
    return [item for item in request["input"] if item.get("type") == "function_call_output"]


def test_a_gateway_call_runs_and_the_model_answers_with_its_result(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "ping"}'), Text("The tool said ping."))
    response = client.responses.create(model=MODEL, input="use the tool", tools=[ECHO])
    assert response.status == "completed" and response.output_text == "The tool said ping."
    assert [item.type for item in response.output] == ["function_call", "function_call_output", "message"]
    assert response.output[0].status == "completed"
    # The second round saw the call and its rendered result; the model sees the operator's schema.
    assert upstream.requests[0]["tools"][0]["parameters"]["required"] == ["text"]
    (output,) = _outputs_sent(upstream.requests[1])
    assert orjson.loads(output["output"]) == {"echoed": "ping"}
    assert upstream.requests[1]["tool_choice"] == "auto"
    # Usage is summed over both rounds.
    assert response.usage.input_tokens == 2 * 36


def test_streamed_rounds_form_one_continuous_response(client: OpenAI, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "a"}'), FunctionCall("echo", '{"text": "b"}'), Text("done"))
    events = list(client.responses.create(model=MODEL, input="twice", tools=[ECHO], stream=True))
    types = [event.type for event in events]
    assert types.count("response.created") == 1 and types[-1] == "response.completed"
    assert sum(t in ("response.completed", "response.incomplete", "response.failed") for t in types) == 1
    assert [event.sequence_number for event in events] == list(range(len(events)))
    # The model's own function-call events are hidden; the public items arrive with rebased indexes.
    assert "response.function_call_arguments.delta" not in types
    added = [(event.output_index, event.item.type) for event in events if event.type == "response.output_item.added"]
    assert added == [(0, "function_call"), (1, "function_call_output"), (2, "function_call"), (3, "function_call_output"),
                     (4, "message")]
    final = events[-1].response
    assert [item.type for item in final.output] == [kind for _, kind in added]


def test_a_mixed_round_runs_the_gateway_call_and_returns_the_client_call(client: OpenAI, upstream) -> None:
    upstream.script(Output([FunctionCall("echo", '{"text": "x"}'), FunctionCall("ask_user", "{}")]), Text("thanks"))
    first = client.responses.create(model=MODEL, input="mixed", tools=[ECHO, CLIENT_TOOL])
    # The model's order: the executed gateway call (with its output), then the client's call.
    assert [(item.type, getattr(item, "name", None)) for item in first.output] == [
        ("function_call", "echo"), ("function_call_output", None), ("function_call", "ask_user")]
    client_call = first.output[2]
    assert len(upstream.requests) == 1  # no second round: the client acts
    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, tools=[ECHO, CLIENT_TOOL],
        input=[{"type": "function_call_output", "call_id": client_call.call_id, "output": "yes"}],
    )
    assert second.output_text == "thanks"
    history = upstream.requests[-1]["input"]
    # The gateway call is replayed once, as the model saw it: call, then its output.
    assert [item["type"] for item in history] == ["message", "function_call", "function_call", "function_call_output",
                                                  "function_call_output"]


def test_the_round_limit_ends_incomplete_without_a_dangling_call(client: OpenAI, upstream) -> None:
    upstream.script(*[FunctionCall("echo", f'{{"text": "{n}"}}') for n in range(10)])
    response = client.responses.create(model=MODEL, input="loop forever", tools=[ECHO])
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_tool_rounds"
    assert len(upstream.requests) == 10
    assert [item.type for item in response.output].count("function_call_output") == 10
    # Every call has its output, so the chain continues without a missing-output error.
    follow_up = client.responses.create(model=MODEL, input="summarise", previous_response_id=response.id)
    assert follow_up.status == "completed"


@pytest.mark.parametrize(
    ("call", "seen_by_model"),
    [
        (FunctionCall("slow", '{"seconds": 6}'), "Error: The slow tool"),  # the executor or the runner calls time first
        (FunctionCall("always_fails", '{"reason": "test"}'), "Error: broken on purpose: test"),
        (FunctionCall("pick_color", '{"color": "green"}'), "Hint: 'green' is not stocked\nAlternatives: red; blue"),
        (FunctionCall("echo", "not json"), "Hint: The arguments are not a JSON object"),
    ],
)
def test_tool_failures_become_outputs_for_the_model_not_failed_responses(client: OpenAI, upstream, call, seen_by_model) -> None:
    tools = [{"type": "operator", "name": call.name}]
    upstream.script(call, Text("recovered"))
    response = client.responses.create(model=MODEL, input="try it", tools=tools)
    assert response.status == "completed" and response.output_text == "recovered"
    (output,) = _outputs_sent(upstream.requests[1])
    assert output["output"].startswith(seen_by_model)


def test_a_streamed_mixed_round_keeps_the_models_order(client: OpenAI, upstream) -> None:
    upstream.script(Output([Text("Let me check."), FunctionCall("echo", '{"text": "x"}'), FunctionCall("ask_user", "{}")]))
    events = list(client.responses.create(model=MODEL, input="mixed", tools=[ECHO, CLIENT_TOOL], stream=True))
    added = [(event.output_index, event.item.type, getattr(event.item, "name", None))
             for event in events if event.type == "response.output_item.added"]
    assert added == [(0, "message", None), (1, "function_call", "echo"), (2, "function_call_output", None),
                     (3, "function_call", "ask_user")]
    final = events[-1].response
    assert [item.type for item in final.output] == ["message", "function_call", "function_call_output", "function_call"]
    assert [event.sequence_number for event in events] == list(range(len(events)))


def test_max_tool_calls_is_honoured(client: OpenAI, upstream) -> None:
    upstream.script(Output([FunctionCall("echo", '{"text": "1"}'), FunctionCall("echo", '{"text": "2"}')]), Text("ok"))
    client.responses.create(model=MODEL, input="two calls", tools=[ECHO], max_tool_calls=1)
    outputs = [item["output"] for item in _outputs_sent(upstream.requests[1])]
    assert outputs[0] == '{"echoed":"1"}' and outputs[1].startswith("Error: The limit on tool calls")


def test_gateway_tools_on_a_conversation_are_stored_as_the_model_saw_them(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(FunctionCall("echo", '{"text": "c"}'), Text("first"), Text("second"))
    client.responses.create(model=MODEL, input="q1", tools=[ECHO], conversation=conversation.id)
    client.responses.create(model=MODEL, input="q2", conversation=conversation.id)
    assert [item["type"] for item in upstream.requests[-1]["input"]] == [
        "message", "function_call", "function_call_output", "message", "message"]


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        ([{"type": "file_search", "vector_store_ids": []}], "tools[0].vector_store_ids"),
        ([{"type": "operator", "name": "no_such_tool"}], "tools[0].name"),
        ([{"type": "shell"}], "tools[0]"),
        ([ECHO, {"type": "function", "name": "echo", "parameters": {}}], "tools[1]"),
        ([{"type": "teleport"}], "tools[0].type"),
    ],
)
def test_unsupported_or_conflicting_tools_are_400_before_inference(gateway_url, auth_headers, upstream, tools, param) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses", json={"model": MODEL, "input": "x", "tools": tools}, headers=auth_headers)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param
    assert upstream.requests == []


def test_a_tool_choice_naming_an_undeclared_tool_is_400(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL, input="x", tools=[ECHO], tool_choice={"type": "function", "name": "other"})
