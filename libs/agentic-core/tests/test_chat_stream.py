"""Chat Completions stream chunks → Responses events, checked on real vLLM captures and the fake model server.

Every produced stream is checked the way a Responses client reads it (the
openai SDK's event types and its stream accumulator), then fed through the
executor's own `StreamTranslator`.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from agentic_core.chat import ChatStreamTranslator, chat_request_from_responses, response_from_chat_completion
from agentic_core.errors import UpstreamUnavailable
from agentic_core.responses.stream import EventSequencer, RoundOutcome, StreamTranslator
from agentic_core.sse import DONE, SseParser
from openai import omit
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from tests.support.fake_upstream import FakeUpstream, FunctionCall, Text, Truncated

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TERMINAL = ("response.completed", "response.incomplete", "response.failed")
REQUEST = {"model": "smollm2", "input": "What is the weather in Paris?", "stream": True,
           "tools": [{"type": "function", "name": "get_weather", "description": "Get the current weather for a city",
                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}


# -- helpers ---------------------------------------------------------------------


def _parse_sse(raw: bytes) -> list[dict[str, Any]]:
    parser = SseParser()
    events = parser.feed(raw) + parser.close()
    assert events and events[-1].data == DONE, "a complete chat stream ends with data: [DONE]"
    return [orjson.loads(event.data) for event in events[:-1]]


def _recorded(name: str) -> list[dict[str, Any]]:
    return _parse_sse((FIXTURES / name).read_bytes())


def _translate(chunks: list[dict[str, Any]], request: dict[str, Any] = REQUEST) -> list[dict[str, Any]]:
    translator = ChatStreamTranslator(request)
    events: list[dict[str, Any]] = []
    for chunk in chunks:
        events += translator.translate(chunk)
    return events + translator.finish()


def _check_stream(events: list[dict[str, Any]]) -> Response:
    """What a Responses client relies on; returns the terminal event's response, SDK-typed."""
    types = [event["type"] for event in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert sum(event_type in TERMINAL for event_type in types) == 1 and types[-1] in TERMINAL
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    for event in events:
        STREAM_EVENT.validate_python(event)
    lifecycle = [event["response"] for event in events if "response" in event]
    assert len({response["id"] for response in lifecycle}) == 1

    item_ids: dict[int, str] = {}
    done_items: list[dict[str, Any]] = []
    deltas: dict[tuple[int, int], str] = defaultdict(str)
    for event in events:
        index = event.get("output_index")
        if event["type"] == "response.output_item.added":
            assert index == len(item_ids), "items are announced with increasing output_index"
            assert len(done_items) == index, "the previous item is done before the next one starts"
            item_ids[index] = event["item"]["id"]
        elif index is not None:
            assert (event.get("item_id") or event["item"]["id"]) == item_ids[index]
        if event["type"].endswith(".delta"):
            deltas[(index, event.get("content_index", -1))] += event["delta"]
        if event["type"] in ("response.output_text.done", "response.reasoning_text.done"):
            assert deltas[(index, event["content_index"])] == event["text"]
        if event["type"] == "response.refusal.done":
            assert deltas[(index, event["content_index"])] == event["refusal"]
        if event["type"] == "response.function_call_arguments.done":
            assert deltas[(index, -1)] == event["arguments"]
        if event["type"] == "response.output_item.done":
            done_items.append(event["item"])
    assert events[-1]["response"]["output"] == done_items

    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(STREAM_EVENT.validate_python(event))
    return Response.model_validate(events[-1]["response"])


def _through_executor(events: list[dict[str, Any]]) -> tuple[RoundOutcome | None, list[dict[str, Any]]]:
    translator = StreamTranslator(EventSequencer(2))
    public = [each for event in events for each in translator.translate(orjson.loads(orjson.dumps(event)))]
    return translator.outcome(), [orjson.loads(data) for _, _, data in public]


def _chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": extra.pop("logprobs", None),
                                         "finish_reason": finish_reason}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1796035054, "model": "smollm2",
            "choices": choices, **extra}


