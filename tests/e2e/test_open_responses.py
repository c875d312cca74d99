"""Our responses and stream events against the Open Responses specification's schemas (tests/fixtures/openresponses).

Checked for turns the gateway builds itself (stored turns, tool rounds, the Chat Completions adapter, failures);
the specification's own compliance scenarios, over HTTP and WebSocket and through the pass-through, are in
test_open_responses_suite.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from conftest import CHAT_MODEL
from tests.support.fake_upstream import FunctionCall, Output, Text, Truncated
from tests.support.open_responses import event_violations, violations

MODEL = "smollm2"
WEATHER = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
_violations = violations


def _create(gateway_url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(f"{gateway_url}/v1/responses", json=body, headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json()


def _stream(gateway_url: str, headers: dict[str, str], body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events, checked on the wire as the spec's SSE rules ask: LF line ends, one `data:` line, `event:` = type."""
    with httpx.stream("POST", f"{gateway_url}/v1/responses", json={**body, "stream": True}, headers=headers,
                      timeout=30) as reply:
        assert reply.status_code == 200
        raw = reply.read().decode()
    assert "\r" not in raw
    events = []
    for block in raw.strip().split("\n\n"):
        lines = block.split("\n")
        data_lines = [line for line in lines if line.startswith("data: ")]
        if data_lines == ["data: [DONE]"]:
            continue
        assert len(data_lines) == 1, block
        event = json.loads(data_lines[0][6:])
        assert f"event: {event['type']}" in lines
        events.append(event)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    return events


def _assert_valid_events(events: list[dict[str, Any]]) -> None:
    assert event_violations(events) == {}


@pytest.mark.parametrize("model", [MODEL, CHAT_MODEL])
def test_a_stored_text_turn_conforms(gateway_url, auth_headers, upstream, model) -> None:
    upstream.script(Text("Hello there, world."), Text("Hello again."))
    body = {"model": model, "input": "hi", "instructions": "Be brief.", "temperature": 0.5}
    response = _create(gateway_url, auth_headers, body)
    assert _violations("ResponseResource", response) == []
    assert response["presence_penalty"] == 0.0 and response["frequency_penalty"] == 0.0
    retrieved = httpx.get(f"{gateway_url}/v1/responses/{response['id']}", headers=auth_headers, timeout=10).json()
    assert _violations("ResponseResource", retrieved) == []
    _assert_valid_events(_stream(gateway_url, auth_headers, body))


def test_a_function_call_turn_conforms_and_echoes_strict_as_a_boolean(gateway_url, auth_headers, upstream) -> None:
    upstream.script(Output([Text("Checking."), FunctionCall("get_weather", '{"city": "Paris"}')]),
                    Output([Text("Checking."), FunctionCall("get_weather", '{"city": "Paris"}')]))
    body = {"model": MODEL, "input": "weather?", "tools": [WEATHER], "presence_penalty": 0.5}
    response = _create(gateway_url, auth_headers, body)
    assert _violations("ResponseResource", response) == []
    assert response["tools"][0]["strict"] is True and response["tools"][0]["description"] is None
    assert response["presence_penalty"] == 0.5
    assert [item["type"] for item in response["output"]] == ["message", "function_call"]
    _assert_valid_events(_stream(gateway_url, auth_headers, body))


def test_continuing_with_a_function_output_conforms(gateway_url, auth_headers, upstream) -> None:
    upstream.script(FunctionCall("get_weather", '{"city": "Oslo"}'), Text("It is cold."))
    first = _create(gateway_url, auth_headers, {"model": MODEL, "input": "weather?", "tools": [WEATHER]})
    call = first["output"][0]
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "-3 C"}
    events = _stream(gateway_url, auth_headers, {"model": MODEL, "previous_response_id": first["id"], "tools": [WEATHER],
                                                 "input": [output]})
    _assert_valid_events(events)
    assert events[-1]["type"] == "response.completed"


def test_incomplete_and_failed_turns_conform(gateway_url, auth_headers, upstream) -> None:
    upstream.script(Text("cut short", incomplete=True))
    incomplete = _stream(gateway_url, auth_headers, {"model": MODEL, "input": "long", "max_output_tokens": 16})
    assert incomplete[-1]["type"] == "response.incomplete"
    _assert_valid_events(incomplete)
    # A stream that the model server cuts after its first events ends as a failed response.
    upstream.script(Truncated("partial answer here", events=5))
    broken = _stream(gateway_url, auth_headers, {"model": MODEL, "input": "x"})
    assert broken[-1]["type"] == "response.failed"
    assert isinstance(broken[-1]["response"]["error"]["code"], str)
    _assert_valid_events(broken)
