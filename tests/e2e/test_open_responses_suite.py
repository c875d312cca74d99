"""The Open Responses compliance scenarios (the specification's 17: HTTP, WebSocket, compaction), run against the
stack with each request, response and event checked against the published schemas.

The HTTP scenarios run both through the executor (stored, the specification's default) and as `store: false`
requests, which the gateway relays to the model server and fills in (pass-through); the WebSocket ones are
`store: false`, as the specification writes them, except `websocket-response`.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from conftest import TENANT_KEYS
from tests.support.fake_upstream import FunctionCall, Text
from tests.support.open_responses import event_violations, violations

MODEL = "smollm2"
WEATHER = {
    "type": "function", "name": "get_weather", "description": "Get the current weather for a location",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}
RED_DOT_PNG = "data:image/png;base64," + base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201a1e7d0e30000000049454e44ae426082")).decode()
_TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}


# -- HTTP ---------------------------------------------------------------------------------------------------


@pytest.fixture(params=[True, False], ids=["stored", "pass-through"])
def store(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def _post(gateway_url: str, body: dict[str, Any], path: str = "/v1/responses") -> httpx.Response:
    return httpx.post(f"{gateway_url}{path}", json=body, timeout=30,
                      headers={"authorization": f"Bearer {TENANT_KEYS['tenant-a']}"})


def _respond(gateway_url: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = _post(gateway_url, body)
    assert reply.status_code == 200, reply.text
    response = reply.json()
    assert violations("ResponseResource", response) == []
    return response


def _sse(gateway_url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events as the spec's SSE rules ask: LF line ends, one `data:` line, `event:` equal to the data's type."""
    with httpx.stream("POST", f"{gateway_url}/v1/responses", json={**body, "stream": True}, timeout=30,
                      headers={"authorization": f"Bearer {TENANT_KEYS['tenant-a']}"}) as reply:
        assert reply.status_code == 200
        raw = reply.read().decode()
    assert "\r" not in raw
    events = []
    for block in raw.strip().split("\n\n"):
        lines = [line for line in block.split("\n") if not line.startswith(":")]
        data = [line for line in lines if line.startswith("data: ")]
        if not lines or data == ["data: [DONE]"]:
            continue
        assert len(data) == 1, block
        event = json.loads(data[0][6:])
        assert f"event: {event['type']}" in lines
        events.append(event)
    assert event_violations(events) == {}
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    return events


def _message(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content, **extra}


def test_basic_response(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("Hello there friend."))
    response = _respond(gateway_url, {"model": MODEL, "store": store,
                                      "input": [_message("user", "Say hello in exactly 3 words.")]})
    assert response["status"] == "completed" and response["output"] and response["store"] is store
    assert response["completed_at"] >= response["created_at"]


def test_assistant_phase(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("four"))
    response = _respond(gateway_url, {"model": MODEL, "store": store, "input": [
        _message("assistant", "I should answer with the saved number.", phase="commentary"),
        _message("assistant", "The number is four.", phase="final_answer"),
        _message("user", "Repeat only the number."),
    ]})
    assert response["status"] == "completed" and response["output"]
    sent = upstream.requests[-1]["input"]
    assert "The number is four." in json.dumps(sent)  # the history reached the model


def test_response_output_phase_schema() -> None:
    """The schema takes assistant output labelled with its phase (the specification's local fixture)."""
    response = {
        "id": "resp_phase", "object": "response", "created_at": 1, "completed_at": 2, "status": "completed",
        "incomplete_details": None, "model": MODEL, "previous_response_id": None, "instructions": None, "error": None,
        "output": [{"id": f"msg_{phase}", "type": "message", "status": "completed", "role": "assistant", "phase": phase,
                    "content": [{"type": "output_text", "text": "four", "annotations": []}]}
                   for phase in ("commentary", "final_answer")],
        "tools": [], "tool_choice": "auto", "truncation": "disabled", "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}}, "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0,
        "top_logprobs": 0, "temperature": 1, "reasoning": {"effort": None, "summary": None}, "usage": None,
        "max_output_tokens": None, "max_tool_calls": None, "store": True, "background": False,
        "service_tier": "default", "metadata": {}, "safety_identifier": None, "prompt_cache_key": None,
    }
    assert violations("ResponseResource", response) == []
    assert violations("ResponseResource", {**response, "output": [{**response["output"][0], "phase": "musing"}]})


def test_streaming_response(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("1, 2, 3, 4, 5."))
    events = _sse(gateway_url, {"model": MODEL, "store": store, "input": [_message("user", "Count from 1 to 5.")]})
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["status"] == "completed"
    assert "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta") == "1, 2, 3, 4, 5."