def _call(index: int, call_id: str | None = None, name: str | None = None, arguments: str | None = None) -> dict:
    function = {key: value for key, value in (("name", name), ("arguments", arguments)) if value is not None}
    call: dict[str, Any] = {"index": index, "function": function}
    if call_id:
        call.update(id=call_id, type="function")
    return {"tool_calls": [call]}


USAGE = _chunk(usage={"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30})


# -- recorded vLLM streams -----------------------------------------------------------


def test_recorded_text_stream_has_the_event_sequence_of_vllms_responses_stream() -> None:
    events = _translate(_recorded("chat-text-stream.sse"))
    recorded = _parse_sse((FIXTURES / "responses-text-stream.sse").read_bytes() + b"data: [DONE]\n\n")
    assert [event["type"] for event in events] == [event["type"] for event in recorded]
    for ours, theirs in zip(events, recorded, strict=True):
        assert list(ours) == list(theirs), "same fields in the same order"
    response = _check_stream(events)
    assert response.status == "completed" and response.output_text == "Hello, welcome to my world!"
    assert response.usage is not None and response.usage.input_tokens == 36 and response.usage.output_tokens == 8
    assert response.usage.total_tokens == 44 and response.created_at == 1796035054


def test_recorded_tool_stream_has_the_event_sequence_of_vllms_responses_stream() -> None:
    events = _translate(_recorded("chat-tool-stream.sse"))
    recorded = _parse_sse((FIXTURES / "responses-tool-stream.sse").read_bytes() + b"data: [DONE]\n\n")
    assert [event["type"] for event in events] == [event["type"] for event in recorded]
    for ours, theirs in zip(events, recorded, strict=True):
        assert list(ours) == list(theirs), "same fields in the same order"
        if "item" in ours:
            assert set(theirs["item"]) - set(ours["item"]) == {"async", "caller", "namespace"}
    response = _check_stream(events)
    (call,) = response.output
    assert call.type == "function_call" and call.call_id == "chatcmpl-tool-8015f67a99d5a717"
    assert call.name == "get_weather" and orjson.loads(call.arguments) == {"city": "Paris"}
    assert response.usage is not None and response.usage.total_tokens == 179


def test_recorded_streams_give_the_executor_the_same_outcome_as_responses_streams() -> None:
    outcome, public = _through_executor(_translate(_recorded("chat-tool-stream.sse")))
    assert outcome is not None and outcome.status == "completed"
    assert outcome.output[0]["call_id"] == "chatcmpl-tool-8015f67a99d5a717"
    assert outcome.usage == {"input_tokens": 144, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                             "output_tokens": 35, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 179}
    assert [event["sequence_number"] for event in public] == list(range(2, 2 + len(public)))

    text_outcome, _ = _through_executor(_translate(_recorded("chat-text-stream.sse")))
    assert text_outcome is not None and text_outcome.output[0]["content"][0]["text"] == "Hello, welcome to my world!"
    assert text_outcome.output[0]["content"][0]["logprobs"] == []


def test_recorded_request_and_stream_round_trip() -> None:
    request = orjson.loads((FIXTURES / "responses-tool-stream.request.json").read_bytes())
    assert chat_request_from_responses(request) == orjson.loads((FIXTURES / "chat-tool-stream.request.json").read_bytes())
    response = _check_stream(_translate(_recorded("chat-tool-stream.sse"), request))
    assert response.tool_choice == "required" and response.max_output_tokens == 64


# -- generations the captures do not cover -----------------------------------------


def test_parallel_tool_calls_become_separate_items_in_order() -> None:
    chunks = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk(_call(0, "call_a", "get_weather")),
        _chunk(_call(0, arguments='{"city":')),
        _chunk(_call(0, arguments='"Paris"}')),
        _chunk(_call(1, "call_b", "get_weather", '{"city":"Rome"}')),
        _chunk({}, "tool_calls"),
        USAGE,
    ]
    events = _translate(chunks)
    response = _check_stream(events)
    assert [(item.type, item.call_id, item.arguments) for item in response.output] == [
        ("function_call", "call_a", '{"city":"Paris"}'), ("function_call", "call_b", '{"city":"Rome"}')]
    outcome, _ = _through_executor(events)
    assert outcome is not None and [item["call_id"] for item in outcome.output] == ["call_a", "call_b"]


def test_text_then_a_tool_call_are_two_items() -> None:
    chunks = [_chunk({"role": "assistant", "content": "Let me"}), _chunk({"content": " check."}),
              _chunk(_call(0, "call_a", "get_weather", "{}")), _chunk({}, "tool_calls"), USAGE]
    response = _check_stream(_translate(chunks))
    assert [item.type for item in response.output] == ["message", "function_call"]
    assert response.output_text == "Let me check."


def test_reasoning_is_a_reasoning_item_with_reasoning_text_events() -> None:
    chunks = [_chunk({"role": "assistant", "reasoning_content": "Think"}), _chunk({"reasoning": "ing."}),
              _chunk({"content": "42"}), _chunk({}, "stop"),
              _chunk(usage={"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14,
                            "completion_tokens_details": {"reasoning_tokens": 4}})]
    events = _translate(chunks)
    response = _check_stream(events)
    assert "response.reasoning_text.delta" in [event["type"] for event in events]
    reasoning, message = response.output
    assert reasoning.type == "reasoning" and reasoning.content is not None and reasoning.content[0].text == "Thinking."
    assert message.type == "message" and response.output_text == "42"
    assert response.usage is not None and response.usage.output_tokens_details.reasoning_tokens == 4
    outcome, _ = _through_executor(events)
    assert outcome is not None and [item["type"] for item in outcome.output] == ["reasoning", "message"]


def test_length_cut_is_one_incomplete_terminal_event() -> None:
    events = _translate([_chunk({"content": "Hello, wel"}), _chunk({}, "length"), USAGE])
    response = _check_stream(events)
    assert events[-1]["type"] == "response.incomplete"
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete"
    outcome, _ = _through_executor(events)
    assert outcome is not None and outcome.status == "incomplete"
    assert outcome.incomplete_details == {"reason": "max_output_tokens"}


def test_refusal_is_a_refusal_part() -> None:
    response = _check_stream(_translate([_chunk({"refusal": "I can"}), _chunk({"refusal": "'t."}), _chunk({}, "stop")]))
    assert response.output[0].type == "message"
    assert response.output[0].content[0].type == "refusal" and response.output[0].content[0].refusal == "I can't."


def test_logprobs_ride_on_the_text_deltas_and_part() -> None:
    logprobs = {"content": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105], "top_logprobs": []}]}
    events = _translate([_chunk({"content": "Hi"}, logprobs=logprobs), _chunk({}, "stop"), USAGE])
    delta = next(event for event in events if event["type"] == "response.output_text.delta")
    assert delta["logprobs"] == [{"token": "Hi", "bytes": [72, 105], "logprob": -0.5, "top_logprobs": []}]
    response = _check_stream(events)
    assert response.output[0].content[0].logprobs[0].logprob == -0.5


