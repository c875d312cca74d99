"""A model server that only speaks Chat Completions, behind the Responses API (the `chat` route)."""

from __future__ import annotations

import orjson
import pytest
from openai import OpenAI

from conftest import CHAT_MODEL
from tests.support.fake_upstream import FunctionCall, Text


def test_json_turn_through_the_chat_adapter(client: OpenAI, upstream) -> None:
    upstream.script(Text("Hello from chat."))
    response = client.responses.create(model=CHAT_MODEL, input="hi", instructions="Be kind.", max_output_tokens=32)
    assert response.status == "completed" and response.output_text == "Hello from chat."
    assert response.model == CHAT_MODEL and response.id.startswith("resp_")
    assert response.usage.output_tokens > 0
    sent = upstream.requests[-1]
    assert sent["model"] == "smollm2" and sent["max_tokens"] == 32
    assert sent["messages"] == [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]


def test_streamed_turn_through_the_chat_adapter(client: OpenAI, upstream) -> None:
    upstream.script(Text("Streaming over chat works."))
    events = list(client.responses.create(model=CHAT_MODEL, input="hi", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    deltas = "".join(event.delta for event in events if event.type == "response.output_text.delta")
    assert deltas == events[-1].response.output_text == "Streaming over chat works."
    assert upstream.requests[-1]["stream_options"] == {"include_usage": True}


def test_chain_history_becomes_chat_messages(client: OpenAI, upstream) -> None:
    upstream.script(Text("first"), Text("second"))
    first = client.responses.create(model=CHAT_MODEL, input="one")
    client.responses.create(model=CHAT_MODEL, input="two", previous_response_id=first.id)
    messages = upstream.requests[-1]["messages"]
    assert [(message["role"], message["content"]) for message in messages] == [
        ("user", "one"), ("assistant", "first"), ("user", "two")]


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_round_trip_through_chat(client: OpenAI, upstream, stream: bool) -> None:
    tool = {"type": "function", "name": "get_weather", "strict": True,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                           "additionalProperties": False}}
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'), Text("Sunny."))
    if stream:
        first = list(client.responses.create(model=CHAT_MODEL, input="weather?", tools=[tool], tool_choice="required",
                                             stream=True))[-1].response
    else:
        first = client.responses.create(model=CHAT_MODEL, input="weather?", tools=[tool], tool_choice="required")
    call = first.output[0]
    assert call.type == "function_call" and orjson.loads(call.arguments) == {"city": "Paris"}
    assert upstream.requests[-1]["tools"][0]["function"]["name"] == "get_weather"
    assert upstream.requests[-1]["tool_choice"] == "required"
    second = client.responses.create(
        model=CHAT_MODEL, previous_response_id=first.id, tools=[tool],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear"}'}],
    )
    assert second.output_text == "Sunny."
    messages = upstream.requests[-1]["messages"]
    assert messages[1]["role"] == "assistant" and messages[1]["tool_calls"][0]["id"] == call.call_id
    assert messages[2] == {"role": "tool", "tool_call_id": call.call_id, "content": '{"sky": "clear"}'}


def test_conversation_through_the_chat_adapter(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Text("a1"), Text("a2"))
    client.responses.create(model=CHAT_MODEL, input="q1", conversation=conversation.id)
    client.responses.create(model=CHAT_MODEL, input="q2", conversation=conversation.id)
    assert [m["content"] for m in upstream.requests[-1]["messages"]] == ["q1", "a1", "q2"]


def test_incomplete_chat_generation_is_reported(client: OpenAI, upstream) -> None:
    upstream.script(Text("cut", incomplete=True))
    response = client.responses.create(model=CHAT_MODEL, input="long", max_output_tokens=16)
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"
