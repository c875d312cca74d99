"""Strict checks of a relayed JSON model response, and call-id uniqueness over the whole continuation."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.split.outcome import check_call_ids, check_item_ids_against_input, outcome_from_response

FIXTURES = Path(__file__).parents[3] / "tests" / "fixtures"


def message(item_id: str = "msg_1", text: str = "4") -> dict:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call(item_id: str = "fc_1", call_id: str = "call_1", item_type: str = "function_call") -> dict:
    body = {"arguments": "{}"} if item_type == "function_call" else {"input": "hello"}
    return {"type": item_type, "id": item_id, "call_id": call_id, "name": "lookup", "status": "completed", **body}


def response(output: list, status: str = "completed", **extra) -> dict:
    return {"id": "resp_upstream", "object": "response", "status": status, "output": output, **extra}


def test_a_vllm_response_passes_and_is_normalised() -> None:
    for name in ("responses-text.response.json", "responses-tool.response.json"):
        outcome = outcome_from_response(orjson.loads((FIXTURES / name).read_bytes()))
        assert outcome.status == "completed" and len(outcome.output) == 1
        item = outcome.output[0]
        assert "phase" not in item and "async" not in item  # vLLM's null extras are dropped
        if item["type"] == "message":
            assert item["content"][0]["logprobs"] == []
        assert outcome.usage is not None and set(outcome.usage) == {
            "input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"}


def test_the_models_item_ids_are_kept() -> None:
    outcome = outcome_from_response(response([message("msg_abc"), call("fc_def")]))
    assert [item["id"] for item in outcome.output] == ["msg_abc", "fc_def"]


@pytest.mark.parametrize("body", [
    [],
    "completed",
    {"id": "resp_upstream"},
    {"id": "resp_upstream", "status": "completed"},
    response([], status="in_progress"),
    response([], status="queued"),
    response([], status="potato"),
    response([123]),
    response([{"type": "future_item", "id": "future_1"}]),
    response([{k: v for k, v in call().items() if k != "id"}]),
    response([message("msg_1"), message("msg_1")]),
    response([{**call(), "call_id": ""}]),
    response([{k: v for k, v in call().items() if k != "call_id"}]),
    response([{**call(), "name": ""}]),
    response([{**call(), "arguments": {"q": 1}}]),
    response([{**message(), "role": "user"}]),
    response([{**message(), "content": "text"}]),
    response([{"type": "reasoning", "id": "rs_1", "summary": "text"}]),
    response([message()], usage={"input_tokens": "many"}),
    response([message()], usage=[1]),
])
def test_what_cannot_be_stored_is_400(body: object) -> None:
    with pytest.raises(InvalidRequest) as raised:
        outcome_from_response(body)
    assert raised.value.http_status == 400


def test_a_failed_response_is_lenient_and_gets_our_ids() -> None:
    outcome = outcome_from_response(response([{"type": "function_call", "name": "lookup", "arguments": "", "status": "in_progress"}, 7],
                                             status="failed", error={"code": "x", "message": "y"}))
    assert outcome.status == "failed" and outcome.error == {"code": "x", "message": "y"}
    assert len(outcome.output) == 1 and outcome.output[0]["id"].startswith("fc_")


@pytest.mark.parametrize("status", ["incomplete", "cancelled"])
def test_other_terminal_statuses_are_accepted(status: str) -> None:
    outcome = outcome_from_response(response([message()], status=status, incomplete_details={"reason": "max_output_tokens"}))
    assert outcome.status == status


def test_call_ids_must_be_new_to_the_history() -> None:
    with pytest.raises(InvalidRequest) as raised:
        check_call_ids(["call_prior\r\nforged"], [], [call(call_id="call_prior\r\nforged")])
    message_text = raised.value.message
    assert "call_id" in message_text and "output[0]" in message_text and "history" in message_text
    assert "forged" not in message_text


def test_call_ids_must_be_new_to_the_requests_input() -> None:
    input_items = [{**call(call_id="call_in"), "id": "fc_in"}, {"type": "function_call_output", "call_id": "call_in", "output": "x"}]
    with pytest.raises(InvalidRequest) as raised:
        check_call_ids([], input_items, [call(call_id="call_in")])
    assert "request input[0]" in raised.value.message and "output[0]" in raised.value.message


def test_call_ids_must_be_unique_within_the_output_across_call_kinds() -> None:
    with pytest.raises(InvalidRequest) as raised:
        check_call_ids([], [], [call("fc_1", "call_dup"), call("ctc_2", "call_dup", "custom_tool_call")])
    assert "output[1]" in raised.value.message and "output[0]" in raised.value.message and "call_dup" not in raised.value.message


def test_fresh_call_ids_pass() -> None:
    check_call_ids(["call_a"], [{"type": "function_call_output", "call_id": "call_a"}], [call(call_id="call_b"), message()])


def test_an_output_id_may_not_repeat_an_input_items_id() -> None:
    with pytest.raises(InvalidRequest):
        check_item_ids_against_input([{"type": "message", "id": "msg_1"}], [message("msg_1")])
