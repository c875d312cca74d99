"""Our public Responses stream → Anthropic Messages stream events.

Streams are produced the way the executor produces them (rounds.py in
miniature): vLLM-shaped upstream events — real captures where we have them —
through `StreamTranslator` with gateway calls hidden, the gateway calls'
public lifecycle from `GatewayCallView`, and a terminal event around
`build_response`. Every Anthropic event is validated with the anthropic SDK's
types, and the stream is folded by the SDK's own accumulator into the same
`Message` the JSON path returns.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from agentic_core.ids import new_id, new_response_id
from agentic_core.messages import MessagesStreamTranslator, message_from_response, responses_request_from_messages
from agentic_core.responses.request import validate_create_request
from agentic_core.responses.response import build_response
from agentic_core.responses.stream import EventSequencer, StreamTranslator
from agentic_core.sse import SseParser
from agentic_core.tools.protocol import ToolResult
from agentic_core.tools.public_items import GatewayCallView
from agentic_core.tools.registry import build_registry
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
MODEL = "smollm2"
STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
WEATHER_TOOL = {"name": "get_weather", "description": "Get the current weather for a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
ECHO = {"type": "operator", "name": "echo"}
ECHO_DEFINITION = {"type": "function", "name": "echo", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}

Event = tuple[str, dict[str, Any]]


# -- upstream rounds (vLLM's Responses wire shapes, see tests/fixtures) -------------------


def _pieces(text: str) -> list[str]:
    pieces, current = [], ""
    for char in text:
        current += char
        if char in " ,.":
            pieces.append(current)
            current = ""
    return [*pieces, current] if current else pieces


def _usage(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens}


def _upstream_round(*parts: tuple[str, ...], status: str = "completed", usage: dict[str, Any] | None = None,
                    stream_deltas: bool = True) -> list[dict[str, Any]]:
    """One generation: parts are ("text", t), ("reasoning", t) or ("call", name, arguments)."""
    response_id = f"resp_{new_id('x')[-16:]}"
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}]
    done_items = []
    for index, part in enumerate(parts):
        kind, item_id = part[0], f"up_{index}_{new_id('x')[-8:]}"
        base = {"item_id": item_id, "output_index": index}
        if kind == "call":
            _, name, arguments = part
            item = {"arguments": "", "call_id": f"chatcmpl-tool-{item_id}", "name": name, "type": "function_call", "id": item_id,
                    "status": "in_progress"}
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
            events += [{"type": "response.function_call_arguments.delta", "delta": piece, **base}
                       for piece in (_pieces(arguments) if stream_deltas else [])]
            events.append({"type": "response.function_call_arguments.done", "arguments": arguments, "name": name, **base})
            done = {**item, "arguments": arguments, "status": "completed"}
        elif kind == "reasoning":
            text = part[1]
            item = {"id": item_id, "type": "reasoning", "summary": [], "content": None, "encrypted_content": None,
                    "status": "in_progress"}
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
            events.append({"type": "response.content_part.added", "content_index": 0, "part": {"type": "reasoning_text", "text": ""},
                           **base})
            events += [{"type": "response.reasoning_text.delta", "content_index": 0, "delta": piece, **base}
                       for piece in (_pieces(text) if stream_deltas else [])]
            events.append({"type": "response.reasoning_text.done", "content_index": 0, "text": text, **base})
            events.append({"type": "response.content_part.done", "content_index": 0, "part": {"type": "reasoning_text", "text": text},
                           **base})
            done = {**item, "content": [{"type": "reasoning_text", "text": text}], "status": "completed"}
        else:
            text = part[1]
            item = {"id": item_id, "type": "message", "role": "assistant", "content": [], "status": "in_progress"}
            events.append({"type": "response.output_item.added", "output_index": index, "item": item})
            empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            events.append({"type": "response.content_part.added", "content_index": 0, "part": empty, **base})
            events += [{"type": "response.output_text.delta", "content_index": 0, "delta": piece, "logprobs": [], **base}
                       for piece in (_pieces(text) if stream_deltas else [])]
            events.append({"type": "response.output_text.done", "content_index": 0, "text": text, "logprobs": [], **base})
            events.append({"type": "response.content_part.done", "content_index": 0, "part": {**empty, "text": text}, **base})
            done = {**item, "content": [{**empty, "text": text}], "status": "completed"}
        events.append({"type": "response.output_item.done", "output_index": index, "item": done})
        done_items.append(done)
    incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
    events.append({"type": f"response.{status}", "response": {
        "id": response_id, "status": status, "output": done_items, "usage": usage or _usage(30, 10),
        "incomplete_details": incomplete}})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _recorded(name: str) -> list[dict[str, Any]]:
    parser = SseParser()
    return [orjson.loads(event.data) for event in parser.feed((FIXTURES / name).read_bytes()) + parser.close()]


# -- the executor's streaming round loop, in miniature ----------------------------------


class _Turn:
    """What rounds.py and turn.py emit for a streamed turn, built from the same agentic_core pieces."""

    def __init__(self, messages_request: dict[str, Any]) -> None:
        self.messages_request = messages_request
        self.request = validate_create_request(responses_request_from_messages(messages_request))
        self.registry = build_registry(self.request.tools, {"echo": ECHO_DEFINITION})
        self.include = set(self.request.include or [])
        self.sequencer = EventSequencer()
        self.response_id = new_response_id()
        self.public_output: list[dict[str, Any]] = []
        self.usage: dict[str, Any] | None = None
        self.events: list[Event] = []
        opening = self._response("in_progress")
        for event_type in ("response.created", "response.in_progress"):
            self._emit({"type": event_type, "response": opening})

    def _is_gateway(self, item: dict[str, Any]) -> bool:
        return item.get("type") == "function_call" and self.registry.is_gateway_call(item.get("name"))

    def _emit(self, event: dict[str, Any]) -> None:
        event_type, _, data = self.sequencer.emit(event)
        self.events.append((event_type, orjson.loads(data)))

    def _response(self, status: str, **fields: Any) -> dict[str, Any]:
        return build_response(self.request, response_id=self.response_id, created_at=int(time.time()), status=status,
                              output=list(self.public_output), usage=self.usage if status != "in_progress" else None, **fields)

    def round(self, upstream: list[dict[str, Any]], results: dict[str, ToolResult] | None = None) -> str:
        """Runs one round; returns its status (`continue` when gateway calls ran)."""
        translator = StreamTranslator(self.sequencer, index_offset=len(self.public_output), is_hidden=self._is_gateway)
        for event in upstream:
            for translated in translator.translate(dict(event)):
                self.events.append((translated[0], orjson.loads(translated[2])))
        outcome = translator.outcome()
        assert outcome is not None
        self.usage = _add_usage(self.usage, outcome.usage)
        gateway_calls = [item for item in outcome.output if self._is_gateway(item)]
        first = next((n for n, item in enumerate(outcome.output) if self._is_gateway(item)), len(outcome.output))
        self.public_output += [item for n, item in enumerate(outcome.output) if n < first and not self._is_gateway(item)]
        later = [item for n, item in enumerate(outcome.output) if n > first and not self._is_gateway(item)]

        def release_later() -> None:  # as rounds.py: the items after the first gateway call come after its items
            for event_type, _, data in translator.release_deferred(len(self.public_output)):
                self.events.append((event_type, orjson.loads(data)))
            self.public_output.extend(later)

        if not gateway_calls or outcome.status != "completed":
            release_later()
            return outcome.status
        index = len(self.public_output)
        for call in gateway_calls:
            binding = self.registry.binding(call["name"])
            assert binding is not None
            view = GatewayCallView(binding, call, self.include)
            for event in view.opening(index):
                self._emit(event)
            result = (results or {}).get(call["name"]) or ToolResult.ok(call["call_id"], "ok")
            items, events = view.closing(index, result)
            for event in events:
                self._emit(event)
            self.public_output += items
            index += len(items)
        release_later()
        return "continue"

    def finish(self, status: str = "completed", **fields: Any) -> dict[str, Any]:
        response = self._response(status, **fields)
        self._emit({"type": f"response.{status}", "response": response})
        return response


def _add_usage(total: dict[str, Any] | None, more: dict[str, Any] | None) -> dict[str, Any] | None:
    if total is None or more is None:
        return total or more
    return {key: _add_usage(value, more.get(key)) if isinstance(value, dict) else value + more.get(key, 0)
            for key, value in total.items()}


# -- checks -------------------------------------------------------------------------------


def _translate(request: dict[str, Any], events: list[Event]) -> list[Event]:
    translator = MessagesStreamTranslator(request)
    produced: list[Event] = []
    for event_type, data in events:
        produced += translator.translate(event_type, data)
    assert translator.finished
    # Anthropic's `ping` follows `message_start`; the SDK's event types leave it out, so it is checked here.
    assert produced[0][0] == "message_start" and produced[1] == ("ping", {"type": "ping"})
    return [produced[0], *produced[2:]]


def _check(produced: list[Event]) -> None:
    """Anthropic's stream grammar: one message_start, blocks one after another with contiguous indexes, one message_stop."""
    names = [name for name, _ in produced]
    assert all(name == data["type"] for name, data in produced)
    assert names[0] == "message_start" and names.count("message_start") == 1
    assert names[-2:] == ["message_delta", "message_stop"] and names.count("message_stop") == 1
    open_index, next_index = None, 0
    for name, data in produced:
        STREAM_EVENT.validate_python(data)
        if name == "content_block_start":
            assert open_index is None and data["index"] == next_index
            open_index, next_index = data["index"], next_index + 1
        elif name == "content_block_delta":
            assert data["index"] == open_index
        elif name == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
    assert open_index is None


