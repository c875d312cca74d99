"""What a `response.turn` audit record keeps: ids, model, status, the tools run by name (never their arguments or
outputs), and the approvals granted, denied or requested."""

from __future__ import annotations

import orjson
from agentic_core.audit import approvals, tool_name, turn_details

SECRET = "secret-argument"


def test_tools_are_named_by_kind_server_or_function() -> None:
    assert tool_name({"type": "web_search_call", "action": {"query": SECRET}}) == "web_search"
    assert tool_name({"type": "code_interpreter_call", "code": SECRET}) == "code_interpreter"
    assert tool_name({"type": "mcp_call", "server_label": "docs", "name": "echo", "arguments": SECRET}) == "mcp:docs/echo"
    assert tool_name({"type": "function_call", "name": "lookup", "arguments": SECRET}) == "lookup"
    assert tool_name({"type": "custom_tool_call", "name": "patch", "input": SECRET}) == "patch"
    assert tool_name({"type": "message"}) is None and tool_name({"type": "function_call_output"}) is None
    assert tool_name({"type": 3}) is None


def test_approvals_are_split_by_answer() -> None:
    items = [{"type": "mcp_approval_response", "approval_request_id": "a", "approve": True},
             {"type": "mcp_approval_response", "approval_request_id": "b", "approve": False},
             {"type": "mcp_approval_response", "approval_request_id": "c"},  # not a yes
             {"type": "message", "content": SECRET}, "not an item"]
    assert approvals(items) == {"granted": ["a"], "denied": ["b", "c"]}  # type: ignore[arg-type]


def test_turn_details_keep_names_and_ids_only() -> None:
    response = {"id": "resp_1", "model": "m", "status": "completed", "output": [
        {"id": "mcp_1", "type": "mcp_call", "server_label": "docs", "name": "echo", "arguments": SECRET},
        {"id": "mcp_2", "type": "mcp_call", "server_label": "docs", "name": "add", "arguments": SECRET,
         "error": "The user did not approve this call."},
        {"id": "ws_1", "type": "web_search_call", "action": {"query": SECRET}},
        {"id": "req_1", "type": "mcp_approval_request", "server_label": "docs", "name": "fail", "arguments": SECRET},
        {"id": "msg_1", "type": "message", "content": [{"type": "output_text", "text": SECRET}]},
    ]}
    input_items = [{"type": "mcp_approval_response", "approval_request_id": "req_0", "approve": True},
                   {"type": "mcp_approval_response", "approval_request_id": "req_9", "approve": False}]
    details = turn_details(response, input_items, conversation_id="conv_1", previous_response_id="resp_0",
                           not_run={"mcp_2"})
    assert details == {
        "response_id": "resp_1", "conversation_id": "conv_1", "previous_response_id": "resp_0", "model": "m",
        "status": "completed", "tools": ["mcp:docs/echo", "web_search"],
        "approvals": {"granted": ["req_0"], "denied": ["req_9"], "requested": ["mcp:docs/fail"]},
    }
    assert SECRET.encode() not in orjson.dumps(details)


def test_a_response_without_output_has_no_tools() -> None:
    details = turn_details({"id": "r", "status": "failed", "output": None}, [], conversation_id=None,
                           previous_response_id=None)
    assert details["tools"] == [] and details["approvals"] == {"granted": [], "denied": [], "requested": []}
