"""A finished turn's Responses response → Anthropic `Message`, checked with the anthropic SDK's own types.

Responses are built the way the executor builds them: `build_response` around
the round loop's public output, gateway calls in their public form from
`GatewayCallView`.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest
from agentic_core.errors import UpstreamTimeout, UpstreamUnavailable
from agentic_core.ids import new_item_id, new_response_id
from agentic_core.messages import message_from_response, responses_request_from_messages
from agentic_core.responses.request import validate_create_request
from agentic_core.responses.response import build_response
from agentic_core.tools.protocol import ToolResult
from agentic_core.tools.public_items import GatewayCallView
from agentic_core.tools.registry import build_registry
from anthropic.types import Message

MODEL = "claude-compatible"
WEATHER_TOOL = {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
ECHO = {"type": "operator", "name": "echo"}
ECHO_DEFINITION = {"type": "function", "name": "echo", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}


def _request(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": "Hi"}], **fields}


def _response(request: dict[str, Any], output: list[dict[str, Any]], *, status: str = "completed",
              usage: dict[str, Any] | None = None, incomplete_details: dict[str, Any] | None = None,
              error: dict[str, Any] | None = None) -> dict[str, Any]:
    parsed = validate_create_request(responses_request_from_messages(request))
    return build_response(parsed, response_id=new_response_id(), created_at=int(time.time()), status=status, output=output,
                          usage=usage if usage is not None else _usage(30, 12), incomplete_details=incomplete_details,
                          error=error)


def _usage(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens}


def _message(text: str) -> dict[str, Any]:
    return {"id": new_item_id("message"), "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


def _call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": new_item_id("function_call"), "type": "function_call", "call_id": f"call_{name}", "name": name,
            "arguments": arguments, "status": "completed"}


def _reasoning(text: str) -> dict[str, Any]:
    return {"id": new_item_id("reasoning"), "type": "reasoning", "summary": [],
            "content": [{"type": "reasoning_text", "text": text}], "status": "completed"}


def _gateway_items(tools: list[dict[str, Any]], call: dict[str, Any], result: ToolResult, index: int = 0) -> list[dict[str, Any]]:
    """The public items the round loop shows for one executed gateway call."""
    registry = build_registry(tools, {"echo": ECHO_DEFINITION})
    binding = registry.binding(call["name"])
    assert binding is not None
    items, _ = GatewayCallView(binding, call, {"web_search_call.action.sources"}).closing(index, result)
    return items


def _searched(queries: list[str], urls: list[str]) -> list[dict[str, Any]]:
    call = _call("web_search", orjson.dumps({"queries": queries}).decode())
    result = ToolResult.ok(call["call_id"], "results", queries=queries, sources=[{"type": "url", "url": url} for url in urls])
    return _gateway_items([{"type": "web_search"}], call, result)


def _translate(request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    message = message_from_response(response, request)
    Message.model_validate(message)
    return message


# -- content ----------------------------------------------------------------------------


def test_a_text_answer_is_one_text_block_ending_the_turn() -> None:
    request = _request()
    response = _response(request, [_message("Hello there.")])
    message = _translate(request, response)
    assert message == {
        "id": "msg_" + response["id"].removeprefix("resp_"), "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "Hello there."}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 12},
    }


def test_the_model_is_the_one_the_client_asked_for() -> None:
    request = _request()
    response = {**_response(request, [_message("x")]), "model": "served-name"}
    assert _translate(request, response)["model"] == MODEL


def test_reasoning_comes_first_as_a_thinking_block() -> None:
    request = _request()
    message = _translate(request, _response(request, [_reasoning("Let me think."), _message("42")]))
    assert message["content"] == [{"type": "thinking", "thinking": "Let me think.", "signature": ""},
                                  {"type": "text", "text": "42"}]


def test_a_reasoning_summary_is_shown_when_there_is_no_reasoning_text() -> None:
    request = _request()
    reasoning = {"id": new_item_id("reasoning"), "type": "reasoning", "encrypted_content": "sig",
                 "summary": [{"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Then."}]}
    (block,) = _translate(request, _response(request, [reasoning]))["content"]
    assert block == {"type": "thinking", "thinking": "First.\n\nThen.", "signature": "sig"}


def test_empty_text_and_empty_reasoning_make_no_blocks() -> None:
    request = _request()
    assert _translate(request, _response(request, [_reasoning(""), _message("")]))["content"] == []


def test_a_refusal_is_a_text_block_with_stop_reason_refusal() -> None:
    request = _request()
    refusal = {**_message(""), "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    message = _translate(request, _response(request, [refusal]))
    assert message["content"] == [{"type": "text", "text": "I can't help with that."}]
    assert message["stop_reason"] == "refusal"


# -- client tools -------------------------------------------------------------------------


def test_a_client_call_is_a_tool_use_block_and_end_turn_is_corrected_to_tool_use() -> None:
    request = _request(tools=[WEATHER_TOOL])
    # The round loop reports a round with a client call as `completed`: the model said end_turn (or nothing).
    response = _response(request, [_message("Checking."), _call("get_weather", '{"city": "Paris"}')])
    message = _translate(request, response)
    assert message["content"][1] == {"type": "tool_use", "id": "call_get_weather", "name": "get_weather",
                                     "input": {"city": "Paris"}}
    assert message["stop_reason"] == "tool_use"


def test_arguments_that_are_not_a_json_object_become_an_empty_input() -> None:
    request = _request(tools=[WEATHER_TOOL])
    message = _translate(request, _response(request, [_call("get_weather", "not json")]))
    assert message["content"][0]["input"] == {}


# -- gateway tools ------------------------------------------------------------------------


def test_web_search_calls_become_server_tool_use_and_results_with_their_sources() -> None:
    request = _request(tools=[WEB_SEARCH])
    output = _searched(["python asyncio"], ["https://docs.python.org/3/library/asyncio.html", "https://example.com/a"])
    output += [_message("Asyncio is Python's async I/O library.")]
    response = _response(request, output)
    message = _translate(request, response)
    search_id = "srvtoolu_" + output[0]["id"].removeprefix("ws_")
    assert message["content"][:2] == [
        {"type": "server_tool_use", "id": search_id, "name": "web_search", "input": {"query": "python asyncio"}},
        {"type": "web_search_tool_result", "tool_use_id": search_id, "content": [
            {"type": "web_search_result", "url": "https://docs.python.org/3/library/asyncio.html",
             "title": "https://docs.python.org/3/library/asyncio.html", "encrypted_content": ""},
            {"type": "web_search_result", "url": "https://example.com/a", "title": "https://example.com/a", "encrypted_content": ""},
        ]},
    ]
    assert message["content"][2]["type"] == "text"
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}


def test_a_multi_query_search_keeps_every_query() -> None:
    request = _request(tools=[WEB_SEARCH])
    message = _translate(request, _response(request, _searched(["a", "b"], [])))
    assert message["content"][0]["input"] == {"query": "a", "queries": ["a", "b"]}
    assert message["content"][1]["content"] == []


def test_a_failed_search_is_a_web_search_error_and_is_not_counted() -> None:
    request = _request(tools=[WEB_SEARCH])
    call = _call("web_search", '{"queries": ["down"]}')
    output = _gateway_items([{"type": "web_search"}], call, ToolResult.error(call["call_id"], "provider down"))
    message = _translate(request, _response(request, output + [_message("Search failed.")]))
    assert message["content"][1]["content"] == {"type": "web_search_tool_result_error", "error_code": "unavailable"}
    assert "server_tool_use" not in message["usage"]


def test_operator_calls_and_their_outputs_are_hidden() -> None:
    request = _request(tools=[ECHO, WEATHER_TOOL])
    call = _call("echo", '{"text": "ping"}')
    output = _gateway_items([ECHO], call, ToolResult.ok(call["call_id"], {"echoed": "ping"}))
    assert [item["type"] for item in output] == ["function_call", "function_call_output"]
    message = _translate(request, _response(request, output + [_message("The tool said ping.")]))
    assert message["content"] == [{"type": "text", "text": "The tool said ping."}]
    assert message["stop_reason"] == "end_turn"


def test_a_mixed_round_hides_the_gateway_call_and_returns_the_client_call() -> None:
    request = _request(tools=[ECHO, WEATHER_TOOL])
    echo = _call("echo", '{"text": "x"}')
    output = [_call("get_weather", "{}"), *_gateway_items([ECHO], echo, ToolResult.ok(echo["call_id"], "x"), index=1)]
    message = _translate(request, _response(request, output))
    assert [block["type"] for block in message["content"]] == ["tool_use"]
    assert message["stop_reason"] == "tool_use"


def test_an_answered_call_is_hidden_even_when_its_tool_is_not_named_in_the_request() -> None:
    request = _request()
    call = _call("lookup", "{}")
    output = [call, {"id": new_item_id("function_call_output"), "type": "function_call_output", "call_id": call["call_id"],
                     "output": "done", "status": "completed"}, _message("ok")]
    assert _translate(request, _response(request, output))["content"] == [{"type": "text", "text": "ok"}]


def test_code_interpreter_and_mcp_items_are_hidden() -> None:
    request = _request()
    output = [{"id": new_item_id("code_interpreter_call"), "type": "code_interpreter_call", "status": "completed", "code": "1+1",
               "container_id": "cntr_auto", "outputs": None},
              {"id": new_item_id("mcp_call"), "type": "mcp_call", "status": "completed", "server_label": "s", "name": "t",
               "arguments": "{}", "output": "x", "error": None},
              _message("2")]
    assert _translate(request, _response(request, output))["content"] == [{"type": "text", "text": "2"}]


# -- stop reasons and usage --------------------------------------------------------------


def test_running_out_of_tokens_is_max_tokens_even_with_a_cut_off_call() -> None:
    request = _request(tools=[WEATHER_TOOL])
    response = _response(request, [_call("get_weather", '{"ci')], status="incomplete",
                         incomplete_details={"reason": "max_output_tokens"})
    assert _translate(request, response)["stop_reason"] == "max_tokens"


def test_the_tool_round_limit_pauses_the_turn() -> None:
    request = _request(tools=[ECHO])
    call = _call("echo", "{}")
    response = _response(request, _gateway_items([ECHO], call, ToolResult.ok(call["call_id"], "x")), status="incomplete",
                         incomplete_details={"reason": "max_tool_rounds"})
    message = _translate(request, response)
    assert message["stop_reason"] == "pause_turn" and message["content"] == []


def test_usage_splits_cached_input_from_fresh_input() -> None:
    request = _request()
    message = _translate(request, _response(request, [_message("x")], usage=_usage(100, 7, cached=60)))
    assert message["usage"] == {"input_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 60,
                                "output_tokens": 7}


def test_a_response_without_usage_reports_zeros() -> None:
    request = _request()
    response = {**_response(request, [_message("x")]), "usage": None}
    assert _translate(request, response)["usage"]["output_tokens"] == 0


@pytest.mark.parametrize(("code", "error_class", "status"), [("upstream_incomplete", UpstreamUnavailable, 502),
                                                             ("upstream_timeout", UpstreamTimeout, 504)])
def test_a_failed_turn_raises_the_error_to_answer_with(code: str, error_class: type, status: int) -> None:
    request = _request()
    response = _response(request, [], status="failed", error={"code": code, "message": "The model server went away."})
    with pytest.raises(error_class) as caught:
        message_from_response(response, request)
    assert caught.value.http_status == status and caught.value.message == "The model server went away."