def _accumulated(produced: list[Event]) -> dict[str, Any]:
    """The Message an anthropic SDK client reassembles from the stream."""
    snapshot, json_buffers = None, {}
    for _, data in produced:
        snapshot = accumulate_event(event=STREAM_EVENT.validate_python(data), current_snapshot=snapshot, json_bufs=json_buffers)
    assert snapshot is not None
    return _plain(snapshot.to_dict())


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    return Message.model_validate(message).model_dump(exclude_none=True)


def _same_as_json(request: dict[str, Any], produced: list[Event], final: dict[str, Any]) -> dict[str, Any]:
    """The stream and the JSON path agree on the whole Message; returns it."""
    _check(produced)
    message = message_from_response(final, request)
    assert _accumulated(produced) == _plain(message)
    return message


def _request(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "stream": True, "messages": [{"role": "user", "content": "Hi"}], **fields}


# -- text and reasoning -----------------------------------------------------------------


def test_a_recorded_vllm_text_stream_becomes_one_text_block() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_recorded("responses-text-stream.sse"))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert message["content"] == [{"type": "text", "text": "Hello, welcome to my world!"}]
    assert [name for name, _ in produced if name.startswith("content_block")].count("content_block_delta") > 1
    start = produced[0][1]["message"]
    assert start["id"] == message["id"] == "msg_" + final["id"].removeprefix("resp_")
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["input_tokens"] == 0
    assert produced[-2][1]["usage"] == message["usage"]


