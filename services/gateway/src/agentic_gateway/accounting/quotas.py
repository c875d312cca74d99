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
from dataclasses import dataclass, field
from typing import Any

from agentic.v1 import usage_pb2, usage_pb2_grpc
from agentic_core.errors import AgenticError, RateLimited
from agentic_core.usage.quotas import DAY, MINUTE, QuotaLimits, TenantQuotas, rate_headers, reset_duration, tenant_token
from agentic_runtime.grpc.client import Peer
from fastapi import Request, WebSocket
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts
from agentic_gateway.context import Principal

log = logging.getLogger(__name__)

# The requests that start a turn (or a model call): they count, and hold a concurrent-turn slot while they run.
COUNTED = frozenset({"/v1/responses", "/v1/responses/compact", "/v1/messages", "/v1/chat/completions",
                     "/v1/completions", "/v1/embeddings"})
_SLOT = "agentic_quota"
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


@dataclass(slots=True)
class _Slot:
    """What one HTTP request's quota check left for the middleware: headers to add, a slot to give back."""

    headers: Headers = field(default_factory=list)
    admission: Admission | None = None


def quotas_of(app: Any) -> Quotas | None:
    accounting = getattr(app.state, "accounting", None)
    return accounting.quotas if accounting is not None else None


async def quota_check(request: Request, principal: Principal) -> None:
    """A router dependency: counts a turn-starting request against its tenant's quotas (429 over one), and leaves
    the `x-ratelimit-*` headers for `QuotaHeaders` to add to whatever the response is."""
    quotas = quotas_of(request.app)
    slot = request.scope.get("state", {}).get(_SLOT)
    if quotas is None or slot is None:
        return
    if request.method != "POST" or request.url.path not in COUNTED:
        slot.headers = quotas.headers(principal.tenant)
        return
    try:
        slot.admission = quotas.admit(principal.tenant)
    except QuotaExceeded as refused:
        slot.headers = refused.headers
        raise
    slot.headers = slot.admission.headers


class QuotaHeaders:
    """ASGI middleware: adds the headers `quota_check` left to the response, and gives the request's
    concurrent-turn slot back once the response (a whole stream) has been sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        slot = _Slot()
        scope.setdefault("state", {})[_SLOT] = slot

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and slot.headers:
                extra = [(name.encode(), value.encode()) for name, value in slot.headers]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            if slot.admission is not None:
                slot.admission.release()


def hand_over_to_background(request: Request) -> None:
    """The request queued a background turn: its slot is held by the turn until it ends, not by the request."""
    quotas = quotas_of(request.app)
    slot = request.scope.get("state", {}).get(_SLOT)
    if quotas is not None and quotas.background is not None and slot is not None and slot.admission is not None:
        slot.admission.hand_over(quotas.background)


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


def admit_socket(websocket: WebSocket, tenant: str) -> Admission:
    """An upgrade counts against the tenant's open WebSockets; raises `QuotaExceeded` (a 429 before accepting)."""
    accounting = getattr(websocket.app.state, "accounting", None)
    return accounting.sockets.admit(tenant) if accounting is not None else Admission([])


def admit_socket_turn(websocket: WebSocket, tenant: str) -> Admission:
    """A WebSocket `response.create` counts as a request and holds a slot while it runs; raises `QuotaExceeded`
    (sent as a 429 `error` event)."""
    quotas = quotas_of(websocket.app)
    return quotas.admit(tenant) if quotas is not None else Admission([])
