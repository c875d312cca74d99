"""Pending client-call rules over a continuation."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.pending_calls import check_relayed_call_outputs, validate_continuation


def call(call_id: str, kind: str = "function_call") -> dict:
    return {"type": kind, "call_id": call_id, "name": "f", "arguments": "{}"}


def output(call_id: str, kind: str = "function_call_output") -> dict:
    return {"type": kind, "call_id": call_id, "output": "ok"}


MESSAGE = {"type": "message", "role": "user", "content": []}


def test_outputs_resolving_every_pending_call_are_valid() -> None:
    validate_continuation([MESSAGE, call("a"), call("b")], [output("b"), output("a"), MESSAGE])
    validate_continuation([call("c", "custom_tool_call")], [output("c", "custom_tool_call_output")])


@pytest.mark.parametrize(
    ("history", "new_input", "code"),
    [
        ([call("a")], [MESSAGE], "missing_tool_output"),
        ([call("a"), call("b")], [output("a")], "missing_tool_output"),
        ([], [output("x")], "unknown_call_id"),
        ([call("a")], [output("a"), output("a")], "duplicate_call_output"),
        ([call("a"), output("a")], [call("a"), output("a")], "duplicate_call_id"),
        ([call("a")], [output("a", "custom_tool_call_output")], "call_kind_mismatch"),
        ([], [call("")], "invalid_call_id"),
    ],
)
def test_broken_continuations_are_400(history, new_input, code) -> None:
    with pytest.raises(InvalidRequest) as raised:
        validate_continuation(history, new_input)
    assert raised.value.code == code and raised.value.http_status == 400


def test_the_missing_output_error_names_the_first_pending_call() -> None:
    with pytest.raises(InvalidRequest) as raised:
        validate_continuation([call("first"), call("second")], [])
    assert "first" in raised.value.message


def test_the_param_points_into_the_new_input() -> None:
    with pytest.raises(InvalidRequest) as raised:
        validate_continuation([MESSAGE], [MESSAGE, output("nope")])
    assert raised.value.param == "input[1]"


def test_a_relayed_request_with_an_output_of_no_call_is_refused_and_one_without_outputs_is_not_walked() -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_relayed_call_outputs({"input": [{"type": "function_call_output", "call_id": "call_x", "output": "1"}]})
    assert refused.value.code == "unknown_call_id" and refused.value.param == "input[0]"
    check_relayed_call_outputs({"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
                                          {"type": "function_call_output", "call_id": "c", "output": "1"}]})
    check_relayed_call_outputs({"input": "hi"})
