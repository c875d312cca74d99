"""What a round's output means for its turn: shown items, calls to run, approvals, and how the turn goes on."""

from __future__ import annotations

from typing import Any

from agentic_core.responses.round_outcome import TurnEnding, read_round
from agentic_core.responses.stream import RoundOutcome
from agentic_core.tools.registry import ToolBinding, ToolRegistry

REGISTRY = ToolRegistry(
    bindings={
        "web_search": ToolBinding("web_search", "gateway", "web_search", "web_search_call"),
        "docs__delete": ToolBinding("docs__delete", "gateway", "mcp", "mcp_call", requires_approval=True,
                                    server_label="docs", remote_name="delete"),
        "lookup": ToolBinding("lookup", "client", "function", "function_call"),
    },
    model_tools=[],
)


def message(item_id: str) -> dict[str, Any]:
    return {"id": item_id, "type": "message", "role": "assistant", "content": []}


def call(name: str, call_id: str, kind: str = "function_call") -> dict[str, Any]:
    return {"id": f"fc_{call_id}", "type": kind, "name": name, "call_id": call_id, "arguments": "{}"}


def read(*output: dict[str, Any], status: str = "completed", round_number: int = 1, max_rounds: int = 10, **more: Any):
    return read_round(RoundOutcome(status=status, output=list(output), **more), REGISTRY, round_number=round_number,
                      max_rounds=max_rounds)


def test_a_round_without_calls_ends_the_turn_with_the_models_status() -> None:
    reading = read(message("m1"))
    assert reading.ending == TurnEnding("completed")
    assert reading.shown_first == (message("m1"),) and reading.continuation == (message("m1"),)


def test_a_round_cut_short_ends_the_turn_incomplete_with_the_models_details() -> None:
    reading = read(message("m1"), status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert reading.ending == TurnEnding("incomplete", incomplete_details={"reason": "max_output_tokens"})


def test_a_failed_round_ends_the_turn_failed_and_shows_or_keeps_nothing() -> None:
    reading = read(message("m1"), status="failed", error={"code": "overloaded", "message": "busy"})
    assert reading.ending == TurnEnding("failed", error={"code": "overloaded", "message": "busy"})
    assert reading.shown_first == reading.continuation == reading.gateway_calls == ()


def test_gateway_calls_with_rounds_left_are_run_and_another_round_follows() -> None:
    reading = read(call("web_search", "a"), call("web_search", "b"))
    assert [item["call_id"] for item in reading.gateway_calls] == ["a", "b"]
    assert reading.ending is None


def test_gateway_calls_on_the_last_round_end_the_turn_incomplete() -> None:
    reading = read(call("web_search", "a"), round_number=3, max_rounds=3)
    assert reading.gateway_calls and reading.ending == TurnEnding("incomplete", incomplete_details={"reason": "max_tool_rounds"})


def test_a_client_call_ends_the_turn_completed() -> None:
    reading = read(call("lookup", "c"))
    assert reading.ending == TurnEnding("completed") and reading.gateway_calls == ()
    assert reading.shown_first == (call("lookup", "c"),)


def test_a_custom_tool_call_is_the_clients() -> None:
    reading = read(call("web_search", "a", kind="custom_tool_call"))
    assert reading.gateway_calls == () and reading.shown_first == (call("web_search", "a", kind="custom_tool_call"),)


def test_gateway_calls_beside_a_client_call_still_run_and_the_client_owns_the_next_step() -> None:
    reading = read(call("web_search", "a"), call("lookup", "c"))
    assert [item["call_id"] for item in reading.gateway_calls] == ["a"]
    assert reading.ending == TurnEnding("completed")


def test_a_call_that_needs_approval_is_held_not_run() -> None:
    reading = read(call("docs__delete", "d"))
    assert reading.awaiting_approval == (call("docs__delete", "d"),) and reading.gateway_calls == ()
    assert reading.ending == TurnEnding("completed")


def test_gateway_calls_beside_an_approval_request_run_and_the_client_owns_the_next_step() -> None:
    reading = read(call("docs__delete", "d"), call("web_search", "a"))
    assert [item["call_id"] for item in reading.gateway_calls] == ["a"]
    assert reading.ending == TurnEnding("completed")


def test_items_after_the_first_gateway_call_are_shown_after_it() -> None:
    reading = read(message("m1"), call("web_search", "a"), message("m2"), call("lookup", "c"))
    assert reading.shown_first == (message("m1"),)
    assert reading.shown_last == (message("m2"), call("lookup", "c"))


def test_the_continuation_keeps_the_whole_output_in_the_models_order() -> None:
    output = (message("m1"), call("web_search", "a"), message("m2"))
    assert read(*output).continuation == output


def test_a_round_cut_short_neither_runs_nor_keeps_its_unfinished_gateway_calls() -> None:
    reading = read(message("m1"), call("web_search", "a"), call("docs__delete", "d"), message("m2"), status="incomplete")
    assert reading.gateway_calls == reading.awaiting_approval == ()
    assert reading.continuation == (message("m1"), message("m2"))
    assert reading.shown_first == (message("m1"),) and reading.shown_last == (message("m2"),)


def test_equal_gateway_calls_are_each_run() -> None:
    reading = read(call("web_search", "a"), call("web_search", "a"))
    assert len(reading.gateway_calls) == 2