def test_arguments_before_the_name_wait_for_it() -> None:
    events = _translate([_chunk(_call(0, "call_a", arguments='{"a":')), _chunk(_call(0, name="f", arguments="1}")),
                         _chunk({}, "tool_calls")])
    response = _check_stream(events)
    assert response.output[0].name == "f" and response.output[0].arguments == '{"a":1}'


def test_an_empty_answer_is_an_empty_message() -> None:
    response = _check_stream(_translate([_chunk({"role": "assistant", "content": ""}), _chunk({}, "stop"), USAGE]))
    assert response.output[0].type == "message" and response.output_text == ""


def test_usage_waits_for_its_chunk_and_nothing_follows_the_terminal_event() -> None:
    translator = ChatStreamTranslator(REQUEST)
    translator.translate(_chunk({"content": "Hi"}))
    closing = translator.translate(_chunk({}, "stop"))
    assert closing[-1]["type"] == "response.output_item.done"
    (terminal,) = translator.translate(USAGE)
    assert terminal["type"] == "response.completed" and terminal["response"]["usage"]["total_tokens"] == 30
    assert translator.finish() == [] and translator.translate(USAGE) == []


def test_without_usage_finish_sends_the_terminal_event_without_usage() -> None:
    translator = ChatStreamTranslator(REQUEST)
    events = translator.translate(_chunk({"content": "Hi"})) + translator.translate(_chunk({}, "stop"))
    events += translator.finish()
    response = _check_stream(events)
    assert response.status == "completed" and response.usage is None


