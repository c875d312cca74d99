"""The Anthropic Messages API with the official anthropic SDK: pass-through, translation, gateway tools."""

from __future__ import annotations

import anthropic
import httpx
import orjson
import pytest
from anthropic import Anthropic

from conftest import CHAT_MODEL, TENANT_KEYS, UNKNOWN_ROUTE_MODELS, UNSERVED_ON_OPENAI_LIKE_MODEL
from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"
USER = [{"role": "user", "content": "Hello there"}]
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def test_without_gateway_tools_the_body_goes_to_the_model_server_unchanged(anthropic_client: Anthropic, upstream) -> None:
    upstream.script(Text("Hi from vLLM"))
    messages = [{"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}]}]
    message = anthropic_client.messages.create(model=MODEL, max_tokens=32, messages=messages, system="Be nice.")
    assert message.content[0].text == "Hi from vLLM" and message.stop_reason == "end_turn"
    sent = upstream.requests[-1]
    assert sent["messages"] == messages and sent["system"] == "Be nice."  # cache_control kept


def test_streaming_pass_through(anthropic_client: Anthropic, upstream) -> None:
    upstream.script(Text("streamed from vLLM"))
    with anthropic_client.messages.stream(model=MODEL, max_tokens=32, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "streamed from vLLM" and final.stop_reason == "end_turn"


@pytest.mark.parametrize("flavor", list(UNKNOWN_ROUTE_MODELS))
def test_a_model_server_without_messages_gets_the_translation_and_is_remembered(
    flavor: str, anthropic_client: Anthropic, upstream
) -> None:
    """Whatever body the server's 404 has: FastAPI's detail, OpenAI's or llama.cpp's error object."""
    model = UNKNOWN_ROUTE_MODELS[flavor]
    upstream.script(Text("translated once"), Text("translated twice"))
    first = anthropic_client.messages.create(model=model, max_tokens=32, messages=USER)
    with anthropic_client.messages.stream(model=model, max_tokens=32, messages=USER) as stream:
        streamed = "".join(stream.text_stream)
    assert [first.content[0].text, streamed] == ["translated once", "translated twice"]
    assert first.type == "message" and first.stop_reason == "end_turn"
    assert upstream.route_misses[flavor] <= 1  # asked at most once, then remembered (for the whole run)
    assert upstream.requests and all("input" in request and "messages" not in request for request in upstream.requests)


@pytest.mark.parametrize("flavor", list(UNKNOWN_ROUTE_MODELS))
def test_a_client_tool_round_over_the_translation(flavor: str, anthropic_client: Anthropic, upstream) -> None:
    tool = {"name": "get_weather", "description": "Weather of a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    upstream.script(FunctionCall("get_weather", '{"city": "Oslo"}'), Text("It is cold in Oslo."))
    model = UNKNOWN_ROUTE_MODELS[flavor]
    asked = anthropic_client.messages.create(model=model, max_tokens=64, messages=USER, tools=[tool])
    assert asked.stop_reason == "tool_use"
    call = next(block for block in asked.content if block.type == "tool_use")
    assert call.name == "get_weather" and call.input == {"city": "Oslo"}
    history = [*USER, {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in asked.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "-3 C"}]}]
    answered = anthropic_client.messages.create(model=model, max_tokens=64, messages=history, tools=[tool])
    assert answered.content[0].text == "It is cold in Oslo." and answered.stop_reason == "end_turn"
    assert "-3 C" in orjson.dumps(upstream.requests[-1]["input"]).decode()


def test_an_unknown_model_refused_by_the_translation_too_is_an_anthropic_error(stack, upstream) -> None:
    """A route whose server (answering unknown routes as OpenAI does) lacks the model it sends: that server's own
    404 for the translated request, in Anthropic's shape."""
    reply = httpx.post(f"{stack.urls['gateway']}/v1/messages", headers={"x-api-key": TENANT_KEYS["tenant-a"]},
                       json={"model": UNSERVED_ON_OPENAI_LIKE_MODEL, "max_tokens": 8, "messages": USER})
    assert reply.status_code == 404
    assert reply.json()["type"] == "error" and reply.json()["error"]["type"] == "not_found_error"
    assert "not-served" in reply.json()["error"]["message"]
    assert upstream.requests[-1]["model"] == "not-served" and "input" in upstream.requests[-1]


def test_an_unknown_model_on_a_messages_server_is_its_own_404_and_the_server_stays_native(stack, upstream) -> None:
    reply = httpx.post(f"{stack.urls['gateway']}/v1/messages", json={"model": "nope", "max_tokens": 8, "messages": USER},
                       headers={"x-api-key": TENANT_KEYS["tenant-a"]})
    assert reply.status_code == 404 and reply.json()["error"]["type"] == "not_found_error"
    assert "does not exist" in reply.json()["error"]["message"]  # the model server's own words
    # The 404 was about the model, which the server does not list: its Messages route is still used.
    upstream.script(Text("still native"))
    message = Anthropic(base_url=stack.urls["gateway"], api_key=TENANT_KEYS["tenant-a"], max_retries=0).messages.create(
        model=MODEL, max_tokens=8, messages=USER)
    assert message.content[0].text == "still native"
    assert "messages" in upstream.requests[-1] and "input" not in upstream.requests[-1]


def test_count_tokens(anthropic_client: Anthropic, upstream) -> None:
    counted = anthropic_client.messages.count_tokens(model=MODEL, messages=USER, system="rules")
    assert counted.input_tokens > 0
    assert upstream.requests == []


def test_web_search_runs_inside_the_loop_and_shows_as_server_tool_blocks(anthropic_client: Anthropic, upstream) -> None:
    upstream.script(FunctionCall("web_search", '{"queries": ["anthropic api"]}'), Text("Found it."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=64, messages=USER, tools=[WEB_SEARCH])
    types = [block.type for block in message.content]
    assert types == ["server_tool_use", "web_search_tool_result", "text"]
    assert message.content[0].input == {"query": "anthropic api"}
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == 2 * 36  # summed over the hidden round
    assert message.usage.server_tool_use.web_search_requests == 1
    assert len(upstream.requests) == 2 and "input" in upstream.requests[0]  # ran on the Responses upstream


def test_streamed_turn_with_a_gateway_tool(anthropic_client: Anthropic, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "x"}'), Text("Echo done."))
    with anthropic_client.messages.stream(model=MODEL, max_tokens=64, messages=USER,
                                          tools=[{"type": "operator", "name": "echo"}]) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_message()
    assert events[0] == "message_start" and events.count("message_stop") == 1
    assert [block.type for block in final.content] == ["text"]  # the gateway's tool use stays hidden
    assert final.content[0].text == "Echo done." and final.usage.output_tokens > 0


def test_a_chat_upstream_gets_a_translation(anthropic_client: Anthropic, upstream) -> None:
    upstream.script(Text("via chat"))
    message = anthropic_client.messages.create(model=CHAT_MODEL, max_tokens=16, messages=USER, system="sys")
    assert message.content[0].text == "via chat"
    assert upstream.requests[-1]["messages"][0] == {"role": "system", "content": "sys"}


def test_a_client_tool_call_stops_with_tool_use(anthropic_client: Anthropic, upstream) -> None:
    tool = {"name": "get_weather", "description": "weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'), Text("Sunny in Paris."))
    first = anthropic_client.messages.create(model=CHAT_MODEL, max_tokens=32, messages=USER, tools=[tool])
    assert first.stop_reason == "tool_use"
    (use,) = [block for block in first.content if block.type == "tool_use"]
    assert use.name == "get_weather" and use.input == {"city": "Paris"}
    second = anthropic_client.messages.create(model=CHAT_MODEL, max_tokens=32, tools=[tool], messages=[
        *USER, {"role": "assistant", "content": [use.model_dump()]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]},
    ])
    assert second.content[0].text == "Sunny in Paris." and second.stop_reason == "end_turn"
    assert upstream.requests[-1]["messages"][-1] == {"role": "tool", "tool_call_id": use.id, "content": "sunny"}


def test_errors_have_anthropics_shape(stack, upstream) -> None:
    with Anthropic(base_url=stack.urls["gateway"], api_key="sk-wrong", max_retries=0) as bad_key, pytest.raises(
        anthropic.AuthenticationError
    ) as raised:
        bad_key.messages.create(model=MODEL, max_tokens=8, messages=USER)
    assert raised.value.body["type"] == "error" and raised.value.body["error"]["type"] == "authentication_error"
    reply = httpx.post(f"{stack.urls['gateway']}/v1/messages", headers={"x-api-key": TENANT_KEYS["tenant-a"]},
                       json={"model": MODEL, "max_tokens": 8, "tools": [WEB_SEARCH],
                             "messages": [{"role": "user", "content": [{"type": "hologram"}]}]})
    assert reply.status_code == 400
    body = orjson.loads(reply.content)
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert upstream.requests == []  # refused before any inference


def test_the_mcp_connector_runs_servers_through_the_bridge(anthropic_client: Anthropic, upstream, fake_mcp) -> None:
    upstream.script(FunctionCall("docs__echo", '{"text": "via connector"}'), Text("Echoed via MCP."))
    message = anthropic_client.messages.create(
        model=MODEL, max_tokens=64, messages=USER,
        extra_body={"mcp_servers": [{"type": "url", "url": fake_mcp.url, "name": "docs"}]},
    )
    assert message.content[-1].text == "Echoed via MCP." and message.stop_reason == "end_turn"
    output = next(item for item in upstream.requests[1]["input"] if item.get("type") == "function_call_output")
    assert "via connector" in output["output"]


def test_the_translated_stream_has_anthropics_event_grammar(gateway_url, upstream) -> None:
    upstream.script(FunctionCall("echo", '{"text": "x"}'), Text("Done."))
    body = {"model": MODEL, "max_tokens": 32, "messages": USER, "stream": True, "tools": [{"type": "operator", "name": "echo"}]}
    with httpx.stream("POST", f"{gateway_url}/v1/messages", json=body, timeout=30,
                      headers={"x-api-key": TENANT_KEYS["tenant-a"], "anthropic-version": "2023-06-01"}) as reply:
        names = [line[len("event: "):] for line in reply.iter_lines() if line.startswith("event: ")]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 1
