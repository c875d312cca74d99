"""A stored history: relayed as its stored model views, parsed only where a step reads its items."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.history import NEVER_READ, StoredHistory, materialized, stored_model_view
from agentic_core.responses.items import model_input
from agentic_core.responses.turn_plan import ModelView, plan_turn
from agentic_core.responses.upstream_request import stateless_request

USER = {"id": "msg_1", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}],
        "status": "completed"}
ANSWER = {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "hello", "annotations": []}]}
CALL = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}", "status": "completed"}
OUTPUT = {"id": "fco_1", "type": "function_call_output", "call_id": "call_1", "output": "a.py", "status": "completed"}
SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}}
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]}
NEXT = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}], "id": "msg_3"}


def _stored(*items: dict[str, Any], views: bool = True) -> StoredHistory:
    public = [orjson.dumps(item) for item in items]
    return StoredHistory(public, [stored_model_view(item) for item in items] if views else [])


def _wire(body: dict[str, Any]) -> Any:
    """What the model server receives."""
    return orjson.loads(orjson.dumps(body))


def test_the_stored_views_are_what_the_model_reads_of_each_item() -> None:
    assert orjson.loads(stored_model_view(USER)) == {key: value for key, value in USER.items() if key not in ("id", "status")}
    assert orjson.loads(stored_model_view(ANSWER)) == ANSWER
    assert stored_model_view(SEARCH) == NEVER_READ
    assert stored_model_view(REASONING) == b""  # opened with the tenant's key when a turn reads it


def test_a_history_with_every_view_stored_reaches_the_model_as_those_bytes_unparsed() -> None:
    history = _stored(USER, ANSWER, SEARCH, CALL, OUTPUT)
    body = stateless_request({"model": "m"}, history, [NEXT], stream=False, open_compaction=lambda item: item)
    assert history.relayable and all(isinstance(item, orjson.Fragment) for item in body["input"][:4])
    assert _wire(body)["input"] == model_input([USER, ANSWER, SEARCH, CALL, OUTPUT, NEXT])
    assert history._items is None  # nothing was parsed


@pytest.mark.parametrize("history", [
    _stored(USER, ANSWER, views=False),  # rows stored before their views were
    _stored(USER, REASONING, ANSWER),    # an item the turn must read itself
])
def test_a_history_missing_a_view_is_read_item_by_item_to_the_same_body(history: StoredHistory) -> None:
    items = history.items
    assert not history.relayable
    body = stateless_request({"model": "m"}, history, [NEXT], stream=False)
    assert body["input"] == model_input([*items, NEXT])


def test_the_continuation_rules_read_only_the_calls_and_outputs_of_a_stored_history() -> None:
    pending = _stored(USER, ANSWER, CALL)
    assert pending.calls() == [CALL]
    plan = plan_turn(pending, [NEXT])
    with pytest.raises(InvalidRequest) as refused:
        plan.first_request({"model": "m"}, ModelView(model="m"), open_compaction=None, open_reasoning=lambda item: item)
    assert refused.value.code == "missing_tool_output"
    answered = plan_turn(pending, [{"type": "function_call_output", "call_id": "call_1", "output": "x", "id": "o"}])
    body = answered.first_request({"model": "m"}, ModelView(model="m"), open_compaction=None,
                                  open_reasoning=lambda item: item)
    assert [item["type"] for item in _wire(body)["input"]] == ["message", "message", "function_call",
                                                               "function_call_output"]
    with pytest.raises(InvalidRequest) as again:  # the history's call was answered already: a second output is refused
        plan_turn(_stored(CALL, OUTPUT), [OUTPUT]).first_request(
            {"model": "m"}, ModelView(model="m"), open_compaction=None, open_reasoning=lambda item: item)
    assert again.value.code == "duplicate_call_output" and again.value.param == "input[0]"


def test_the_first_id_is_read_without_parsing_the_rest() -> None:
    history = _stored(USER, ANSWER)
    assert history.first_id() == "msg_1" and StoredHistory().first_id() is None and history._items is None


def test_a_body_holding_stored_bytes_is_materialized_for_a_translation() -> None:
    body = stateless_request({"model": "m"}, _stored(USER, ANSWER), [NEXT], stream=False)
    plain = materialized(body)
    assert plain["input"] == _wire(body)["input"] and all(isinstance(item, dict) for item in plain["input"])
    already = {"model": "m", "input": [NEXT]}
    assert materialized(already) is already
