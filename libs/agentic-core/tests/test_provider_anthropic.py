"""The Anthropic Messages adapter: Responses requests → Messages bodies, Messages replies and events → Responses."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic_core.errors import InvalidRequest, UpstreamUnavailable
from agentic_core.providers.anthropic import (
    AnthropicStreamTranslator,
    anthropic_request_from_responses,
    response_from_anthropic_message,
)
from openai import omit
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
PNG = "data:image/png;base64,iVBORw0KGgo="


def _events(*events: dict[str, Any], request: dict[str, Any] | None = None, finish: bool = True) -> list[dict[str, Any]]:
    translator = AnthropicStreamTranslator(request or {"model": "claude", "input": "hi"})
    out: list[dict[str, Any]] = []
    for event in events:
        out += translator.translate(event)
    return out + (translator.finish() if finish else [])


def _start(**usage: int) -> dict[str, Any]:
    return {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                 "model": "claude", "content": [], "stop_reason": None,
                                                 "usage": {"input_tokens": 10, "output_tokens": 1, **usage}}}


def _block(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, **delta: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _end(stop_reason: str = "end_turn", output_tokens: int = 5) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
             "usage": {"output_tokens": output_tokens}}, {"type": "message_stop"}]


def _sdk_final(events: list[dict[str, Any]]) -> Response:
    """The stream as the openai SDK reads it (every event must validate and accumulate), and its terminal response."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(STREAM_EVENT.validate_python(event))
    return Response.model_validate(events[-1]["response"])


# -- requests ------------------------------------------------------------------------------------------------


