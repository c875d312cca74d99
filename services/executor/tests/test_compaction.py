"""Compaction in the executor: the seal, the context budget, and the guard before each round (a mid-stream compaction)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.compaction import SUMMARY_PROMPT, CompactionContent, compaction_item
from agentic_core.responses.history import StoredHistory
from agentic_core.responses.stream import EventSequencer
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute
from agentic_core.tools.protocol import ToolCall, ToolResult
from agentic_core.tools.registry import build_registry
from agentic_executor.compaction import Compactor, ContextGuard
from agentic_executor.compaction_seal import CompactionSeal
from agentic_executor.context_budget import ContextBudget
from agentic_executor.gateway_calls import GatewayCalls, ToolPolicy
from agentic_executor.rounds import Rounds, TurnDone

ROUTE = ModelRoute("*", "http://model/v1")
KEY = "k" * 40
USER = {"type": "message", "id": "msg_u1", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
SEARCH = {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "web_search", "arguments": '{"query": "x"}',
          "status": "completed"}


def _message(text: str) -> dict[str, Any]:
    return {"id": "msg_a", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


class Upstream:
    """Streams each round's scripted output; answers the summary call; counts tokens as told."""

    def __init__(self, rounds: list[list[dict[str, Any]]], counts: list[int], window: int | None = 4096) -> None:
        self.rounds, self.counts, self.window = rounds, counts, window
        self.summaries: list[dict[str, Any]] = []
        self.streamed: list[dict[str, Any]] = []
        self.window_lookups = 0

    async def create_response(self, route: ModelRoute, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("instructions") != SUMMARY_PROMPT:
            self.streamed.append(body)
            return {"status": "completed", "output": self.rounds.pop(0)}
        self.summaries.append(body)
        return {"output": [_message("the summary")], "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}

    async def stream_response(self, route: ModelRoute, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        self.streamed.append(body)
        output = self.rounds.pop(0)
        for index, item in enumerate(output):
            yield {"type": "response.output_item.added", "output_index": index, "item": item}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        yield {"type": "response.completed", "response": {"status": "completed", "output": output}}

    async def count_input_tokens(self, route: ModelRoute, body: dict[str, Any]) -> int | None:
        return self.counts.pop(0)

    async def max_model_len(self, route: ModelRoute, model: str) -> int | None:
        self.window_lookups += 1
        return self.window


class Dispatcher:
    async def call(self, call: ToolCall, timeout: float) -> ToolResult:
        return ToolResult.ok(call.call_id, "found")


def _guarded_rounds(upstream: Upstream, threshold: int | None) -> Rounds:
    seal = CompactionSeal(KEY, plain=False)
    compactor = Compactor(upstream, seal, ContextBudget(upstream), summary_max_tokens=64)  # type: ignore[arg-type]
    guard = ContextGuard(compactor, ROUTE, threshold=threshold, history=[USER, _message("earlier")], input_items=[],
                         opener=seal.opener("t"), tenant="t")
    policy = ToolPolicy()
    calls = GatewayCalls(Dispatcher(), build_registry([{"type": "web_search"}]), policy,
                         response_id="resp_1", tenant="t", include=set(), max_tool_calls=None)
    return Rounds(upstream, calls, policy, route=ROUTE, guard=guard)  # type: ignore[arg-type]


BIG_BODY = {"model": "m", "input": [{"role": "user", "content": "word " * 2800}]}  # estimated near a 4096 window


async def _run(rounds: Rounds) -> tuple[list[Any], TurnDone]:
    steps = [step async for step in rounds.run_stream(BIG_BODY, TurnSoFar(), [{"type": "response.created"}],
                                                          EventSequencer())]
    done = steps[-1]
    assert isinstance(done, TurnDone)
    return steps[:-1], done


async def test_over_the_threshold_the_turn_starts_with_a_compaction_after_the_opening_events() -> None:
    upstream = Upstream([[_message("answer")]], counts=[900, 20])
    events, done = await _run(_guarded_rounds(upstream, threshold=500))
    assert [event[0] for event in events[:3]] == ["response.created", "response.output_item.added",
                                                  "response.output_item.done"]
    assert [event[1] for event in events] == list(range(len(events)))
    assert [item["type"] for item in done.so_far.public_output] == ["compaction", "message"]
    assert done.so_far.continuation[0]["type"] == "compaction" and done.so_far.usage is not None
    sent = upstream.streamed[0]["input"]
    assert [item.get("role") for item in sent] == ["user", "assistant"]
    assert "the summary" in sent[-1]["content"][0]["text"]
    # The summary must fit in what the window leaves: 4096 - 900 - 256 is more than asked for, so the setting holds.
    assert upstream.summaries[0]["max_output_tokens"] == 64


async def test_the_summary_is_capped_by_the_room_the_window_leaves() -> None:
    upstream = Upstream([[_message("answer")]], counts=[4000, 20])
    await _run(_guarded_rounds(upstream, threshold=500))
    assert upstream.summaries[0]["max_output_tokens"] == 64  # 4096 - 4000 - 256 < 0: the setting, the server decides
    upstream = Upstream([[_message("answer")]], counts=[3800, 20])
    await _run(_guarded_rounds(upstream, threshold=500))
    assert upstream.summaries[0]["max_output_tokens"] == 40


async def test_a_context_over_the_window_is_refused_before_the_stream_starts() -> None:
    upstream = Upstream([[_message("answer")]], counts=[5000], window=4096)
    with pytest.raises(InvalidRequest) as caught:
        await _run(_guarded_rounds(upstream, threshold=None))
    assert caught.value.code == "context_length_exceeded" and "4096" in caught.value.message
    assert upstream.streamed == []


async def test_a_context_over_the_window_after_the_stream_started_fails_the_turn() -> None:
    upstream = Upstream([[SEARCH]], counts=[100, 5000])
    events, done = await _run(_guarded_rounds(upstream, threshold=None))
    assert done.ending.status == "failed" and done.ending.error is not None
    assert done.ending.error["code"] == "context_length_exceeded"
    assert len(upstream.streamed) == 1 and events[0][0] == "response.created"


async def test_a_json_turn_refused_after_its_first_round_ends_failed() -> None:
    upstream = Upstream([[SEARCH]], counts=[100, 5000])
    done = await _guarded_rounds(upstream, threshold=None).run_json(BIG_BODY, TurnSoFar())
    assert done.ending.status == "failed" and done.ending.error is not None
    assert done.ending.error["code"] == "context_length_exceeded" and done.so_far.rounds == 1


async def test_only_user_messages_are_never_compacted() -> None:
    upstream = Upstream([[_message("answer")]], counts=[900])
    rounds = _guarded_rounds(upstream, threshold=500)
    assert rounds.guard is not None
    rounds.guard.history = StoredHistory.of_items([USER])
    _, done = await _run(rounds)
    assert [item["type"] for item in done.so_far.public_output] == ["message"] and upstream.summaries == []


async def test_far_under_every_limit_nothing_is_counted_or_looked_up() -> None:
    upstream = Upstream([], counts=[])
    budget = ContextBudget(upstream)  # type: ignore[arg-type]
    assert await budget.measure(ROUTE, {"model": "m", "input": [USER]}, 1000) == (None, None)
    assert upstream.window_lookups == 0


async def test_a_context_well_inside_the_window_costs_no_count() -> None:
    """Without a compaction threshold, only a context estimated near the window is counted (a round trip)."""
    upstream = Upstream([], counts=[])
    budget = ContextBudget(upstream)  # type: ignore[arg-type]
    half_full = {"model": "m", "input": [{"role": "user", "content": "word " * 1800}]}  # ~2,300 of 4,096
    assert await budget.measure(ROUTE, half_full, None) == (None, 4096)


async def test_the_window_is_read_once_per_server_and_model_unless_configured() -> None:
    upstream = Upstream([], counts=[3000, 3000])
    budget = ContextBudget(upstream)  # type: ignore[arg-type]
    for _ in range(2):
        assert await budget.measure(ROUTE, BIG_BODY, None) == (3000, 4096)
    assert upstream.window_lookups == 1
    assert await ContextBudget(upstream, 100).window(ROUTE, "m") == 100  # type: ignore[arg-type]


def test_sealed_content_opens_only_for_its_tenant_and_key() -> None:
    seal = CompactionSeal(KEY, plain=False)
    item = compaction_item(seal.seal(CompactionContent("s", ("msg_1",)), "tenant-a"))
    assert seal.opener("tenant-a")(item) == CompactionContent("s", ("msg_1",))
    for opener in (seal.opener("tenant-b"), CompactionSeal("x" * 40, plain=False).opener("tenant-a"),
                   CompactionSeal(None, plain=False).opener("tenant-a")):
        with pytest.raises(InvalidRequest) as caught:
            opener(item)
        assert caught.value.code == "invalid_encrypted_content" and caught.value.http_status == 400
    with pytest.raises(InvalidRequest):
        seal.opener("tenant-a")(compaction_item('{"summary": "forged", "retained": []}'))


def test_plain_mode_is_readable_and_still_opens_sealed_items() -> None:
    sealed = CompactionSeal(KEY, plain=False).seal(CompactionContent("old"), "t")
    plain = CompactionSeal(KEY, plain=True)
    written = plain.seal(CompactionContent("new"), "t")
    assert "new" in written
    assert plain.opener("t")(compaction_item(written)).summary == "new"
    assert plain.opener("t")(compaction_item(sealed)).summary == "old"


def test_without_a_key_compaction_is_unavailable() -> None:
    with pytest.raises(InvalidRequest) as caught:
        CompactionSeal(None, plain=False).seal(CompactionContent("s"), "t")
    assert caught.value.code == "compaction_unavailable"
