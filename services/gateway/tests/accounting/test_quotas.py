"""Concurrent turns and open WebSockets against the tenant's quotas, with the background queue's counts read from a
stand-in for NATS (quotas.py, quota_counts.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentic_core.usage.quotas import QuotaLimits, TenantQuotas, tenant_token
from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts
from agentic_gateway.accounting.quotas import OpenSockets, QuotaExceeded, Quotas


class _Queue:
    """The `BACKGROUND` stream's messages per subject, as `stream_info` answers them."""

    def __init__(self) -> None:
        self.subjects: dict[str, int] = {}

    def jetstream(self) -> _Queue:
        return self

    async def stream_info(self, name: str, subjects_filter: str | None = None) -> Any:
        state = type("State", (), {"subjects": dict(self.subjects)})
        return type("Info", (), {"state": state})


def _queued(queue: _Queue, tenant: str, turns: int) -> None:
    queue.subjects[f"background.turns.{tenant_token(tenant)}"] = turns


def test_queued_and_running_background_turns_take_concurrent_slots() -> None:
    async def run() -> None:
        queue = _Queue()
        holds = BackgroundHolds(queue)  # type: ignore[arg-type]
        quotas = Quotas(TenantQuotas(QuotaLimits(concurrent_turns=2)), SharedCounts(None), background=holds)
        _queued(queue, "team", 2)
        await holds.sync()
        with pytest.raises(QuotaExceeded, match="2 at once"):
            quotas.admit("team")
        quotas.admit("other").release()  # another tenant's slots are its own
        _queued(queue, "team", 1)  # one ended: its message was acknowledged
        await holds.sync()
        quotas.admit("team")

    asyncio.run(run())


def test_a_handed_over_slot_is_kept_until_the_queue_counts_the_turn() -> None:
    async def run() -> None:
        queue = _Queue()
        holds = BackgroundHolds(queue)  # type: ignore[arg-type]
        quotas = Quotas(TenantQuotas(QuotaLimits(concurrent_turns=1)), SharedCounts(None), background=holds)
        admission = quotas.admit("team")
        _queued(queue, "team", 1)  # the executor queued the turn, then answered `queued`
        admission.hand_over(holds)
        admission.release()  # the HTTP response is sent: the slot stays the request's until the next reading
        with pytest.raises(QuotaExceeded):
            quotas.admit("team")
        await holds.sync()  # the queue counts it now, and the request's slot is gone: still one, never zero
        with pytest.raises(QuotaExceeded):
            quotas.admit("team")
        assert quotas.counts.total(f"conc.{tenant_token('team')}") == 0
        _queued(queue, "team", 0)
        await holds.sync()
        quotas.admit("team")

    asyncio.run(run())


def test_websockets_are_limited_per_tenant_and_closing_one_frees_a_place() -> None:
    sockets = OpenSockets(TenantQuotas(QuotaLimits(websockets=2)), SharedCounts(None))
    first, _ = sockets.admit("team"), sockets.admit("team")
    with pytest.raises(QuotaExceeded, match="2 open at once") as refused:
        sockets.admit("team")
    assert refused.value.http_status == 429
    sockets.admit("other")
    first.release()
    sockets.admit("team")


def test_zero_websockets_means_unlimited() -> None:
    sockets = OpenSockets(TenantQuotas(QuotaLimits()), SharedCounts(None))
    for _ in range(100):
        sockets.admit("team")
