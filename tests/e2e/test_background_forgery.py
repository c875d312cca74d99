"""Queued background turns are signed by the executor that queued them (AGENTIC_EXECUTOR_BACKGROUND_SIGNING_KEY): a
turn published straight to NATS by whoever can publish there, carrying a valid-looking principal of another tenant,
is acknowledged and dropped with a log line and a metric, never run, and leaves nothing in the database; a real
background turn still runs, and a forged copy of it cannot fail it."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Iterator

import asyncpg
import httpx
import nats
import orjson
import pytest
from agentic.v1 import common_pb2, executor_pb2
from agentic_local.stack import LocalStack
from agentic_runtime.nats.background_queue import WAKE_SUBJECT, tenant_subject, turns_per_subject
from openai import OpenAI

from tests.support.fake_upstream import Delay, Text
from tests.support.own_nats_stack import own_nats_stack

MODEL = "smollm2"
KEYS = {"tenant-a": "sk-forgery-tenant-a", "tenant-b": "sk-forgery-tenant-b"}
VICTIM = "tenant-b"


@pytest.fixture(scope="module")
def signed_stack(infra, fake_upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    with own_nats_stack(tmp_path_factory.mktemp("forgery"), infra["database_url"], fake_upstream.base_url,
                        AGENTIC_GATEWAY_API_KEYS=",".join(f"{key}={tenant}" for tenant, key in KEYS.items())) as stack:
        yield stack


@pytest.fixture()
def victim(signed_stack: LocalStack) -> Iterator[OpenAI]:
    with OpenAI(base_url=signed_stack.base_url, api_key=KEYS[VICTIM], max_retries=0, timeout=30) as sdk:
        yield sdk


def _forged_turn(response_id: str, text: str) -> bytes:
    """What an executor queues, as any NATS client can write it: the victim's principal, a request, an id."""
    body = {"model": MODEL, "input": text, "background": True, "store": True}
    return executor_pb2.ExecuteRequest(
        request_json=orjson.dumps(body), principal=common_pb2.Principal(tenant=VICTIM, subject="0123456789abcdef"),
        stream=True, response_id=response_id,
    ).SerializeToString()


def _publish_straight_to_nats(stack: LocalStack, payload: bytes, headers: dict[str, str]) -> None:
    async def run() -> None:
        client = await nats.connect(stack.nats_url)
        try:
            await client.jetstream().publish(tenant_subject(VICTIM), payload, headers=headers)
            await client.publish(WAKE_SUBJECT, b"")
        finally:
            await client.close()

    asyncio.run(run())


def _queued_turns(stack: LocalStack) -> dict[str, int]:
    async def run() -> dict[str, int]:
        client = await nats.connect(stack.nats_url)
        try:
            return await turns_per_subject(client)
        finally:
            await client.close()

    return asyncio.run(run())


def _dropped(stack: LocalStack) -> dict[str, float]:
    """agentic_executor_background_unverified_total by reason."""
    counts: dict[str, float] = {}
    for line in httpx.get(stack.metrics_urls["executor"], timeout=5).text.splitlines():
        if line.startswith("agentic_executor_background_unverified_total{"):
            labels, _, value = line.rpartition(" ")
            counts[labels.split('reason="')[1].split('"')[0]] = float(value)
    return counts


def _rows(database_url: str, response_id: str) -> dict[str, int]:
    async def run() -> dict[str, int]:
        connection = await asyncpg.connect(database_url)
        try:
            return {
                "responses": await connection.fetchval("SELECT count(*) FROM responses WHERE id = $1", response_id),
                "background_responses": await connection.fetchval(
                    "SELECT count(*) FROM background_responses WHERE id = $1", response_id),
                "usage": await connection.fetchval("SELECT count(*) FROM usage WHERE tenant = $1", VICTIM),
            }
        finally:
            await connection.close()

    return asyncio.run(run())


def _wait_for(predicate, seconds: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_forged_turn_published_straight_to_nats_is_dropped_unrun(signed_stack: LocalStack, infra, upstream) -> None:
    before = _dropped(signed_stack)
    usage_before = _rows(infra["database_url"], "none")["usage"]
    forged_ids = [f"resp_{secrets.token_hex(24)}" for _ in range(2)]
    unsigned, wrongly_signed = (_forged_turn(response_id, "run me as tenant-b") for response_id in forged_ids)
    _publish_straight_to_nats(signed_stack, unsigned, {"Nats-Msg-Id": forged_ids[0]})
    _publish_straight_to_nats(signed_stack, wrongly_signed, {"Nats-Msg-Id": forged_ids[1],
                                                             "Agentic-Signature": "v1=" + "0" * 64})
    # Acknowledged, so gone from the queue (not left to be redelivered), and counted.
    _wait_for(lambda: _dropped(signed_stack).get("unsigned", 0) > before.get("unsigned", 0)
              and _dropped(signed_stack).get("bad_signature", 0) > before.get("bad_signature", 0))
    _wait_for(lambda: tenant_subject(VICTIM) not in _queued_turns(signed_stack))
    assert upstream.requests == []
    for response_id in forged_ids:
        assert _rows(infra["database_url"], response_id) == {"responses": 0, "background_responses": 0,
                                                             "usage": usage_before}
    log = (signed_stack.logs_dir / "executor.log").read_text()
    assert "dropped a queued background turn that no executor signed (unsigned" in log
    assert "dropped a queued background turn that no executor signed (bad_signature" in log


def test_a_real_background_turn_runs_and_a_forged_copy_of_it_cannot_fail_it(signed_stack: LocalStack, victim: OpenAI,
                                                                             upstream) -> None:
    upstream.script(Delay(2.0, Text("the real answer")))
    queued = victim.responses.create(model=MODEL, input="take your time", background=True)
    _wait_for(lambda: victim.responses.retrieve(queued.id).status == "in_progress")
    # The same id again, unsigned: taken as a second delivery it would claim the running turn and fail it as lost.
    _publish_straight_to_nats(signed_stack, _forged_turn(queued.id, "forged input"), {"Nats-Msg-Id": "forged-" + queued.id})
    _wait_for(lambda: victim.responses.retrieve(queued.id).status not in ("queued", "in_progress"))
    final = victim.responses.retrieve(queued.id)
    assert final.status == "completed" and final.output_text == "the real answer"
    assert len(upstream.requests) == 1  # the real turn's one round; the forged input never reached the model