def test_reasoning_streams_as_a_thinking_block_with_a_signature_before_the_text() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("reasoning", "The user greets me, so greet back."), ("text", "Hello, friend.")))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert [block["type"] for block in message["content"]] == ["thinking", "text"]
    deltas = [data["delta"]["type"] for name, data in produced if name == "content_block_delta" and data["index"] == 0]
    assert deltas[-1] == "signature_delta" and set(deltas[:-1]) == {"thinking_delta"}


def test_items_sent_whole_without_deltas_still_arrive_in_full() -> None:
    request = _request(tools=[WEATHER_TOOL])
    turn = _Turn(request)
    turn.round(_upstream_round(("reasoning", "Think."), ("text", "Calling."), ("call", "get_weather", '{"city": "Oslo"}'),
                               stream_deltas=False))
    final = turn.finish()
    message = _same_as_json(request, _translate(request, turn.events), final)
    assert [block["type"] for block in message["content"]] == ["thinking", "text", "tool_use"]
    assert message["content"][2]["input"] == {"city": "Oslo"}


def test_an_empty_answer_has_no_content_blocks() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "")))
    final = turn.finish()
    produced = _translate(request, turn.events)
    assert not [name for name, _ in produced if name.startswith("content_block")]
    assert _same_as_json(request, produced, final)["content"] == []


# -- client tools -------------------------------------------------------------------------


