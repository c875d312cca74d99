"""The Gemini adapter: Responses requests → generateContent bodies, replies and SSE chunks → Responses."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic_core.errors import InvalidRequest, UpstreamUnavailable
from agentic_core.providers.gemini import (
    GeminiStreamTranslator,
    gemini_path,
    gemini_request_from_responses,
    response_from_gemini,
)
from openai import omit
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TOOL = {"type": "function", "name": "get_weather", "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "additionalProperties": False}}
REQUEST = {"model": "gemini-x", "input": "hi"}
USAGE = {"promptTokenCount": 40, "cachedContentTokenCount": 32, "candidatesTokenCount": 5, "thoughtsTokenCount": 7,
         "totalTokenCount": 52}


def _chunk(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-x-001"}
    if usage:
        chunk["usageMetadata"] = usage
    return chunk


def _stream(*chunks: dict[str, Any]) -> list[dict[str, Any]]:
    translator = GeminiStreamTranslator(REQUEST)
    events: list[dict[str, Any]] = []
    for chunk in chunks:
        events += translator.translate(chunk)
    return events + translator.finish()


def _sdk_final(events: list[dict[str, Any]]) -> Response:
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    for event in events:
        state.handle_event(STREAM_EVENT.validate_python(event))
    return Response.model_validate(events[-1]["response"])


# -- requests ------------------------------------------------------------------------------------------------


def test_the_model_is_in_the_path() -> None:
    assert gemini_path("models/gemini-2.5-flash", stream=False) == "/models/gemini-2.5-flash:generateContent"
    assert gemini_path("gemini-2.5-flash", stream=True) == "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def test_a_request_maps_to_contents_system_and_generation_config() -> None:
    body = gemini_request_from_responses({
        "model": "gemini-x", "instructions": "Be kind.", "max_output_tokens": 100, "temperature": 0.2, "top_p": 0.9,
        "top_k": 20, "stop": "END", "seed": 7, "prompt_cache_key": "k", "parallel_tool_calls": False,
        "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}},
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"},
                                               {"type": "input_image", "image_url": "data:image/png;base64,iVBO"}]}]})
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}, {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]}],
        "systemInstruction": {"parts": [{"text": "Be kind."}]},
        "generationConfig": {"maxOutputTokens": 100, "temperature": 0.2, "topP": 0.9, "topK": 20, "seed": 7,
                             "stopSequences": ["END"], "responseMimeType": "application/json",
                             "responseJsonSchema": {"type": "object"}}}


def test_tools_keep_their_json_schema_and_a_named_choice_narrows_them() -> None:
    body = gemini_request_from_responses({**REQUEST, "tools": [TOOL],
                                          "tool_choice": {"type": "function", "name": "get_weather"}})
    assert body["tools"] == [{"functionDeclarations": [{"name": "get_weather", "description": "Weather",
                                                        "parametersJsonSchema": TOOL["parameters"]}]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}


def test_parallel_calls_and_their_responses_are_one_turn_each() -> None:
    body = gemini_request_from_responses({**REQUEST, "input": [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": '{"city": "Rome"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "c2", "output": "rain"}]})
    user, model, responses = body["contents"]
    assert [part["functionCall"]["args"]["city"] for part in model["parts"]] == ["Paris", "Rome"]
    assert responses == {"role": "user", "parts": [
        {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"output": "sunny"}}},
        {"functionResponse": {"id": "c2", "name": "get_weather", "response": {"output": "rain"}}}]}


def test_a_function_response_without_its_call_is_refused() -> None:
    with pytest.raises(InvalidRequest) as raised:
        gemini_request_from_responses({**REQUEST, "input": [{"type": "function_call_output", "call_id": "c9",
                                                             "output": "x"}]})
    assert raised.value.param == "input[0].call_id"


def test_a_thought_signature_returns_on_the_part_that_follows_it() -> None:
    body = gemini_request_from_responses({**REQUEST, "input": [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "t"}],
         "encrypted_content": "gemini.signature.SIG1"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "gemini.signature.SIG2"},
        {"type": "reasoning", "summary": [], "encrypted_content": "anthropic.thinking.OTHER"},
        {"role": "user", "content": "more"}]})
    contents = body["contents"]
    assert contents[1]["parts"] == [{"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": "SIG1"}]
    assert contents[3] == {"role": "model", "parts": [{"text": "done"}, {"text": "", "thoughtSignature": "SIG2"}]}


def test_reasoning_effort_and_summary_set_the_thinking_config() -> None:
    body = gemini_request_from_responses({**REQUEST, "reasoning": {"effort": "medium", "summary": "auto"}})
    assert body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 4096, "includeThoughts": True}


# -- JSON replies --------------------------------------------------------------------------------------------


def test_a_reply_becomes_a_response_with_its_signature_before_its_call() -> None:
    response = response_from_gemini({**_chunk(
        {"text": "planning", "thought": True},
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "SIG"},
        {"functionCall": {"id": "fc-2", "name": "get_weather", "args": {"city": "Bern"}}},
        finish="STOP"), "usageMetadata": USAGE}, REQUEST)
    reasoning, first, second = response["output"]
    assert reasoning["content"][0]["text"] == "planning" and reasoning["encrypted_content"] == "gemini.signature.SIG"
    assert orjson.loads(first["arguments"]) == {"city": "Oslo"} and first["call_id"].startswith("call_")
    assert second["call_id"] == "fc-2"
    assert response["usage"] == {"input_tokens": 40, "input_tokens_details": {"cached_tokens": 32, "cache_write_tokens": 0},
                                 "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 7}, "total_tokens": 52}


@pytest.mark.parametrize(("finish", "status", "reason"), [
    ("MAX_TOKENS", "incomplete", "max_output_tokens"), ("SAFETY", "incomplete", "content_filter"),
    ("MALFORMED_FUNCTION_CALL", "failed", None), ("STOP", "completed", None)])
def test_finish_reasons(finish: str, status: str, reason: str | None) -> None:
    response = response_from_gemini(_chunk({"text": "x"}, finish=finish), REQUEST)
    assert response["status"] == status and (response["incomplete_details"] or {}).get("reason") == reason


def test_a_blocked_prompt_is_incomplete_for_content() -> None:
    response = response_from_gemini({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": USAGE}, REQUEST)
    assert response["status"] == "incomplete" and response["incomplete_details"] == {"reason": "content_filter"}


# -- streams -------------------------------------------------------------------------------------------------


def test_text_chunks_read_as_one_message() -> None:
    events = _stream(_chunk({"text": "Hel"}), _chunk({"text": "lo"}),
                     _chunk({"text": "", "thoughtSignature": "SIG"}, finish="STOP", usage=USAGE))
    final = _sdk_final(events)
    assert final.output_text == "Hello" and events[-1]["type"] == "response.completed"
    message, reasoning = events[-1]["response"]["output"]
    assert message["type"] == "message" and reasoning["encrypted_content"] == "gemini.signature.SIG"
    assert events[-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 32


def test_thoughts_and_a_signed_call_stream_as_reasoning_then_call() -> None:
    events = _stream(_chunk({"text": "think ", "thought": True}), _chunk({"text": "more", "thought": True}),
                     _chunk({"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "S"}),
                     _chunk({"functionCall": {"name": "get_weather", "args": {"city": "Bern"}}}, finish="STOP"))
    final = _sdk_final(events)
    reasoning, first, second = events[-1]["response"]["output"]
    assert reasoning["content"][0]["text"] == "think more" and reasoning["encrypted_content"] == "gemini.signature.S"
    assert [first["name"], orjson.loads(second["arguments"])] == ["get_weather", {"city": "Bern"}]
    assert [item.type for item in final.output] == ["reasoning", "function_call", "function_call"]


def test_a_stream_without_a_finish_reason_has_no_terminal_event() -> None:
    events = _stream(_chunk({"text": "partial"}))
    assert events[-1]["type"] == "response.output_text.delta"


def test_an_error_chunk_fails_the_stream() -> None:
    with pytest.raises(UpstreamUnavailable):
        _stream(_chunk({"text": "a"}), {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
