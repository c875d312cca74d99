"""A turn's plan before its first round: approvals settled, listings shown once, the first body checked and built."""

from __future__ import annotations

from typing import Any

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.turn_plan import ModelView, TurnPlan, plan_turn
from agentic_core.tools.mcp import McpDeclaration, McpServerTools

PAYLOAD = {"model": "gpt-x", "input": "go", "store": True, "temperature": 0.2}
USER = {"id": "msg_1", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}],
        "status": "completed"}
CALL = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "docs__search", "arguments": "{}",
        "status": "completed"}
REQUEST = {"id": "mcpr_1", "type": "mcp_approval_request", "server_label": "docs", "name": "search", "arguments": "{}",
           "call_id": "call_1"}
VIEW = ModelView(model="served-x")


def _approval(approve: bool, request_id: str = "mcpr_1") -> dict[str, Any]:
    return {"type": "mcp_approval_response", "approval_request_id": request_id, "approve": approve}


def _server(label: str) -> McpServerTools:
    return McpServerTools(McpDeclaration(label, "http://mcp.example", None, {}, None, "never"), [{"name": "search"}])


def _first(plan: TurnPlan, settled: list[dict[str, Any]] | None = None, **options: Any) -> dict[str, Any]:
    return plan.first_request(PAYLOAD, options.pop("view", VIEW), settled or [], open_compaction=None,
                              open_reasoning=lambda item: item, **options)


def test_a_fresh_turn_plans_no_approvals_and_sends_its_input_to_the_served_model() -> None:
    plan = plan_turn([], [USER])
    body = _first(plan)
    assert plan.approvals == [] and plan.listings == []
    assert body["model"] == "served-x" and body["temperature"] == 0.2 and body["store"] is False
    assert body["input"] == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}]


def test_servers_the_chain_already_listed_are_not_listed_again() -> None:
    listed = {"id": "mcpl_1", "type": "mcp_list_tools", "server_label": "docs", "tools": [], "error": None}
    plan = plan_turn([listed], [USER], [_server("docs"), _server("wiki")])
    assert [item["server_label"] for item in plan.listings] == ["wiki"]
    assert plan.listings[0]["tools"] == [{"name": "search"}]


def test_an_approval_of_a_stored_request_runs_the_call_the_history_holds() -> None:
    plan = plan_turn([CALL, REQUEST], [_approval(True)])
    assert plan.approved == [CALL] and plan.restored == []


def test_a_store_false_client_sending_the_request_back_gets_the_call_restored_before_its_output() -> None:
    plan = plan_turn([], [REQUEST, _approval(True)])
    assert [call["call_id"] for call in plan.restored] == ["call_1"]
    output = {"type": "function_call_output", "call_id": "call_1", "output": "found"}
    sent = _first(plan, [output])["input"]
    assert [item["type"] for item in sent][-2:] == ["function_call", "function_call_output"]


def test_a_denied_call_is_named_by_its_public_item_and_the_approved_one_is_not() -> None:
    other = {**CALL, "id": "fc_2", "call_id": "call_2"}
    history = [CALL, other, REQUEST, {**REQUEST, "id": "mcpr_2", "call_id": "call_2"}]
    plan = plan_turn(history, [_approval(False), _approval(True, "mcpr_2")])
    assert plan.denied_outputs({"call_1": "mcp_1", "call_2": "mcp_2"}) == frozenset({"mcp_1"})


def test_an_approval_answered_twice_is_refused_before_anything_runs() -> None:
    used = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    with pytest.raises(InvalidRequest) as refused:
        plan_turn([CALL, REQUEST, used], [_approval(True)])
    assert refused.value.code == "approval_already_used"


def test_a_pending_call_left_unanswered_is_refused_unless_the_plan_is_only_counted() -> None:
    plan = plan_turn([CALL], [USER])
    with pytest.raises(InvalidRequest):
        _first(plan)
    assert _first(plan, check=False)["input"][0]["type"] == "function_call"


def test_the_model_view_sends_tools_and_choice_only_when_the_request_named_them() -> None:
    plan = plan_turn([], [USER])
    assert "tools" not in _first(plan) and "tool_choice" not in _first(plan)
    body = _first(plan, view=ModelView("served-x", tools=[{"type": "function", "name": "f"}], tool_choice="required",
                                       stream=True))
    assert body["tools"] == [{"type": "function", "name": "f"}] and body["tool_choice"] == "required"
    assert body["stream"] is True
