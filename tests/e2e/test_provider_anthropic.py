"""Anthropic's Messages API as a model server (`api: anthropic`), behind every API we serve.

The fake speaks Anthropic's wire format (tests/support/fake_providers.py); the
bodies we send it are checked against tests/fixtures/providers/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
import pytest
from anthropic import Anthropic
from openai import OpenAI

from tests.support.fake_providers import ANTHROPIC_KEY, ANTHROPIC_MODEL, FakeProviders, ProviderError
from tests.support.fake_upstream import FunctionCall, Output, Reasoning, Text, Truncated

MODEL = ANTHROPIC_MODEL
FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers"
WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
INCLUDE = ["reasoning.encrypted_content"]


@pytest.fixture()
def providers(fake_providers: FakeProviders) -> FakeProviders:
    fake_providers.reset()
    return fake_providers


def _normalised(body: Any) -> Any:
    """The body with the ids and signatures each run makes replaced by their kind."""
    text = orjson.dumps(body).decode()
    for prefix in ("call_", "toolu_", "EqQB", "pck_"):
        while prefix in text:
            start = text.index(prefix)
            end = start
            while end < len(text) and (text[end].isalnum() or text[end] in "_-="):
                end += 1
            text = text[:start] + f"<{prefix.rstrip('_')}>" + text[end:]
    return json.loads(text)


def _matches_fixture(name: str, body: dict[str, Any]) -> None:
    """The body we sent equals the recorded one (`AGENTIC_TEST_RECORD_PROVIDER_FIXTURES=1` records it anew)."""
    if os.environ.get("AGENTIC_TEST_RECORD_PROVIDER_FIXTURES") == "1":
        (FIXTURES / name).write_text(json.dumps(_normalised(body), indent=2) + "\n")
    assert _normalised(body) == json.loads((FIXTURES / name).read_text()), json.dumps(_normalised(body), indent=2)


# -- the Responses API ---------------------------------------------------------------------------------------


def test_a_json_turn_reaches_the_messages_api_with_its_own_key(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Hello from Claude."))
    response = client.responses.create(model=MODEL, input="hi", instructions="Be brief.", max_output_tokens=64)
    assert response.status == "completed" and response.output_text == "Hello from Claude."
    assert response.model == MODEL
    # Anthropic counts cached and cache-written tokens apart from `input_tokens`: ours include them.
    assert response.usage.input_tokens == 25 + 3 + 5 and response.usage.input_tokens_details.cached_tokens == 5
    headers = providers.headers[-1]
    assert headers["x-api-key"] == ANTHROPIC_KEY and headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert providers.paths[-1] == "/anthropic/v1/messages"
    _matches_fixture("anthropic-json-turn.request.json", providers.requests[-1])


def test_a_streamed_turn_translates_anthropics_events(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Streaming from Claude works."))
    events = list(client.responses.create(model=MODEL, input="hi", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = "".join(event.delta for event in events if event.type == "response.output_text.delta")
    assert deltas == events[-1].response.output_text == "Streaming from Claude works."
    assert providers.requests[-1]["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_tool_calls_round_trip_with_arguments_split_over_many_deltas(
    client: OpenAI, providers: FakeProviders, stream: bool
) -> None:
    providers.script(Output([FunctionCall("get_weather", '{"city": "Paris"}'),
                             FunctionCall("get_weather", '{"city": "Lisbon, Portugal"}')]), Text("Both sunny."))
    if stream:
        events = list(client.responses.create(model=MODEL, input="weather?", tools=[WEATHER], tool_choice="required",
                                              stream=True))
        pieces = [event.delta for event in events if event.type == "response.function_call_arguments.delta"]
        assert len(pieces) > 4  # the fake splits each call's JSON into 3-character deltas
        first = events[-1].response
    else:
        first = client.responses.create(model=MODEL, input="weather?", tools=[WEATHER], tool_choice="required")
    calls = [item for item in first.output if item.type == "function_call"]
    assert [orjson.loads(call.arguments) for call in calls] == [{"city": "Paris"}, {"city": "Lisbon, Portugal"}]
    assert all(call.call_id.startswith("toolu_") for call in calls)
    assert providers.requests[-1]["tool_choice"] == {"type": "any"}
    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": f"sunny in {index}"}
               for index, call in enumerate(calls)],
    )
    assert second.output_text == "Both sunny."
    _matches_fixture("anthropic-tool-results.request.json", providers.requests[-1])


def test_a_chain_continues_with_its_history(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("first"), Text("second"))
    first = client.responses.create(model=MODEL, input="one")
    second = client.responses.create(model=MODEL, input="two", previous_response_id=first.id)
    assert second.output_text == "second"
    assert providers.requests[-1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "one"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
        {"role": "user", "content": [{"type": "text", "text": "two"}]}]
    assert client.responses.retrieve(second.id).output_text == "second"


def test_a_conversation_runs_over_anthropic(client: OpenAI, providers: FakeProviders) -> None:
    conversation = client.conversations.create()
    providers.script(Text("a1"), Text("a2"))
    client.responses.create(model=MODEL, input="q1", conversation=conversation.id)
    client.responses.create(model=MODEL, input="q2", conversation=conversation.id)
    texts = [block["text"] for message in providers.requests[-1]["messages"] for block in message["content"]]
    assert texts == ["q1", "a1", "q2"]
    items = client.conversations.items.list(conversation.id, order="asc")
    assert [item.type for item in items] == ["message"] * 4


@pytest.mark.parametrize("stream", [False, True])
def test_thinking_comes_back_sealed_and_is_replayed_with_its_signature(
    client: OpenAI, providers: FakeProviders, stream: bool
) -> None:
    providers.script(Reasoning("The user greets me; greet back", FunctionCall("get_weather", '{"city": "Oslo"}')),
                     Text("Done."))
    kwargs: dict[str, Any] = {"model": MODEL, "input": "hi", "tools": [WEATHER], "store": False, "include": INCLUDE,
                              "reasoning": {"effort": "low"}, "max_output_tokens": 2048}
    if stream:
        first = list(client.responses.create(**kwargs, stream=True))[-1].response
    else:
        first = client.responses.create(**kwargs)
    reasoning, call = first.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content.startswith("v1.")
    assert "EqQB" not in reasoning.encrypted_content  # Anthropic's signature travels sealed
    assert providers.requests[-1]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    signature = providers.last_signature
    client.responses.create(model=MODEL, store=False, include=INCLUDE, tools=[WEATHER], input=[
        {"role": "user", "content": "hi"}, reasoning.model_dump(exclude_none=True), call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "cold"}])
    assistant = providers.requests[-1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {"type": "thinking", "thinking": "The user greets me; greet back",
                                       "signature": signature}
    assert assistant["content"][1]["type"] == "tool_use"


# -- failures ------------------------------------------------------------------------------------------------


def test_a_rate_limit_is_a_429_with_the_providers_retry_after(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(ProviderError(429, "Number of request tokens has exceeded your per-minute rate limit",
                                   retry_after="17"))
    with pytest.raises(openai.RateLimitError) as raised:
        client.responses.create(model=MODEL, input="hi")
    assert raised.value.response.headers["retry-after"] == "17"
    assert "rate limit" in raised.value.message


def test_anthropic_overloaded_is_a_503(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(ProviderError(529, "Overloaded"))
    with pytest.raises(openai.InternalServerError) as raised:
        client.responses.create(model=MODEL, input="hi")
    assert raised.value.status_code == 503 and raised.value.code == "upstream_overloaded"


def test_a_stream_cut_mid_way_ends_the_response_failed(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Truncated("this answer never ends because the connection drops", events=6))
    events = list(client.responses.create(model=MODEL, input="hi", stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "upstream_incomplete"


# -- /v1/messages in front of Anthropic: passed through natively ---------------------------------------------


def test_messages_pass_through_natively_with_the_routes_key(anthropic_client: Anthropic,
                                                             providers: FakeProviders) -> None:
    providers.script(Text("Native hello."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=64,
                                               messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "Native hello." and message.id.startswith("msg_")
    assert providers.headers[-1]["x-api-key"] == ANTHROPIC_KEY  # the route's key, never the client's
    assert providers.requests[-1] == {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def test_streamed_messages_pass_through_natively(anthropic_client: Anthropic, providers: FakeProviders) -> None:
    providers.script(Output([Reasoning("think"), FunctionCall("get_weather", '{"city": "Rome"}')]))
    with anthropic_client.messages.stream(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "w?"}],
                                          tools=[{"name": "get_weather", "input_schema": WEATHER["parameters"]}]) as s:
        message = s.get_final_message()
    assert [block.type for block in message.content] == ["thinking", "tool_use"]
    assert message.content[1].input == {"city": "Rome"}


def test_messages_with_a_gateway_tool_run_in_the_executor_over_anthropic(
    anthropic_client: Anthropic, providers: FakeProviders
) -> None:
    providers.script(FunctionCall("web_search", '{"query": "agentic"}'), Text("Found it."))
    message = anthropic_client.messages.create(
        model=MODEL, max_tokens=256, messages=[{"role": "user", "content": "search agentic"}],
        tools=[{"type": "web_search_20250305", "name": "web_search"}])
    assert message.content[-1].text == "Found it."
    assert [tool["name"] for tool in providers.requests[0]["tools"]] == ["web_search"]
    second = providers.requests[-1]["messages"]
    assert second[1]["content"][0]["type"] == "tool_use" and second[2]["content"][0]["type"] == "tool_result"


def test_anthropic_errors_reach_the_anthropic_sdk(anthropic_client: Anthropic, providers: FakeProviders) -> None:
    providers.script(ProviderError(429, "slow down", retry_after="3"))
    with pytest.raises(anthropic.RateLimitError) as raised:
        anthropic_client.messages.create(model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert raised.value.response.headers["retry-after"] == "3"
# -- /v1/chat/completions in front of Anthropic --------------------------------------------------------------


def test_chat_completions_in_front_of_anthropic(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Chatting with Claude."))
    completion = client.chat.completions.create(model=MODEL, messages=[{"role": "system", "content": "Be kind."},
                                                                       {"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Chatting with Claude."
    assert completion.choices[0].finish_reason == "stop" and completion.usage.prompt_tokens == 33
    assert providers.requests[-1]["system"] == "Be kind."


def test_streamed_chat_completions_in_front_of_anthropic_with_a_tool_call(client: OpenAI,
                                                                           providers: FakeProviders) -> None:
    providers.script(FunctionCall("get_weather", '{"city": "Nice"}'))
    chunks = list(client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "weather?"}], stream=True,
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER["parameters"]}}]))
    arguments = "".join(call.function.arguments or "" for chunk in chunks for choice in chunk.choices
                        for call in choice.delta.tool_calls or [])
    assert orjson.loads(arguments) == {"city": "Nice"}
    assert [choice.finish_reason for chunk in chunks for choice in chunk.choices if choice.finish_reason] == ["tool_calls"]


