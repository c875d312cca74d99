"""llm-d split execution over HTTP: hydrate, persist, their limits and rules, and round trips with the gateway.

A fake coordinator does what llm-d does: hydrate, call the model server itself
(the scripted fake speaking vLLM's wire format), persist what came back.
"""

from __future__ import annotations

import threading
import time

import httpx
import jwt
import openai
import orjson
import pytest
from agentic_local.stack import llm_d_secrets
from openai import OpenAI

from tests.llm_d.coordinator import TENANT_HEADER, LlmD, completed_json, message_item, sse_text
from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text

MODEL = "smollm2"
MIB = 1024 * 1024


@pytest.fixture(scope="session")
def llm_d(stack, fake_upstream: FakeUpstream) -> LlmD:
    signing_key, token = llm_d_secrets(stack.data_dir)  # the secrets the launcher gave llm-d
    return LlmD(stack.urls["llm-d"], signing_key, token, fake_upstream.base_url)


@pytest.fixture()
def coordinator(llm_d: LlmD, upstream: FakeUpstream) -> LlmD:
    """llm-d with a fresh script on the model server the coordinator calls."""
    return llm_d


# -- authentication and probes ---------------------------------------------------


@pytest.mark.parametrize("path", ["/v1alpha/responses/hydrate", "/v1alpha/responses/persist"])
@pytest.mark.parametrize("token", [None, "wrong-token-" + "x" * 40, ""])
def test_split_routes_require_the_workload_token(llm_d: LlmD, path: str, token: str | None) -> None:
    headers = {} if token is None else {"x-agentic-workload-token": token}
    reply = httpx.post(llm_d.base_url + path, content=b"{}", headers=headers)
    assert reply.status_code == 401
    assert reply.json() == {"error": {"message": "missing or invalid workload token", "type": "authentication_error",
                                      "param": None, "code": "invalid_workload_token"}}


def test_the_workload_token_is_not_the_signing_key(llm_d: LlmD) -> None:
    reply = httpx.post(llm_d.base_url + "/v1alpha/responses/hydrate", content=b"{}",
                       headers={"x-agentic-workload-token": llm_d.signing_key})
    assert reply.status_code == 401


def test_probes_need_no_token(llm_d: LlmD) -> None:
    assert httpx.get(llm_d.base_url + "/health").status_code == 200
    assert httpx.get(llm_d.base_url + "/ready").status_code == 200


def test_metrics_count_calls_by_route_and_status(coordinator: LlmD) -> None:
    coordinator.turn({"model": MODEL, "input": "count me"})
    coordinator.hydrate({"model": MODEL, "input": "x", "previous_response_id": "resp_missing"})
    text = httpx.get(coordinator.base_url + "/metrics").text
    assert 'agentic_llm_d_requests_total{route="hydrate",status="200"}' in text
    assert 'agentic_llm_d_requests_total{route="hydrate",status="404"}' in text
    assert 'agentic_llm_d_persisted_total{outcome="stored"}' in text


def test_unknown_routes_have_the_error_shape(llm_d: LlmD) -> None:
    reply = httpx.get(llm_d.base_url + "/v1/responses", headers=llm_d.headers())
    assert reply.status_code == 404 and reply.json()["error"]["type"] == "invalid_request_error"


# -- hydrate ---------------------------------------------------------------------------


def test_hydrate_returns_the_upstream_body_with_the_history_inlined(coordinator: LlmD, upstream: FakeUpstream) -> None:
    upstream.script(Text("first answer"))
    first = coordinator.turn({"model": MODEL, "input": "first question", "metadata": {"k": "v"}})
    hydrated = coordinator.hydrate({"model": MODEL, "input": "second question", "previous_response_id": first["id"],
                                    "stream": True, "store": True, "metadata": {"k": "v"}, "temperature": 0.5})
    assert hydrated.status_code == 200
    request = hydrated.json()["request"]
    assert "previous_response_id" not in request and "metadata" not in request and "conversation" not in request
    assert request["store"] is False and request["stream"] is True and request["temperature"] == 0.5
    texts = [(item["role"], item["content"][0]["text"]) for item in request["input"]]
    assert texts == [("user", "first question"), ("assistant", "first answer"), ("user", "second question")]


def test_hydrate_keeps_stream_false_when_not_streaming(coordinator: LlmD) -> None:
    request = coordinator.hydrate({"model": MODEL, "input": "hi"}).json()["request"]
    assert request["stream"] is False and request["model"] == MODEL


