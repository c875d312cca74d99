"""Per-tenant quotas across gateway replicas: two gateway processes with the same quota settings share their
counts through NATS, so a tenant's requests per minute and concurrent turns are limited over both, and its tokens
per day come from the usage both recorded. Over a limit: 429 in OpenAI's shape with `Retry-After` (the SDK raises
`RateLimitError`); every response carries OpenAI's `x-ratelimit-*` headers.

The NATS server may be shared with other test runs: every tenant here is new to this run."""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from typing import Any

import httpx
import openai
import pytest
from anthropic import Anthropic
from openai import OpenAI
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.fake_upstream import Delay, FakeUpstream, FunctionCall, Text

MODEL = "smollm2"
RUN = secrets.token_hex(4)
REQUESTS_PER_MINUTE = 4  # the defaults of both gateways
CONCURRENT_TURNS = 3
TOKENS_PER_DAY = 1_000_000
OVERRIDES = {  # the quotas file: a limit left out keeps the default
    "concurrent": {"concurrent_turns": 1, "requests_per_minute": 0},
    "tokens": {"tokens_per_day": 50, "requests_per_minute": 0},
    "vip": {"requests_per_minute": 10},
    "socket": {"requests_per_minute": 1},
    "background": {"concurrent_turns": 1, "requests_per_minute": 0},
    "sockets": {"websockets": 1, "requests_per_minute": 0},
}
TENANTS = ("minute", *OVERRIDES)
RESET = re.compile(r"(\d+h)?(\d+m)?\d+s|\d+ms")


def tenant(name: str) -> str:
    return f"quota-{name}-{RUN}"


def key(name: str) -> str:
    return f"sk-quota-{name}-{RUN}"


