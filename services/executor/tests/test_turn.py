"""A whole turn through `TurnRunner` against the fake model server (a real HTTP server speaking vLLM's wire format):
one numbering of a streamed turn's events across its rounds, its usage counted once however it ends, and the features
an executor lacks refusing what needs them before the model is asked."""

from __future__ import annotations

from typing import Any, cast

import orjson
import pytest
from agentic.v1 import common_pb2, executor_pb2
from agentic_core.errors import InvalidRequest
from agentic_core.routing import ModelRoute, ModelRouter
from agentic_executor.features import TurnFeatures
from agentic_executor.turn import TurnRunner
from agentic_executor.upstream import UpstreamClient
from agentic_runtime.state.client import StateClient

from tests.support.executor_stand_ins import RecordingAudit, RecordingUsage, StandInState
from tests.support.fake_upstream import SERVED_MODEL, FakeUpstream, FunctionCall, Text

PRINCIPAL = common_pb2.Principal(tenant="t", subject="s")


def _runner(client: UpstreamClient, upstream: FakeUpstream, usage: RecordingUsage, audit: RecordingAudit,
            state: StandInState | None = None) -> TurnRunner:
    router = ModelRouter([], ModelRoute("*", upstream.base_url))
    return TurnRunner(client, router, cast(StateClient, state or StandInState()),
                      features=TurnFeatures(usage=usage, audit=audit))


def _request(**body: Any) -> executor_pb2.ExecuteRequest:
    payload = {"model": SERVED_MODEL, "input": "What is new?", "store": False, **body}
    return executor_pb2.ExecuteRequest(request_json=orjson.dumps(payload), principal=PRINCIPAL, request_id="req_1",
                                       stream=bool(body.get("stream")))


async def test_a_streamed_turn_of_two_rounds_numbers_its_events_once_from_zero(
    client: UpstreamClient, upstream: FakeUpstream
) -> None:
    # The executor has no tool runners: the web search is answered as unavailable and the model answers again.
    upstream.script(FunctionCall("web_search", '{"query": "news"}'), Text("Nothing found."))
    usage, audit = RecordingUsage(), RecordingAudit()
    events = [event async for event in _runner(client, upstream, usage, audit).stream(
        _request(stream=True, tools=[{"type": "web_search"}]))]
    assert [sequence for _, sequence, _ in events] == list(range(len(events)))
    types = [event_type for event_type, _, _ in events]
    assert types[:2] == ["response.created", "response.in_progress"] and types[-1] == "response.completed"
    completed = orjson.loads(events[-1][2])["response"]
    assert [item["type"] for item in completed["output"]] == ["web_search_call", "message"]
    assert [model for model, _ in usage.records] == [SERVED_MODEL] and usage.records[0][1].requests == 2
    assert [kind for kind, _ in audit.records] == ["response.turn"]


async def test_a_json_turn_counts_its_usage_and_is_audited_once(client: UpstreamClient, upstream: FakeUpstream) -> None:
    upstream.script(Text("Hello."))
    usage, audit = RecordingUsage(), RecordingAudit()
    response = await _runner(client, upstream, usage, audit).respond(_request())
    assert response["status"] == "completed" and response["output"][0]["content"][0]["text"] == "Hello."
    assert len(usage.records) == 1 and usage.records[0][1].requests == 1 and usage.records[0][1].input_tokens > 0
    assert len(audit.records) == 1


async def test_a_client_leaving_mid_stream_still_counts_the_round_the_model_answered(
    client: UpstreamClient, upstream: FakeUpstream
) -> None:
    upstream.script(Text("A long answer " * 20))
    usage, audit = RecordingUsage(), RecordingAudit()
    events = _runner(client, upstream, usage, audit).stream(_request(stream=True))
    first = await anext(events)
    await events.aclose()
    assert first[0] == "response.created"
    assert len(usage.records) == 1 and usage.records[0][1].requests == 1
    assert audit.records == []  # the turn never finished: nothing to audit


async def test_mcp_tools_on_an_executor_without_mcp_are_refused_before_the_model_is_asked(
    client: UpstreamClient, upstream: FakeUpstream
) -> None:
    usage = RecordingUsage()
    with pytest.raises(InvalidRequest) as refused:
        await _runner(client, upstream, usage, RecordingAudit()).respond(
            _request(tools=[{"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example/mcp"}]))
    assert refused.value.code == "unsupported_tool" and refused.value.param == "tools"
    assert usage.records == [] and upstream.requests == []


async def test_context_management_on_an_executor_without_compaction_is_refused(
    client: UpstreamClient, upstream: FakeUpstream
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        await _runner(client, upstream, RecordingUsage(), RecordingAudit()).respond(
            _request(context_management=[{"type": "compaction", "compact_threshold": 1000}]))
    assert refused.value.code == "compaction_unavailable" and upstream.requests == []


@pytest.mark.parametrize("drop_views", [False, True], ids=["views stored", "rows from before views"])
async def test_a_stored_chain_reaches_the_model_as_the_items_model_views(
    client: UpstreamClient, upstream: FakeUpstream, drop_views: bool
) -> None:
    """The second turn's history is relayed as the views the first turn stored (or, for rows stored without them,
    worked out from the items): the model reads the same body either way."""
    upstream.script(Text("First answer."), Text("Second answer."))
    state = StandInState(drop_views=drop_views)
    runner = _runner(client, upstream, RecordingUsage(), RecordingAudit(), state)
    first = await runner.respond(_request(store=True, input="Hello there"))
    stored = state.stored[0]
    views = [orjson.loads(item.model_view) for item in [*stored.input_items, *stored.output_items]]
    assert views[0] == {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello there"}]}
    assert views[1]["role"] == "assistant" and views[1]["content"][0]["text"] == "First answer."

    await runner.respond(_request(store=True, input="And now?", previous_response_id=first["id"]))
    sent = upstream.requests[-1]["input"]
    assert sent[:2] == views and sent[2]["content"][0]["text"] == "And now?"
    assert [item["role"] for item in sent] == ["user", "assistant", "user"]
