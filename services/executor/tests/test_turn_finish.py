"""How a turn ends (`TurnRunner._finish`), JSON or streamed: the response is stored when it should be; a store that
is refused fails a JSON turn with the state service's error, and ends a streamed turn (whose events are out) failed;
every finished turn is audited once, stored or not."""

from __future__ import annotations

from typing import Any, cast

import pytest
from agentic.v1 import common_pb2, executor_pb2
from agentic_core.errors import AgenticError
from agentic_core.responses.round_outcome import TurnEnding
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute, ModelRouter
from agentic_executor.features import TurnFeatures
from agentic_executor.rounds import TurnDone
from agentic_executor.turn import TurnRunner, TurnStart
from agentic_executor.turn_context import read_turn_request
from agentic_runtime.state.client import StateClient

from tests.support.executor_stand_ins import RecordingAudit, StandInState

ANSWER = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "hello", "annotations": []}]}


def _runner(state: StandInState, audit: RecordingAudit) -> TurnRunner:
    return TurnRunner(cast(Any, None), ModelRouter([], ModelRoute("*", "http://127.0.0.1:1/v1")), cast(StateClient, state),
                      features=TurnFeatures(audit=audit))


async def _finish(runner: TurnRunner, *, store: bool, streamed: bool) -> tuple[dict[str, Any], TurnEnding]:
    body = b'{"model": "m", "input": "hi", "store": ' + (b"true" if store else b"false") + b"}"
    request = executor_pb2.ExecuteRequest(request_json=body, principal=common_pb2.Principal(tenant="t", subject="s"),
                                          request_id="req_1")
    context = read_turn_request(request, None, runner.router)
    so_far = TurnSoFar(public_output=(ANSWER,), continuation=(ANSWER,))
    start = TurnStart(rounds=cast(Any, None), body={}, so_far=so_far, events=[])
    return await runner._finish(context, request, start, TurnDone(so_far, TurnEnding("completed")), streamed=streamed)


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_stored_turn_is_stored_and_audited_once(streamed: bool) -> None:
    state, audit = StandInState(), RecordingAudit()
    response, ending = await _finish(_runner(state, audit), store=True, streamed=streamed)
    assert ending.status == "completed" and response["status"] == "completed"
    assert [stored.response_id for stored in state.stored] == [response["id"]]
    assert [(kind, details["request_id"]) for kind, details in audit.records] == [("response.turn", "req_1")]


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_unstored_turn_is_not_stored_but_audited(streamed: bool) -> None:
    state, audit = StandInState(), RecordingAudit()
    response, _ = await _finish(_runner(state, audit), store=False, streamed=streamed)
    assert state.stored == [] and response["output"][0]["content"][0]["text"] == "hello"
    assert len(audit.records) == 1


async def test_a_refused_store_fails_a_json_turn_with_its_error() -> None:
    audit = RecordingAudit()
    with pytest.raises(AgenticError) as refused:
        await _finish(_runner(StandInState(refuse=True), audit), store=True, streamed=False)
    assert refused.value.code == "refused"
    assert audit.records == []  # the client got an error, not a turn


async def test_a_refused_store_ends_a_streamed_turn_failed() -> None:
    audit = RecordingAudit()
    response, ending = await _finish(_runner(StandInState(refuse=True), audit), store=True, streamed=True)
    assert ending.status == "failed" and response["status"] == "failed"
    assert response["error"] is not None
    assert [details.get("status") for _, details in audit.records] == ["failed"]
