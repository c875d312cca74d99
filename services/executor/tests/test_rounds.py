"""A round as a function of the upstream body and the turn so far: what it returns and, streamed, what it yields."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from agentic_core.errors import UpstreamUnavailable
from agentic_core.responses.round_outcome import TurnEnding
from agentic_core.responses.stream import EventSequencer
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_core.tools.registry import build_registry
from agentic_executor.gateway_calls import GatewayCalls, ToolPolicy
from agentic_executor.rounds import NextRound, Rounds, TurnDone

ROUTE = ModelRoute("*", "http://model/v1")
CALL = {"id": "fc_up", "type": "function_call", "call_id": "c1", "name": "web_search", "arguments": '{"query": "x"}',
        "status": "completed"}
MESSAGE = {"id": "msg_up", "type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "done", "annotations": [], "logprobs": []}]}


class ScriptedUpstream:
    """Answers each round with the next scripted output (or raises it)."""

    def __init__(self, *outputs: list[dict[str, Any]] | Exception) -> None:
        self.outputs = list(outputs)
        self.bodies: list[dict[str, Any]] = []

    def _next(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        self.bodies.append(body)
        output = self.outputs.pop(0)
        if isinstance(output, Exception):
            raise output
        return output

    async def create_response(self, route: ModelRoute, body: dict[str, Any]) -> dict[str, Any]:
        return {"status": "completed", "output": self._next(body), "usage": {"input_tokens": 3, "output_tokens": 1,
                                                                            "total_tokens": 4}}

    async def stream_response(self, route: ModelRoute, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        output = self._next(body)
        for index, item in enumerate(output):
            yield {"type": "response.output_item.added", "output_index": index, "item": item}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        yield {"type": "response.completed", "response": {"status": "completed", "output": output}}


class Dispatcher:
    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        return ToolResult.ok(call.call_id, "found")


def _rounds(upstream: ScriptedUpstream, max_rounds: int = 10) -> Rounds:
    policy = ToolPolicy(max_rounds=max_rounds)
    calls = GatewayCalls(Dispatcher(), build_registry([{"type": "web_search"}]), policy, response_id="resp_1", tenant="t",
                         include=set(), max_tool_calls=None)
    return Rounds(upstream, calls, policy, route=ROUTE)  # type: ignore[arg-type]


BODY = {"model": "m", "input": [{"role": "user", "content": "hi"}], "tool_choice": "required"}


async def _streamed(rounds: Rounds, so_far: TurnSoFar, opening: list[dict[str, Any]] | None,
                    sequencer: EventSequencer | None = None) -> tuple[list[Any], Any]:
    events = []
    async for step in rounds.stream_round(BODY, so_far, opening, sequencer or EventSequencer()):
        events.append(step)
    return events[:-1], events[-1]


async def test_a_round_with_a_gateway_call_returns_the_next_rounds_body_and_leaves_its_own() -> None:
    result = await _rounds(ScriptedUpstream([CALL])).json_round(BODY, TurnSoFar())
    assert isinstance(result, NextRound)
    sent = result.body["input"][-2:]
    assert sent[0]["call_id"] == "c1" and sent[1] == {**sent[1], "type": "function_call_output", "call_id": "c1"}
    assert result.body["tool_choice"] == "auto" and BODY["tool_choice"] == "required" and len(BODY["input"]) == 1


async def test_a_gateway_call_is_shown_as_its_public_item_and_kept_as_its_call_and_output() -> None:
    result = await _rounds(ScriptedUpstream([CALL])).json_round(BODY, TurnSoFar())
    assert [item["type"] for item in result.so_far.public_output] == ["web_search_call"]
    assert [item["type"] for item in result.so_far.continuation] == ["function_call", "function_call_output"]
    assert result.so_far.public_of_call == {"c1": result.so_far.public_output[0]["id"]}


async def test_a_round_with_a_message_only_ends_the_turn_completed() -> None:
    result = await _rounds(ScriptedUpstream([MESSAGE])).json_round(BODY, TurnSoFar())
    assert isinstance(result, TurnDone) and result.ending == TurnEnding("completed")
    assert [item["type"] for item in result.so_far.public_output] == ["message"]


async def test_usage_is_summed_over_the_rounds() -> None:
    done = await _rounds(ScriptedUpstream([CALL], [MESSAGE])).run_json(BODY, TurnSoFar())
    assert done.so_far.usage is not None and done.so_far.usage["total_tokens"] == 8


async def test_the_json_rounds_run_until_the_model_answers() -> None:
    upstream = ScriptedUpstream([CALL], [MESSAGE])
    done = await _rounds(upstream).run_json(BODY, TurnSoFar())
    assert done.ending.status == "completed" and done.so_far.rounds == 2
    assert [item["type"] for item in done.so_far.public_output] == ["web_search_call", "message"]
    assert upstream.bodies[1]["tool_choice"] == "auto"


async def test_the_last_allowed_round_with_gateway_calls_ends_the_turn_incomplete() -> None:
    done = await _rounds(ScriptedUpstream([CALL], [CALL]), max_rounds=2).run_json(BODY, TurnSoFar())
    assert done.ending == TurnEnding("incomplete", incomplete_details={"reason": "max_tool_rounds"})


async def test_a_streamed_round_numbers_its_events_on_from_the_turns_stream() -> None:
    sequencer = EventSequencer(7)
    events, _ = await _streamed(_rounds(ScriptedUpstream([MESSAGE])), TurnSoFar(rounds=1), None, sequencer)
    assert [sequence for _, sequence, _ in events] == list(range(7, 7 + len(events)))
    assert sequencer.next_sequence == 7 + len(events)


async def test_the_streamed_rounds_of_a_turn_number_their_events_without_a_gap() -> None:
    steps = [step async for step in _rounds(ScriptedUpstream([CALL], [MESSAGE])).run_stream(
        BODY, TurnSoFar(), [{"type": "response.created"}], EventSequencer())]
    events = steps[:-1]
    assert isinstance(steps[-1], TurnDone) and steps[-1].so_far.rounds == 2
    assert [sequence for _, sequence, _ in events] == list(range(len(events)))
    assert events[0][0] == "response.created"


async def test_a_streamed_round_sends_the_opening_once_the_model_server_answered() -> None:
    events, _ = await _streamed(_rounds(ScriptedUpstream([MESSAGE])), TurnSoFar(), [{"type": "response.created"}])
    assert events[0][0] == "response.created" and events[0][1] == 0


async def test_a_streamed_gateway_call_shows_its_public_item_lifecycle() -> None:
    events, result = await _streamed(_rounds(ScriptedUpstream([CALL])), TurnSoFar(), [])
    types = [event_type for event_type, _, _ in events]
    assert types[0] == "response.output_item.added" and "response.web_search_call.completed" in types
    assert orjson.loads(events[-1][2])["item"]["type"] == "web_search_call"
    assert isinstance(result, NextRound)


async def test_an_error_before_the_stream_started_is_raised() -> None:
    with pytest.raises(UpstreamUnavailable):
        await _streamed(_rounds(ScriptedUpstream(UpstreamUnavailable("down"))), TurnSoFar(), [{"type": "response.created"}])


async def test_an_error_after_the_stream_started_fails_the_turn() -> None:
    events, result = await _streamed(_rounds(ScriptedUpstream(UpstreamUnavailable("down"))), TurnSoFar(rounds=1), None)
    assert events == [] and isinstance(result, TurnDone)
    assert result.ending.status == "failed" and result.ending.error["message"] == "down"


class FileSearchDispatcher:
    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        assert call.kind == "file_search" and call.params["vector_store_ids"] == ["vs_1"] and call.tenant == "t"
        return ToolResult.ok(call.call_id, "[file-aaa] a.txt", queries=["x"],
                             results=[{"file_id": "file-aaa", "filename": "a.txt", "score": 0.5, "attributes": {},
                                       "text": "alpha"}])


async def test_messages_after_a_file_search_cite_what_it_found_in_both_forms() -> None:
    search = {**CALL, "name": "file_search", "arguments": '{"queries": ["x"]}'}
    cited = {**MESSAGE, "content": [{**MESSAGE["content"][0], "text": "alpha [file-aaa]"}]}
    annotation = {"type": "file_citation", "file_id": "file-aaa", "filename": "a.txt", "index": 6}
    for stream in (False, True):
        policy = ToolPolicy()
        calls = GatewayCalls(FileSearchDispatcher(), build_registry([{"type": "file_search", "vector_store_ids": ["vs_1"]}]),
                             policy, response_id="resp_1", tenant="t", include=set(), max_tool_calls=None)
        rounds = Rounds(ScriptedUpstream([search], [cited]), calls, policy, route=ROUTE)  # type: ignore[arg-type]
        if stream:
            events = [event async for event in rounds.run_stream(BODY, TurnSoFar(), [], EventSequencer())]
            done = events[-1]
            shown = [orjson.loads(data) for _, _, data in events[:-1]]
            last = [event for event in shown if event["type"] == "response.output_item.done"][-1]
            assert last["item"]["content"][0]["annotations"] == [annotation]
        else:
            done = await rounds.run_json(BODY, TurnSoFar())
        assert isinstance(done, TurnDone)
        output = list(done.so_far.public_output)
        assert [item["type"] for item in output] == ["file_search_call", "message"]
        assert output[0]["results"] is None and output[1]["content"][0]["annotations"] == [annotation]
