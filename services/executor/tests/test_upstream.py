"""The executor's model-server client against the fake model server (a real HTTP server speaking vLLM's wire format):
what a client sees when the model server refuses, fails or breaks off, that a stream arrives as Responses events on
every API, that the prompt cache key reaches a scheduler as the session header, and the token count and context
window read from the server."""

from __future__ import annotations

from typing import Any

import pytest
from agentic_core.errors import AgenticError, UpstreamRejected, UpstreamUnavailable
from agentic_core.routing import ModelRoute
from agentic_executor.upstream import UpstreamClient

from tests.support.fake_upstream import SERVED_MODEL, FakeUpstream, FunctionCall, HttpError, MalformedSse, Text

BODY = {"model": SERVED_MODEL, "input": [{"type": "message", "role": "user",
                                           "content": [{"type": "input_text", "text": "hello there"}]}]}


async def _streamed(client: UpstreamClient, route: ModelRoute, body: dict[str, Any]) -> list[dict[str, Any]]:
    return [event async for event in client.stream_response(route, {**body, "stream": True})]


async def test_a_reply_is_the_model_servers_response_object(client: UpstreamClient, route: ModelRoute,
                                                             upstream: FakeUpstream) -> None:
    upstream.script(Text("hi back"))
    response = await client.create_response(route, BODY)
    assert response["status"] == "completed"
    assert response["output"][0]["content"][0]["text"] == "hi back"


async def test_a_client_error_keeps_its_status_message_and_param(client: UpstreamClient, route: ModelRoute,
                                                                  upstream: FakeUpstream) -> None:
    upstream.script(HttpError(400, "temperature must be at most 2", param="body.temperature"))
    with pytest.raises(UpstreamRejected) as refused:
        await client.create_response(route, BODY)
    assert refused.value.http_status == 400
    assert refused.value.message == "temperature must be at most 2" and refused.value.param == "temperature"


async def test_an_unknown_model_is_a_404_naming_the_model(client: UpstreamClient, route: ModelRoute) -> None:
    with pytest.raises(UpstreamRejected) as refused:
        await client.create_response(route, {**BODY, "model": "no-such-model"})
    assert refused.value.http_status == 404 and refused.value.param == "model"
    assert refused.value.code == "model_not_found"


@pytest.mark.parametrize(("status", "expected"), [(500, 502), (503, 502), (401, 502)])
async def test_a_server_failure_or_refused_credentials_are_a_gateway_error(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream, status: int, expected: int) -> None:
    upstream.script(HttpError(status, "engine dead"))
    with pytest.raises(UpstreamUnavailable) as failed:
        await client.create_response(route, BODY)
    assert failed.value.http_status == expected


async def test_a_failure_before_the_first_event_fails_the_stream_with_its_status(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream) -> None:
    upstream.script(HttpError(400, "input too long", param="input"))
    with pytest.raises(UpstreamRejected) as refused:
        await _streamed(client, route, BODY)
    assert refused.value.http_status == 400 and refused.value.param == "input"


async def test_a_server_that_cannot_be_reached_is_a_gateway_error(client: UpstreamClient) -> None:
    with pytest.raises(AgenticError) as failed:
        await client.create_response(ModelRoute("*", "http://127.0.0.1:1/v1"), BODY)
    assert failed.value.http_status in (502, 503)


async def test_a_stream_is_responses_events_ending_in_completed(client: UpstreamClient, route: ModelRoute,
                                                                 upstream: FakeUpstream) -> None:
    upstream.script(Text("one two three"))
    events = await _streamed(client, route, BODY)
    deltas = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert deltas.split() == ["one", "two", "three"]
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "one two three"


async def test_a_malformed_event_mid_stream_is_a_gateway_error(client: UpstreamClient, route: ModelRoute,
                                                                upstream: FakeUpstream) -> None:
    upstream.script(MalformedSse("one two three four five", events=5))
    received: list[dict[str, Any]] = []
    with pytest.raises(UpstreamUnavailable, match="not JSON"):
        async for event in client.stream_response(route, {**BODY, "stream": True}):
            received.append(event)
    assert received, "the good events before the broken frame were relayed"


async def test_a_chat_route_streams_the_same_responses_events(client: UpstreamClient, upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'))
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    events = await _streamed(client, ModelRoute("*", upstream.base_url, api="chat"), {**BODY, "tools": tools})
    assert "messages" in upstream.requests[-1], "the model server was asked in the Chat Completions shape"
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert [(item["type"], item["name"], item["arguments"]) for item in done] == [
        ("function_call", "get_weather", '{"city": "Paris"}')]
    assert events[-1]["type"] == "response.completed"


async def test_the_prompt_cache_key_reaches_the_scheduler_as_the_session_header(
        client: UpstreamClient, route: ModelRoute, upstream: FakeUpstream) -> None:
    await client.create_response(route, {**BODY, "prompt_cache_key": "session-42"})
    await client.create_response(route, BODY)
    assert upstream.headers[0].get("x-session-id") == "session-42"
    assert "x-session-id" not in upstream.headers[1]


async def test_tokens_are_counted_by_the_model_servers_tokenizer(client: UpstreamClient, route: ModelRoute,
                                                                  upstream: FakeUpstream) -> None:
    # The fake counts 3 tokens of framing per message plus its words.
    assert await client.count_input_tokens(route, BODY) == 3 + 2
    assert upstream.tokenize_requests[-1]["messages"][-1]["role"] == "user"


async def test_no_count_where_the_server_has_none(client: UpstreamClient, route: ModelRoute) -> None:
    assert await client.count_input_tokens(route, {**BODY, "model": "no-such-model"}) is None
    assert await client.count_input_tokens(ModelRoute("*", "http://127.0.0.1:1/v1"), BODY) is None


async def test_the_context_window_is_the_servers_max_model_len(client: UpstreamClient, route: ModelRoute) -> None:
    assert await client.max_model_len(route, SERVED_MODEL) == 4096
    # a server serving one model under another name still reports its window
    assert await client.max_model_len(route, "an-alias") == 4096
    assert await client.max_model_len(ModelRoute("*", "http://127.0.0.1:1/v1"), SERVED_MODEL) is None