def test_the_context_is_an_hs256_jwt_for_agentic_llm_d_valid_600_seconds(coordinator: LlmD) -> None:
    body = {"model": MODEL, "input": "hi", "tools": [{"type": "function", "name": "f", "parameters": {}}], "tool_choice": "required"}
    context = coordinator.hydrate(body).json()["context"]
    assert jwt.get_unverified_header(context)["alg"] == "HS256"
    claims = jwt.decode(context, coordinator.signing_key, algorithms=["HS256"], audience="agentic-llm-d")
    assert claims["exp"] - claims["iat"] == 600
    ctx = claims["ctx"]
    assert ctx["response_id"].startswith("resp_") and ctx["original_request"] == body
    assert ctx["conversation_id"] is None and ctx["tenant"] == "default"
    assert ctx["effective_tools"] == body["tools"] and ctx["effective_tool_choice"] == "required"


def test_each_hydrate_reserves_a_new_id(coordinator: LlmD) -> None:
    ids = {coordinator.reserved_id(coordinator.hydrate({"model": MODEL, "input": "hi"}).json()["context"]) for _ in range(3)}
    assert len(ids) == 3


def test_hydrate_of_an_unknown_previous_response_is_404(coordinator: LlmD) -> None:
    reply = coordinator.hydrate({"model": MODEL, "input": "hi", "previous_response_id": "resp_missing"})
    assert reply.status_code == 404 and reply.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(("extra", "feature"), [
    ({"conversation": "conv_123"}, "conversation"),
    ({"tools": [{"type": "web_search"}]}, "gateway-owned tools"),
    ({"tools": [{"type": "function", "name": "f"}, {"type": "mcp", "server_label": "x", "server_url": "https://x"}]},
     "gateway-owned tools"),
    ({"input": [{"type": "compaction", "encrypted_content": "abc"}]}, "compaction input"),
    ({"context_management": [{"type": "compaction", "compact_threshold": 1000}]}, "context_management"),
])
def test_hydrate_refuses_what_split_execution_cannot_do(coordinator: LlmD, extra: dict, feature: str) -> None:
    reply = coordinator.hydrate({"model": MODEL, "input": "hi", **extra})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == f"{feature} is not supported for split execution"
    assert reply.json()["error"]["type"] == "invalid_request_error"


def test_hydrate_refuses_a_chain_whose_history_holds_a_gateway_tool_call(coordinator: LlmD, client: OpenAI, upstream) -> None:
    # The gateway stores what split execution cannot continue: the check runs again on the loaded history.
    stored = client.responses.create(model=MODEL, input=[
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"role": "user", "content": "what did you find?"},
    ])
    reply = coordinator.hydrate({"model": MODEL, "input": "and then?", "previous_response_id": stored.id},
                                tenant="tenant-a")
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "gateway-owned tools is not supported for split execution"


