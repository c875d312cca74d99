"""A stateless Responses request → a Chat Completions body, field by field."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from agentic_core.chat import chat_request_from_responses
from agentic_core.errors import InvalidRequest

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city",
    "strict": True,
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                   "additionalProperties": False},
}


def _chat(**fields) -> dict:
    return chat_request_from_responses({"model": "smollm2", "input": "hi", **fields})


def test_the_recorded_responses_tool_request_becomes_the_recorded_chat_tool_request() -> None:
    responses = orjson.loads((FIXTURES / "responses-tool-stream.request.json").read_bytes())
    chat = orjson.loads((FIXTURES / "chat-tool-stream.request.json").read_bytes())
    assert chat_request_from_responses(responses) == chat


def test_the_recorded_responses_text_request_becomes_the_recorded_chat_text_request() -> None:
    responses = orjson.loads((FIXTURES / "responses-text-stream.request.json").read_bytes())
    chat = orjson.loads((FIXTURES / "chat-text-stream.request.json").read_bytes())
    assert chat_request_from_responses(responses) == chat


def test_instructions_become_a_leading_system_message() -> None:
    chat = _chat(instructions="Be brief.", input=[{"type": "message", "role": "user", "content": "hi"}])
    assert chat["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert "instructions" not in chat and "input" not in chat


def test_string_input_is_one_user_message() -> None:
    assert _chat()["messages"] == [{"role": "user", "content": "hi"}]


def test_text_parts_are_joined_like_vllm_renders_them() -> None:
    chat = _chat(input=[{"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": "one"}, {"type": "input_text", "text": "two"}]}])
    assert chat["messages"] == [{"role": "user", "content": "one\ntwo"}]


def test_developer_messages_become_system_messages() -> None:
    chat = _chat(input=[{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}])
    assert chat["messages"] == [{"role": "system", "content": "rules"}]


def test_images_become_image_url_parts_next_to_text() -> None:
    chat = _chat(input=[{"role": "user", "content": [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
        {"type": "input_image", "image_url": "https://example.com/cat.png"},
    ]}])
    assert chat["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]}]


def test_files_and_audio_keep_their_chat_shape() -> None:
    chat = _chat(input=[{"role": "user", "content": [
        {"type": "input_file", "file_data": "data:application/pdf;base64,AAAA", "filename": "a.pdf"},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
    ]}])
    assert chat["messages"][0]["content"] == [
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA", "filename": "a.pdf"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
    ]


def test_assistant_output_text_and_refusal_parts_become_assistant_content() -> None:
    chat = _chat(input=[
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Hello", "annotations": [], "logprobs": []},
                     {"type": "output_text", "text": " there", "annotations": []}]},
        {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]},
    ])
    assert chat["messages"] == [
        {"role": "assistant", "content": "Hello there"},
        {"role": "assistant", "content": None, "refusal": "No."},
    ]


def test_consecutive_function_calls_are_one_assistant_message_and_outputs_are_tool_messages() -> None:
    chat = _chat(input=[
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hmm"}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather",
         "arguments": '{"city":"Paris"}', "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_weather",
         "arguments": '{"city":"Rome"}', "status": "completed"},
        {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "rainy"}]},
        {"type": "function_call", "call_id": "call_c", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
    ])
    assert chat["messages"] == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": None, "reasoning": "hmm", "reasoning_content": "hmm", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": "rainy"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}},
        ]},
    ]


def test_calls_after_assistant_text_join_that_assistant_message() -> None:
    chat = _chat(input=[
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]},
        {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{}"},
    ])
    assert chat["messages"] == [{"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}]


def test_function_tools_take_the_chat_shape() -> None:
    tool = {"type": "function", "name": "ping", "parameters": {"type": "object", "properties": {}}, "strict": None}
    chat = _chat(tools=[WEATHER_TOOL, tool], parallel_tool_calls=False)
    assert chat["tools"] == [
        {"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city",
                                          "parameters": WEATHER_TOOL["parameters"], "strict": True}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
    ]
    assert chat["parallel_tool_calls"] is False


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"type": "function", "name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_forms(tool_choice, expected) -> None:
    assert _chat(tools=[WEATHER_TOOL], tool_choice=tool_choice)["tool_choice"] == expected


def test_allowed_tools_narrows_the_tools_and_keeps_its_mode() -> None:
    other = {**WEATHER_TOOL, "name": "get_time"}
    chat = _chat(tools=[WEATHER_TOOL, other], tool_choice={
        "type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]})
    assert [tool["function"]["name"] for tool in chat["tools"]] == ["get_time"]
    assert chat["tool_choice"] == "required"


def test_without_tools_tool_settings_are_not_sent() -> None:
    chat = _chat(tool_choice="auto", parallel_tool_calls=True, tools=[])
    assert "tools" not in chat and "tool_choice" not in chat and "parallel_tool_calls" not in chat


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"tools": [WEATHER_TOOL], "tool_choice": {"type": "web_search_preview"}}, "tool_choice"),
        ({"input": [{"type": "web_search_call", "id": "ws_1", "status": "completed"}]}, "input[0]"),
        ({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file_1"}]}]}, "input[0].content[0]"),
        ({"input": [{"role": "system", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}]},
         "input[0].content"),
        ({"input": [{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image"}]}]},
         "input[0].output"),
        ({"text": {"format": {"type": "grammar"}}}, "text.format.type"),
    ],
)
def test_what_chat_cannot_carry_is_refused_with_its_param(fields, param) -> None:
    with pytest.raises(InvalidRequest) as caught:
        _chat(**fields)
    assert caught.value.param == param and caught.value.http_status == 400


def test_max_output_tokens_becomes_max_tokens() -> None:
    chat = _chat(max_output_tokens=64)
    assert chat["max_tokens"] == 64 and "max_output_tokens" not in chat


def test_json_schema_format_becomes_response_format() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    chat = _chat(text={"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": True},
                       "verbosity": "low"})
    assert chat["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    assert chat["verbosity"] == "low" and "text" not in chat


def test_json_object_format_and_the_default_text_format() -> None:
    assert _chat(text={"format": {"type": "json_object"}})["response_format"] == {"type": "json_object"}
    assert "response_format" not in _chat(text={"format": {"type": "text"}})


def test_reasoning_effort_becomes_reasoning_effort() -> None:
    chat = _chat(reasoning={"effort": "high", "summary": "auto"})
    assert chat["reasoning_effort"] == "high" and "reasoning" not in chat


def test_top_logprobs_asks_for_logprobs() -> None:
    chat = _chat(top_logprobs=3)
    assert chat["logprobs"] is True and chat["top_logprobs"] == 3
    assert _chat(include=["message.output_text.logprobs"])["logprobs"] is True
    assert "logprobs" not in _chat(top_logprobs=0)


def test_streaming_asks_for_usage_and_replaces_responses_stream_options() -> None:
    chat = _chat(stream=True, stream_options={"include_obfuscation": False})
    assert chat["stream"] is True and chat["stream_options"] == {"include_usage": True}
    plain = _chat(stream=False)
    assert plain["stream"] is False and "stream_options" not in plain


def test_safety_identifier_fills_user_and_user_wins() -> None:
    assert _chat(safety_identifier="abc")["user"] == "abc"
    assert _chat(safety_identifier="abc", user="u1")["user"] == "u1"


def test_stateful_keys_are_dropped_and_unknown_keys_are_forwarded() -> None:
    chat = _chat(store=False, truncation="auto", include=[], previous_response_id="resp_1", conversation="conv_1",
                 metadata={"a": "b"}, background=False, max_tool_calls=3, n=2,
                 temperature=0.2, top_p=0.9, top_k=40, seed=7, prompt_cache_key="k", service_tier="auto")
    for key in ("store", "truncation", "include", "previous_response_id", "conversation", "metadata", "background",
                "max_tool_calls", "n"):
        assert key not in chat
    assert {key: chat[key] for key in ("temperature", "top_p", "top_k", "seed", "prompt_cache_key", "service_tier")} == {
        "temperature": 0.2, "top_p": 0.9, "top_k": 40, "seed": 7, "prompt_cache_key": "k", "service_tier": "auto"}
