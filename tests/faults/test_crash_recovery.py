"""The executor or state killed mid-turn, PostgreSQL paused or restarted mid-turn: what each client was told is what
is stored, and a conversation whose turn died is usable again within one lease (10 s), not 15 minutes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.faults.support import MODEL, FaultStack, wait_for
from tests.support.fake_upstream import Delay, FakeUpstream, Text

LEASE_BOUND_SECONDS = 30.0  # one 10 s lease, the restart and the retries, generously


def _told_completed(reply: httpx.Response) -> bool:
    """Whether a non-streamed turn was told it completed; anything else must be a clear error in the API's shape."""
    if reply.status_code == 200:
        assert reply.json()["status"] == "completed", reply.text
        return True
    assert reply.status_code >= 400 and reply.json()["error"]["message"], reply.text
    return False


def _next_turn_until_accepted(faults: FaultStack, conversation: str) -> httpx.Response:
    """Turns on the conversation until one is accepted; only `conversation_locked` or an unavailable service may refuse."""
    started = time.monotonic()
    while True:
        reply = faults.post("/responses", {"model": MODEL, "input": "again", "conversation": conversation})
        if reply.status_code == 200 or time.monotonic() - started > LEASE_BOUND_SECONDS:
            return reply
        assert reply.status_code in (409, 502, 503), reply.text
        time.sleep(0.5)


@pytest.mark.parametrize("service", ["executor", "state"])
def test_a_service_killed_mid_turn_leaves_the_conversation_usable(faults: FaultStack, upstream: FakeUpstream,
                                                                  service: str) -> None:
    conversation = faults.post("/conversations", {}).json()["id"]
    upstream.script(Delay(3.0, Text("the answer of the cut turn")), Text("after the crash"))
    with ThreadPoolExecutor(1) as pool:
        turn = pool.submit(faults.post, "/responses", {"model": MODEL, "input": "one", "conversation": conversation})
        wait_for(lambda: len(upstream.requests) >= 1, 30, "the model call")
        faults.kill(service)
        faults.restart(service)
        first = turn.result(timeout=60)
    told = _told_completed(first)
    assert faults.conversation_items(conversation) == (2 if told else 0)  # the whole turn, or nothing
    second = _next_turn_until_accepted(faults, conversation)
    assert second.status_code == 200, second.text
    assert second.json()["output"][0]["content"][0]["text"] in ("after the crash", "the answer of the cut turn")
    assert faults.conversation_items(conversation) == (4 if told else 2)


def _stored_streams(faults: FaultStack, upstream: FakeUpstream, during: Any) -> None:
    """Four stored streaming turns with `during` run while they are under way; each is told what is stored."""
    upstream.script(*(Delay(1.0, Text(f"answer {n}")) for n in range(4)))
    with ThreadPoolExecutor(4) as pool:
        turns = [pool.submit(faults.stream, {"model": MODEL, "input": f"turn {n}"}) for n in range(4)]
        wait_for(lambda: len(upstream.requests) >= 4, 30, "the model calls")
        during()
        outcomes = [turn.result(timeout=120) for turn in turns]
    for status, events in outcomes:
        assert status == 200 and events, events
        response_id, final = events[0]["response"]["id"], events[-1]
        if final["type"] == "response.completed":
            assert faults.stored_status(response_id) == "completed"
        else:
            assert final["type"] == "response.failed" and final["response"]["error"]["message"], final
            assert faults.stored_status(response_id) is None


def test_postgres_paused_15s_during_stored_streaming_turns(faults: FaultStack, upstream: FakeUpstream) -> None:
    def pause() -> None:
        faults.postgres.pause()
        try:
            time.sleep(15)
        finally:
            faults.postgres.resume()

    _stored_streams(faults, upstream, pause)


def test_postgres_restarted_during_stored_streaming_turns(faults: FaultStack, upstream: FakeUpstream) -> None:
    _stored_streams(faults, upstream, faults.postgres.restart)
    # The state service's pool is on the restarted server: the next turn is stored as usual.
    wait_for(lambda: faults.post("/responses", {"model": MODEL, "input": "later"}).status_code == 200, 30,
             "a stored turn after the restart")