def test_hydrate_validates_the_request_like_the_gateway(coordinator: LlmD) -> None:
    assert coordinator.hydrate({"input": "no model"}).status_code == 400
    assert coordinator.post("/v1alpha/responses/hydrate", raw=b"not json").status_code == 400
    assert coordinator.hydrate({"model": MODEL, "input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}).status_code == 400


def test_hydrate_over_2_mib_is_413(coordinator: LlmD) -> None:
    reply = coordinator.hydrate({"model": MODEL, "input": "x" * (2 * MIB)})
    assert reply.status_code == 413
    assert reply.json()["error"] == {"message": "request body too large", "type": "invalid_request_error", "param": None,
                                     "code": "body_too_large"}


@pytest.mark.parametrize("text", ["x" * 1_900_000, "\U0001F600" * 470_000], ids=["ascii", "emoji"])
def test_a_near_limit_hydrate_can_be_persisted(coordinator: LlmD, text: str) -> None:
    hydrated = coordinator.hydrate({"model": MODEL, "input": text})
    assert hydrated.status_code == 200
    reply = coordinator.persist(hydrated.json()["context"], response=completed_json([]))
    assert reply.status_code == 200


# -- round trips -----------------------------------------------------------------------


def test_json_round_trip_then_the_gateway_continues(coordinator: LlmD, client: OpenAI, upstream: FakeUpstream,
                                                   gateway_url: str, auth_headers: dict) -> None:
    upstream.script(Text("split answer"), Text("gateway answer"))
    hydrated = coordinator.hydrate({"model": MODEL, "input": "split question"}, tenant="tenant-a").json()
    stored = coordinator.persist(hydrated["context"], response=coordinator.call_model(hydrated["request"]), tenant="tenant-a")
    assert stored.status_code == 200
    response = stored.json()
    assert response["id"] == coordinator.reserved_id(hydrated["context"])
    assert response["status"] == "completed" and response["object"] == "response"
    assert response["output"][0]["content"][0]["text"] == "split answer"

    fetched = httpx.get(f"{gateway_url}/v1/responses/{response['id']}", headers=auth_headers)
    assert fetched.status_code == 200 and fetched.json() == response
    assert client.responses.retrieve(response["id"]).output_text == "split answer"  # the SDK reads it as a Response
    assert [item.content[0].text for item in client.responses.input_items.list(response["id"]).data] == ["split question"]

    continued = client.responses.create(model=MODEL, input="gateway question", previous_response_id=response["id"])
    assert continued.output_text == "gateway answer"
    texts = [item["content"][0]["text"] for item in upstream.requests[-1]["input"]]
    assert texts == ["split question", "split answer", "gateway question"]


def test_sse_round_trip_then_the_gateway_continues(coordinator: LlmD, client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("streamed split answer"), Text("after"))
    hydrated = coordinator.hydrate({"model": MODEL, "input": "stream it", "stream": True}, tenant="tenant-a").json()
    assert hydrated["request"]["stream"] is True
    sse = coordinator.call_model_text(hydrated["request"])
    assert sse.startswith("event: response.created")
    stored = coordinator.persist(hydrated["context"], sse=sse, tenant="tenant-a")
    assert stored.status_code == 200, stored.text
    assert stored.json()["output"][0]["content"][0]["text"] == "streamed split answer"
    assert stored.json()["usage"]["output_tokens"] > 0

    client.responses.create(model=MODEL, input="next", previous_response_id=stored.json()["id"])
    texts = [item["content"][0]["text"] for item in upstream.requests[-1]["input"]]
    assert texts == ["stream it", "streamed split answer", "next"]


def test_gateway_turn_then_split_turn_then_gateway_again(coordinator: LlmD, client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(Text("one"), Text("two"), Text("three"))
    first = client.responses.create(model=MODEL, input="q1")
    second = coordinator.turn({"model": MODEL, "input": "q2", "previous_response_id": first.id}, tenant="tenant-a")
    assert second["previous_response_id"] == first.id
    split_input = upstream.requests[-1]["input"]
    assert [item["content"][0]["text"] for item in split_input] == ["q1", "one", "q2"]
    third = client.responses.create(model=MODEL, input="q3", previous_response_id=second["id"])
    assert third.output_text == "three"
    texts = [item["content"][0]["text"] for item in upstream.requests[-1]["input"]]
    assert texts == ["q1", "one", "q2", "two", "q3"]


def test_a_client_tool_call_persisted_by_split_is_answered_through_the_gateway(
        coordinator: LlmD, client: OpenAI, upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("get_weather", '{"city":"Paris"}'), Text("It is sunny."))
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    call_turn = coordinator.turn({"model": MODEL, "input": "weather?", "tools": tools}, tenant="tenant-a")
    call = call_turn["output"][0]
    assert call["type"] == "function_call" and call["call_id"]
    answered = client.responses.create(model=MODEL, previous_response_id=call_turn["id"], tools=tools,
                                       input=[{"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}])
    assert answered.output_text == "It is sunny."


def test_store_false_is_returned_but_not_stored(coordinator: LlmD, client: OpenAI) -> None:
    response = coordinator.turn({"model": MODEL, "input": "forget me", "store": False}, tenant="tenant-a")
    assert response["store"] is False and response["status"] == "completed"
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response["id"])


# -- persist: envelope and limits --------------------------------------------------------


@pytest.mark.parametrize("fields", [{}, {"response": completed_json([]), "sse": "data: {}\n\n"}, {"response": None}])
def test_persist_needs_exactly_one_of_response_or_sse(coordinator: LlmD, fields: dict) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "hi"}).json()["context"]
    reply = coordinator.post("/v1alpha/responses/persist", {"context": context, **fields})
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "exactly one of `response` or `sse` is required"


def test_persist_over_16_mib_is_413(coordinator: LlmD) -> None:
    reply = coordinator.post("/v1alpha/responses/persist", raw=b"x" * (16 * MIB + 1))
    assert reply.status_code == 413 and reply.json()["error"]["code"] == "body_too_large"


@pytest.mark.parametrize("body", [
    {"context": "x" * (6 * MIB + 1), "response": {"id": "resp_upstream", "status": "completed", "output": []}},
    {"context": "valid-size-but-not-sealed", "sse": "x" * (4 * MIB + 1)},
    {"context": "valid-size-but-not-sealed", "response": {"status": "completed", "output": [], "pad": "x" * (4 * MIB)}},
])
def test_persist_component_budgets_are_413(coordinator: LlmD, body: dict) -> None:
    reply = coordinator.post("/v1alpha/responses/persist", body)
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "body_too_large" and reply.json()["error"]["type"] == "invalid_request_error"


# -- persist: the context ---------------------------------------------------------------


def _tampered(context: str) -> str:
    header, payload, signature = context.split(".")
    claims = orjson.loads(jwt.utils.base64url_decode(payload))
    claims["ctx"]["original_request"]["input"] = "something else"
    return ".".join([header, jwt.utils.base64url_encode(orjson.dumps(claims)).decode(), signature])


@pytest.mark.parametrize("forge", [
    pytest.param(lambda ctx, key: _tampered(ctx), id="tampered-claims"),
    pytest.param(lambda ctx, key: ctx + "tampered", id="tampered-signature"),
    pytest.param(lambda ctx, key: jwt.encode(jwt.decode(ctx, key, algorithms=["HS256"], audience="agentic-llm-d"),
                                             "a-different-signing-key-of-32-bytes!", algorithm="HS256"), id="foreign-key"),
    pytest.param(lambda ctx, key: jwt.encode({**jwt.decode(ctx, key, algorithms=["HS256"], audience="agentic-llm-d"),
                                              "exp": int(time.time()) - 5}, key, algorithm="HS256"), id="expired"),
    pytest.param(lambda ctx, key: jwt.encode({**jwt.decode(ctx, key, algorithms=["HS256"], audience="agentic-llm-d"),
                                              "aud": "someone-else"}, key, algorithm="HS256"), id="wrong-audience"),
    pytest.param(lambda ctx, key: jwt.encode({k: v for k, v in jwt.decode(
        ctx, key, algorithms=["HS256"], audience="agentic-llm-d").items() if k != "exp"}, key, algorithm="HS256"), id="no-expiry"),
    pytest.param(lambda ctx, key: jwt.encode({"aud": "agentic-llm-d", "exp": int(time.time()) + 60, "ctx": {"response_id": ""}},
                                             key, algorithm="HS256"), id="no-reserved-id"),
    pytest.param(lambda ctx, key: "not-a-jwt", id="garbage"),
])
def test_a_context_hydrate_did_not_issue_is_rejected(coordinator: LlmD, forge) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "hi"}).json()["context"]
    reply = coordinator.persist(forge(context, coordinator.signing_key), response=completed_json([message_item("msg_1", "4")]))
    assert reply.status_code == 400
    assert reply.json()["error"]["message"].startswith("context rejected: ")
    # The genuine context still works afterwards.
    assert coordinator.persist(context, response=completed_json([message_item("msg_1", "4")])).status_code == 200


# -- persist: strict validation -----------------------------------------------------------


@pytest.mark.parametrize("response", [
    {"id": "resp_upstream"},
    {"id": "resp_upstream", "status": "completed"},
    {"id": "resp_upstream", "status": "in_progress", "output": []},
    {"id": "resp_upstream", "status": "potato", "output": []},
    {"id": "resp_upstream", "status": "completed", "output": [123]},
    {"id": "resp_upstream", "status": "completed", "output": [{"type": "future_item", "id": "future_1"}]},
    {"id": "resp_upstream", "status": "completed", "output": [
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{}", "status": "completed"}]},
    {"id": "resp_upstream", "status": "completed", "output": [message_item("msg_1", "a"), message_item("msg_1", "b")]},
    {"id": "resp_upstream", "status": "completed", "output": [
        {"type": "function_call", "id": "fc_1", "call_id": "", "name": "lookup", "arguments": "{}", "status": "completed"}]},
])
def test_a_response_that_cannot_be_stored_is_400_and_the_id_stays_usable(coordinator: LlmD, response: dict) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "hi"}).json()["context"]
    refused = coordinator.persist(context, response=response)
    assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error"
    retried = coordinator.persist(context, response=completed_json([message_item("msg_1", "fixed")]))
    assert retried.status_code == 200 and retried.json()["id"] == coordinator.reserved_id(context)


def test_a_truncated_stream_is_400_and_the_id_stays_usable(coordinator: LlmD, upstream: FakeUpstream) -> None:
    upstream.script(Text("complete answer"))
    hydrated = coordinator.hydrate({"model": MODEL, "input": "hi", "stream": True}).json()
    sse = coordinator.call_model_text(hydrated["request"])
    frames = sse.split("\n\n")
    refused = coordinator.persist(hydrated["context"], sse="\n\n".join(frames[:-2]) + "\n\n")
    assert refused.status_code == 400 and "truncated" in refused.json()["error"]["message"]
    assert coordinator.persist(hydrated["context"], sse=sse).status_code == 200


def test_an_output_call_id_cannot_reuse_one_from_the_history(coordinator: LlmD) -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_prior", "name": "lookup", "arguments": "{}", "status": "completed"}
    first = coordinator.turn_with({"model": MODEL, "input": "call"}, completed_json([call]))
    context = coordinator.hydrate({"model": MODEL, "previous_response_id": first["id"],
                                   "input": [{"type": "function_call_output", "call_id": "call_prior", "output": "ok"}]}).json()["context"]
    repeated = {**call, "id": "fc_2"}
    refused = coordinator.persist(context, response=completed_json([repeated]))
    assert refused.status_code == 400
    message = refused.json()["error"]["message"]
    assert "call_id" in message and "output[0]" in message and "history" in message and "call_prior" not in message


def test_an_sse_call_id_may_not_change_between_events(coordinator: LlmD) -> None:
    added = {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "f", "arguments": "", "status": "in_progress"}
    done = {**added, "call_id": "call_b", "arguments": "{}", "status": "completed"}
    sse = sse_text([
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
    ], "completed", [done])
    context = coordinator.hydrate({"model": MODEL, "input": "call"}).json()["context"]
    refused = coordinator.persist(context, sse=sse)
    assert refused.status_code == 400 and "call_id" in refused.json()["error"]["message"]


# -- persist: once per id ---------------------------------------------------------------------


def test_a_second_different_persist_is_409(coordinator: LlmD, client: OpenAI) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "2+2?"}, tenant="tenant-a").json()["context"]
    first = coordinator.persist(context, response=completed_json([message_item("msg_1", "4")]), tenant="tenant-a")
    assert first.status_code == 200
    second = coordinator.persist(context, response=completed_json([message_item("msg_1", "5")]), tenant="tenant-a")
    assert second.status_code == 409
    response_id = first.json()["id"]
    assert second.json() == {"error": {"message": f"conflict: a turn is already stored under '{response_id}'",
                                       "type": "conflict_error", "param": "response_id", "code": "response_already_stored"}}
    assert client.responses.retrieve(response_id).output_text == "4"


