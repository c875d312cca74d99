"""Background responses through the whole stack: queued turns that outlive the client, streams resumed from
any gateway, cancel from anywhere, tenancy."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
from agentic_local.processes import wait_until
from agentic_local.stack import LocalStack
from openai import OpenAI

from tests.support.fake_upstream import Delay, FunctionCall, Text
from tests.support.own_nats_stack import own_nats_stack

MODEL = "smollm2"
ECHO = {"type": "operator", "name": "echo"}
LEASE_SECONDS = 3.0
RETENTION_SECONDS = 5.0


def _wait_for_status(client: OpenAI, response_id: str, statuses: set[str], seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while True:
        response = client.responses.retrieve(response_id)
        if response.status in statuses or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def _sse(url: str, headers: dict[str, str], params: dict[str, str] | None = None, limit: int | None = None) -> list[dict]:
    """The events of a stream (the first `limit` of them, then the connection is dropped)."""
    events: list[dict] = []
    with httpx.stream("GET", url, headers=headers, params=params, timeout=30) as reply:
        assert reply.status_code == 200, reply.read()
        for line in reply.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
                if limit is not None and len(events) >= limit:
                    break
    return events


def test_a_background_turn_is_queued_then_completes_and_is_stored(client: OpenAI, upstream) -> None:
    upstream.script(Delay(0.5, Text("done in the background")))
    queued = client.responses.create(model=MODEL, input="take your time", background=True)
    assert queued.status == "queued" and queued.background is True and queued.output == []
    assert client.responses.retrieve(queued.id).status in ("queued", "in_progress")
    final = _wait_for_status(client, queued.id, {"completed", "failed"})
    assert final.status == "completed" and final.output_text == "done in the background"
    # It is an ordinary stored response now: its input items are listed and a chain continues from it.
    assert [item.type for item in client.responses.input_items.list(queued.id).data] == ["message"]
    upstream.script(Text("continued"))
    follow = client.responses.create(model=MODEL, input="and then?", previous_response_id=queued.id)
    assert follow.output_text == "continued"
    assert any(item.get("content") == [{"type": "output_text", "text": "done in the background", "annotations": [],
                                        "logprobs": []}] for item in upstream.requests[-1]["input"] if item.get("role") == "assistant")


def test_background_needs_store(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="x", background=True, store=False)
    assert raised.value.body["param"] == "background"
    assert upstream.requests == []


def test_a_streamed_background_turn_resumes_on_another_gateway_after_a_disconnect(
    stack, client: OpenAI, upstream, auth_headers, gateway_url
) -> None:
    upstream.script(FunctionCall("echo", '{"text": "one"}'), Delay(1.0, Text("A fairly long answer, word by word, to resume.")))
    body = {"model": MODEL, "input": "stream it", "background": True, "stream": True, "tools": [ECHO]}
    first_part: list[dict] = []
    with httpx.stream("POST", f"{gateway_url}/v1/responses", json=body, headers=auth_headers, timeout=30) as reply:
        assert reply.status_code == 200
        for line in reply.iter_lines():
            if line.startswith("data: "):
                first_part.append(json.loads(line[6:]))
                if len(first_part) == 6:
                    break  # the client goes away mid-stream
    response_id = first_part[0]["response"]["id"]
    assert first_part[0]["type"] == "response.created"
    # The turn goes on without the client; a second gateway process resumes the stream after event 5.
    other_gateway = stack.add_gateway()
    rest = _sse(f"{other_gateway}/v1/responses/{response_id}", auth_headers, {"stream": "true", "starting_after": "5"})
    assert [event["sequence_number"] for event in rest] == list(range(6, 6 + len(rest)))
    assert rest[-1]["type"] == "response.completed"
    assert rest[-1]["response"]["output"][-1]["content"][0]["text"] == "A fairly long answer, word by word, to resume."
    # From the start, the same events again: the first part, then the rest, each once.
    whole = _sse(f"{gateway_url}/v1/responses/{response_id}", auth_headers, {"stream": "true"})
    assert whole == first_part + rest
    assert client.responses.retrieve(response_id).status == "completed"


def test_cancel_stops_a_running_turn_and_is_idempotent(stack, client: OpenAI, upstream, auth_headers) -> None:
    other_gateway = stack.add_gateway()  # started first: a gateway's start may outlast the model's delay
    upstream.script(Delay(4.0, Text("never shown")))
    queued = client.responses.create(model=MODEL, input="slow", background=True)
    wait_until(lambda: len(upstream.requests) >= 1, 20, "the model call")
    cancelled = httpx.post(f"{other_gateway}/v1/responses/{queued.id}/cancel", headers=auth_headers, timeout=30)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["id"] == queued.id
    again = client.responses.cancel(queued.id)
    assert again.status == "cancelled"
    time.sleep(4.5)  # the model's answer would have arrived by now: nothing stores it
    final = client.responses.retrieve(queued.id)
    assert final.status == "cancelled" and final.output == []
    events = _sse(f"{stack.urls['gateway']}/v1/responses/{queued.id}", auth_headers, {"stream": "true"})
    assert events[-1]["type"] == "response.cancelled"


def test_only_background_responses_are_cancelled_or_streamed(client: OpenAI, upstream, auth_headers, gateway_url) -> None:
    upstream.script(Text("foreground"))
    response = client.responses.create(model=MODEL, input="now")
    with pytest.raises(openai.BadRequestError):
        client.responses.cancel(response.id)
    streamed = httpx.get(f"{gateway_url}/v1/responses/{response.id}", params={"stream": "true"}, headers=auth_headers)
    assert streamed.status_code == 400 and streamed.json()["error"]["code"] == "not_background"
    for starting_after in ("x", "-1", str(2**63)):  # not a number, negative, past what a sequence number holds
        bad = httpx.get(f"{gateway_url}/v1/responses/{response.id}", params={"stream": "true",
                        "starting_after": starting_after}, headers=auth_headers)
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "starting_after", starting_after


def test_another_tenants_background_response_is_not_found(client: OpenAI, other_tenant: OpenAI, upstream, gateway_url) -> None:
    upstream.script(Delay(1.0, Text("mine")))
    queued = client.responses.create(model=MODEL, input="private", background=True)
    for attempt in (lambda: other_tenant.responses.retrieve(queued.id), lambda: other_tenant.responses.cancel(queued.id)):
        with pytest.raises(openai.NotFoundError):
            attempt()
    stream = httpx.get(f"{gateway_url}/v1/responses/{queued.id}", params={"stream": "true"},
                       headers={"authorization": f"Bearer {other_tenant.api_key}"})
    assert stream.status_code == 404
    assert _wait_for_status(client, queued.id, {"completed"}).output_text == "mine"


@pytest.fixture(scope="module")
def short_lived_stack(infra, fake_upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A stack of its own NATS (its RESPONSES retention and BACKGROUND queue are nobody else's), with a short lease
    and a short retention of events."""
    with own_nats_stack(tmp_path_factory.mktemp("short-lived"), infra["database_url"], fake_upstream.base_url,
                        AGENTIC_EXECUTOR_BACKGROUND_LEASE_SECONDS=str(LEASE_SECONDS),
                        AGENTIC_EXECUTOR_RESPONSE_EVENTS_RETENTION_SECONDS=str(RETENTION_SECONDS)) as stack:
        yield stack


