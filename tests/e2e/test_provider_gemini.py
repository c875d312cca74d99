"""Google's Gemini API as a model server (`api: gemini`), behind every API we serve.

The fake speaks Gemini's wire format (tests/support/fake_providers.py); the
bodies we send it are checked against tests/fixtures/providers/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from anthropic import Anthropic
from openai import OpenAI

from tests.support.fake_providers import GEMINI_KEY, GEMINI_MODEL, FakeProviders, ProviderError
from tests.support.fake_upstream import FunctionCall, Output, Reasoning, Text, Truncated

MODEL = GEMINI_MODEL
FIXTURES = Path(__file__).parents[1] / "fixtures" / "providers"
WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
INCLUDE = ["reasoning.encrypted_content"]


@pytest.fixture()
def providers(fake_providers: FakeProviders) -> FakeProviders:
    fake_providers.reset()
    return fake_providers


def _normalised(body: Any) -> Any:
    text = orjson.dumps(body).decode()
    for prefix in ("call_", "CiQB", "pck_"):
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


def test_a_json_turn_reaches_generate_content_with_its_own_key(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Hello from Gemini."))
    response = client.responses.create(model=MODEL, input="hi", instructions="Be brief.", max_output_tokens=64,
                                       temperature=0.5)
    assert response.status == "completed" and response.output_text == "Hello from Gemini."
    assert response.usage.input_tokens == 30 and response.usage.input_tokens_details.cached_tokens == 4
    headers = providers.headers[-1]
    assert headers["x-goog-api-key"] == GEMINI_KEY and "authorization" not in headers and "x-api-key" not in headers
    assert providers.paths[-1] == f"/gemini/v1beta/models/{MODEL}:generateContent"
    _matches_fixture("gemini-json-turn.request.json", providers.requests[-1])


def test_a_streamed_turn_translates_gemini_chunks(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Streaming from Gemini works."))
    events = list(client.responses.create(model=MODEL, input="hi", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = [event.delta for event in events if event.type == "response.output_text.delta"]
    assert len(deltas) > 1 and "".join(deltas) == events[-1].response.output_text == "Streaming from Gemini works."
    assert providers.paths[-1] == f"/gemini/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_function_calls_and_their_responses(client: OpenAI, providers: FakeProviders, stream: bool) -> None:
    providers.script(Output([FunctionCall("get_weather", '{"city": "Paris"}'),
                             FunctionCall("get_weather", '{"city": "Lisbon"}')]), Text("Both sunny."))
    if stream:
        first = list(client.responses.create(model=MODEL, input="weather?", tools=[WEATHER], tool_choice="required",
                                             stream=True))[-1].response
    else:
        first = client.responses.create(model=MODEL, input="weather?", tools=[WEATHER], tool_choice="required")
    calls = [item for item in first.output if item.type == "function_call"]
    assert [orjson.loads(call.arguments) for call in calls] == [{"city": "Paris"}, {"city": "Lisbon"}]
    assert providers.requests[-1]["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": f"sunny in {index}"}
               for index, call in enumerate(calls)],
    )
    assert second.output_text == "Both sunny."
    _matches_fixture("gemini-function-responses.request.json", providers.requests[-1])


def test_a_conversation_runs_over_gemini(client: OpenAI, providers: FakeProviders) -> None:
    conversation = client.conversations.create()
    providers.script(Text("a1"), Text("a2"))
    client.responses.create(model=MODEL, input="q1", conversation=conversation.id)
    second = client.responses.create(model=MODEL, input="q2", conversation=conversation.id)
    assert second.output_text == "a2"
    assert [(content["role"], content["parts"]) for content in providers.requests[-1]["contents"]] == [
        ("user", [{"text": "q1"}]), ("model", [{"text": "a1"}]), ("user", [{"text": "q2"}])]


@pytest.mark.parametrize("stream", [False, True])
def test_a_thought_signature_comes_back_sealed_and_returns_on_its_function_call(
    client: OpenAI, providers: FakeProviders, stream: bool
) -> None:
    providers.script(Reasoning("Look the weather up", FunctionCall("get_weather", '{"city": "Oslo"}')), Text("Cold."))
    kwargs: dict[str, Any] = {"model": MODEL, "input": "weather in Oslo?", "tools": [WEATHER], "store": False,
                              "include": INCLUDE, "reasoning": {"effort": "low", "summary": "auto"}}
    first = list(client.responses.create(**kwargs, stream=True))[-1].response if stream else \
        client.responses.create(**kwargs)
    reasoning, call = first.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content.startswith("v1.")
    assert "CiQB" not in reasoning.encrypted_content and reasoning.content[0].text == "Look the weather up"
    assert providers.requests[-1]["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 1024,
                                                                           "includeThoughts": True}
    signature = providers.last_signature
    second = client.responses.create(model=MODEL, store=False, include=INCLUDE, tools=[WEATHER], input=[
        {"role": "user", "content": "weather in Oslo?"}, reasoning.model_dump(exclude_none=True),
        call.model_dump(exclude_none=True), {"type": "function_call_output", "call_id": call.call_id, "output": "-3"}])
    assert second.output_text == "Cold."
    model_turn = providers.requests[-1]["contents"][1]
    assert model_turn == {"role": "model", "parts": [{"functionCall": {"id": call.call_id, "name": "get_weather",
                                                                       "args": {"city": "Oslo"}},
                                                      "thoughtSignature": signature}]}


def test_a_gateway_tool_runs_between_gemini_rounds(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(FunctionCall("web_search", '{"query": "agentic api"}'), Text("It is a stateful API."))
    response = client.responses.create(model=MODEL, input="what is agentic?", tools=[{"type": "web_search"}])
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    assert response.output_text == "It is a stateful API."
    declared = providers.requests[0]["tools"][0]["functionDeclarations"]
    assert [declaration["name"] for declaration in declared] == ["web_search"]
    answer_round = providers.requests[-1]["contents"]
    assert "functionResponse" in answer_round[-1]["parts"][0]


# -- failures ------------------------------------------------------------------------------------------------


def test_a_rate_limit_is_a_429_with_the_providers_retry_after(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(ProviderError(429, "Resource has been exhausted (e.g. check quota).", retry_after="12"))
    with pytest.raises(openai.RateLimitError) as raised:
        client.responses.create(model=MODEL, input="hi")
    assert raised.value.response.headers["retry-after"] == "12"
    assert "exhausted" in raised.value.message


def test_a_stream_cut_mid_way_ends_the_response_failed(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Truncated("this answer never ends because the connection drops", events=3))
    events = list(client.responses.create(model=MODEL, input="hi", stream=True))
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "upstream_incomplete"


def test_an_incomplete_generation_is_reported(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("cut", incomplete=True))
    response = client.responses.create(model=MODEL, input="long", max_output_tokens=16)
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"


# -- /v1/messages in front of Gemini: translated ------------------------------------------------------------


def test_messages_in_front_of_gemini(anthropic_client: Anthropic, providers: FakeProviders) -> None:
    providers.script(Text("Gemini behind Messages."))
    message = anthropic_client.messages.create(model=MODEL, max_tokens=64, system="Be kind.",
                                               messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "Gemini behind Messages." and message.stop_reason == "end_turn"
    assert providers.requests[-1]["systemInstruction"] == {"parts": [{"text": "Be kind."}]}
    assert providers.requests[-1]["generationConfig"]["maxOutputTokens"] == 64


def test_claude_code_style_tool_rounds_keep_geminis_signature(anthropic_client: Anthropic,
                                                               providers: FakeProviders) -> None:
    tool = {"name": "get_weather", "input_schema": WEATHER["parameters"]}
    providers.script(Reasoning("Need the weather", FunctionCall("get_weather", '{"city": "Bern"}')), Text("Mild."))
    with anthropic_client.messages.stream(model=MODEL, max_tokens=256, tools=[tool],
                                          messages=[{"role": "user", "content": "weather?"}]) as stream:
        first = stream.get_final_message()
    assert [block.type for block in first.content] == ["thinking", "tool_use"]
    assert first.content[0].signature.startswith("v1.")  # Gemini's signature, sealed for the tenant
    signature = providers.last_signature
    anthropic_client.messages.create(model=MODEL, max_tokens=256, tools=[tool], messages=[
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id, "content": "18C"}]}])
    model_turn = providers.requests[-1]["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == signature
    assert model_turn["parts"][0]["functionCall"]["name"] == "get_weather"


# -- /v1/chat/completions in front of Gemini -----------------------------------------------------------------


def test_chat_completions_in_front_of_gemini(client: OpenAI, providers: FakeProviders) -> None:
    providers.script(Text("Chatting with Gemini."))
    completion = client.chat.completions.create(model=MODEL, max_tokens=50, messages=[
        {"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}])
    assert completion.choices[0].message.content == "Chatting with Gemini."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.prompt_tokens == 30 and completion.usage.prompt_tokens_details.cached_tokens == 4
    assert providers.requests[-1]["systemInstruction"] == {"parts": [{"text": "Be kind."}]}
    assert providers.requests[-1]["generationConfig"] == {"maxOutputTokens": 50}


def test_a_chat_tool_round_trip_in_front_of_gemini(client: OpenAI, providers: FakeProviders) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER["parameters"]}}]
    providers.script(FunctionCall("get_weather", '{"city": "Nice"}'), Text("Warm."))
    chunks = list(client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "weather?"}],
                                                 tools=tools, stream=True, stream_options={"include_usage": True}))
    calls = [call for chunk in chunks for choice in chunk.choices for call in choice.delta.tool_calls or []]
    call_id = calls[0].id
    assert orjson.loads("".join(call.function.arguments or "" for call in calls)) == {"city": "Nice"}
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 30
    answer = client.chat.completions.create(model=MODEL, tools=tools, messages=[
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Nice"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "24C"}])
    assert answer.choices[0].message.content == "Warm."
    assert providers.requests[-1]["contents"][2]["parts"][0]["functionResponse"]["response"] == {"output": "24C"}
