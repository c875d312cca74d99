"""Quiet SSE streams get keepalives: a comment on OpenAI streams, Anthropic's `ping` on Messages streams, and on
pass-through streams only between the model server's frames, whose bytes are otherwise relayed unchanged."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from anthropic import Anthropic

from conftest import TENANT_KEYS
from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"
SLOW_MODEL = "smollm2-on-a-slow-server"
SLOW = {"type": "operator", "name": "slow"}
COMMENT = b": keepalive\n\n"
PING = b'event: ping\ndata: {"type": "ping"}\n\n'
TOOL_SECONDS = 2.0  # under the stack's AGENTIC_EXECUTOR_TOOL_TIMEOUT_SECONDS, twice the keepalive interval
PAUSE = 2.0


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps({"type": event, **data}) + b"\n\n"


# What the slow server sends, in order: bytes, or a pause in seconds. The second pause is inside a frame.
_DELTA = _frame("response.output_text.delta", {"delta": "slow", "sequence_number": 1})
RESPONSES_SCRIPT: list[bytes | float] = [
    _frame("response.created", {"sequence_number": 0}), PAUSE, _DELTA[:20], PAUSE, _DELTA[20:],
    _frame("response.completed", {"sequence_number": 2}),
]
_TEXT = _frame("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "slow"}})
MESSAGES_SCRIPT: list[bytes | float] = [
    _frame("message_start", {"message": {"id": "msg_1"}}), PAUSE, _TEXT[:25], PAUSE, _TEXT[25:],
    _frame("message_stop", {}),
]
SCRIPTS = {"/v1/responses": RESPONSES_SCRIPT, "/v1/messages": MESSAGES_SCRIPT}


class _SlowModelServer(http.server.BaseHTTPRequestHandler):
    """Streams its script with the pauses in it (HTTP/1.0: the stream ends when the connection closes)."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for step in SCRIPTS[self.path]:
            if isinstance(step, float):
                time.sleep(step)
            else:
                self.wfile.write(step)
                self.wfile.flush()

    def log_message(self, *args: Any) -> None:
        pass


def _sent(script: list[bytes | float]) -> bytes:
    return b"".join(step for step in script if isinstance(step, bytes))


@pytest.fixture(scope="module")
def slow_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SlowModelServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def keepalive_gateway(stack, slow_server: str) -> str:
    """A gateway replica with a 1 s keepalive, which also routes `SLOW_MODEL` to the slow server."""
    models = [{"match": SLOW_MODEL, "base_url": slow_server}]
    return stack.add_gateway(AGENTIC_GATEWAY_SSE_KEEPALIVE_SECONDS="1", AGENTIC_MODELS=orjson.dumps(models).decode())


def _raw_stream(method: str, url: str, headers: dict[str, str], **kwargs: Any) -> bytes:
    chunks = []
    with httpx.stream(method, url, headers=headers, timeout=30, **kwargs) as reply:
        assert reply.status_code == 200, reply.read()
        for chunk in reply.iter_raw():
            chunks.append(chunk)
    return b"".join(chunks)


def _events_and_keepalives(raw: bytes, keepalive: bytes) -> tuple[list[dict], list[int]]:
    """The data events in order, and for each keepalive the number of events before it."""
    events: list[dict] = []
    keepalives: list[int] = []
    for block in raw.split(b"\n\n")[:-1]:
        if block + b"\n\n" == keepalive:
            keepalives.append(len(events))
        else:
            data = [line[6:] for line in block.split(b"\n") if line.startswith(b"data: ")]
            events.append(json.loads(data[0]))
    return events, keepalives


def test_a_quiet_gateway_tool_call_gets_keepalive_comments(keepalive_gateway: str, upstream, auth_headers) -> None:
    upstream.script(FunctionCall("slow", json.dumps({"seconds": TOOL_SECONDS})), Text("finally done"))
    body = {"model": MODEL, "input": "wait for it", "stream": True, "tools": [SLOW]}
    raw = _raw_stream("POST", f"{keepalive_gateway}/v1/responses", auth_headers, json=body)
    events, keepalives = _events_and_keepalives(raw, COMMENT)
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][-1]["content"][0]["text"] == "finally done"
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    # They came while the tool ran: between its item's `added` and `done`.
    added = next(index for index, event in enumerate(events) if event["type"] == "response.output_item.added")
    assert events[added]["item"]["status"] == "in_progress" and events[added + 1]["type"] == "response.output_item.done"
    assert keepalives and set(keepalives) == {added + 1}


def test_a_resumed_background_stream_gets_keepalives(keepalive_gateway: str, client, upstream, auth_headers) -> None:
    upstream.script(FunctionCall("slow", json.dumps({"seconds": TOOL_SECONDS})), Text("done later"))
    queued = client.responses.create(model=MODEL, input="in the background", background=True, tools=[SLOW])
    raw = _raw_stream("GET", f"{keepalive_gateway}/v1/responses/{queued.id}", auth_headers, params={"stream": "true"})
    events, keepalives = _events_and_keepalives(raw, COMMENT)
    assert keepalives and events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][-1]["content"][0]["text"] == "done later"


def test_a_messages_stream_gets_ping_events(keepalive_gateway: str, upstream, auth_headers) -> None:
    upstream.script(FunctionCall("slow", json.dumps({"seconds": TOOL_SECONDS})), Text("pinged"))
    body = {"model": MODEL, "max_tokens": 64, "stream": True, "tools": [SLOW],
            "messages": [{"role": "user", "content": "wait"}]}
    raw = _raw_stream("POST", f"{keepalive_gateway}/v1/messages", auth_headers, json=body)
    events, pings = _events_and_keepalives(raw, PING)
    assert pings and COMMENT not in raw
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    # Anthropic's SDK reads the same stream, pings included, into the message.
    with Anthropic(base_url=keepalive_gateway, api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=30) as sdk:
        upstream.script(FunctionCall("slow", json.dumps({"seconds": TOOL_SECONDS})), Text("pinged again"))
        with sdk.messages.stream(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "wait"}],
                                 tools=[SLOW]) as stream:  # type: ignore[list-item]
            final = stream.get_final_message()
    assert final.content[-1].text == "pinged again"  # type: ignore[union-attr]


@pytest.mark.parametrize(("path", "body", "keepalive"), [
    ("/v1/responses", {"model": SLOW_MODEL, "input": "hi", "store": False, "stream": True}, COMMENT),
    ("/v1/messages", {"model": SLOW_MODEL, "max_tokens": 16, "stream": True,
                      "messages": [{"role": "user", "content": "hi"}]}, PING),
])
def test_a_pass_through_stream_gets_keepalives_only_between_frames(
    keepalive_gateway: str, auth_headers, path: str, body: dict, keepalive: bytes
) -> None:
    raw = _raw_stream("POST", keepalive_gateway + path, auth_headers, json=body)
    assert keepalive in raw
    # Byte for byte what the server sent, once the keepalives are taken out...
    assert raw.replace(keepalive, b"") == _sent(SCRIPTS[path])
    # ...and each of them came between two of its frames, none in the frame the server paused inside.
    start = raw.find(keepalive)
    while start != -1:
        assert start == 0 or raw[:start].endswith(b"\n\n")
        start = raw.find(keepalive, start + len(keepalive))
