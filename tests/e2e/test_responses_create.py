"""Creating responses through the whole stack with the official openai SDK: JSON and streaming."""

from __future__ import annotations

import httpx
import openai
import orjson
import pytest
from openai import OpenAI

from tests.support.fake_upstream import FunctionCall, Text

MODEL = "smollm2"


def test_json_turn_returns_our_ids_and_the_model_text(client: OpenAI, upstream) -> None:
    upstream.script(Text("Hello, welcome to my world!"))
    response = client.responses.create(model=MODEL, input="Say hello", metadata={"team": "qa"})

    assert response.id.startswith("resp_")
    assert response.status == "completed"
    assert response.output_text == "Hello, welcome to my world!"
    assert response.store is True
    assert response.metadata == {"team": "qa"}
    assert response.usage is not None and response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    message = response.output[0]
    assert message.id.startswith("msg_") and len(message.id) > 30  # ours, not vLLM's 16-hex id
    assert message.content[0].logprobs == []
    assert response.completed_at is not None


def test_upstream_gets_a_stateless_request(client: OpenAI, upstream) -> None:
    client.responses.create(model=MODEL, input="hi", metadata={"k": "v"}, instructions="Be brief.")

    sent = upstream.requests[-1]
    assert sent["store"] is False
    assert "previous_response_id" not in sent and "metadata" not in sent
    assert sent["instructions"] == "Be brief."
    assert sent["input"] == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


def test_vllm_only_fields_do_not_leak(client: OpenAI, upstream, gateway_url: str, auth_headers) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses", json={"model": MODEL, "input": "hi"}, headers=auth_headers)
    body = reply.json()
    for field in ("kv_transfer_params", "input_messages", "output_messages"):
        assert field not in body
    assert body["presence_penalty"] == 0.0 and body["frequency_penalty"] == 0.0  # OpenAI's fields, always numbers
    assert "phase" not in body["output"][0]
    assert set(body["usage"]["input_tokens_details"]) == {"cached_tokens", "cache_write_tokens"}
    for field, default in {"tools": [], "tool_choice": "auto", "truncation": "disabled", "background": False, "temperature": 1.0, "top_p": 1.0}.items():
        assert body[field] == default


def test_streaming_turn_emits_the_full_event_set_in_order(client: OpenAI, upstream) -> None:
    upstream.script(Text("Hello there, friend."))
    events = list(client.responses.create(model=MODEL, input="Say hello", stream=True))

    types = [event.type for event in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert types.count("response.created") == 1 and sum(t in ("response.completed", "response.failed", "response.incomplete") for t in types) == 1
    for expected in ("response.output_item.added", "response.content_part.added", "response.output_text.delta",
                     "response.output_text.done", "response.content_part.done", "response.output_item.done"):
        assert expected in types
    sequence = [event.sequence_number for event in events]
    assert sequence == list(range(len(events)))
    final = events[-1].response
    item_id = final.output[0].id
    assert all(event.item_id == item_id for event in events if hasattr(event, "item_id"))
    assert "".join(event.delta for event in events if event.type == "response.output_text.delta") == "Hello there, friend."
    assert events[0].response.id == final.id


def test_streamed_response_is_stored_before_the_terminal_event(client: OpenAI, upstream) -> None:
    with client.responses.stream(model=MODEL, input="remember me") as stream:
        for event in stream:
            if event.type == "response.completed":
                # The client can continue at once: the turn is already stored.
                stored = client.responses.retrieve(event.response.id)
                assert stored.output_text == event.response.output_text


def test_sse_framing_is_one_event_per_frame_with_lf_endings(gateway_url: str, auth_headers, upstream) -> None:
    with httpx.stream("POST", f"{gateway_url}/v1/responses", json={"model": MODEL, "input": "hi", "stream": True},
                      headers=auth_headers) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        raw = b"".join(reply.iter_bytes())
    assert b"\r" not in raw
    frames = raw.split(b"\n\n")
    assert frames[-1] == b""
    for frame in frames[:-1]:
        event_line, data_line = frame.split(b"\n")
        assert event_line.startswith(b"event: ") and data_line.startswith(b"data: ")
        assert orjson.loads(data_line[6:])["type"] == event_line[7:].decode()


def test_incomplete_turn_is_reported_and_stored(client: OpenAI, upstream) -> None:
    upstream.script(Text("cut short", incomplete=True))
    response = client.responses.create(model=MODEL, input="long story", max_output_tokens=16)
    assert response.status == "incomplete"
    assert response.incomplete_details is not None and response.incomplete_details.reason == "max_output_tokens"
    assert client.responses.retrieve(response.id).status == "incomplete"


def test_function_call_is_returned_and_its_output_continues_the_turn(client: OpenAI, upstream) -> None:
    tool = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'), Text("It is sunny."))
    first = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[tool], tool_choice="required")
    call = first.output[0]
    assert call.type == "function_call" and call.name == "get_weather" and call.call_id

    second = client.responses.create(
        model=MODEL, previous_response_id=first.id, tools=[tool],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear"}'}],
    )
    assert second.output_text == "It is sunny."
    history = upstream.requests[-1]["input"]
    assert [item["type"] for item in history] == ["message", "function_call", "function_call_output"]
    assert history[1]["call_id"] == history[2]["call_id"] == call.call_id


def test_store_false_on_the_stateful_path_is_echoed_and_not_stored(client: OpenAI, upstream) -> None:
    parent = client.responses.create(model=MODEL, input="stored parent")
    child = client.responses.create(model=MODEL, input="ephemeral child", store=False, previous_response_id=parent.id)
    assert child.store is False and child.previous_response_id == parent.id
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(child.id)


@pytest.mark.parametrize("stream", [False, True])
def test_store_false_writes_nothing(client: OpenAI, upstream, stream: bool) -> None:

    if stream:
        events = list(client.responses.create(model=MODEL, input="ephemeral", store=False, stream=True))
        response = events[-1].response
    else:
        response = client.responses.create(model=MODEL, input="ephemeral", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="again", previous_response_id=response.id)
