"""The model server's request per round: the first built once from the client's body, each next one a copy."""

from __future__ import annotations

from agentic_core.responses.round_request import first_round_request, next_round_request

PAYLOAD = {"model": "gpt-x", "input": "hi", "store": True, "previous_response_id": "resp_1", "temperature": 0.5}
USER = {"id": "msg_1", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}], "status": "completed"}


def _first(**more):
    options = {"model": "served-x", "tools": None, "tool_choice": None, "stream": False, **more}
    return first_round_request(PAYLOAD, [], [USER], **options)


def test_the_first_request_carries_the_client_fields_but_never_ours() -> None:
    body = _first()
    assert body["temperature"] == 0.5 and "previous_response_id" not in body
    assert body["store"] is False and body["stream"] is False


def test_the_first_request_names_the_model_as_its_server_knows_it() -> None:
    assert _first()["model"] == "served-x"


def test_the_first_request_sends_tools_and_tool_choice_only_when_given() -> None:
    assert "tools" not in _first() and "tool_choice" not in _first()
    body = _first(tools=[{"type": "function", "name": "f"}], tool_choice="required")
    assert body["tools"] == [{"type": "function", "name": "f"}] and body["tool_choice"] == "required"


def test_settled_approvals_follow_the_input_in_the_models_form() -> None:
    output = {"id": "fco_1", "type": "function_call_output", "call_id": "a", "output": "ok", "status": "completed"}
    body = first_round_request(PAYLOAD, [], [USER], [output], model="m", tools=None, tool_choice=None, stream=True)
    assert body["input"][-1] == {"type": "function_call_output", "call_id": "a", "output": "ok"}


def test_the_next_request_adds_the_round_and_the_call_outputs_and_leaves_the_first() -> None:
    first = _first(tool_choice="required")
    call = {"id": "fc_1", "type": "function_call", "call_id": "a", "name": "web_search", "arguments": "{}"}
    output = {"id": "fco_1", "type": "function_call_output", "call_id": "a", "output": "found"}
    second = next_round_request(first, [call], [output])
    assert second["input"][-2:] == [call, output] and second["tool_choice"] == "auto"
    assert len(first["input"]) == 1 and first["tool_choice"] == "required"
