"""Usage and costs end to end: every kind of turn (stored and store:false, JSON and streamed, gateway tools,
pass-through, Anthropic Messages, WebSocket, llm-d's split turns) is counted per tenant, key and model, and read
back from `GET /v1/organization/usage/completions` and `/costs` in OpenAI's shapes, by admins only.

The fake model server reports 36 input tokens a generation and one output token a word of its answer (Anthropic
Messages: 21 and 7), so every figure is exact. Each test has a tenant of its own on a gateway of this module, so
no test sees another's usage; usage reaches the state service within about a second, hence the polling."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agentic_local.stack import llm_d_secrets
from anthropic import Anthropic
from openai import OpenAI
from websockets.sync.client import connect

from conftest import ADMIN_KEY, CHAT_MODEL, NO_MESSAGES_MODEL
from tests.support.fake_upstream import FakeUpstream, FunctionCall, Output, Stalled, Text, _words

MODEL = "smollm2"
INPUT = 36  # input tokens of each Responses or Chat generation of the fake model server
RUN = secrets.token_hex(3)
TENANTS = ("json", "stream", "tools", "passthrough", "messages", "socket", "compact", "groups", "buckets", "costs",
           "metrics", "cut", "stalled", "stalled-chat")
ADMIN = f"sk-usage-admin-{RUN}"
PRICES = {"currency": "usd", "models": {MODEL: {"input": 2.0, "cached_input": 1.0, "output": 8.0},
                                         "smollm2-*": {"input": 1.0, "output": 4.0}}}


def tenant(name: str) -> str:
    return f"usage-{name}-{RUN}"


def key(name: str, index: int = 0) -> str:
    return f"sk-usage-{name}-{index}-{RUN}"


def key_id(secret: str) -> str:
    """The key id the gateway records: the first 8 hex digits of the key's SHA-256 (never the key)."""
    return hashlib.sha256(secret.encode()).hexdigest()[:8]


def words(text: str) -> int:
    """Output tokens the fake model server reports for `text`."""
    return len(_words(text))