def test_a_stream_without_finish_reason_has_no_terminal_event() -> None:
    translator = ChatStreamTranslator(REQUEST)
    for chunk in _recorded("chat-text-stream.sse")[:5]:
        translator.translate(chunk)
    assert translator.finish() == []
    assert ChatStreamTranslator(REQUEST).finish() == []


@pytest.mark.parametrize(
    "chunk",
    [
        [],
        {"id": "chatcmpl-1"},
        {"choices": "nope"},
        {"choices": [1]},
        {"choices": [{"index": 0, "delta": "text"}]},
        {"choices": [{"index": 0, "delta": {"content": 5}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0", "function": {"name": "f"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": 7}]},
        {"choices": [], "usage": {"prompt_tokens": -1}},
    ],
)
def test_malformed_chunks_are_upstream_errors(chunk) -> None:
    with pytest.raises(UpstreamUnavailable) as caught:
        ChatStreamTranslator(REQUEST).translate(chunk)
    assert caught.value.code == "upstream_invalid_response" and "Chat Completions" in caught.value.message


def test_an_error_chunk_is_an_upstream_error_with_its_message() -> None:
    translator = ChatStreamTranslator(REQUEST)
    translator.translate(_chunk({"content": "Hi"}))
    with pytest.raises(UpstreamUnavailable) as caught:
        translator.translate({"error": {"message": "engine died", "type": "InternalServerError", "code": 500}})
    assert caught.value.code == "upstream_stream_error" and "engine died" in caught.value.message


def test_a_tool_call_resumed_after_the_next_one_began_is_refused() -> None:
    translator = ChatStreamTranslator(REQUEST)
    translator.translate(_chunk(_call(0, "call_a", "f", "{")))
    translator.translate(_chunk(_call(1, "call_b", "g", "{}")))
    with pytest.raises(UpstreamUnavailable):
        translator.translate(_chunk(_call(0, arguments="}")))


def test_a_tool_call_that_never_got_a_name_is_refused() -> None:
    translator = ChatStreamTranslator(REQUEST)
    translator.translate(_chunk(_call(0, "call_a", arguments="{}")))
    with pytest.raises(UpstreamUnavailable):
        translator.translate(_chunk({}, "tool_calls"))


# -- the fake model server's chat route ---------------------------------------------


def _stream_from_fake(upstream: FakeUpstream, responses_request: dict[str, Any]) -> list[dict[str, Any]]:
    body = chat_request_from_responses(responses_request)
    with httpx.stream("POST", f"{upstream.base_url}/chat/completions", json=body, timeout=10) as reply:
        assert reply.status_code == 200
        return _parse_sse(reply.read())


def test_fake_chat_route_streams_text_that_translates_to_a_valid_responses_stream(upstream: FakeUpstream) -> None:
    upstream.script(Text("Hello, welcome to my world!"))
    chunks = _stream_from_fake(upstream, {**REQUEST, "input": "Say hello."})
    assert chunks[0]["id"].startswith("chatcmpl-") and chunks[-1]["choices"] == [] and "usage" in chunks[-1]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert upstream.requests[-1]["stream_options"] == {"include_usage": True}
    response = _check_stream(_translate(chunks))
    assert response.output_text == "Hello, welcome to my world!" and response.usage is not None


