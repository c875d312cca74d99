"""Per-tenant quotas across every gateway replica: requests per minute, concurrent turns, tokens per day, and open
WebSockets.

Requests and concurrent turns are counted in `SharedCounts` (memory, shared through NATS), a background turn from
its queueing to its end in `BackgroundHolds` (the executors' queue); tokens per day come from recorded usage, read
from the state service every `AGENTIC_GATEWAY_QUOTA_SYNC_SECONDS`, so a tenant may pass its daily tokens by what its
turns use until then. Over a limit: 429 in OpenAI's shape with `Retry-After`. Every `/v1` response carries
OpenAI's `x-ratelimit-*` headers while quotas are on. WebSockets are counted while open, in the shared counts when
quotas are on, else by each replica alone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from agentic.v1 import usage_pb2, usage_pb2_grpc
from agentic_core.errors import AgenticError, RateLimited
from agentic_core.usage.quotas import DAY, MINUTE, QuotaLimits, TenantQuotas, rate_headers, reset_duration, tenant_token
from agentic_runtime.grpc.client import Peer

from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts

log = logging.getLogger(__name__)

Headers = list[tuple[str, str]]


class QuotaExceeded(RateLimited):
    def __init__(self, message: str, retry_after: float, headers: Headers) -> None:
        super().__init__(message, code="rate_limit_exceeded")
        self.headers = [*headers, ("retry-after", str(max(1, math.ceil(retry_after))))]


class TokensToday:
    """Each tenant's tokens (input + output) recorded since 00:00 UTC, re-read every `sync_seconds`."""

    def __init__(self, peer: Peer, sync_seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.peer, self.stub = peer, usage_pb2_grpc.UsageStub(peer.channel)
        self.sync_seconds, self.clock = sync_seconds, clock
        self.used: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._sync_forever())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def sync(self) -> None:
        now = int(self.clock())
        day = now - now % DAY
        rows = await self.peer.call(self.stub.Query, usage_pb2.UsageQuery(
            start_time=day, end_time=day + DAY, bucket_seconds=DAY, by_tenant=True))
        self.used = {row.tenant: row.input_tokens + row.output_tokens for row in rows.rows if row.start_time == day}

    async def _sync_forever(self) -> None:
        while True:
            try:
                await self.sync()
            except AgenticError as error:
                log.warning("reading today's token usage failed, keeping the last figures: %s", error.message)
            await asyncio.sleep(self.sync_seconds)


@dataclass(slots=True)
class Admission:
    headers: Headers
    _release: Callable[[], None] | None = None

    def release(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None

    def hand_over(self, holds: BackgroundHolds) -> None:
        """The request queued a background turn: the queue holds the slot now; this one goes once `holds` counts
        the turn."""
        if self._release is not None:
            holds.hand_over(self._release)
            self._release = None


class Quotas:
    def __init__(self, limits: TenantQuotas, counts: SharedCounts, tokens: TokensToday | None = None,
                 background: BackgroundHolds | None = None, clock: Callable[[], float] = time.time) -> None:
        self.limits, self.counts, self.tokens, self.clock = limits, counts, tokens, clock
        self.background = background
        self._minute = -1

    def _requests_counter(self, tenant: str, minute: int) -> str:
        return f"rpm.{tenant_token(tenant)}.{minute}"

    def _roll(self, minute: int) -> None:
        """A new minute: the past minutes' request counters go."""
        if minute != self._minute:
            self._minute = minute
            current = f".{minute}"
            self.counts.forget(lambda counter: not counter.startswith("rpm.") or counter.endswith(current))

    def _state(self, tenant: str) -> tuple[QuotaLimits, float, str, int, int]:
        now = self.clock()
        minute = int(now // MINUTE)
        self._roll(minute)
        counter = self._requests_counter(tenant, minute)
        tokens = self.tokens.used.get(tenant, 0) if self.tokens is not None else 0
        return self.limits.of(tenant), now, counter, self.counts.total(counter), tokens

    def headers(self, tenant: str) -> Headers:
        """The tenant's `x-ratelimit-*` headers, counting nothing."""
        limits, now, _, requests, tokens = self._state(tenant)
        return rate_headers(limits, requests, tokens, now)

    def admit(self, tenant: str) -> Admission:
        """Counts a request and takes a concurrent-turn slot (`release` gives it back); raises `QuotaExceeded`."""
        limits, now, counter, requests, tokens = self._state(tenant)
        if limits.requests_per_minute and requests >= limits.requests_per_minute:
            wait = MINUTE - now % MINUTE
            raise QuotaExceeded(f"Rate limit reached for requests: {limits.requests_per_minute} per minute for this "
                                f"project. Try again in {reset_duration(wait)}.", wait,
                                rate_headers(limits, requests, tokens, now))
        if limits.tokens_per_day and tokens >= limits.tokens_per_day:
            wait = DAY - now % DAY
            raise QuotaExceeded(f"Rate limit reached for tokens: {limits.tokens_per_day} per day for this project. "
                                f"Try again in {reset_duration(wait)}.", wait, rate_headers(limits, requests, tokens, now))
        token = tenant_token(tenant)
        concurrent = f"conc.{token}"
        running = self.counts.total(concurrent) + (self.background.of(token) if self.background is not None else 0)
        if limits.concurrent_turns and running >= limits.concurrent_turns:
            raise QuotaExceeded(f"Rate limit reached for concurrent requests: {limits.concurrent_turns} at once for "
                                "this project. Try again when one has finished.", 1.0,
                                rate_headers(limits, requests, tokens, now))
        self.counts.add(counter, 1)
        self.counts.add(concurrent, 1)
        return Admission(rate_headers(limits, requests + 1, tokens, now), lambda: self.counts.add(concurrent, -1))


class OpenSockets:
    """Each tenant's open WebSockets (each may hold tens of MiB of context and queued requests)."""

    def __init__(self, limits: TenantQuotas, counts: SharedCounts) -> None:
        self.limits, self.counts = limits, counts

    def admit(self, tenant: str) -> Admission:
        """Counts an upgrade (`release` when the socket closes); raises `QuotaExceeded` at the tenant's limit."""
        limit = self.limits.of(tenant).websockets
        counter = f"ws.{tenant_token(tenant)}"
        if limit and self.counts.total(counter) >= limit:
            raise QuotaExceeded(f"Rate limit reached for WebSocket connections: {limit} open at once for this "
                                "project. Close one, or send more requests on one connection.", 1.0, [])
        self.counts.add(counter, 1)
        return Admission([], lambda: self.counts.add(counter, -1))
