"""Quotas at the HTTP routes: the router dependency that counts a turn-starting request against its tenant's
quotas (429 over one), and the middleware that adds the `x-ratelimit-*` headers to every `/v1` response and gives
the request's concurrent-turn slot back once the response has been sent."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentic_gateway.accounting.quotas import Admission, Headers, QuotaExceeded
from agentic_gateway.context import Principal, gateway_of

# The requests that start a turn (or a model call): they count, and hold a concurrent-turn slot while they run.
COUNTED = frozenset({"/v1/responses", "/v1/responses/compact", "/v1/messages", "/v1/chat/completions",
                     "/v1/completions", "/v1/embeddings"})
_SLOT = "agentic_quota"


@dataclass(slots=True)
class _Slot:
    """What one HTTP request's quota check left for the middleware: headers to add, a slot to give back."""

    headers: Headers = field(default_factory=list)
    admission: Admission | None = None


async def quota_check(request: Request, principal: Principal) -> None:
    """A router dependency: counts a turn-starting request against its tenant's quotas (429 over one), and leaves
    the `x-ratelimit-*` headers for `QuotaHeaders` to add to whatever the response is."""
    quotas = gateway_of(request).accounting.quotas
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
    quotas = gateway_of(request).accounting.quotas
    slot = request.scope.get("state", {}).get(_SLOT)
    if quotas is not None and quotas.background is not None and slot is not None and slot.admission is not None:
        slot.admission.hand_over(quotas.background)