def test_a_recorded_vllm_tool_call_streams_as_tool_use_with_stop_reason_tool_use() -> None:
    request = _request(tools=[WEATHER_TOOL], tool_choice={"type": "any"})
    turn = _Turn(request)
    turn.round(_recorded("responses-tool-stream.sse"))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    (block,) = message["content"]
    assert block["type"] == "tool_use" and block["name"] == "get_weather" and block["input"] == {"city": "Paris"}
    assert block["id"] == final["output"][0]["call_id"]
    start = next(data for name, data in produced if name == "content_block_start")
    assert start["content_block"]["input"] == {}  # input arrives as input_json_delta, as from Anthropic
    assert sum(1 for name, data in produced if name == "content_block_delta"
               and data["delta"]["type"] == "input_json_delta") > 1
    assert produced[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_text_before_a_client_call_gets_its_own_block() -> None:
    request = _request(tools=[WEATHER_TOOL])
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "Let me look."), ("call", "get_weather", '{"city": "Rome"}')))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert [block["type"] for block in message["content"]] == ["text", "tool_use"]
    assert message["stop_reason"] == "tool_use"


# -- gateway tools ------------------------------------------------------------------------


def test_operator_rounds_are_hidden_and_block_indexes_stay_contiguous() -> None:
    request = _request(tools=[ECHO])
    turn = _Turn(request)
    assert turn.round(_upstream_round(("text", "Using the tool."), ("call", "echo", '{"text": "a"}'))) == "continue"
    assert turn.round(_upstream_round(("call", "echo", '{"text": "b"}'))) == "continue"
    turn.round(_upstream_round(("text", "Both echoed.")))
    final = turn.finish()
    # Publicly: message, call, output, call, output, message; for Messages only the two texts remain.
    assert [item["type"] for item in final["output"]] == ["message", "function_call", "function_call_output", "function_call",
                                                          "function_call_output", "message"]
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert message["content"] == [{"type": "text", "text": "Using the tool."}, {"type": "text", "text": "Both echoed."}]
    assert {data["index"] for name, data in produced if name == "content_block_start"} == {0, 1}
    assert message["stop_reason"] == "end_turn"
    # Usage is the sum over the three rounds.
    assert message["usage"]["input_tokens"] == 90 and message["usage"]["output_tokens"] == 30


def test_web_search_streams_server_tool_use_then_its_result_then_the_answer() -> None:
    request = _request(tools=[WEB_SEARCH])
    turn = _Turn(request)
    sources = [{"type": "url", "url": "https://docs.python.org/3/library/asyncio.html"}]
    results = {"web_search": ToolResult.ok("c", "Web results", queries=["python asyncio"], sources=sources)}
    turn.round(_upstream_round(("call", "web_search", '{"queries": ["python asyncio"]}')), results)
    turn.round(_upstream_round(("text", "Asyncio runs coroutines.")))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert [block["type"] for block in message["content"]] == ["server_tool_use", "web_search_tool_result", "text"]
    assert message["content"][0]["input"] == {"query": "python asyncio"}
    assert message["content"][1]["content"][0]["url"] == sources[0]["url"]
    assert message["usage"]["server_tool_use"]["web_search_requests"] == 1
    starts = [data["content_block"] for name, data in produced if name == "content_block_start"]
    assert starts[0] == {"type": "server_tool_use", "id": message["content"][0]["id"], "name": "web_search", "input": {}}
    assert starts[1] == message["content"][1]  # the result block arrives whole


def test_a_failed_search_streams_an_error_result() -> None:
    request = _request(tools=[WEB_SEARCH])
    turn = _Turn(request)
    turn.round(_upstream_round(("call", "web_search", '{"queries": ["x"]}')), {"web_search": ToolResult.error("c", "down")})
    turn.round(_upstream_round(("text", "No luck.")))
    final = turn.finish()
    message = _same_as_json(request, _translate(request, turn.events), final)
    assert message["content"][1]["content"] == {"type": "web_search_tool_result_error", "error_code": "unavailable"}


def test_a_mixed_round_streams_only_the_client_call() -> None:
    request = _request(tools=[ECHO, WEATHER_TOOL])
    turn = _Turn(request)
    turn.round(_upstream_round(("call", "echo", '{"text": "x"}'), ("call", "get_weather", '{"city": "Lima"}')))
    final = turn.finish()
    produced = _translate(request, turn.events)
    message = _same_as_json(request, produced, final)
    assert [block["name"] for block in message["content"]] == ["get_weather"]
    assert message["stop_reason"] == "tool_use"


# -- ends -----------------------------------------------------------------------------------


