"""A tool runner killed in the middle of a call: another one finishes it, once, and the response completes."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest
from agentic_local.processes import wait_until
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text
from tests.support.own_nats_stack import own_nats_stack


@pytest.fixture()
def failover_stack(infra, fake_upstream, tmp_path):
    """A stack of its own (its own NATS), so that only its runners see the call."""
    with own_nats_stack(tmp_path, infra["database_url"], fake_upstream.base_url,
                        AGENTIC_TOOL_RUNNER_ACK_WAIT_SECONDS="1", AGENTIC_EXECUTOR_TOOL_TIMEOUT_SECONDS="30") as stack:
        yield stack


def test_a_killed_runners_call_is_finished_by_another_exactly_once(failover_stack, upstream, tmp_path: Path) -> None:
    marker_file = tmp_path / "markers.txt"
    arguments = f'{{"path": "{marker_file}", "marker": "ran", "seconds": 2.5}}'
    upstream.script(FunctionCall("append_marker", arguments), Text("all done"))
    with OpenAI(base_url=failover_stack.base_url, api_key="none", max_retries=0, timeout=60) as client:
        outcome: dict = {}
        turn = threading.Thread(
            target=lambda: outcome.update(response=client.responses.create(
                model="smollm2", input="mark it", tools=[{"type": "operator", "name": "append_marker"}])))
        turn.start()
        wait_until(lambda: len(upstream.requests) >= 1, 20, "the first round")
        time.sleep(1.0)  # the call is now running in the only runner
        doomed = failover_stack.tool_runners[0]
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait()
        failover_stack.add_tool_runner()
        turn.join(60)
        response = outcome["response"]
        assert response.status == "completed" and response.output_text == "all done"
        assert marker_file.read_text() == "ran\n"  # the side effect happened once