@pytest.mark.parametrize("form", ["json", "sse"])
def test_an_identical_retry_returns_the_stored_response(coordinator: LlmD, client: OpenAI, form: str) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "retry me", "stream": form == "sse"}, tenant="tenant-a").json()["context"]
    item = message_item("msg_1", "once")
    relayed = {"response": completed_json([item])} if form == "json" else {"sse": sse_text(
        [{"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": [], "status": "in_progress"}},
         {"type": "response.output_item.done", "output_index": 0, "item": item}], "completed", [item])}
    first = coordinator.post("/v1alpha/responses/persist", {"context": context, **relayed}, tenant="tenant-a")
    retry = coordinator.post("/v1alpha/responses/persist", {"context": context, **relayed}, tenant="tenant-a")
    assert first.status_code == 200 and retry.status_code == 200
    assert retry.json() == first.json()
    assert len(client.responses.input_items.list(first.json()["id"]).data) == 1


def _race(coordinator: LlmD, context: str, bodies: list[dict]) -> list[httpx.Response]:
    replies: list[httpx.Response] = [None] * len(bodies)  # type: ignore[list-item]
    barrier = threading.Barrier(len(bodies))

    def send(index: int) -> None:
        barrier.wait()
        replies[index] = coordinator.persist(context, response=bodies[index], tenant="tenant-a")

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return replies