@pytest.fixture()
def short_lived_client(short_lived_stack: LocalStack) -> Iterator[OpenAI]:
    with OpenAI(base_url=short_lived_stack.base_url, api_key="none", max_retries=0, timeout=30) as sdk:
        yield sdk


def test_a_killed_executors_background_turn_fails_within_the_lease(
    short_lived_stack: LocalStack, short_lived_client: OpenAI, upstream
) -> None:
    upstream.script(FunctionCall("slow", '{"seconds": 10}'), Text("never shown"))
    queued = short_lived_client.responses.create(model=MODEL, input="slow", background=True,
                                                 tools=[{"type": "operator", "name": "slow"}])
    wait_until(lambda: len(upstream.requests) >= 1, 20, "the model call")
    assert short_lived_client.responses.retrieve(queued.id).status == "in_progress"
    executor = next(child for child in short_lived_stack.children if child.name == "executor")
    executor.process.send_signal(signal.SIGKILL)
    executor.process.wait()
    killed_at = time.monotonic()
    # Its stand-in (as a restarted pod) takes the turn once the lease runs out.
    short_lived_stack.add_executor(port=short_lived_stack.ports["executor"])
    # The documented bound: about one lease after the death, once an executor is there to take the turn (with a
    # second lease of margin).
    bound = max(killed_at + LEASE_SECONDS, time.monotonic()) + LEASE_SECONDS + 5.0
    final = _wait_for_status(short_lived_client, queued.id, {"failed", "completed"}, seconds=bound - time.monotonic())
    assert final.status == "failed", "still in progress past the bound"
    assert final.error is not None and final.error.code == "executor_lost"
    # A client resuming the stream sees it end the same way.
    events = _sse(f"{short_lived_stack.urls['gateway']}/v1/responses/{queued.id}", {}, {"stream": "true"})
    assert events[-1]["type"] == "response.failed" and events[-1]["response"]["error"]["code"] == "executor_lost"