def test_system_prompt(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("Ahoy, matey!"))
    response = _respond(gateway_url, {"model": MODEL, "store": store, "input": [
        _message("system", "You are a pirate. Always respond in pirate speak."), _message("user", "Say hello.")]})
    assert response["status"] == "completed" and response["output"][0]["content"][0]["text"] == "Ahoy, matey!"
    assert upstream.requests[-1]["input"][0]["role"] == "system"


def test_tool_calling(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(FunctionCall("get_weather", '{"location": "San Francisco, CA"}'))
    response = _respond(gateway_url, {"model": MODEL, "store": store, "tools": [WEATHER],
                                      "input": [_message("user", "What's the weather like in San Francisco?")]})
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    assert calls and calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"location": "San Francisco, CA"}


def test_tool_calling_streaming(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(FunctionCall("get_weather", '{"location": "San Francisco, CA"}'))
    events = _sse(gateway_url, {"model": MODEL, "store": store, "tools": [WEATHER],
                                "input": [_message("user", "What's the weather like in San Francisco?")]})
    types = [event["type"] for event in events]
    assert "response.function_call_arguments.delta" in types and "response.function_call_arguments.done" in types
    assert any(event["type"] == "response.output_item.added" and event["item"]["type"] == "function_call" for event in events)
    assert any(event["type"] == "response.output_item.done" and event["item"]["type"] == "function_call" for event in events)


def test_image_input(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("A red dot."))
    response = _respond(gateway_url, {"model": MODEL, "store": store, "input": [_message("user", [
        {"type": "input_text", "text": "What do you see in this image? Answer in one sentence."},
        {"type": "input_image", "image_url": RED_DOT_PNG},
    ])]})
    assert response["status"] == "completed" and response["output"]
    assert RED_DOT_PNG in json.dumps(upstream.requests[-1]["input"])  # the image reached the model


def test_multi_turn(gateway_url: str, upstream, store: bool) -> None:
    upstream.script(Text("Your name is Alice."))
    response = _respond(gateway_url, {"model": MODEL, "store": store, "input": [
        _message("user", "My name is Alice."),
        _message("assistant", "Hello Alice! Nice to meet you. How can I help you today?"),
        _message("user", "What is my name?"),
    ]})
    assert response["status"] == "completed" and response["output"]
    assert [item["role"] for item in upstream.requests[-1]["input"]] == ["user", "assistant", "user"]


def _compact(gateway_url: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = _post(gateway_url, body, "/v1/responses/compact")
    assert reply.status_code == 200, reply.text
    compacted = reply.json()
    assert violations("CompactResource", compacted) == []
    assert compacted["object"] == "response.compaction"
    assert any(item["type"] == "compaction" for item in compacted["output"])
    return compacted


def test_compact_response(gateway_url: str, upstream) -> None:
    upstream.script(Text("Launch Tuesday; notify support first."))
    _compact(gateway_url, {"model": MODEL, "prompt_cache_key": "openresponses-compact-test", "input": [
        _message("user", "We agreed to launch on Tuesday and notify support first."),
        _message("assistant", "Understood. The launch is Tuesday, with support notified beforehand."),
    ]})


def test_compact_missing_model(gateway_url: str, upstream) -> None:
    reply = _post(gateway_url, {"input": [_message("user", "Compact this conversation.")]}, "/v1/responses/compact")
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "model"
    assert upstream.requests == []


# -- WebSocket ----------------------------------------------------------------------------------------------


@dataclass
class SocketTurn:
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def terminal(self) -> dict[str, Any]:
        return self.events[-1]

    @property
    def response(self) -> dict[str, Any]:
        assert self.terminal["type"] != "error", self.terminal
        return self.terminal["response"]

    @property
    def error_code(self) -> str | None:
        terminal = self.terminal
        if terminal["type"] == "error":
            return terminal["error"]["code"]
        return (terminal["response"].get("error") or {}).get("code")


class Socket:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    def turn(self, **request: Any) -> SocketTurn:
        message = {"type": "response.create", "model": MODEL, **request}
        assert violations("WebSocketResponseCreateEvent", message) == []
        self.connection.send(json.dumps(message))
        turn = SocketTurn()
        deadline = time.monotonic() + 30
        while not turn.events or turn.terminal["type"] not in _TERMINAL:
            turn.events.append(json.loads(self.connection.recv(timeout=max(0.1, deadline - time.monotonic()))))
        assert event_violations(turn.events, websocket=True) == {}
        if turn.terminal["type"] != "error":
            assert violations("ResponseResource", turn.response) == []
            assert [event["sequence_number"] for event in turn.events] == list(range(len(turn.events)))
        return turn


@pytest.fixture()
def sockets(gateway_url: str) -> Iterator[Any]:
    """Opens connections (each a new WebSocket, as a reconnecting client makes); closes them after the test."""
    opened: list[ClientConnection] = []

    def open_socket() -> Socket:
        connection = connect(gateway_url.replace("http://", "ws://") + "/v1/responses", open_timeout=10,
                             additional_headers={"authorization": f"Bearer {TENANT_KEYS['tenant-a']}"})
        opened.append(connection)
        return Socket(connection)

    yield open_socket
    for connection in opened:
        connection.close()


def test_websocket_response(sockets, upstream) -> None:
    upstream.script(Text("1, 2, 3."))
    turn = sockets().turn(input=[_message("user", "Count from 1 to 3.")])
    assert turn.response["status"] == "completed" and turn.response["output"]


def test_websocket_sequential_responses(sockets, upstream) -> None:
    upstream.script(Text("first"), Text("second"))
    socket = sockets()
    first = socket.turn(store=False, input="Reply with exactly: first")
    second = socket.turn(store=False, input="Reply with exactly: second")
    assert [turn.response["status"] for turn in (first, second)] == ["completed", "completed"]
    assert [turn.response["output"][0]["content"][0]["text"] for turn in (first, second)] == ["first", "second"]
    assert first.response["id"] != second.response["id"]


def test_websocket_continuation(sockets, upstream) -> None:
    upstream.script(Text("OK"), Text("cobalt"))
    socket = sockets()
    first = socket.turn(store=False, input="Remember the code word: cobalt. Reply with OK.")
    second = socket.turn(store=False, previous_response_id=first.response["id"],
                         input="What is the code word? Reply with only the code word.")
    assert second.response["status"] == "completed"
    assert second.response["previous_response_id"] == first.response["id"]
    assert "Remember the code word: cobalt" in json.dumps(upstream.requests[-1]["input"])


def test_websocket_reconnect_store_false_recovery(sockets, upstream) -> None:
    upstream.script(Text("OK"), Text("recovered"))
    first = sockets().turn(store=False, input="Remember the code word: copper. Reply with OK.")
    socket = sockets()
    reconnect = socket.turn(store=False, previous_response_id=first.response["id"],
                            input="Try to continue after reconnect. Reply with exactly: reconnected")
    assert reconnect.error_code == "previous_response_not_found"
    recovery = socket.turn(store=False, input=[_message(
        "user", "The previous store:false chain could not continue after reconnect. Start a new response and reply "
                "with exactly: recovered")])
    assert recovery.response["status"] == "completed"


def test_websocket_previous_response_not_found(sockets, upstream) -> None:
    turn = sockets().turn(store=False, previous_response_id=f"resp_openresponses_missing_{time.time_ns()}",
                          input="This should fail because the previous response is missing.")
    assert turn.error_code == "previous_response_not_found"
    assert upstream.requests == []


def test_websocket_failed_continuation_evicts_cache(sockets, upstream) -> None:
    upstream.script(Text("OK"))
    socket = sockets()
    first = socket.turn(store=False, input="Remember the code word: ember. Reply with OK.")
    failed = socket.turn(store=False, previous_response_id=first.response["id"], input=[
        {"type": "function_call_output", "call_id": "call_openresponses_missing",
         "output": "No matching tool call exists in the previous response."}])
    assert failed.terminal["type"] == "error" or failed.response["status"] == "failed"
    retry = socket.turn(store=False, previous_response_id=first.response["id"],
                        input="Try to continue after the failed turn. Reply with exactly: stale")
    assert retry.error_code == "previous_response_not_found"
    assert len(upstream.requests) == 1  # neither the failed turn nor the retry reached the model


def test_websocket_compact_new_chain(gateway_url: str, sockets, upstream) -> None:
    upstream.script(Text("Code word slate."), Text("compacted"))
    compacted = _compact(gateway_url, {"model": MODEL, "input": [
        _message("user", [{"type": "input_text", "text": "Remember the compaction code word: slate."}]),
        _message("assistant", [{"type": "output_text", "text": "OK."}]),
        _message("user", [{"type": "input_text", "text": "Compress this conversation for later continuation."}]),
    ]})
    socket = sockets()
    socket.connection.send(json.dumps({  # the compacted window goes back as it came (no request schema check)
        "type": "response.create", "model": MODEL, "store": False, "tools": [],
        "input": [*compacted["output"], _message("user", "Continue from here. Reply with exactly: compacted")]}))
    events = []
    while not events or events[-1]["type"] not in _TERMINAL:
        events.append(json.loads(socket.connection.recv(timeout=30)))
    assert event_violations(events, websocket=True) == {}
    assert events[-1]["type"] == "response.completed", events[-1]
    assert violations("ResponseResource", events[-1]["response"]) == []
    assert "Code word slate." in json.dumps(upstream.requests[-1]["input"])  # the model read the summary