@pytest.fixture(scope="module")
def gateways(stack, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two gateway replicas with the same quota settings (defaults and a per-tenant file), on the same NATS."""
    quotas = tmp_path_factory.mktemp("quotas") / "quotas.yaml"
    quotas.write_text(json.dumps({"tenants": {tenant(name): limits for name, limits in OVERRIDES.items()}}))  # YAML too
    env = {
        "AGENTIC_GATEWAY_API_KEYS": ",".join(f"{key(name)}={tenant(name)}" for name in TENANTS),
        "AGENTIC_GATEWAY_ADMIN_KEYS": "",
        "AGENTIC_GATEWAY_TENANT_REQUESTS_PER_MINUTE": str(REQUESTS_PER_MINUTE),
        "AGENTIC_GATEWAY_TENANT_CONCURRENT_TURNS": str(CONCURRENT_TURNS),
        "AGENTIC_GATEWAY_TENANT_TOKENS_PER_DAY": str(TOKENS_PER_DAY),
        "AGENTIC_GATEWAY_TENANT_QUOTAS_FILE": str(quotas),
        "AGENTIC_GATEWAY_QUOTA_SYNC_SECONDS": "0.3",
    }
    return stack.add_gateway(**env), stack.add_gateway(**env)


def sdk(gateway: str, name: str) -> OpenAI:
    return OpenAI(base_url=gateway + "/v1", api_key=key(name), max_retries=0, timeout=30)


def fresh_minute() -> None:
    """Requests count per UTC minute: a test that fills a minute starts early in one."""
    if time.time() % 60 > 40:
        time.sleep(60 - time.time() % 60 + 0.1)


def create(gateway: str, name: str, **fields: Any) -> httpx.Headers:
    """One turn (store:false: relayed to the model server); its response's headers."""
    with sdk(gateway, name) as client:
        raw = client.responses.with_raw_response.create(model=MODEL, input="hi", store=False, **fields)
    assert raw.parse().status == "completed"
    return raw.headers


def quota_headers(gateway: str, name: str) -> httpx.Headers:
    """The tenant's headers on a request that counts for nothing (a read of an unknown response: 404)."""
    reply = httpx.get(f"{gateway}/v1/responses/resp_unknown", headers={"authorization": f"Bearer {key(name)}"}, timeout=10)
    assert reply.status_code == 404, reply.text
    return reply.headers


def headers_show(gateway: str, name: str, header: str, value: str) -> httpx.Headers:
    """Polls until the gateway's `header` for the tenant is `value` (another replica's counts arrive through NATS,
    recorded usage every sync)."""
    deadline = time.monotonic() + 15
    while (headers := quota_headers(gateway, name)).get(header) != value:
        if time.monotonic() > deadline:
            raise AssertionError(f"{header}: {headers.get(header)!r}, expected {value!r}")
        time.sleep(0.1)
    return headers


def refused(gateway: str, name: str) -> openai.RateLimitError:
    with pytest.raises(openai.RateLimitError) as raised, sdk(gateway, name) as client:
        client.responses.create(model=MODEL, input="one more", store=False)
    return checked(raised.value)


def checked(error: openai.RateLimitError) -> openai.RateLimitError:
    """A quota's refusal: 429, OpenAI's error object, `Retry-After`."""
    assert error.status_code == 429
    body = error.response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == "rate_limit_error" and body["error"]["code"] == "rate_limit_exceeded"
    assert int(error.response.headers["retry-after"]) >= 1
    return error


def test_requests_per_minute_are_counted_over_both_gateways(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    fresh_minute()
    for used in range(1, REQUESTS_PER_MINUTE + 1):
        headers = create(first, "minute")
        assert headers["x-ratelimit-limit-requests"] == str(REQUESTS_PER_MINUTE)
        assert headers["x-ratelimit-remaining-requests"] == str(REQUESTS_PER_MINUTE - used)
        assert RESET.fullmatch(headers["x-ratelimit-reset-requests"])
    # The other replica learns the first one's count, and refuses the tenant's next request; so does the first.
    headers_show(second, "minute", "x-ratelimit-remaining-requests", "0")
    error = refused(second, "minute")
    assert "Rate limit reached for requests: 4 per minute" in error.message
    assert 1 <= int(error.response.headers["retry-after"]) <= 60
    assert error.response.headers["x-ratelimit-remaining-requests"] == "0"
    refused(first, "minute")
    assert len(upstream.requests) == REQUESTS_PER_MINUTE  # refused requests never reach the model server
    # Another tenant's quota is its own.
    assert create(second, "vip")["x-ratelimit-limit-requests"] == "10"


def test_concurrent_turns_are_limited_over_both_gateways(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    upstream.script(Delay(2.0, Text("slow")))
    slow = threading.Thread(target=create, args=(first, "concurrent"))
    slow.start()
    try:
        deadline = time.monotonic() + 10
        while not upstream.requests:  # the slow turn holds its slot from admission until its answer is sent
            assert time.monotonic() < deadline, "the slow turn did not start"
            time.sleep(0.02)
        # Its count reaches the other replica within moments (a request admitted meanwhile is answered at once).
        refusal: openai.RateLimitError | None = None
        while refusal is None:
            try:
                create(second, "concurrent")
            except openai.RateLimitError as error:
                refusal = checked(error)
            assert time.monotonic() < deadline, "the other replica never refused"
        assert "concurrent requests: 1 at once" in refusal.message and refusal.response.headers["retry-after"] == "1"
        assert slow.is_alive()
    finally:
        slow.join()
    # The slot is given back once the answer is sent: the other replica admits the tenant again.
    deadline = time.monotonic() + 10
    while True:
        try:
            create(second, "concurrent")
            break
        except openai.RateLimitError:
            assert time.monotonic() < deadline, "the slot was not given back"
            time.sleep(0.1)


def admitted_again(gateway: str, name: str, **fields: Any) -> None:
    """Polls until the tenant's next turn is admitted (a slot given back reaches every replica within moments)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            create(gateway, name, **fields)
            return
        except openai.RateLimitError:
            assert time.monotonic() < deadline, "the slot was not given back"
            time.sleep(0.1)


def refused_on(gateway: str, name: str) -> openai.RateLimitError:
    """Polls until the replica refuses the tenant's next turn (another replica's counts arrive within moments)."""
    deadline = time.monotonic() + 15
    while True:
        try:
            create(gateway, name)
        except openai.RateLimitError as error:
            return checked(error)
        assert time.monotonic() < deadline, "the replica never refused"
        time.sleep(0.1)


def background(gateway: str, name: str, **fields: Any) -> str:
    with sdk(gateway, name) as client:
        queued = client.responses.create(model=MODEL, input="in the background", background=True, **fields)
    assert queued.status == "queued"
    return queued.id


def status_of(gateway: str, name: str, response_id: str) -> str:
    with sdk(gateway, name) as client:
        return client.responses.retrieve(response_id).status or ""


def test_a_background_turn_holds_its_slot_until_it_ends(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    # Two model calls and a tool call between them: a turn of a few seconds (each call under the stack's timeout).
    upstream.script(Delay(2.0, FunctionCall("echo", '{"text": "one"}')), Delay(2.0, Text("slow")))
    running = background(first, "background", tools=[{"type": "operator", "name": "echo"}])
    # The request that queued it has been answered; the turn still holds the tenant's one slot, on both replicas,
    # for foreground and background turns alike.
    error = refused(first, "background")
    assert "concurrent requests: 1 at once" in error.message
    with pytest.raises(openai.RateLimitError):
        background(first, "background")
    refused_on(second, "background")
    assert status_of(first, "background", running) in ("queued", "in_progress")
    deadline = time.monotonic() + 20
    while status_of(first, "background", running) != "completed":
        assert time.monotonic() < deadline, "the background turn did not complete"
        time.sleep(0.1)
    admitted_again(second, "background")
    admitted_again(first, "background")


def _socket(gateway: str, name: str):  # type: ignore[no-untyped-def]
    url = gateway.replace("http://", "ws://") + "/v1/responses"
    return connect(url, additional_headers={"authorization": f"Bearer {key(name)}"}, open_timeout=10)


def test_open_websockets_are_limited_over_both_gateways(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    with _socket(first, "sockets"):
        deadline = time.monotonic() + 15
        refusal: InvalidStatus | None = None
        while refusal is None:  # the first replica's count reaches the second within moments
            try:
                _socket(second, "sockets").close()
            except InvalidStatus as refused:
                refusal = refused
            assert time.monotonic() < deadline, "the other replica never refused the socket"
            time.sleep(0.1)
        assert refusal.response.status_code == 429
        body = json.loads(refusal.response.body)
        assert body["error"]["type"] == "rate_limit_error" and "1 open at once" in body["error"]["message"]
        _socket(second, "vip").close()  # another tenant's sockets are its own
    deadline = time.monotonic() + 15
    while True:  # closed: a place is free again, on either replica
        try:
            _socket(second, "sockets").close()
            break
        except InvalidStatus:
            assert time.monotonic() < deadline, "closing the socket did not free its place"
            time.sleep(0.1)


def test_tokens_per_day_come_from_recorded_usage(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    upstream.script(Text("a b"), Text("c d"))  # 36 input and 2 output tokens each
    headers = create(first, "tokens")
    assert headers["x-ratelimit-limit-tokens"] == "50" and headers["x-ratelimit-remaining-tokens"] == "50"
    assert "x-ratelimit-limit-requests" not in headers  # unlimited for this tenant
    # Recorded by the first gateway, read back by both.
    headers_show(second, "tokens", "x-ratelimit-remaining-tokens", str(50 - 38))
    create(second, "tokens")  # under the limit when admitted; it passes it
    for gateway in gateways:  # each reads the recorded usage at its own sync
        headers = headers_show(gateway, "tokens", "x-ratelimit-remaining-tokens", "0")
        assert RESET.fullmatch(headers["x-ratelimit-reset-tokens"])
        error = refused(gateway, "tokens")
        assert "Rate limit reached for tokens: 50 per day" in error.message
        assert 1 <= int(error.response.headers["retry-after"]) <= 86400


def test_the_quotas_file_overrides_the_defaults_per_tenant(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, second = gateways
    fresh_minute()
    for _ in range(REQUESTS_PER_MINUTE + 1):  # past the default: this tenant may make 10
        headers = create(second, "vip")
    assert headers["x-ratelimit-limit-requests"] == "10"
    # The limits the file leaves out are the defaults.
    assert headers["x-ratelimit-limit-tokens"] == str(TOKENS_PER_DAY)
    assert quota_headers(first, "minute")["x-ratelimit-limit-requests"] == str(REQUESTS_PER_MINUTE)


def test_every_api_response_carries_the_headers(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    first, _ = gateways
    auth = {"authorization": f"Bearer {key('vip')}"}
    stored = httpx.post(f"{first}/v1/responses", headers=auth, json={"model": MODEL, "input": "x"}, timeout=30)
    assert stored.status_code == 200 and stored.headers["x-ratelimit-limit-requests"] == "10"
    for reply in (
        httpx.get(f"{first}/v1/responses/{stored.json()['id']}/input_items", headers=auth, timeout=10),
        httpx.post(f"{first}/v1/conversations", headers=auth, json={}, timeout=10),
        httpx.post(f"{first}/v1/responses", headers=auth, json={"model": MODEL}, timeout=10),  # a 400
        httpx.post(f"{first}/v1/chat/completions", headers=auth, timeout=10,
                   json={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}),
    ):
        assert "x-ratelimit-remaining-requests" in reply.headers, (reply.request.url, reply.status_code)
        assert reply.headers["x-ratelimit-limit-tokens"] == str(TOKENS_PER_DAY)
    with Anthropic(base_url=first, api_key=key("vip"), max_retries=0, timeout=30) as client:
        raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=16,
                                                       messages=[{"role": "user", "content": "hi"}])
    assert raw.headers["x-ratelimit-limit-requests"] == "10"


def test_a_websocket_request_over_the_quota_is_a_429_error_event(gateways: tuple[str, str], upstream: FakeUpstream) -> None:
    _, second = gateways
    fresh_minute()
    url = second.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"authorization": f"Bearer {key('socket')}"}, open_timeout=10) as socket:
        outcomes = []
        for _ in range(2):
            socket.send(json.dumps({"type": "response.create", "model": MODEL, "input": "hi", "store": False}))
            while (event := json.loads(socket.recv(timeout=30)))["type"] not in ("response.completed", "error"):
                pass
            outcomes.append(event)
    assert outcomes[0]["type"] == "response.completed"
    assert outcomes[1]["type"] == "error" and outcomes[1]["status"] == 429
    assert outcomes[1]["error"]["code"] == "rate_limit_exceeded"