def _refused_as_expired(reply: httpx.Response) -> None:
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] == "events_expired" and error["param"] == "stream" and "retention" in error["message"]


def test_resuming_after_the_events_expired_is_a_clear_error(
    short_lived_stack: LocalStack, short_lived_client: OpenAI, upstream
) -> None:
    upstream.script(Text("kept for a while"))
    queued = short_lived_client.responses.create(model=MODEL, input="quick", background=True)
    assert _wait_for_status(short_lived_client, queued.id, {"completed"}).status == "completed"
    url = f"{short_lived_stack.urls['gateway']}/v1/responses/{queued.id}"
    # Replayed whole while its events are kept; after the retention, refused before any event.
    deadline = time.monotonic() + RETENTION_SECONDS + 30.0
    while (reply := httpx.get(url, params={"stream": "true", "starting_after": "2"}, timeout=30)).status_code == 200:
        assert b"response.completed" in reply.content
        assert time.monotonic() < deadline, "the events outlived their retention"
        time.sleep(0.5)
    _refused_as_expired(reply)
    # The response itself is kept.
    assert short_lived_client.responses.retrieve(queued.id).output_text == "kept for a while"


def test_a_stream_whose_first_events_expired_is_refused_not_relayed_with_a_gap(
    short_lived_stack: LocalStack, short_lived_client: OpenAI, upstream
) -> None:
    """A turn outliving the retention: its first events go while it runs; a resume from the start is refused."""
    upstream.script(FunctionCall("slow", json.dumps({"seconds": RETENTION_SECONDS * 2})), Text("late"))
    queued = short_lived_client.responses.create(model=MODEL, input="slow", background=True,
                                                 tools=[{"type": "operator", "name": "slow"}])
    url = f"{short_lived_stack.urls['gateway']}/v1/responses/{queued.id}"
    deadline = time.monotonic() + RETENTION_SECONDS * 2 + 30.0
    while True:
        with httpx.stream("GET", url, params={"stream": "true"}, timeout=30) as reply:
            if reply.status_code != 200:
                reply.read()
                break
            first = next(json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data: "))
        assert first["sequence_number"] == 0, "a resumed stream skipped expired events"
        assert time.monotonic() < deadline, "the events outlived their retention"
        time.sleep(0.5)
    _refused_as_expired(reply)
    assert _wait_for_status(short_lived_client, queued.id, {"completed"}).output_text == "late"


FAIR_KEYS = {"fair-a": "sk-fair-a", "fair-b": "sk-fair-b", "capped": "sk-capped"}


@pytest.fixture(scope="module")
def one_slot_stack(infra, fake_upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A stack of its own NATS whose one executor runs one background turn at a time, for three tenants; `capped`
    may run one turn at a time."""
    data_dir = tmp_path_factory.mktemp("one-slot")
    quotas = data_dir / "quotas.json"
    quotas.write_text(json.dumps({"tenants": {"capped": {"concurrent_turns": 1}}}))
    with own_nats_stack(data_dir, infra["database_url"], fake_upstream.base_url,
                        AGENTIC_EXECUTOR_BACKGROUND_CONCURRENCY="1",
                        AGENTIC_GATEWAY_API_KEYS=",".join(f"{key}={tenant}" for tenant, key in FAIR_KEYS.items()),
                        AGENTIC_GATEWAY_ADMIN_KEYS="", AGENTIC_GATEWAY_TENANT_QUOTAS_FILE=str(quotas)) as stack:
        yield stack


@pytest.fixture()
def tenants(one_slot_stack: LocalStack) -> Iterator[dict[str, OpenAI]]:
    clients = {name: OpenAI(base_url=one_slot_stack.base_url, api_key=key, max_retries=0, timeout=30)
               for name, key in FAIR_KEYS.items()}
    yield clients
    for client in clients.values():
        client.close()


def _user_text(request: dict) -> str:
    content = next(item["content"] for item in request["input"] if item.get("role") == "user")
    return content if isinstance(content, str) else content[0]["text"]


def test_another_tenants_first_background_turn_goes_before_a_tenants_backlog(tenants: dict[str, OpenAI], upstream) -> None:
    tenant_a, tenant_b = tenants["fair-a"], tenants["fair-b"]
    upstream.script(Delay(6.0, Text("first")))  # A's first turn holds the executor's one slot meanwhile
    first = tenant_a.responses.create(model=MODEL, input="a-0", background=True)
    wait_until(lambda: len(upstream.requests) >= 1, 20, "A's first turn")
    backlog = [tenant_a.responses.create(model=MODEL, input=f"a-{number}", background=True).id for number in range(1, 21)]
    other = tenant_b.responses.create(model=MODEL, input="b-0", background=True)
    # Everything was queued while A's first turn ran: the order below is the queue's choice, not a race.
    assert tenant_a.responses.retrieve(first.id).status == "in_progress" and len(upstream.requests) == 1
    assert _wait_for_status(tenant_b, other.id, {"completed", "failed"}).status == "completed"
    for response_id in backlog:
        assert _wait_for_status(tenant_a, response_id, {"completed", "failed"}, 60).status == "completed"
    order = [_user_text(request) for request in upstream.requests]
    assert order[:2] == ["a-0", "b-0"], order  # B's first turn did not wait behind A's twenty
    assert sorted(order[2:]) == sorted(f"a-{number}" for number in range(1, 21))


def test_a_queued_background_turn_holds_its_tenants_slot_until_cancelled(tenants: dict[str, OpenAI], upstream) -> None:
    busy, capped = tenants["fair-a"], tenants["capped"]
    upstream.script(Delay(6.0, Text("busy")))  # another tenant's turn holds the executor's one slot meanwhile
    running = busy.responses.create(model=MODEL, input="busy", background=True)
    wait_until(lambda: len(upstream.requests) >= 1, 20, "the other tenant's turn")
    waiting = capped.responses.create(model=MODEL, input="waits", background=True)
    # Queued, not running: it holds the tenant's one slot all the same, for foreground and background turns.
    for attempt in ({}, {"background": True}):
        with pytest.raises(openai.RateLimitError) as refused:
            capped.responses.create(model=MODEL, input="one more", **attempt)
        assert "concurrent requests: 1 at once" in refused.value.message
    assert capped.responses.cancel(waiting.id).status == "cancelled"
    deadline = time.monotonic() + 15
    while True:  # its queue message is gone: the slot is free while the executor is still busy
        try:
            upstream.script(Text("admitted"))
            admitted = capped.responses.create(model=MODEL, input="now", store=False)
            break
        except openai.RateLimitError:
            assert time.monotonic() < deadline, "cancelling the queued turn did not free its slot"
            time.sleep(0.1)
    assert admitted.output_text == "admitted"
    assert busy.responses.retrieve(running.id).status == "in_progress"  # the slot was not freed by running it
    assert _wait_for_status(busy, running.id, {"completed", "failed"}).status == "completed"
    assert capped.responses.retrieve(waiting.id).status == "cancelled"