@pytest.fixture(scope="module")
def gateway(stack, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A gateway with a tenant per test (two keys for `groups`), an admin key, and model prices."""
    prices = tmp_path_factory.mktemp("usage") / "prices.json"
    prices.write_text(json.dumps(PRICES))
    keys = [f"{key(name)}={tenant(name)}" for name in TENANTS] + [f"{key('groups', 1)}={tenant('groups')}"]
    return stack.add_gateway(AGENTIC_GATEWAY_API_KEYS=",".join(keys), AGENTIC_GATEWAY_ADMIN_KEYS=f"{ADMIN}=ops",
                             AGENTIC_MODEL_PRICES_FILE=str(prices))


def sdk(gateway: str, name: str, index: int = 0) -> OpenAI:
    return OpenAI(base_url=gateway + "/v1", api_key=key(name, index), max_retries=0, timeout=30)


def organization(gateway: str, path: str, secret: str = ADMIN, **params: Any) -> httpx.Response:
    return httpx.get(f"{gateway}/v1/organization/{path}", params=params, headers={"authorization": f"Bearer {secret}"},
                     timeout=10)


def usage_page(gateway: str, **params: Any) -> dict[str, Any]:
    params.setdefault("start_time", int(time.time()) - 600)
    reply = organization(gateway, "usage/completions", **params)
    assert reply.status_code == 200, reply.text
    return reply.json()


def results(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [result for bucket in page["data"] for result in bucket["results"]]


def summed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of several results added up (tool calls by kind)."""
    total: dict[str, Any] = {"input_tokens": 0, "input_cached_tokens": 0, "output_tokens": 0,
                             "output_reasoning_tokens": 0, "num_model_requests": 0, "tool_calls": {}, "tool_seconds": 0.0}
    for row in rows:
        for name in ("input_tokens", "input_cached_tokens", "output_tokens", "output_reasoning_tokens",
                     "num_model_requests", "tool_seconds"):
            total[name] += row[name]
        for kind, calls in row["tool_calls"].items():
            total["tool_calls"][kind] = total["tool_calls"].get(kind, 0) + calls
    return total


def usage_of(gateway: str, project: str, expected: dict[str, Any], **params: Any) -> dict[str, Any]:
    """The project's summed usage once it shows `expected` (a subset of `summed`'s fields); fails with what it
    shows after a deadline."""
    deadline = time.monotonic() + 20
    while True:
        total = summed(results(usage_page(gateway, project_ids=[project], **params)))
        if all(total[name] == value for name, value in expected.items()):
            return total
        if time.monotonic() > deadline:
            raise AssertionError(f"usage of {project}: {total}, expected {expected}")
        time.sleep(0.25)


def test_stored_json_turns_count_their_tokens_and_requests(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("one two three"), Text("four five"))
    with sdk(gateway, "json") as client:
        first = client.responses.create(model=MODEL, input="count me")
        client.responses.create(model=MODEL, input="and me", previous_response_id=first.id)
    total = usage_of(gateway, tenant("json"), {"num_model_requests": 2})
    assert total == {"input_tokens": 2 * INPUT, "input_cached_tokens": 0, "output_tokens": 3 + 2,
                     "output_reasoning_tokens": 0, "num_model_requests": 2, "tool_calls": {}, "tool_seconds": 0.0}


def test_streamed_turns_stored_or_not_are_counted(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("streamed words here"), Text("a b"))
    with sdk(gateway, "stream") as client:
        events = list(client.responses.create(model=MODEL, input="stream it", stream=True))
        assert events[-1].type == "response.completed"
        # store:false with a conversation-less, tool-less body: the gateway relays it to the model server.
        events = list(client.responses.create(model=MODEL, input="stream it", stream=True, store=False))
        assert events[-1].response.usage.output_tokens == 2
    usage_of(gateway, tenant("stream"), {"input_tokens": 2 * INPUT, "output_tokens": 3 + 2, "num_model_requests": 2})


def test_a_turn_whose_client_hangs_up_counts_what_it_spent(gateway: str, upstream: FakeUpstream) -> None:
    """The client hangs up once the first round's tool call is placed, while it runs: the turn stops there, and the
    model request it made counts (before, a turn cut short counted nothing)."""
    call = FunctionCall("slow", '{"seconds": 2}')
    upstream.script(call, Text("after the call"))
    asked = len(upstream.requests)
    body = {"model": MODEL, "input": "wait for it", "stream": True, "tools": [{"type": "operator", "name": "slow"}]}
    with httpx.stream("POST", f"{gateway}/v1/responses", json=body, timeout=30,
                      headers={"authorization": f"Bearer {key('cut')}"}) as reply:
        for line in reply.iter_lines():
            # The call's item is added as it is placed; its `done` comes with its output, once it has run.
            event = json.loads(line[5:]) if line.startswith("data:") else {}
            if event.get("type") == "response.output_item.added" and event["item"]["type"] == "function_call":
                break
    time.sleep(3.0)  # the call's time is over: had the turn gone on, its next round would have asked the model
    assert len(upstream.requests) - asked == 1
    total = usage_of(gateway, tenant("cut"), {"num_model_requests": 1})
    assert total["input_tokens"] == INPUT
    assert total["output_tokens"] == words(call.arguments)


@pytest.mark.parametrize(("model", "name"), [(MODEL, "stalled"), (CHAT_MODEL, "stalled-chat")])
def test_a_round_cut_while_it_generates_counts_as_a_model_request(gateway: str, upstream: FakeUpstream, model: str,
                                                                  name: str) -> None:
    """The model server (Responses or Chat Completions) has answered and is still generating when the client hangs
    up: its usage never comes, but the request was made (before, such a round counted nothing)."""
    upstream.script(Stalled("a long answer that never ends", events=5, seconds=5))
    body = {"model": model, "input": "take your time", "stream": True}
    with httpx.stream("POST", f"{gateway}/v1/responses", json=body, timeout=30,
                      headers={"authorization": f"Bearer {key(name)}"}) as reply:
        assert reply.status_code == 200
        for line in reply.iter_lines():
            if line.startswith("data:") and json.loads(line[5:])["type"] == "response.output_text.delta":
                break  # generating: hang up
    total = usage_of(gateway, tenant(name), {"num_model_requests": 1})
    assert total["input_tokens"] == 0 and total["output_tokens"] == 0


def test_gateway_tools_count_their_calls_by_kind_and_the_seconds_they_took(gateway: str, upstream: FakeUpstream) -> None:
    calls = [FunctionCall("web_search", '{"queries": ["usage"]}'), FunctionCall("slow", '{"seconds": 0.3}')]
    upstream.script(Output(calls), Text("Found and waited."))
    tools = [{"type": "web_search"}, {"type": "operator", "name": "slow"}]
    with sdk(gateway, "tools") as client:
        response = client.responses.create(model=MODEL, input="search, then wait", tools=tools)
    assert response.output_text == "Found and waited."
    total = usage_of(gateway, tenant("tools"), {"num_model_requests": 2})
    assert total["tool_calls"] == {"web_search": 1, "operator": 1}
    assert 0.3 <= total["tool_seconds"] < 10
    assert total["input_tokens"] == 2 * INPUT
    assert total["output_tokens"] == sum(words(call.arguments) for call in calls) + words("Found and waited.")
    # The response the client got reports the model's tokens only, as the usage does.
    assert response.usage.input_tokens == total["input_tokens"] and response.usage.output_tokens == total["output_tokens"]


def test_pass_through_turns_are_read_from_the_relayed_bytes(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("one two three"), Text("a b"), Text("chat says hi"))
    with sdk(gateway, "passthrough") as client:
        client.responses.create(model=MODEL, input="json", store=False)
        list(client.responses.create(model=MODEL, input="sse", store=False, stream=True))
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        client.embeddings.create(model=MODEL, input=["four words in here"])
    assert len(upstream.requests) == 4  # all relayed; none went through the executor
    usage_of(gateway, tenant("passthrough"), {"input_tokens": 3 * INPUT + words("four words in here"),
                                               "output_tokens": 3 + 2 + words("chat says hi"), "num_model_requests": 4})


def test_messages_turns_relayed_and_translated_are_counted(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("native json"), Text("native stream"), Text("translated here"))
    user = [{"role": "user", "content": "Hello there"}]
    with Anthropic(base_url=gateway, api_key=key("messages"), max_retries=0, timeout=30) as client:
        client.messages.create(model=MODEL, max_tokens=32, messages=user)  # relayed: 21 in, 7 out
        with client.messages.stream(model=MODEL, max_tokens=32, messages=user) as stream:
            assert stream.get_final_message().usage.output_tokens == 7
        # A model server without /v1/messages: the executor runs the turn in Responses and translates it.
        translated = client.messages.create(model=NO_MESSAGES_MODEL, max_tokens=32, messages=user)
    assert translated.usage.input_tokens == INPUT
    usage_of(gateway, tenant("messages"), {"num_model_requests": 3})
    rows = results(usage_page(gateway, project_ids=[tenant("messages")], group_by=["model"]))
    assert {row["model"]: (row["input_tokens"], row["output_tokens"], row["num_model_requests"]) for row in rows} == {
        MODEL: (2 * 21, 2 * 7, 2), NO_MESSAGES_MODEL: (INPUT, words("translated here"), 1)}


def test_websocket_turns_stored_or_not_are_counted(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("over the socket"), Text("unstored too"))
    url = gateway.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"authorization": f"Bearer {key('socket')}"}, open_timeout=10) as socket:
        for store in (True, False):
            socket.send(json.dumps({"type": "response.create", "model": MODEL, "input": "hi", "store": store}))
            while json.loads(event := socket.recv(timeout=30))["type"] not in ("response.completed", "error"):
                pass
            assert json.loads(event)["type"] == "response.completed", event
    usage_of(gateway, tenant("socket"), {"input_tokens": 2 * INPUT,
                                          "output_tokens": words("over the socket") + words("unstored too"),
                                          "num_model_requests": 2})


