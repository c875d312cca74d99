"""A turn's lease on its conversation is short and renewed while the turn runs: a long turn keeps the
conversation, and an executor killed mid-turn locks it for one short lease only, not for the longest a turn
may take."""

from __future__ import annotations

import json
import threading
import time

import httpx
import openai
import pytest
from agentic_local.processes import free_port, wait_until
from openai import OpenAI

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Delay, FunctionCall, Text

MODEL = "smollm2"
SLOW = {"type": "operator", "name": "slow"}
LEASE_SECONDS = 2.0


@pytest.fixture()
def own_executor(stack):
    """An executor of its own (a short lease) behind a gateway of its own: it can be killed and replaced."""
    port = free_port()
    executor = stack.add_executor(port=port, AGENTIC_EXECUTOR_CONVERSATION_LEASE_SECONDS=str(LEASE_SECONDS),
                                  AGENTIC_EXECUTOR_CONVERSATION_WAIT_SECONDS="1", AGENTIC_EXECUTOR_TOOL_TIMEOUT_SECONDS="30")
    gateway = stack.add_gateway(AGENTIC_GATEWAY_EXECUTOR_ADDRESS=f"127.0.0.1:{port}")
    with OpenAI(base_url=gateway + "/v1", api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=60) as client:
        yield client, executor, port
    executor.stop()


def test_a_turn_longer_than_its_lease_keeps_the_conversation(own_executor, upstream) -> None:
    client, _, _ = own_executor
    conversation = client.conversations.create()
    upstream.script(FunctionCall("slow", json.dumps({"seconds": 3 * LEASE_SECONDS})), Text("long turn done"))
    results: dict = {}

    def long_turn() -> None:
        try:
            results["long"] = client.responses.create(model=MODEL, input="long", conversation=conversation.id, tools=[SLOW])
        except Exception as error:  # shown by the assertion below rather than lost in the thread
            results["error"] = error

    thread = threading.Thread(target=long_turn)
    thread.start()
    wait_until(lambda: upstream.requests or "error" in results, 20, "the long turn's model call")
    assert "error" not in results, results["error"]
    time.sleep(1.5 * LEASE_SECONDS)  # past the first lease: only its renewals hold the conversation now
    with pytest.raises(openai.ConflictError) as locked:
        client.responses.create(model=MODEL, input="meanwhile", conversation=conversation.id)
    assert locked.value.body["code"] == "conversation_locked"
    thread.join(30)
    assert results["long"].output_text == "long turn done"


def test_an_executor_killed_mid_turn_locks_the_conversation_for_one_lease_at_most(stack, own_executor, upstream) -> None:
    client, executor, port = own_executor
    conversation = client.conversations.create()
    upstream.script(Delay(30, Text("never answered")))
    thread = threading.Thread(target=lambda: _ignore_errors(
        lambda: client.responses.create(model=MODEL, input="doomed", conversation=conversation.id)))
    thread.start()
    wait_until(lambda: len(upstream.requests) == 1, 20, "the doomed turn's model call")
    executor.process.kill()
    executor.process.wait()
    replacement = stack.add_executor(port=port)  # the pod comes back on the same address
    try:
        upstream.script(Text("the conversation is free again"))
        started = time.monotonic()
        deadline = started + 4 * LEASE_SECONDS + 10
        while True:
            try:
                answer = client.responses.create(model=MODEL, input="hello again", conversation=conversation.id)
                break
            except (openai.ConflictError, openai.APIConnectionError, openai.InternalServerError):
                assert time.monotonic() < deadline, "the conversation stayed locked"
                time.sleep(0.5)
        assert answer.output_text == "the conversation is free again"
        # Nothing of the killed turn was stored; the new turn's items are all the conversation holds.
        items = client.conversations.items.list(conversation.id, order="asc").data
        assert [item.type for item in items] == ["message", "message"]
    finally:
        replacement.stop()
        thread.join(30)


def _ignore_errors(call) -> None:
    try:
        call()
    except (openai.APIError, httpx.HTTPError):
        pass
