"""A turn whose store times out (the state service or PostgreSQL stalled) may still be committed later: the client
is told what the database holds, not a guess."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from agentic_local.processes import free_port, wait_until
from openai import OpenAI

from conftest import TENANT_KEYS
from tests.support.fake_upstream import Delay, Text

MODEL = "smollm2"


@pytest.fixture()
def impatient(stack):
    """A gateway and an executor whose calls to the state service give up after 1 s."""
    port = free_port()
    executor = stack.add_executor(port=port, AGENTIC_EXECUTOR_STATE_TIMEOUT_SECONDS="1")
    gateway = stack.add_gateway(AGENTIC_GATEWAY_EXECUTOR_ADDRESS=f"127.0.0.1:{port}")
    with OpenAI(base_url=gateway + "/v1", api_key=TENANT_KEYS["tenant-a"], max_retries=0, timeout=60) as client:
        yield client
    executor.stop()


def _stall_state_during_the_persist(stack, upstream, seconds: float) -> threading.Thread:
    """Freezes the state service (SIGSTOP) from just before the turn is stored, for `seconds`."""
    state = next(child for child in stack.children if child.name == "state")

    def stall() -> None:
        wait_until(lambda: len(upstream.requests) == 1, 20, "the model call")
        state.process.send_signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            state.process.send_signal(signal.SIGCONT)

    thread = threading.Thread(target=stall)
    thread.start()
    return thread


@pytest.mark.parametrize("stream", [False, True])
def test_a_store_that_outlives_its_deadline_is_reported_as_stored(stack, impatient: OpenAI, upstream,
                                                                 stream: bool) -> None:
    upstream.script(Delay(0.5, Text("stored after all")))
    stall = _stall_state_during_the_persist(stack, upstream, seconds=3.0)
    try:
        if stream:
            events = list(impatient.responses.create(model=MODEL, input="store me", stream=True))
            final = events[-1]
            assert final.type == "response.completed", final
            response_id, text = final.response.id, final.response.output_text
        else:
            response = impatient.responses.create(model=MODEL, input="store me")
            response_id, text = response.id, response.output_text
    finally:
        stall.join(30)
    assert text == "stored after all"
    stored = impatient.responses.retrieve(response_id)
    assert stored.status == "completed" and stored.output_text == "stored after all"
