"""The whole stack against a real vLLM (CPU) with SmolLM2-135M, through the official openai SDK.

Structure and events only, never wording: a 135M model says whatever it says.
Greedy decoding (temperature 0) keeps each run the same.
"""

from __future__ import annotations

import json

import pytest
from openai import OpenAI

pytestmark = pytest.mark.vllm

MODEL = "smollm2"
SHORT = {"max_output_tokens": 48, "temperature": 0}
TERMINAL = ("response.completed", "response.failed", "response.incomplete")
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather of a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


def _assert_usage(response) -> None:
    usage = response.usage
    assert usage is not None
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


def _assert_text_answer(response) -> None:
    assert response.id.startswith("resp_")
    assert response.status in ("completed", "incomplete"), response.status
    if response.status == "incomplete":
        assert response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"
    messages = [item for item in response.output if item.type == "message"]
    assert messages, [item.type for item in response.output]
    assert messages[-1].id.startswith("msg_") and messages[-1].role == "assistant"
    assert response.output_text.strip()
    _assert_usage(response)


def test_json_turn(client: OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Say hello in one short sentence.", metadata={"tier": "vllm"}, **SHORT)

    _assert_text_answer(response)
    assert response.model == MODEL
    assert response.store is True and response.metadata == {"tier": "vllm"}
    assert response.completed_at is not None
    part = response.output[-1].content[0]
    assert part.type == "output_text" and part.text == response.output_text
    stored = client.responses.retrieve(response.id)
    assert stored.output_text == response.output_text and stored.status == response.status


def test_streamed_turn(client: OpenAI) -> None:
    events = list(client.responses.create(model=MODEL, input="Name three colors.", stream=True, **SHORT))

    types = [event.type for event in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert sum(kind in TERMINAL for kind in types) == 1 and types[-1] in ("response.completed", "response.incomplete")
    assert types.count("response.created") == 1
    for expected in ("response.output_item.added", "response.content_part.added", "response.output_text.delta",
                     "response.output_text.done", "response.content_part.done", "response.output_item.done"):
        assert expected in types, expected
    assert [event.sequence_number for event in events] == list(range(len(events)))

    final = events[-1].response
    _assert_text_answer(final)
    assert events[0].response.id == final.id
    deltas = [event.delta for event in events if event.type == "response.output_text.delta"]
    assert len(deltas) > 1  # really streamed, token by token
    assert "".join(deltas) == final.output_text
    done = [event for event in events if event.type == "response.output_text.done"]
    assert len(done) == 1 and done[0].text == final.output_text
    item_id = final.output[-1].id
    assert all(event.item_id == item_id for event in events if hasattr(event, "item_id"))
    assert client.responses.retrieve(final.id).output_text == final.output_text


def test_three_turn_chain(client: OpenAI) -> None:
    prompts = ["My name is Ada. Reply with one word.", "What is my name? Reply with one word.", "Say goodbye in one word."]
    chain = []
    previous = None
    for prompt in prompts:
        response = client.responses.create(model=MODEL, input=prompt, previous_response_id=previous, **SHORT)
        assert response.status == "completed", (response.status, response.output_text)
        assert response.previous_response_id == previous
        _assert_text_answer(response)
        chain.append(response)
        previous = response.id

    assert len({response.id for response in chain}) == 3
    for response in chain:
        stored = client.responses.retrieve(response.id)
        assert stored.status == "completed" and stored.output_text == response.output_text
        assert stored.previous_response_id == response.previous_response_id
    # The last turn's own input is its prompt only; the history comes from the chain.
    items = client.responses.input_items.list(chain[-1].id, order="asc").data
    assert [item.type for item in items] == ["message"]
    assert items[0].role == "user" and items[0].content[0].text == prompts[-1]
    # The model saw the history: the last turn's prompt is longer than its own words.
    assert chain[-1].usage.input_tokens > chain[1].usage.input_tokens > chain[0].usage.input_tokens


def test_required_function_call_then_its_output(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="What is the weather in Paris?", tools=[WEATHER],
                                    tool_choice="required", max_output_tokens=64, temperature=0)
    assert first.status == "completed", first.status
    calls = [item for item in first.output if item.type == "function_call"]
    assert calls, [item.type for item in first.output]
    call = calls[0]
    assert call.name == "get_weather" and call.call_id
    arguments = json.loads(call.arguments)
    assert isinstance(arguments, dict) and isinstance(arguments.get("city"), str)
    assert client.responses.retrieve(first.id).output[0].type == "function_call"

    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, tools=[WEATHER], **SHORT,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear", "celsius": 21}'}],
    )
    assert second.status == "completed", (second.status, [item.type for item in second.output])
    assert second.previous_response_id == first.id
    _assert_text_answer(second)
    items = client.responses.input_items.list(second.id).data
    assert [item.type for item in items] == ["function_call_output"] and items[0].call_id == call.call_id


def test_conversation_two_turns_then_items(client: OpenAI) -> None:
    conversation = client.conversations.create(metadata={"tier": "vllm"})
    assert conversation.id.startswith("conv_")
    first = client.responses.create(model=MODEL, input="Hi, I am Ada.", conversation=conversation.id, **SHORT)
    second = client.responses.create(model=MODEL, input="Who am I?", conversation=conversation.id, **SHORT)
    for response in (first, second):
        _assert_text_answer(response)
    assert second.usage.input_tokens > first.usage.input_tokens  # the first turn was part of the second's input

    items = client.conversations.items.list(conversation.id, order="asc").data
    roles = [(item.type, getattr(item, "role", None)) for item in items]
    assert roles == [("message", "user"), ("message", "assistant"), ("message", "user"), ("message", "assistant")]
    assert items[0].content[0].text == "Hi, I am Ada." and items[2].content[0].text == "Who am I?"