def test_instructions_and_system_messages_become_one_system_prompt() -> None:
    body = anthropic_request_from_responses({"model": "claude", "instructions": "Be kind.", "input": [
        {"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "hi"}]})
    assert body["system"] == "Be kind.\n\nAnswer in French."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert body["max_tokens"] == 4096


def test_images_and_pdfs_become_base64_blocks() -> None:
    body = anthropic_request_from_responses({"model": "claude", "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "what is this?"}, {"type": "input_image", "image_url": PNG},
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERg=="}]}]})
    blocks = body["messages"][0]["content"]
    assert blocks[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert blocks[2]["type"] == "document" and blocks[2]["title"] == "a.pdf"


def test_an_image_url_that_is_not_data_is_refused_naming_the_part() -> None:
    with pytest.raises(InvalidRequest) as raised:
        anthropic_request_from_responses({"model": "claude", "input": [{"role": "user", "content": [
            {"type": "input_image", "file_id": "file_1"}]}]})
    assert raised.value.param == "input[0].content[0]"


def test_calls_and_outputs_become_tool_use_and_tool_result_turns() -> None:
    body = anthropic_request_from_responses({"model": "claude", "tools": [TOOL], "input": [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "toolu_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "toolu_2", "name": "get_weather", "arguments": ""},
        {"type": "function_call_output", "call_id": "toolu_1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "toolu_2", "output": [{"type": "input_text", "text": "rain"}]}]})
    assert [message["role"] for message in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}}]
    assert body["messages"][2]["content"][1] == {"type": "tool_result", "tool_use_id": "toolu_2", "content": "rain"}
    assert body["tools"] == [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}]
    assert "tool_choice" not in body  # auto is Anthropic's default


@pytest.mark.parametrize(("choice", "parallel", "expected"), [
    ("required", None, {"type": "any"}),
    ("none", None, {"type": "none"}),
    ({"type": "function", "name": "get_weather"}, False, {"type": "tool", "name": "get_weather",
                                                          "disable_parallel_tool_use": True}),
    ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
])
def test_tool_choice(choice: Any, parallel: bool | None, expected: dict[str, Any]) -> None:
    body = anthropic_request_from_responses({"model": "claude", "input": "hi", "tools": [TOOL], "tool_choice": choice,
                                             "parallel_tool_calls": parallel})
    assert body["tool_choice"] == expected


def test_reasoning_effort_turns_thinking_on_and_drops_sampling_keys() -> None:
    body = anthropic_request_from_responses({"model": "claude", "input": "hi", "reasoning": {"effort": "high"},
                                             "max_output_tokens": 8000, "temperature": 0.3})
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 7999} and "temperature" not in body


def test_only_anthropics_own_reasoning_is_replayed() -> None:
    body = anthropic_request_from_responses({"model": "claude", "input": [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hmm"}],
         "encrypted_content": "anthropic.thinking.SIG"},
        {"type": "reasoning", "summary": [], "encrypted_content": "anthropic.redacted.DATA"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "vllm's"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "gemini.signature.X"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}]})
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "SIG"}, {"type": "redacted_thinking", "data": "DATA"},
        {"type": "text", "text": "hello"}]


def test_keys_anthropic_does_not_know_are_not_sent() -> None:
    body = anthropic_request_from_responses({"model": "claude", "input": "hi", "prompt_cache_key": "k",
                                             "cache_salt": "s", "store": False, "seed": 3, "stop": ["END"],
                                             "safety_identifier": "user-1", "stream": True})
    assert set(body) == {"model", "max_tokens", "messages", "stop_sequences", "metadata", "stream"}
    assert body["metadata"] == {"user_id": "user-1"} and body["stop_sequences"] == ["END"]


def test_hosted_tools_are_refused() -> None:
    with pytest.raises(InvalidRequest) as raised:
        anthropic_request_from_responses({"model": "claude", "input": "hi", "tools": [{"type": "web_search"}]})
    assert raised.value.param == "tools[0].type"


# -- JSON replies --------------------------------------------------------------------------------------------


def test_a_message_becomes_a_response() -> None:
    response = response_from_anthropic_message({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "tool_use",
        "content": [{"type": "thinking", "thinking": "plan", "signature": "SIG"},
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 5,
                  "output_tokens": 7}}, {"model": "claude", "input": "hi"})
    reasoning, message, call = response["output"]
    assert reasoning["encrypted_content"] == "anthropic.thinking.SIG" and reasoning["content"][0]["text"] == "plan"
    assert message["content"][0]["text"] == "Let me check."
    assert (call["call_id"], orjson.loads(call["arguments"])) == ("toolu_1", {"city": "Rome"})
    assert response["status"] == "completed" and response["model"] == "claude-x"
    assert response["usage"]["input_tokens"] == 35 and response["usage"]["input_tokens_details"] == {
        "cached_tokens": 20, "cache_write_tokens": 5}


@pytest.mark.parametrize(("stop_reason", "status", "reason"), [
    ("max_tokens", "incomplete", "max_output_tokens"), ("refusal", "incomplete", "content_filter"),
    ("end_turn", "completed", None), ("pause_turn", "completed", None)])
def test_stop_reasons(stop_reason: str, status: str, reason: str | None) -> None:
    response = response_from_anthropic_message({"content": [{"type": "text", "text": "x"}], "stop_reason": stop_reason,
                                                "usage": {"input_tokens": 1, "output_tokens": 1}}, {"model": "c"})
    assert response["status"] == status
    assert (response["incomplete_details"] or {}).get("reason") == reason


def test_a_body_that_is_not_a_message_is_a_502() -> None:
    with pytest.raises(UpstreamUnavailable):
        response_from_anthropic_message({"type": "message"}, {"model": "c"})


# -- streams -------------------------------------------------------------------------------------------------


def test_a_text_stream_reads_as_a_responses_stream() -> None:
    events = _events(_start(cache_read_input_tokens=4), {"type": "ping"}, _block(0, {"type": "text", "text": ""}),
                     _delta(0, type="text_delta", text="Hel"), _delta(0, type="text_delta", text="lo"), _stop(0), *_end())
    final = _sdk_final(events)
    assert events[-1]["type"] == "response.completed" and final.output_text == "Hello"
    assert events[-1]["response"]["usage"]["input_tokens"] == 14
    assert [event["sequence_number"] for event in events] == list(range(len(events)))


def test_tool_arguments_split_over_many_deltas_are_one_call() -> None:
    arguments = '{"city": "Lisbon, Portugal", "unit": "C"}'
    pieces = [_delta(1, type="input_json_delta", partial_json=arguments[i:i + 2]) for i in range(0, len(arguments), 2)]
    events = _events(_start(), _block(0, {"type": "text", "text": ""}), _delta(0, type="text_delta", text="Checking."),
                     _stop(0), _block(1, {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}),
                     *pieces, _stop(1), *_end("tool_use"))
    deltas = [event["delta"] for event in events if event["type"] == "response.function_call_arguments.delta"]
    assert len(deltas) == len(pieces) and "".join(deltas) == arguments
    final = _sdk_final(events)
    call = final.output[1]
    assert call.type == "function_call" and call.call_id == "toolu_9" and orjson.loads(call.arguments)["unit"] == "C"


def test_a_call_without_arguments_has_an_empty_object() -> None:
    events = _events(_start(), _block(0, {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}), _stop(0),
                     *_end("tool_use"))
    assert events[-1]["response"]["output"][0]["arguments"] == "{}"


def test_thinking_and_its_signature_become_a_reasoning_item() -> None:
    events = _events(_start(), _block(0, {"type": "thinking", "thinking": "", "signature": ""}),
                     _delta(0, type="thinking_delta", thinking="plan "), _delta(0, type="thinking_delta", thinking="it"),
                     _delta(0, type="signature_delta", signature="SIG"), _stop(0),
                     _block(1, {"type": "redacted_thinking", "data": "DATA"}), _stop(1),
                     _block(2, {"type": "text", "text": ""}), _delta(2, type="text_delta", text="ok"), _stop(2), *_end())
    reasoning, redacted, message = events[-1]["response"]["output"]
    assert reasoning["encrypted_content"] == "anthropic.thinking.SIG"
    assert reasoning["content"] == [{"text": "plan it", "type": "reasoning_text"}]
    assert redacted["encrypted_content"] == "anthropic.redacted.DATA" and message["type"] == "message"
    _sdk_final(events)


def test_an_error_event_fails_the_stream() -> None:
    with pytest.raises(UpstreamUnavailable) as raised:
        _events(_start(), {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert "Overloaded" in raised.value.message


def test_a_stream_cut_before_its_stop_has_no_terminal_event() -> None:
    events = _events(_start(), _block(0, {"type": "text", "text": ""}), _delta(0, type="text_delta", text="par"))
    assert not any(event["type"] in ("response.completed", "response.incomplete") for event in events)


def test_max_tokens_ends_the_stream_incomplete() -> None:
    events = _events(_start(), _block(0, {"type": "text", "text": ""}), _delta(0, type="text_delta", text="cut"),
                     _stop(0), *_end("max_tokens"))
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