def test_a_compaction_is_a_model_request_too(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("SUMMARY of it"))
    with sdk(gateway, "compact") as client:
        compacted = client.responses.compact(model=MODEL, input="remember the number 7")
    assert compacted.usage.output_tokens == words("SUMMARY of it")
    usage_of(gateway, tenant("compact"), {"input_tokens": compacted.usage.input_tokens,
                                           "output_tokens": words("SUMMARY of it"), "num_model_requests": 1})


def test_usage_groups_by_model_key_and_project(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("first key"), Text("second key here"), Text("via chat"))
    with sdk(gateway, "groups") as first, sdk(gateway, "groups", 1) as second:
        first.responses.create(model=MODEL, input="x")
        second.responses.create(model=MODEL, input="y")
        second.responses.create(model=CHAT_MODEL, input="z")  # the same server through its chat adapter
    project = tenant("groups")
    usage_of(gateway, project, {"num_model_requests": 3})

    by_key = {row["api_key_id"]: row for row in results(usage_page(gateway, project_ids=[project], group_by=["api_key_id"]))}
    assert {name: (row["num_model_requests"], row["output_tokens"]) for name, row in by_key.items()} == {
        key_id(key("groups")): (1, 2), key_id(key("groups", 1)): (2, 3 + 2)}
    assert all(row["model"] is None and row["project_id"] is None for row in by_key.values())

    grouped = results(usage_page(gateway, project_ids=[project], group_by=["model", "project_id"]))
    assert sorted((row["model"], row["project_id"], row["num_model_requests"]) for row in grouped) == [
        (MODEL, project, 2), (CHAT_MODEL, project, 1)]
    assert {row["object"] for row in grouped} == {"organization.usage.completions.result"}
    # Comma-separated values and `[]` names are read alike; a filter on models narrows the sums.
    narrowed = results(usage_page(gateway, **{"project_ids[]": [project], "models": [CHAT_MODEL], "group_by": "model,api_key_id"}))
    assert [(row["model"], row["api_key_id"], row["num_model_requests"]) for row in narrowed] == [
        (CHAT_MODEL, key_id(key("groups", 1)), 1)]