def test_running_out_of_tokens_ends_with_max_tokens() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "A long answer that was cut"), status="incomplete"))
    final = turn.finish("incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert _same_as_json(request, _translate(request, turn.events), final)["stop_reason"] == "max_tokens"


def test_the_tool_round_limit_ends_with_pause_turn() -> None:
    request = _request(tools=[ECHO])
    turn = _Turn(request)
    turn.round(_upstream_round(("call", "echo", "{}")))
    final = turn.finish("incomplete", incomplete_details={"reason": "max_tool_rounds"})
    produced = _translate(request, turn.events)
    assert _same_as_json(request, produced, final)["stop_reason"] == "pause_turn"
    assert [name for name, _ in produced] == ["message_start", "message_delta", "message_stop"]


def test_cached_input_is_reported_as_cache_reads_on_message_delta() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "Hi."), usage=_usage(100, 3, cached=64)))
    final = turn.finish()
    produced = _translate(request, turn.events)
    _same_as_json(request, produced, final)
    assert produced[-2][1]["usage"] == {"input_tokens": 36, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 64,
                                        "output_tokens": 3}


def test_a_failed_turn_ends_with_an_error_event_and_no_message_stop() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "Partial")))
    turn.finish("failed", error={"code": "upstream_incomplete", "message": "The model server's stream ended early."})
    translator = MessagesStreamTranslator(request)
    produced = [event for event_type, data in turn.events for event in translator.translate(event_type, data)]
    names = [name for name, _ in produced]
    assert names[0] == "message_start" and names[-1] == "error" and "message_stop" not in names
    error = produced[-1][1]
    ErrorResponse.model_validate(error)
    assert error == {"type": "error", "error": {"type": "api_error", "message": "The model server's stream ended early."}}
    assert translator.finished and translator.translate("response.completed", {"response": {}}) == []


def test_a_timed_out_turn_is_a_timeout_error() -> None:
    translator = MessagesStreamTranslator(_request())
    produced = translator.translate("response.failed", {"response": {"status": "failed",
                                                                      "error": {"code": "upstream_timeout", "message": "slow"}}})
    assert produced == [("error", {"type": "error", "error": {"type": "timeout_error", "message": "slow"}})]


def test_the_gateways_relay_error_event_becomes_an_anthropic_error() -> None:
    request = _request()
    turn = _Turn(request)
    translator = MessagesStreamTranslator(request)
    for event_type, data in turn.events:
        translator.translate(event_type, data)
    produced = translator.translate("error", {"type": "error", "code": "executor_unavailable", "message": "lost", "param": None})
    assert produced == [("error", {"type": "error", "error": {"type": "api_error", "message": "lost"}})]


def test_a_stream_that_breaks_off_can_be_ended_with_an_error() -> None:
    translator = MessagesStreamTranslator(_request())
    translator.translate("response.created", {"response": {"id": "resp_1", "status": "in_progress"}})
    assert translator.interrupted("connection lost") == [
        ("error", {"type": "error", "error": {"type": "api_error", "message": "connection lost"}})]
    assert translator.interrupted("again") == []


def test_a_stream_without_response_created_still_starts_with_message_start() -> None:
    request = _request()
    turn = _Turn(request)
    turn.round(_upstream_round(("text", "Hi.")))
    final = turn.finish()
    produced = _translate(request, turn.events[2:])  # created and in_progress lost
    _check(produced)
    # Only the id differs: without response.created it cannot be derived from the response id.
    accumulated, message = _accumulated(produced), _plain(message_from_response(final, request))
    assert accumulated.pop("id").startswith("msg_") and message.pop("id").startswith("msg_")
    assert accumulated == message


@pytest.mark.parametrize("tools", [[ECHO], []])
def test_gateway_items_named_only_by_the_response_are_hidden_too(tools: list[dict[str, Any]]) -> None:
    request = _request(tools=[ECHO])
    turn = _Turn(request)
    turn.round(_upstream_round(("call", "echo", "{}")))
    turn.round(_upstream_round(("text", "done")))
    final = turn.finish()
    # A translator given a request without the tool list still learns the operator tool from response.created.
    produced = _translate({**request, "tools": tools}, turn.events)
    assert _same_as_json(request, produced, final)["content"] == [{"type": "text", "text": "done"}]
