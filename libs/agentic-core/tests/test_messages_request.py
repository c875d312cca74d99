"""Anthropic Messages request → Responses create body: every field, every block type, and validation."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic_core.chat import chat_request_from_responses
from agentic_core.errors import InvalidRequest
from agentic_core.messages import count_tokens_reply, count_tokens_request, responses_request_from_messages
from agentic_core.responses.items import model_input, normalize_input
from agentic_core.responses.request import validate_create_request
from agentic_core.tools.registry import build_registry, model_tool_choice

MODEL = "smollm2"
WEATHER_TOOL = {"name": "get_weather", "description": "Current weather for a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
PNG = "iVBORw0KGgo="


def _body(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}], **fields}


def _translate(**fields: Any) -> dict[str, Any]:
    request = responses_request_from_messages(_body(**fields))
    # Whatever we produce must pass the executor's own validation of a Responses request.
    validate_create_request(request)
    normalize_input(request["input"])
    return request


def _invalid(body: dict[str, Any]) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        responses_request_from_messages(body)
    return caught.value


def _input(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    return _translate(messages=list(messages))["input"]


# -- top-level fields -----------------------------------------------------------------


def test_a_minimal_request_is_a_stateless_responses_request() -> None:
    assert _translate() == {
        "model": MODEL,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "max_output_tokens": 64,
        "store": False,
    }


def test_system_string_and_text_blocks_become_instructions() -> None:
    assert _translate(system="Be brief.")["instructions"] == "Be brief."
    blocks = [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind.", "cache_control": {"type": "ephemeral"}}]
    assert _translate(system=blocks)["instructions"] == "Be brief.\nBe kind."


def test_sampling_fields_map_and_stop_sequences_are_forwarded_as_stop() -> None:
    request = _translate(temperature=0.2, top_p=0.9, top_k=40, stop_sequences=["\n\nHuman:"])
    assert (request["temperature"], request["top_p"], request["top_k"], request["stop"]) == (0.2, 0.9, 40, ["\n\nHuman:"])
    assert "stop" not in _translate(stop_sequences=[])


def test_metadata_user_id_is_the_safety_identifier() -> None:
    request = _translate(metadata={"user_id": "user-42"})
    assert request["safety_identifier"] == "user-42" and "metadata" not in request


def test_a_user_id_longer_than_openais_limit_becomes_a_stable_digest() -> None:
    long_id = '{"device_id":"' + "d" * 64 + '","account_uuid":"","session_id":"' + "s" * 36 + '"}'
    first = _translate(metadata={"user_id": long_id})
    again = _translate(metadata={"user_id": long_id})
    other = _translate(metadata={"user_id": long_id + " "})
    assert len(first["safety_identifier"]) == 64
    assert first["safety_identifier"] == again["safety_identifier"] != other["safety_identifier"]


def test_stream_is_kept_and_store_is_always_false() -> None:
    assert _translate(stream=True)["stream"] is True
    assert _translate(stream=False)["stream"] is False
    assert _translate()["store"] is False


def test_anthropic_only_settings_are_accepted_and_not_forwarded() -> None:
    request = _translate(thinking={"type": "enabled", "budget_tokens": 1024}, service_tier="auto",
                         cache_control={"type": "ephemeral"}, speed="standard")
    assert not {"thinking", "service_tier", "cache_control", "speed"} & request.keys()


def test_unknown_keys_are_forwarded_like_model_server_extras() -> None:
    request = _translate(seed=7, repetition_penalty=1.1, container=None)
    assert (request["seed"], request["repetition_penalty"]) == (7, 1.1) and "container" not in request


def test_output_config_maps_to_reasoning_effort_and_a_json_schema_format() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    request = _translate(output_config={"effort": "max", "format": {"type": "json_schema", "schema": schema}})
    assert request["reasoning"] == {"effort": "high"}
    assert request["text"] == {"format": {"type": "json_schema", "name": "output", "schema": schema}}


@pytest.mark.parametrize("key", ["previous_response_id", "conversation", "input", "store", "include"])
def test_responses_only_keys_are_refused(key: str) -> None:
    error = _invalid(_body(**{key: "x"}))
    assert error.param == key and "not a Messages API parameter" in error.message


@pytest.mark.parametrize("key", ["container"])
def test_features_the_gateway_lacks_are_refused(key: str) -> None:
    assert _invalid(_body(**{key: [{"type": "url"}]})).code == "unsupported_parameter"


# -- message content ----------------------------------------------------------------


def test_user_text_and_images_become_one_message_with_data_urls() -> None:
    (item,) = _input({"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]})
    assert item == {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "auto"},
    ]}


def test_documents_become_files_or_text() -> None:
    (item,) = _input({"role": "user", "content": [
        {"type": "document", "title": "report.pdf", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
        {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "chunk"}]}},
    ]})
    assert item["content"] == [
        {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBE"},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_text", "text": "plain words"},
        {"type": "input_text", "text": "chunk"},
    ]


def test_assistant_text_is_output_text() -> None:
    _, item = _input({"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]})
    assert item == {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hello", "annotations": [], "logprobs": []}]}


def test_system_role_messages_are_kept_as_system_messages() -> None:
    _, item = _input({"role": "user", "content": "Hi"}, {"role": "system", "content": "Answer in French."})
    assert item == {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Answer in French."}]}


def test_tool_use_and_tool_result_become_a_call_and_its_output_in_order() -> None:
    items = _input(
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should call the tool.", "signature": "c2ln"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18°C"}, {"type": "text", "text": "sunny"}]},
            {"type": "text", "text": "And tomorrow?"},
        ]},
    )
    assert [item["type"] for item in items] == ["message", "reasoning", "message", "function_call", "function_call_output",
                                                "message"]
    assert items[1] == {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "I should call the tool."}]}
    assert items[3] == {"type": "function_call", "call_id": "toolu_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert items[4] == {"type": "function_call_output", "call_id": "toolu_1", "output": "18°C\nsunny"}
    assert items[5]["content"] == [{"type": "input_text", "text": "And tomorrow?"}]


def test_a_whole_conversation_reaches_a_chat_only_model_server_intact() -> None:
    request = _translate(system="Be brief.", tools=[WEATHER_TOOL], stop_sequences=["END"], top_k=5, messages=[
        {"role": "user", "content": [{"type": "text", "text": "Weather?"},
                                     {"type": "image", "source": {"type": "url", "url": "https://example.com/sky.png"}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Call it.", "signature": "s"},
                                          {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "cold"}]},
    ])
    chat = chat_request_from_responses({**request, "input": model_input(normalize_input(request["input"]))})
    assert [message["role"] for message in chat["messages"]] == ["system", "user", "assistant", "tool"]
    assert chat["messages"][2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Oslo"}'}
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "t1", "content": "cold"}
    assert (chat["stop"], chat["top_k"], chat["max_tokens"]) == (["END"], 5, 64)


def test_a_tool_result_error_is_prefixed_like_the_gateways_own_tool_errors() -> None:
    _, _, output = _input(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "city unknown", "is_error": True}]},
    )
    assert output["output"] == "Error: city unknown"


def test_a_tool_result_with_an_image_keeps_its_parts() -> None:
    *_, output = _input(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]},
    )
    assert output["output"] == [{"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}]


def test_server_tool_blocks_and_redacted_thinking_of_earlier_turns_are_dropped() -> None:
    items = _input(
        {"role": "user", "content": "Search"},
        {"role": "assistant", "content": [
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://a.example", "title": "A", "encrypted_content": "x"}]},
            {"type": "text", "text": "Found it."},
        ]},
    )
    assert items[1] == {"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": "Found it.", "annotations": [], "logprobs": []}]}
    assert len(items) == 2


def test_an_unknown_block_type_is_refused_naming_the_block() -> None:
    error = _invalid(_body(messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                                     {"role": "user", "content": [{"type": "text", "text": "c"}, {"type": "hologram"}]}]))
    assert error.param == "messages.2.content.1.type" and "hologram" in error.message


def test_a_block_in_the_wrong_role_is_refused() -> None:
    error = _invalid(_body(messages=[{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]}]))
    assert error.param == "messages.0.content.0.type" and "not allowed in user messages" in error.message


@pytest.mark.parametrize(("messages", "param"), [
    ([], "messages"),
    ("hello", "messages"),
    ([{"role": "robot", "content": "x"}], "messages.0.role"),
    ([{"role": "user"}], "messages.0.content"),
    ([{"role": "user", "content": 5}], "messages.0.content"),
    ([{"role": "user", "content": [{"text": "no type"}]}], "messages.0.content.0.type"),
    ([{"role": "user", "content": [{"type": "text"}]}], "messages.0.content.0.text"),
    ([{"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}], "messages.0.content.0.source.type"),
    ([{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "text/html", "data": "x"}}]}],
     "messages.0.content.0.source.media_type"),
    ([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}], "messages.0.content.0.tool_use_id"),
    ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": "{}"}]}], "messages.0.content.0.input"),
])
def test_malformed_messages_are_refused_with_a_dotted_param(messages: Any, param: str) -> None:
    error = _invalid(_body(messages=messages))
    assert error.param == param and error.http_status == 400


@pytest.mark.parametrize(("fields", "param"), [
    ({"max_tokens": None}, "max_tokens"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"max_tokens": True}, "max_tokens"),
    ({"model": ""}, "model"),
    ({"temperature": 1.5}, "temperature"),
    ({"top_k": -1}, "top_k"),
    ({"stop_sequences": "STOP"}, "stop_sequences"),
    ({"metadata": {"user_id": 5}}, "metadata.user_id"),
    ({"stream": "yes"}, "stream"),
    ({"system": [{"type": "image"}]}, "system.0.type"),
])
def test_malformed_fields_are_refused(fields: dict[str, Any], param: str) -> None:
    body = {key: value for key, value in _body(**fields).items() if value is not None}
    assert _invalid(body).param == param


def test_a_missing_model_or_messages_is_a_missing_parameter() -> None:
    assert _invalid({"max_tokens": 5, "messages": []}).code == "missing_required_parameter"
    assert _invalid({"model": MODEL, "max_tokens": 5}).param == "messages"


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        responses_request_from_messages([])  # type: ignore[arg-type]


# -- tools ----------------------------------------------------------------------------


def test_client_tools_become_non_strict_function_tools() -> None:
    (tool,) = _translate(tools=[WEATHER_TOOL])["tools"]
    assert tool == {"type": "function", "name": "get_weather", "description": "Current weather for a city",
                    "parameters": WEATHER_TOOL["input_schema"], "strict": False}
    (custom,) = _translate(tools=[{**WEATHER_TOOL, "type": "custom", "strict": True}])["tools"]
    assert custom["strict"] is True


def test_the_web_search_server_tool_becomes_the_gateways_web_search() -> None:
    location = {"type": "approximate", "city": "Paris", "country": "FR", "timezone": None}
    request = _translate(tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3,
                                 "allowed_domains": ["python.org"], "user_location": location}])
    assert request["tools"] == [{"type": "web_search", "filters": {"allowed_domains": ["python.org"]},
                                 "user_location": {"type": "approximate", "city": "Paris", "country": "FR"}}]
    assert request["max_tool_calls"] == 3
    # The public web_search_call items carry their sources only when asked; web_search_tool_result needs them.
    assert request["include"] == ["web_search_call.action.sources"]
    registry = build_registry(request["tools"])
    assert registry.is_gateway_call("web_search")


def test_web_search_options_the_gateway_cannot_honour_are_refused() -> None:
    error = _invalid(_body(tools=[{"type": "web_search_20250305", "name": "web_search", "blocked_domains": ["a.com"]}]))
    assert error.param == "tools.0.blocked_domains"
    assert _invalid(_body(tools=[{"type": "web_search_20250305", "name": "search"}])).param == "tools.0.name"
    assert _invalid(_body(tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 0}])).param == "tools.0.max_uses"


def test_operator_tools_pass_through_unchanged() -> None:
    operator = {"type": "operator", "name": "echo"}
    assert _translate(tools=[operator, WEATHER_TOOL])["tools"][0] == operator


@pytest.mark.parametrize("tool_type", ["bash_20250124", "text_editor_20250728", "code_execution_20250825", "web_fetch_20250910"])
def test_anthropic_tools_the_gateway_does_not_run_are_refused(tool_type: str) -> None:
    error = _invalid(_body(tools=[{"type": tool_type, "name": "x"}]))
    assert error.param == "tools.0.type" and error.code == "unsupported_tool"


@pytest.mark.parametrize(("tool", "param"), [
    ({"input_schema": {}}, "tools.0.name"),
    ({"name": "x"}, "tools.0.input_schema"),
    ({"name": "x", "input_schema": {}, "description": 5}, "tools.0.description"),
])
def test_malformed_client_tools_are_refused(tool: dict[str, Any], param: str) -> None:
    assert _invalid(_body(tools=[tool])).param == param


@pytest.mark.parametrize(("choice", "expected"), [
    ({"type": "auto"}, "auto"),
    ({"type": "any"}, "required"),
    ({"type": "none"}, "none"),
    ({"type": "tool", "name": "get_weather"}, {"type": "function", "name": "get_weather"}),
    ({"type": "tool", "name": "web_search"}, {"type": "web_search"}),
])
def test_tool_choice_maps_to_the_responses_choice(choice: dict[str, Any], expected: Any) -> None:
    request = _translate(tools=[WEATHER_TOOL, {"type": "web_search_20250305", "name": "web_search"}], tool_choice=choice)
    assert request["tool_choice"] == expected and "parallel_tool_calls" not in request
    # The executor accepts it against the same tools.
    model_tool_choice(request["tool_choice"], build_registry(request["tools"]))


def test_disable_parallel_tool_use_turns_parallel_tool_calls_off() -> None:
    request = _translate(tools=[WEATHER_TOOL], tool_choice={"type": "any", "disable_parallel_tool_use": True})
    assert request["tool_choice"] == "required" and request["parallel_tool_calls"] is False


@pytest.mark.parametrize(("choice", "param"), [
    ({"type": "tool", "name": "missing"}, "tool_choice.name"),
    ({"type": "sometimes"}, "tool_choice.type"),
    ("auto", "tool_choice"),
    ({"type": "auto", "disable_parallel_tool_use": "yes"}, "tool_choice.disable_parallel_tool_use"),
])
def test_malformed_tool_choices_are_refused(choice: Any, param: str) -> None:
    assert _invalid(_body(tools=[WEATHER_TOOL], tool_choice=choice)).param == param


def test_forcing_a_tool_without_tools_is_refused() -> None:
    assert _invalid(_body(tool_choice={"type": "any"})).param == "tool_choice"


# -- count_tokens ---------------------------------------------------------------------


def test_count_tokens_carries_what_the_model_would_read_and_no_generation_settings() -> None:
    body = {"model": MODEL, "system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}], "tools": [WEATHER_TOOL],
            "tool_choice": {"type": "auto"}}
    request = count_tokens_request(body)
    assert request == {
        "model": MODEL, "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        "tools": [{"type": "function", "name": "get_weather", "description": "Current weather for a city",
                   "parameters": WEATHER_TOOL["input_schema"], "strict": False}],
        "tool_choice": "auto", "store": False,
    }
    validate_create_request(request)


def test_count_tokens_needs_no_max_tokens_but_validates_the_messages() -> None:
    assert count_tokens_request({"model": MODEL, "messages": [{"role": "user", "content": "x"}]})["input"]
    with pytest.raises(InvalidRequest) as caught:
        count_tokens_request({"model": MODEL, "messages": [{"role": "user", "content": [{"type": "nope"}]}]})
    assert caught.value.param == "messages.0.content.0.type"


def test_count_tokens_reply_is_anthropics_shape() -> None:
    from anthropic.types import MessageTokensCount

    reply = count_tokens_reply(17)
    assert MessageTokensCount.model_validate(reply).input_tokens == 17
    assert orjson.dumps(reply) == b'{"input_tokens":17}'


def test_the_mcp_connector_becomes_gateway_mcp_tools() -> None:
    servers = [
        {"type": "url", "url": "https://mcp.example.com/mcp", "name": "docs", "authorization_token": "t0k",
         "tool_configuration": {"enabled": True, "allowed_tools": ["search"]}},
        {"type": "url", "url": "https://off.example.com/mcp", "name": "off", "tool_configuration": {"enabled": False}},
    ]
    request = _translate(mcp_servers=servers)
    assert request["tools"] == [{"type": "mcp", "server_label": "docs", "server_url": "https://mcp.example.com/mcp",
                                 "require_approval": "never", "authorization": "t0k", "allowed_tools": ["search"]}]


@pytest.mark.parametrize("servers", ["x", [{"type": "url", "url": "https://a"}], [{"type": "stdio", "name": "a"}]])
def test_malformed_mcp_connectors_are_refused(servers) -> None:
    assert _invalid(_body(mcp_servers=servers)).param.startswith("mcp_servers")