def test_bucket_widths_align_and_pages_follow_next_page(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("bucketed"))
    with sdk(gateway, "buckets") as client:
        client.responses.create(model=MODEL, input="x")
    project = tenant("buckets")
    usage_of(gateway, project, {"num_model_requests": 1})
    now = int(time.time())

    minutes = usage_page(gateway, project_ids=[project], start_time=now - 180, bucket_width="1m")
    assert all(bucket["end_time"] - bucket["start_time"] == 60 and bucket["start_time"] % 60 == 0
               for bucket in minutes["data"])
    assert 3 <= len(minutes["data"]) <= 4 and summed(results(minutes))["num_model_requests"] == 1
    hours = usage_page(gateway, project_ids=[project], start_time=now - 7200, bucket_width="1h")
    assert all(bucket["start_time"] % 3600 == 0 for bucket in hours["data"]) and len(hours["data"]) in (2, 3)
    assert summed(results(hours))["num_model_requests"] == 1

    # Four daily buckets, two a page: the second page, asked for with `next_page`, ends with today's.
    first = usage_page(gateway, project_ids=[project], start_time=now - 3 * 86400, bucket_width="1d", limit=2)
    assert first["object"] == "page" and len(first["data"]) == 2 and first["has_more"] is True
    assert results(first) == []
    second = usage_page(gateway, project_ids=[project], start_time=now - 3 * 86400, bucket_width="1d", limit=2,
                        page=first["next_page"])
    assert second["has_more"] is False and second["next_page"] is None
    assert second["data"][0]["start_time"] == int(first["next_page"])
    assert second["data"][-1]["start_time"] == now - now % 86400
    assert summed(results(second))["num_model_requests"] == 1


@pytest.mark.parametrize(("params", "param"), [
    ({}, "start_time"),
    ({"start_time": 0, "bucket_width": "2h"}, "bucket_width"),
    ({"start_time": 0, "bucket_width": "1d", "limit": 32}, "limit"),
    ({"start_time": 0, "group_by": "user_id"}, "group_by"),
    ({"start_time": 100, "end_time": 50}, "end_time"),
])
def test_bad_parameters_are_400_naming_the_parameter(gateway: str, params: dict[str, Any], param: str) -> None:
    reply = organization(gateway, "usage/completions", **params)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param


def test_the_organization_endpoints_are_for_admins_only(gateway: str) -> None:
    for path in ("usage/completions", "costs", "audit_logs"):
        refused = organization(gateway, path, key("json"), start_time=0)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "permission_denied"
        assert organization(gateway, path, "sk-not-a-key", start_time=0).status_code == 401


