"""The tool path under faults: a runner or the MCP bridge killed mid-call, NATS paused or restarted mid-turn.

Each turn must complete with the tool's true result, its call run once by a runner (a visible side effect), one
output per call stored, and no duplicate result reaching the executor.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.faults.support import MODEL, FaultStack, wait_for
from tests.support.fake_upstream import Delay, EchoToolOutput, FakeUpstream, FunctionCall

RECOVERY_BOUND_SECONDS = 30.0  # generous: a dead runner's call runs again after the 3 s ack wait
DUPLICATES = "agentic_executor_tool_duplicate_results_total"
IN_FLIGHT = "agentic_tool_runner_in_flight"


def _marker_call(path: Path, seconds: float) -> FunctionCall:
    return FunctionCall("append_marker", orjson.dumps({"path": str(path), "marker": "ran", "seconds": seconds}).decode())


def _start_turn(faults: FaultStack, pool: ThreadPoolExecutor, tools: list[dict[str, Any]]) -> Future[Any]:
    def turn() -> Any:
        with faults.client() as client:
            return client.responses.create(model=MODEL, input="do it", tools=tools)

    return pool.submit(turn)


def _operator_turn(faults: FaultStack, upstream: FakeUpstream, marker: Path, seconds: float, inject: Callable[[], None],
                   first_reply_delay: float = 0.0, late_copy_possible: bool = False) -> Any:
    """An `append_marker` turn with `inject` run while it is under way; returns the response after checking it."""
    call = _marker_call(marker, seconds)
    upstream.script(Delay(first_reply_delay, call) if first_reply_delay else call, EchoToolOutput("the tool said: "))
    duplicates = faults.metric("executor", DUPLICATES)
    started = time.monotonic()
    with ThreadPoolExecutor(1) as pool:
        turn = _start_turn(faults, pool, [{"type": "operator", "name": "append_marker"}])
        inject()
        response = turn.result(timeout=90)
    assert time.monotonic() - started < RECOVERY_BOUND_SECONDS + seconds + first_reply_delay + 10
    assert response.status == "completed", response
    assert "appended" in response.output_text  # the tool's true result, not a timeout
    assert marker.read_text() == "ran\n"  # run once
    assert faults.stored_status(response.id) == "completed"
    outputs = [item for item in faults.output_items(response.id) if item["type"] == "function_call_output"]
    assert len(outputs) == 1 and "appended" in str(outputs[0]["output"])
    # Run once (the marker), one result stored. When the result was read from the kept results during a stall,
    # the runner's reply sent into the stall may still arrive afterwards: one late copy, dropped and counted.
    assert faults.metric("executor", DUPLICATES) - duplicates <= (1 if late_copy_possible else 0)
    return response


def _when_running(faults: FaultStack) -> None:
    wait_for(lambda: faults.metric("tool-runner", IN_FLIGHT) >= 1, 30, "the call running in the tool runner")


def test_a_tool_runner_killed_mid_call(faults: FaultStack, upstream: FakeUpstream, tmp_path: Path) -> None:
    def kill_and_restart() -> None:
        _when_running(faults)
        faults.kill("tool-runner")
        faults.restart("tool-runner")

    _operator_turn(faults, upstream, tmp_path / "marker", 2.0, kill_and_restart)


def test_the_mcp_bridge_killed_mid_call(faults: FaultStack, upstream: FakeUpstream, fake_mcp) -> None:
    fake_mcp.reset()
    upstream.script(FunctionCall("docs__slow", '{"seconds": 2}'), EchoToolOutput("mcp said: "))
    tool = {"type": "mcp", "server_label": "docs", "server_url": fake_mcp.url, "require_approval": "never"}
    with ThreadPoolExecutor(1) as pool:
        turn = _start_turn(faults, pool, [tool])
        wait_for(lambda: fake_mcp.stats()["calls"].get("slow") == 1, 30, "the MCP call under way")
        faults.kill("mcp-bridge")
        faults.restart("mcp-bridge")
        response = turn.result(timeout=90)
    assert response.status == "completed", response
    calls = [item for item in response.output if item.type == "mcp_call"]
    assert len(calls) == 1 and calls[0].error is None and calls[0].output
    assert faults.stored_status(response.id) == "completed"
    stored = [item["type"] for item in faults.output_items(response.id)]  # the model's items; mcp_call is their view
    assert stored.count("function_call_output") == 1, stored
    # The cut call reached the MCP server before the bridge died; MCP has no idempotency key, so the server sees
    # the redelivered call again. The model gets one result.
    assert fake_mcp.stats()["calls"]["slow"] == 2


@pytest.mark.parametrize("when", ["before-the-call-is-published", "while-the-call-runs"])
def test_nats_paused_10s_during_a_tool_turn(faults: FaultStack, upstream: FakeUpstream, tmp_path: Path, when: str) -> None:
    def pause() -> None:
        if when == "while-the-call-runs":
            _when_running(faults)
        else:  # the model server answers 1 s after this: the executor publishes into the stalled broker
            wait_for(lambda: len(upstream.requests) >= 1, 30, "the first round")
        faults.nats.pause()
        try:
            time.sleep(10)
        finally:
            faults.nats.resume()

    before = 1.0 if when == "before-the-call-is-published" else 0.0
    _operator_turn(faults, upstream, tmp_path / "marker", 2.0, pause, first_reply_delay=before, late_copy_possible=True)


def test_nats_restarted_during_a_tool_turn_with_its_data_kept(faults: FaultStack, upstream: FakeUpstream,
                                                               tmp_path: Path) -> None:
    def restart() -> None:
        _when_running(faults)
        faults.nats.restart()

    _operator_turn(faults, upstream, tmp_path / "marker", 3.0, restart)
    # Every service is back on the restarted server: a second tool turn works as usual.
    _operator_turn(faults, upstream, tmp_path / "again", 0.0, lambda: None)