def test_two_concurrent_different_persists_one_wins_one_is_409(coordinator: LlmD, client: OpenAI) -> None:
    for _ in range(5):
        context = coordinator.hydrate({"model": MODEL, "input": "race"}, tenant="tenant-a").json()["context"]
        replies = _race(coordinator, context, [completed_json([message_item("msg_1", "A")]),
                                               completed_json([message_item("msg_1", "B")])])
        assert sorted(reply.status_code for reply in replies) == [200, 409]
        winner = next(reply for reply in replies if reply.status_code == 200).json()
        assert client.responses.retrieve(winner["id"]).output_text == winner["output"][0]["content"][0]["text"]


def test_two_concurrent_identical_persists_store_once_and_both_get_it(coordinator: LlmD, client: OpenAI) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "twice at once"}, tenant="tenant-a").json()["context"]
    body = completed_json([message_item("msg_1", "same")])
    replies = _race(coordinator, context, [body, body])
    assert [reply.status_code for reply in replies] == [200, 200]
    assert replies[0].json() == replies[1].json()
    assert len(client.responses.input_items.list(replies[0].json()["id"]).data) == 1


# -- failed model responses ---------------------------------------------------------------------


@pytest.mark.parametrize("form", ["json", "sse"])
def test_a_failed_model_response_is_returned_as_error_and_never_stored(coordinator: LlmD, client: OpenAI, form: str) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "fail"}, tenant="tenant-a").json()["context"]
    partial = {"type": "function_call", "id": "fc_partial", "name": "lookup", "arguments": "", "status": "in_progress"}
    error = {"code": "server_error", "message": "the engine died"}
    if form == "json":
        reply = coordinator.persist(context, response={"id": "resp_up", "status": "failed", "output": [partial], "error": error},
                                    tenant="tenant-a")
    else:
        reply = coordinator.persist(context, sse=sse_text(
            [{"type": "response.output_item.added", "output_index": 0, "item": partial}], "failed", [partial], error=error),
            tenant="tenant-a")
    assert reply.status_code == 200
    response = reply.json()
    assert response["status"] == "error" and response["error"] == error
    assert response["id"] == coordinator.reserved_id(context)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response["id"])
    continued = coordinator.hydrate({"model": MODEL, "input": "and?", "previous_response_id": response["id"]}, tenant="tenant-a")
    assert continued.status_code == 404