def test_costs_price_the_tokens_per_model_and_line_item(gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("one two three"), Text("a b"))
    with sdk(gateway, "costs") as client:
        client.responses.create(model=MODEL, input="x")
        client.responses.create(model=CHAT_MODEL, input="y")  # priced by the `smollm2-*` pattern
    project = tenant("costs")
    usage_of(gateway, project, {"num_model_requests": 2})
    start = int(time.time()) - 600

    reply = organization(gateway, "costs", start_time=start, project_ids=[project], group_by=["line_item", "project_id"])
    assert reply.status_code == 200, reply.text
    items = {row["line_item"]: row for row in results(reply.json())}
    assert {row["object"] for row in items.values()} == {"organization.costs.result"}
    assert {row["project_id"] for row in items.values()} == {project}
    amounts = {name: row["amount"]["value"] for name, row in items.items()}
    assert amounts == pytest.approx({
        f"{MODEL}, input": INPUT * 2.0 / 1e6, f"{MODEL}, cached input": 0.0, f"{MODEL}, output": 3 * 8.0 / 1e6,
        f"{CHAT_MODEL}, input": INPUT * 1.0 / 1e6, f"{CHAT_MODEL}, cached input": 0.0,
        f"{CHAT_MODEL}, output": 2 * 4.0 / 1e6,
    })
    assert {row["amount"]["currency"] for row in items.values()} == {"usd"}

    whole = organization(gateway, "costs", start_time=start, project_ids=[project]).json()
    assert [row["amount"]["value"] for row in results(whole)] == [pytest.approx(sum(amounts.values()))]
    assert [row["line_item"] for row in results(whole)] == [None]


def test_costs_without_prices_are_refused(stack) -> None:
    reply = organization(stack.urls["gateway"], "costs", ADMIN_KEY, start_time=0)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "costs_not_configured"


def _metric(url: str, name: str, labels: dict[str, str]) -> float:
    text = httpx.get(url, timeout=10).text
    total = 0.0
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}\{{(.*)\}} (\S+)", line)
        if match and all(f'{label}="{value}"' in match.group(1) for label, value in labels.items()):
            total += float(match.group(2))
    return total


def test_prometheus_counts_tokens_by_tenant_and_model(stack, gateway: str, upstream: FakeUpstream) -> None:
    upstream.script(Text("relayed"), Text("run by the executor"))
    with sdk(gateway, "metrics") as client:
        client.responses.create(model=MODEL, input="x", store=False)  # counted by the gateway
        client.responses.create(model=MODEL, input="y")                # counted by the executor
    labels = {"tenant": tenant("metrics"), "model": MODEL, "type": "output"}
    assert _metric(stack.gateway_metrics_url(gateway), "agentic_usage_tokens_total", labels) == words("relayed")
    assert _metric(stack.metrics_urls["executor"], "agentic_usage_tokens_total", labels) == words("run by the executor")
    assert _metric(stack.metrics_urls["executor"], "agentic_usage_model_requests_total",
                   {"tenant": tenant("metrics"), "model": MODEL}) == 1


@pytest.fixture()
def llm_d(stack) -> Iterator[tuple[str, dict[str, str]]]:
    _, token = llm_d_secrets(stack.data_dir)
    yield stack.urls["llm-d"] + "/v1alpha/responses", {"x-agentic-workload-token": token}


def test_llm_d_split_turns_are_counted_for_the_coordinators_tenant(
    llm_d: tuple[str, dict[str, str]], gateway: str, upstream: FakeUpstream,
) -> None:
    base, headers = llm_d
    project = f"usage-llm-d-{RUN}"
    headers = {**headers, "x-agentic-tenant": project, "x-agentic-split-execute": "true"}
    body = {"model": MODEL, "input": "use echo", "tools": [{"type": "operator", "name": "echo"}]}
    hydrated = httpx.post(base + "/hydrate", json=body, headers=headers, timeout=30).json()
    # The coordinator's own inference: a round with a gateway call, then the answer.
    upstream.script(FunctionCall("echo", '{"text": "split"}'), Text("Echoed split."))
    first = httpx.post(upstream.base_url + "/responses", json=hydrated["request"], timeout=30).json()
    calls = [item for item in first["output"] if item["type"] == "function_call"]
    step = httpx.post(base + "/execute", headers=headers, timeout=30, json={
        "context": hydrated["context"], "calls": calls, "request": hydrated["request"], "usage": first["usage"]}).json()
    final = httpx.post(upstream.base_url + "/responses", json=step["request"], timeout=30).json()
    persisted = httpx.post(base + "/persist", headers=headers, json={"context": step["context"], "response": final},
                           timeout=30)
    assert persisted.status_code == 200, persisted.text
    # A replayed persist of the same turn is not counted twice.
    assert httpx.post(base + "/persist", headers=headers, json={"context": step["context"], "response": final},
                      timeout=30).status_code == 200
    total = usage_of(gateway, project, {"num_model_requests": 2})
    assert total["input_tokens"] == 2 * INPUT
    assert total["output_tokens"] == words('{"text": "split"}') + words("Echoed split.")
    assert total["tool_calls"] == {"operator": 1} and total["tool_seconds"] > 0
