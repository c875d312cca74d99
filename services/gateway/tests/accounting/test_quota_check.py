"""Quotas at the HTTP routes (quota_check.py): every `/v1` answer carries the tenant's `x-ratelimit-*` headers,
a turn-starting request over a quota is a 429 with `retry-after` and runs nothing, a finished request gives its
concurrent-turn slot back, and a queued background turn keeps it."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from agentic_core.usage.quotas import QuotaLimits, TenantQuotas
from agentic_gateway.accounting.quota_check import QuotaHeaders, hand_over_to_background, quota_check
from agentic_gateway.accounting.quota_counts import BackgroundHolds, SharedCounts
from agentic_gateway.accounting.quotas import Quotas
from agentic_gateway.app import ERROR_SHAPES
from agentic_gateway.auth.authenticator import Authenticator
from agentic_runtime.http.errors import install_error_handlers
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.testclient import TestClient

KEYS = "sk-team-key-long-enough-0001=team,sk-other-key-long-enough-001=other"
TEAM = {"authorization": "Bearer sk-team-key-long-enough-0001"}
OTHER = {"authorization": "Bearer sk-other-key-long-enough-001"}


def _app(limits: QuotaLimits) -> tuple[FastAPI, list[str]]:
    """The gateway's quota wiring around stand-in routes; the list names the turns that ran."""
    ran: list[str] = []
    quotas = Quotas(TenantQuotas(limits), SharedCounts(None), background=BackgroundHolds(None))
    app = FastAPI()
    install_error_handlers(app, ERROR_SHAPES)
    app.state.gateway = SimpleNamespace(auth=Authenticator.of_keys(KEYS), accounting=SimpleNamespace(quotas=quotas))
    router = APIRouter(dependencies=[Depends(quota_check)])

    @router.post("/v1/responses")
    async def create(request: Request) -> dict[str, bool]:
        ran.append("turn")
        background = (await request.json()).get("background") is True
        if background:
            hand_over_to_background(request)
        return {"background": background}

    @router.get("/v1/responses/{response_id}")
    async def retrieve(response_id: str) -> dict[str, str]:
        return {"id": response_id}

    app.include_router(router)
    app.add_middleware(QuotaHeaders)
    return app, ran


@pytest.fixture()
def per_minute() -> Iterator[tuple[TestClient, list[str]]]:
    app, ran = _app(QuotaLimits(requests_per_minute=2))
    with TestClient(app) as client:
        yield client, ran


def test_turns_over_the_minutes_quota_are_refused_with_retry_after(per_minute: tuple[TestClient, list[str]]) -> None:
    client, ran = per_minute
    first = client.post("/v1/responses", json={}, headers=TEAM)
    assert first.status_code == 200
    assert first.headers["x-ratelimit-limit-requests"] == "2" and first.headers["x-ratelimit-remaining-requests"] == "1"
    assert client.post("/v1/responses", json={}, headers=TEAM).headers["x-ratelimit-remaining-requests"] == "0"
    refused = client.post("/v1/responses", json={}, headers=TEAM)
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert ran == ["turn", "turn"]  # the refused one never reached its route
    assert client.post("/v1/responses", json={}, headers=OTHER).status_code == 200  # another tenant's own quota


def test_reads_carry_the_headers_without_counting(per_minute: tuple[TestClient, list[str]]) -> None:
    client, _ = per_minute
    for _ in range(3):
        read = client.get("/v1/responses/resp_1", headers=TEAM)
        assert read.status_code == 200 and read.headers["x-ratelimit-remaining-requests"] == "2"
    assert client.post("/v1/responses", json={}, headers=TEAM).status_code == 200


def test_an_unauthenticated_request_is_refused_before_any_count(per_minute: tuple[TestClient, list[str]]) -> None:
    client, ran = per_minute
    assert client.post("/v1/responses", json={}).status_code == 401
    assert client.post("/v1/responses", json={}, headers=TEAM).headers["x-ratelimit-remaining-requests"] == "1"
    assert ran == ["turn"]


def test_a_finished_turn_gives_its_slot_back_and_a_background_one_keeps_it() -> None:
    app, ran = _app(QuotaLimits(concurrent_turns=1))
    with TestClient(app) as client:
        for _ in range(3):  # one at a time: each answered turn frees the tenant's one slot
            assert client.post("/v1/responses", json={}, headers=TEAM).status_code == 200
        assert client.post("/v1/responses", json={"background": True}, headers=TEAM).status_code == 200
        # The queued turn holds the slot after its `queued` answer, until the queue is read counting it.
        refused = client.post("/v1/responses", json={}, headers=TEAM)
        assert refused.status_code == 429 and "1 at once" in refused.json()["error"]["message"]
        assert client.post("/v1/responses", json={}, headers=OTHER).status_code == 200
    assert len(ran) == 5  # the refused one never ran
