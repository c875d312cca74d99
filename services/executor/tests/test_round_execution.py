"""How one round's gateway calls are executed: concurrently up to the bound, serially when a tool is not
parallel-safe, and never beyond max_tool_calls."""

from __future__ import annotations

import asyncio

from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_core.tools.registry import build_registry
from agentic_executor.gateway_calls import GatewayCalls, ToolPolicy


class RecordingDispatcher:
    """Stands in for NATS: records how many calls of each tool run at once."""

    def __init__(self) -> None:
        self.running: dict[str, int] = {}
        self.most_at_once: dict[str, int] = {}
        self.calls: list[ToolCall] = []

    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        self.calls.append(call)
        self.running[call.tool] = self.running.get(call.tool, 0) + 1
        self.most_at_once[call.tool] = max(self.most_at_once.get(call.tool, 0), self.running[call.tool])
        await asyncio.sleep(0.05)
        self.running[call.tool] -= 1
        return ToolResult.ok(call.call_id, "done")


OPERATOR_TOOLS = {
    "fast": {"type": "function", "name": "fast", "parameters": {"type": "object"}, "parallel_safe": True},
    "careful": {"type": "function", "name": "careful", "parameters": {"type": "object"}, "parallel_safe": False},
}


def _calls_of_a_turn(dispatcher, *, max_concurrent: int = 5, max_tool_calls: int | None = None) -> GatewayCalls:
    registry = build_registry([{"type": "operator", "name": "fast"}, {"type": "operator", "name": "careful"},
                               {"type": "web_search"}], OPERATOR_TOOLS)
    return GatewayCalls(dispatcher, registry, ToolPolicy(max_concurrent_calls=max_concurrent), response_id="resp_1",
                        tenant="t", include=set(), max_tool_calls=max_tool_calls)


def _calls(name: str, count: int) -> list[dict]:
    return [{"type": "function_call", "name": name, "call_id": f"{name}-{n}", "arguments": "{}", "id": f"fc_{name}{n}"}
            for n in range(count)]


async def test_parallel_safe_calls_run_together_up_to_the_bound() -> None:
    dispatcher = RecordingDispatcher()
    results = await _calls_of_a_turn(dispatcher, max_concurrent=3).run(_calls("fast", 6))
    assert [result.status for result in results] == ["ok"] * 6
    assert dispatcher.most_at_once["fast"] == 3


async def test_a_tool_that_is_not_parallel_safe_never_runs_twice_at_once() -> None:
    dispatcher = RecordingDispatcher()
    await _calls_of_a_turn(dispatcher).run(_calls("careful", 3) + _calls("fast", 2))
    assert dispatcher.most_at_once["careful"] == 1 and dispatcher.most_at_once["fast"] == 2


async def test_calls_beyond_max_tool_calls_are_not_dispatched() -> None:
    dispatcher = RecordingDispatcher()
    results = await _calls_of_a_turn(dispatcher, max_tool_calls=2).run(_calls("fast", 4))
    assert len(dispatcher.calls) == 2
    assert [result.status for result in results].count("error") == 2


async def test_each_dispatch_carries_a_unique_id_deadline_kind_and_declaration() -> None:
    dispatcher = RecordingDispatcher()
    await _calls_of_a_turn(dispatcher).run(_calls("web_search", 1) + _calls("fast", 1))
    by_tool = {call.tool: call for call in dispatcher.calls}
    assert by_tool["web_search"].kind == "web_search" and by_tool["fast"].kind == "operator"
    assert by_tool["fast"].call_id == "resp_1/fast-0" and by_tool["fast"].deadline > 0