# -- tenancy ----------------------------------------------------------------------------------------


def test_without_a_tenant_header_the_tenant_is_default(coordinator: LlmD) -> None:
    stored = coordinator.turn({"model": MODEL, "input": "default tenant"})
    assert coordinator.hydrate({"model": MODEL, "input": "x", "previous_response_id": stored["id"]}).status_code == 200
    reply = coordinator.hydrate({"model": MODEL, "input": "x", "previous_response_id": stored["id"]}, tenant="tenant-a")
    assert reply.status_code == 404


def test_one_tenant_cannot_hydrate_another_tenants_response(coordinator: LlmD, client: OpenAI, other_tenant: OpenAI) -> None:
    mine = coordinator.turn({"model": MODEL, "input": "tenant-a secret"}, tenant="tenant-a")
    stolen = coordinator.hydrate({"model": MODEL, "input": "x", "previous_response_id": mine["id"]}, tenant="tenant-b")
    assert stolen.status_code == 404
    gateway_turn = client.responses.create(model=MODEL, input="also tenant-a")
    stolen = coordinator.hydrate({"model": MODEL, "input": "x", "previous_response_id": gateway_turn.id}, tenant="tenant-b")
    assert stolen.status_code == 404
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.retrieve(mine["id"])
    assert client.responses.retrieve(mine["id"]).id == mine["id"]


def test_a_context_is_bound_to_the_tenant_that_hydrated_it(coordinator: LlmD, other_tenant: OpenAI) -> None:
    context = coordinator.hydrate({"model": MODEL, "input": "mine"}, tenant="tenant-a").json()["context"]
    body = completed_json([message_item("msg_1", "x")])
    for tenant in ("tenant-b", None):
        reply = coordinator.persist(context, response=body, tenant=tenant)
        assert reply.status_code == 400 and reply.json()["error"]["message"].startswith("context rejected: ")
    stored = coordinator.persist(context, response=body, tenant="tenant-a")
    assert stored.status_code == 200
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.retrieve(stored.json()["id"])


@pytest.mark.parametrize("value", ["", "x" * 300])
def test_a_malformed_tenant_header_is_400(coordinator: LlmD, value: str) -> None:
    reply = httpx.post(coordinator.base_url + "/v1alpha/responses/hydrate", content=orjson.dumps({"model": MODEL, "input": "x"}),
                       headers={**coordinator.headers(), TENANT_HEADER: value})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == TENANT_HEADER

