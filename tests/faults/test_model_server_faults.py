"""A model server that fails mid-turn: the client gets a clear error, in the API's shape, and nothing is stored.

Covered for a stored turn, streamed and not, and for a turn on a conversation (whose items must not grow).
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from tests.faults.support import MODEL, FaultStack
from tests.support.fake_upstream import Delay, FakeUpstream, HttpError, MalformedSse, Text, Truncated

FAULTS: dict[str, Any] = {
    "disconnects-mid-stream": Truncated("this answer is cut off somewhere in the middle", events=5),
    "sends-malformed-sse": MalformedSse("this answer turns into garbage", events=5),
    "hangs": Delay(6.0),  # past the suite's 3 s upstream read timeout
    "answers-429": HttpError(429, "Too many requests, slow down", "RateLimitError"),
    "answers-500": HttpError(500, "engine crashed", "InternalServerError"),
    "answers-503": HttpError(503, "engine overloaded", "ServiceUnavailableError"),
}


def _post(faults: FaultStack, path: str, body: dict[str, Any]) -> httpx.Response:
    return faults.post(path, body, timeout=30)


def _items(faults: FaultStack, conversation: str) -> int:
    return faults.conversation_items(conversation)


def _assert_clear_error(reply: httpx.Response) -> None:
    assert reply.status_code in (429, 502, 503, 504), reply.text
    error = reply.json()["error"]
    assert error["message"] and error["type"]


def _assert_clear_stream_error(reply: httpx.Response) -> str | None:
    """A stream that fails ends with `response.failed` (or `error`) carrying an error; returns the response id."""
    if reply.status_code != 200:  # refused before the stream began
        _assert_clear_error(reply)
        return None
    events = [line[len("data: "):] for line in reply.text.splitlines() if line.startswith("data: ")]
    last = orjson.loads(events[-1])
    assert last["type"] in ("response.failed", "error"), last
    error = last["response"]["error"] if last["type"] == "response.failed" else last.get("error", last)
    assert error and error.get("message")
    return last["response"]["id"] if last["type"] == "response.failed" else None


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_failing_model_server_is_a_clear_error_and_stores_nothing(faults: FaultStack, upstream: FakeUpstream,
                                                                     fault: str, stream: bool) -> None:
    upstream.script(FAULTS[fault])
    before = faults.stored_count()
    reply = _post(faults, "/responses", {"model": MODEL, "input": "tell me", "stream": stream})
    response_id = _assert_clear_stream_error(reply) if stream else (_assert_clear_error(reply) or None)
    assert faults.stored_count() == before
    if response_id is not None:
        assert faults.stored_status(response_id) is None


@pytest.mark.parametrize("fault", ["disconnects-mid-stream", "sends-malformed-sse", "answers-500"])
def test_a_failed_turn_leaves_its_conversation_as_it_was(faults: FaultStack, upstream: FakeUpstream, fault: str) -> None:
    conversation = _post(faults, "/conversations", {}).json()["id"]
    upstream.script(Text("first answer"), FAULTS[fault], Text("third answer"))
    assert _post(faults, "/responses", {"model": MODEL, "input": "one", "conversation": conversation}).status_code == 200
    items = _items(faults, conversation)
    _assert_clear_stream_error(_post(faults, "/responses", {"model": MODEL, "input": "two", "conversation": conversation,
                                                             "stream": True}))
    assert _items(faults, conversation) == items  # nothing half-stored
    # The conversation is not left locked or broken: the next turn goes on from the first one.
    third = _post(faults, "/responses", {"model": MODEL, "input": "three", "conversation": conversation})
    assert third.status_code == 200, third.text
    assert _items(faults, conversation) == items + 2
