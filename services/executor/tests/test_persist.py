"""Storing a finished turn: a store whose outcome is unknown (state unreachable or too slow) is retried with the same
request until an answer says whether it is stored; a refusal is the client's answer at once; and a state service
that stays away fails the turn instead of hanging it."""

from __future__ import annotations

import time
from typing import Any, cast

import pytest
from agentic.v1 import state_pb2
from agentic_core.errors import AgenticError, Conflict, ServiceUnavailable, UpstreamTimeout
from agentic_executor.persist import persist_until_known

REQUEST = state_pb2.PersistTurnRequest(response_id="resp_1", model="m", status="completed")


class StandInState:
    """Answers each persist with the next scripted error, then stores; keeps every request it got."""

    def __init__(self, *errors: AgenticError, forever: AgenticError | None = None) -> None:
        self.errors, self.forever = list(errors), forever
        self.received: list[state_pb2.PersistTurnRequest] = []

    async def persist_turn(self, request: state_pb2.PersistTurnRequest) -> None:
        self.received.append(request)
        if self.forever is not None:
            raise self.forever
        if self.errors:
            raise self.errors.pop(0)


async def test_an_unknown_outcome_is_retried_with_the_same_request_until_stored() -> None:
    state = StandInState(ServiceUnavailable("state unreachable"), UpstreamTimeout("deadline exceeded"))
    await persist_until_known(cast(Any, state), REQUEST, retry_seconds=10)
    assert len(state.received) == 3
    assert all(request == REQUEST for request in state.received)


async def test_a_refusal_is_raised_at_once() -> None:
    state = StandInState(Conflict("the conversation is busy", code="conversation_lease_lost"))
    with pytest.raises(Conflict):
        await persist_until_known(cast(Any, state), REQUEST, retry_seconds=10)
    assert len(state.received) == 1


async def test_a_state_service_that_stays_away_fails_the_turn_within_the_retry_time() -> None:
    state = StandInState(forever=ServiceUnavailable("state unreachable"))
    started = time.monotonic()
    with pytest.raises(ServiceUnavailable):
        await persist_until_known(cast(Any, state), REQUEST, retry_seconds=1.0)
    assert time.monotonic() - started < 3
    assert 2 <= len(state.received) <= 4  # backing off: 0.25 s, then 0.5 s
