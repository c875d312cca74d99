"""A turn on a conversation renews its lease while it runs: often enough that two renewals may fail (state
restarting) before the lease runs out, on through failures, and never again once the lease is found lost."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import pytest
from agentic.v1 import common_pb2
from agentic_core.errors import AgenticError, Conflict, ServiceUnavailable
from agentic_executor.conversation_lease import LeaseHeartbeat

PRINCIPAL = common_pb2.Principal(tenant="t", subject="s")
LEASE_SECONDS = 0.3


class StandInState:
    """Records renewals (as (conversation, token, seconds)); raises the scripted errors first."""

    def __init__(self, *errors: AgenticError) -> None:
        self.errors = list(errors)
        self.renewals: list[tuple[str, str, float]] = []

    async def renew_conversation_turn(self, principal: common_pb2.Principal, conversation_id: str, lease_token: str,
                                      lease_seconds: float) -> None:
        self.renewals.append((conversation_id, lease_token, lease_seconds))
        if self.errors:
            raise self.errors.pop(0)


def _heartbeat(state: StandInState) -> LeaseHeartbeat:
    return LeaseHeartbeat(cast(Any, state), PRINCIPAL, "conv_1", "lease_1", LEASE_SECONDS)


async def test_a_running_turn_renews_its_lease_well_before_it_runs_out() -> None:
    state = StandInState()
    heartbeat = _heartbeat(state)
    await asyncio.sleep(LEASE_SECONDS * 2)
    await heartbeat.stop()
    assert len(state.renewals) >= 3  # a beat a third of a lease: ~6 in two leases
    assert set(state.renewals) == {("conv_1", "lease_1", LEASE_SECONDS)}
    stopped = len(state.renewals)
    await asyncio.sleep(LEASE_SECONDS)
    assert len(state.renewals) == stopped, "a finished turn renews nothing"


async def test_failed_renewals_are_retried_at_the_next_beat(caplog: pytest.LogCaptureFixture) -> None:
    state = StandInState(ServiceUnavailable("state restarting"), ServiceUnavailable("state restarting"))
    heartbeat = _heartbeat(state)
    await asyncio.sleep(LEASE_SECONDS * 2)
    await heartbeat.stop()
    assert len(state.renewals) >= 3, "renewing went on after two failures"
    assert "retried" in caplog.text


async def test_a_lost_lease_stops_the_renewals_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    state = StandInState(Conflict("the lease expired and was taken", code="conversation_lease_lost"))
    with caplog.at_level(logging.ERROR):
        heartbeat = _heartbeat(state)
        await asyncio.sleep(LEASE_SECONDS * 2)
        await heartbeat.stop()
    assert len(state.renewals) == 1
    assert "lost its lease" in caplog.text