def test_fake_chat_route_streams_tool_calls_like_vllm(upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'))
    chunks = _stream_from_fake(upstream, REQUEST)
    recorded = _recorded("chat-tool-stream.sse")

    def shape(chunk: dict[str, Any]) -> tuple[list[str], list[list[str]], list[str]]:
        choices = chunk["choices"]
        return list(chunk), [list(choice) for choice in choices], [list(choice["delta"]) for choice in choices]

    assert shape(chunks[0]) == shape(recorded[0]) and shape(chunks[1]) == shape(recorded[1])
    assert {str(shape(chunk)) for chunk in chunks[2:-2]} == {str(shape(chunk)) for chunk in recorded[2:-2]}
    assert shape(chunks[-2]) == shape(recorded[-2]) and shape(chunks[-1]) == shape(recorded[-1])
    assert list(chunks[1]["choices"][0]["delta"]["tool_calls"][0]) == list(recorded[1]["choices"][0]["delta"]["tool_calls"][0])
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    events = _translate(chunks)
    response = _check_stream(events)
    (call,) = response.output
    assert call.type == "function_call" and call.call_id.startswith("chatcmpl-tool-")
    assert orjson.loads(call.arguments) == {"city": "Paris"}
    outcome, _ = _through_executor(events)
    assert outcome is not None and outcome.output[0]["call_id"] == call.call_id


def test_fake_chat_route_marks_cut_text_as_length(upstream: FakeUpstream) -> None:
    upstream.script(Text("Hello, wel", incomplete=True))
    response = _check_stream(_translate(_stream_from_fake(upstream, REQUEST)))
    assert response.status == "incomplete"


def test_fake_chat_route_truncated_stream_has_no_terminal_event(upstream: FakeUpstream) -> None:
    upstream.script(Truncated("Hello, welcome to my world!", events=3))
    body = chat_request_from_responses(REQUEST)
    with httpx.stream("POST", f"{upstream.base_url}/chat/completions", json=body, timeout=10) as reply:
        parser = SseParser()
        events = parser.feed(reply.read()) + parser.close()
    assert len(events) == 3 and DONE not in [event.data for event in events]
    translator = ChatStreamTranslator(REQUEST)
    for event in events:
        translator.translate(orjson.loads(event.data))
    assert translator.finish() == []


def test_fake_chat_route_answers_json_that_maps_to_a_response(upstream: FakeUpstream) -> None:
    upstream.script(FunctionCall("get_weather", '{"city": "Paris"}'), Text("Hi there."))
    body = chat_request_from_responses({**REQUEST, "stream": False})
    for expected in ("function_call", "message"):
        reply = httpx.post(f"{upstream.base_url}/chat/completions", json=body, timeout=10)
        completion = reply.json()
        assert completion["object"] == "chat.completion" and completion["id"].startswith("chatcmpl-")
        response = Response.model_validate(response_from_chat_completion(completion, REQUEST))
        assert response.output[0].type == expected and response.usage is not None
    assert "stream_options" not in upstream.requests[-1]


def test_fake_chat_route_without_include_usage_sends_no_usage_chunk(upstream: FakeUpstream) -> None:
    body = {**chat_request_from_responses({**REQUEST, "input": "ping"}), "stream_options": {"include_usage": False}}
    with httpx.stream("POST", f"{upstream.base_url}/chat/completions", json=body, timeout=10) as reply:
        chunks = _parse_sse(reply.read())
    assert all(chunk["choices"] for chunk in chunks)
    assert "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks) == "Echo: ping"
    response = _check_stream(_translate(chunks))
    assert response.usage is None and response.output_text == "Echo: ping"


def test_fake_chat_route_refuses_an_unknown_model_like_vllm(upstream: FakeUpstream) -> None:
    reply = httpx.post(f"{upstream.base_url}/chat/completions", json={"model": "nope", "messages": []}, timeout=10)
    assert reply.status_code == 404 and reply.json()["error"]["param"] == "model"
