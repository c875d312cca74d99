"""Strict replay of a relayed SSE stream: a complete, consistent lifecycle or 400."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.split.sse_lifecycle import outcome_from_sse

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"
CREATED = {"type": "response.created", "response": {"id": "resp_upstream", "status": "in_progress"}}
IN_PROGRESS = {"type": "response.in_progress", "response": {"id": "resp_upstream", "status": "in_progress"}}
COMPLETED = {"type": "response.completed", "response": {"id": "resp_upstream", "status": "completed"}}


def message(text: str = "4", status: str = "completed") -> dict:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status == "completed" else []
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": status, "content": content}


def function_call(call_id: str, status: str = "completed", item_id: str = "fc_1") -> dict:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": "lookup", "arguments": "{}", "status": status}


def custom_call(call_id: str, status: str = "completed") -> dict:
    return {"type": "custom_tool_call", "id": "ctc_1", "call_id": call_id, "name": "raw", "input": "hi", "status": status}


def frames(*events: dict | str) -> str:
    return "".join(f"data: {event if isinstance(event, str) else orjson.dumps(event).decode()}\n\n" for event in events)


def terminal(status: str, output: list | None = None) -> dict:
    response: dict = {"id": "resp_upstream", "status": status}
    if output is not None:
        response["output"] = output
    return {"type": f"response.{status}", "response": response}


def text_stream(text: str = "4") -> str:
    return frames(
        CREATED, IN_PROGRESS,
        {"type": "response.output_item.added", "output_index": 0, "item": message(status="in_progress")},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "item_id": "msg_1",
         "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": text},
        {"type": "response.output_text.done", "output_index": 0, "content_index": 0, "item_id": "msg_1", "text": text},
        {"type": "response.content_part.done", "output_index": 0, "content_index": 0, "item_id": "msg_1",
         "part": message(text)["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": message(text)},
        terminal("completed", [message(text)]),
    )


def call_stream(added: dict, done: dict, final: dict, status: str = "completed") -> str:
    return frames(CREATED, IN_PROGRESS,
                  {"type": "response.output_item.added", "output_index": 0, "item": added},
                  {"type": "response.output_item.done", "output_index": 0, "item": done},
                  terminal(status, [final]))


@pytest.mark.parametrize("name", ["responses-text-stream.sse", "responses-tool-stream.sse", "responses-tool-output-stream.sse"])
def test_recorded_vllm_streams_pass(name: str) -> None:
    outcome = outcome_from_sse((FIXTURES / name).read_text())
    assert outcome.status == "completed" and len(outcome.output) == 1 and outcome.usage is not None


def test_a_text_stream_becomes_its_message() -> None:
    outcome = outcome_from_sse(text_stream("four"))
    assert outcome.output[0]["content"][0]["text"] == "four" and outcome.output[0]["id"] == "msg_1"


def test_output_item_done_is_authoritative_without_deltas_or_terminal_output() -> None:
    outcome = outcome_from_sse(frames(CREATED, IN_PROGRESS,
                                      {"type": "response.output_item.added", "output_index": 0, "item": message(status="in_progress")},
                                      {"type": "response.output_item.done", "output_index": 0, "item": message("4")},
                                      COMPLETED))
    assert outcome.output[0]["content"][0]["text"] == "4"


def test_crlf_event_lines_and_done_marker_are_accepted() -> None:
    text = "".join(f"event: {event['type']}\r\ndata: {orjson.dumps(event).decode()}\r\n\r\n"
                   for event in (CREATED, IN_PROGRESS, COMPLETED)) + "data: [DONE]\r\n\r\n"
    assert outcome_from_sse(text).status == "completed"


def test_a_function_call_stream_with_argument_events_passes() -> None:
    added = {**function_call("call_1", "in_progress"), "arguments": ""}
    outcome = outcome_from_sse(frames(
        CREATED, IN_PROGRESS,
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1", "delta": "{\"q\":"},
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "arguments": "{\"q\":1}"},
        {"type": "response.output_item.done", "output_index": 0, "item": function_call("call_1")},
        terminal("completed", [function_call("call_1")]),
    ))
    assert outcome.output[0]["call_id"] == "call_1"


@pytest.mark.parametrize("maker", [function_call, custom_call])
def test_a_call_id_may_first_appear_in_output_item_done(maker) -> None:
    outcome = outcome_from_sse(call_stream(maker("", "in_progress"), maker("call_late"), maker("call_late")))
    assert outcome.output[0]["call_id"] == "call_late"


def test_a_call_id_left_out_of_output_item_done_keeps_the_announced_one() -> None:
    outcome = outcome_from_sse(call_stream(function_call("call_1", "in_progress"), function_call(""), function_call("call_1")))
    assert outcome.output[0]["call_id"] == "call_1"


@pytest.mark.parametrize(("added", "done", "final", "status"), [
    (function_call("call_original", "in_progress"), function_call("call_changed"), function_call("call_changed"), "completed"),
    (function_call("call_original", "in_progress"), function_call("call_original"), function_call("call_changed"), "completed"),
    (function_call("call_original", "in_progress"), function_call("call_changed"), function_call("call_changed"), "incomplete"),
    (custom_call("call_original", "in_progress"), custom_call("call_changed"), custom_call("call_changed"), "completed"),
    (custom_call("call_original", "in_progress"), custom_call("call_original"), custom_call("call_changed"), "completed"),
])
def test_a_call_id_may_not_change_across_representations(added: dict, done: dict, final: dict, status: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        outcome_from_sse(call_stream(added, done, final, status))
    message_text = raised.value.message
    assert "call_id" in message_text and "output[0]" in message_text and "changes" in message_text
    assert "call_changed" not in message_text


def test_an_arguments_event_may_not_change_the_call_id() -> None:
    stream = frames(
        CREATED, IN_PROGRESS,
        {"type": "response.output_item.added", "output_index": 0, "item": function_call("call_original", "in_progress")},
        {"type": "response.function_call_arguments.done", "output_index": 0, "item_id": "fc_1", "call_id": "call_changed",
         "name": "lookup", "arguments": "{}"},
        {"type": "response.output_item.done", "output_index": 0, "item": function_call("")},
        terminal("completed", [function_call("call_original")]),
    )
    with pytest.raises(InvalidRequest, match="changes the call_id"):
        outcome_from_sse(stream)


DELTA = {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": "4"}
MESSAGE_ADDED = {"type": "response.output_item.added", "output_index": 0, "item": message(status="in_progress")}
MESSAGE_DONE = {"type": "response.output_item.done", "output_index": 0, "item": message()}
CALL_ADDED = {"type": "response.output_item.added", "output_index": 0,
              "item": {**function_call("call_1", "in_progress"), "arguments": ""}}


@pytest.mark.parametrize("stream", [
    pytest.param(frames(DELTA), id="relay-died-mid-stream"),
    pytest.param("data: not-json\n\n" + frames(CREATED, IN_PROGRESS, COMPLETED), id="unreadable-frame"),
    pytest.param(frames(CREATED, IN_PROGRESS, "not-json", COMPLETED), id="unreadable-frame-inside"),
    pytest.param(frames({"type": "response.completed"}), id="terminal-without-response"),
    pytest.param(frames(CREATED, IN_PROGRESS, {"type": "response.completed"}), id="terminal-without-response-after-lifecycle"),
    pytest.param(frames(COMPLETED), id="terminal-without-lifecycle"),
    pytest.param(frames(CREATED, CREATED, IN_PROGRESS, COMPLETED), id="created-twice"),
    pytest.param(frames(CREATED, IN_PROGRESS, IN_PROGRESS, COMPLETED), id="in-progress-twice"),
    pytest.param(frames(CREATED, IN_PROGRESS, {"type": "response.completed", "response": {"id": "resp_other", "status": "completed"}}),
                 id="terminal-for-another-response"),
    pytest.param(frames(CREATED, IN_PROGRESS, {"type": "response.completed", "response": {"id": "resp_upstream", "status": "failed"}}),
                 id="terminal-status-disagrees"),
    pytest.param(frames(CREATED, IN_PROGRESS), id="truncated-before-terminal"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED), id="truncated-inside-an-item"),
    pytest.param(frames(CREATED, IN_PROGRESS, COMPLETED, COMPLETED), id="event-after-terminal"),
    pytest.param(frames(CREATED, IN_PROGRESS, "[DONE]", COMPLETED), id="done-before-terminal"),
    pytest.param(frames(CREATED, IN_PROGRESS, DELTA, COMPLETED), id="delta-without-item"),
    pytest.param(frames(CREATED, IN_PROGRESS, terminal("completed", [message()])), id="terminal-output-not-relayed"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED,
                        {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "item_id": "msg_1",
                         "part": {"type": "output_text", "text": ""}},
                        {k: v for k, v in DELTA.items() if k != "delta"}, MESSAGE_DONE, COMPLETED), id="delta-without-delta"),
    pytest.param(frames(CREATED, IN_PROGRESS, CALL_ADDED,
                        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"}, COMPLETED),
                 id="item-event-without-item-id"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED,
                        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "msg_1", "delta": "{}"},
                        COMPLETED), id="event-for-another-item-type"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED, MESSAGE_DONE, MESSAGE_ADDED, COMPLETED), id="index-reused"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED, MESSAGE_DONE,
                        {**MESSAGE_ADDED, "output_index": 1}, {**MESSAGE_DONE, "output_index": 1}, COMPLETED), id="item-id-reused"),
    pytest.param(frames(CREATED, IN_PROGRESS, {**MESSAGE_ADDED, "output_index": 1}, COMPLETED), id="index-skipped"),
    pytest.param(frames(CREATED, IN_PROGRESS,
                        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "future_tool_call", "id": "f_1"}},
                        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "future_tool_call", "id": "f_1"}},
                        COMPLETED), id="unsupported-item-type"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED,
                        {"type": "response.output_item.done", "output_index": 0, "item": {**message(), "id": "msg_2"}}, COMPLETED),
                 id="done-describes-another-item"),
    pytest.param(frames(CREATED, IN_PROGRESS, MESSAGE_ADDED, COMPLETED), id="item-never-done"),
    pytest.param(frames(CREATED, IN_PROGRESS, {"type": "response.web_search_call.searching", "output_index": 0}, COMPLETED),
                 id="unknown-event-type"),
    pytest.param(frames({**CREATED, "sequence_number": 1}, {**IN_PROGRESS, "sequence_number": 1}, COMPLETED),
                 id="sequence-not-increasing"),
    pytest.param("event: response.in_progress\n" + frames(CREATED)[0:] + frames(IN_PROGRESS, COMPLETED), id="event-name-disagrees"),
    pytest.param("", id="empty"),
])
def test_an_inconsistent_or_incomplete_stream_is_400(stream: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        outcome_from_sse(stream)
    assert raised.value.http_status == 400


def test_a_failed_stream_is_returned_even_when_its_items_disagree() -> None:
    outcome = outcome_from_sse(call_stream(function_call("call_original", "in_progress"), function_call("call_changed"),
                                           function_call("call_changed"), "failed"))
    assert outcome.status == "failed"


def test_an_error_event_ends_the_stream_as_failed() -> None:
    outcome = outcome_from_sse(frames(CREATED, IN_PROGRESS, {"type": "error", "code": "overloaded", "message": "busy"}))
    assert outcome.status == "failed" and outcome.error == {"code": "overloaded", "message": "busy"}


def test_a_failed_stream_still_needs_its_lifecycle() -> None:
    with pytest.raises(InvalidRequest):
        outcome_from_sse(frames(terminal("failed", [])))
