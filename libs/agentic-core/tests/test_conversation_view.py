"""A turn's rows in a conversation keep both the client's order and the model's."""

from __future__ import annotations

from agentic_core.responses.conversation_view import conversation_rows


def _item(item_id: str, item_type: str = "message", call_id: str | None = None) -> dict:
    item = {"id": item_id, "type": item_type}
    if call_id:
        item["call_id"] = call_id
    return item


def test_a_web_search_is_public_for_listings_and_a_linked_pair_for_the_model() -> None:
    question, answer = _item("msg_q"), _item("msg_a")
    call, output = _item("fc_1", "function_call", "c1"), _item("fco_1", "function_call_output", "c1")
    search = _item("ws_1", "web_search_call")
    rows = conversation_rows([question], [search, answer], [call, output, answer], {"c1": "ws_1"})
    assert [(item["id"], visibility, linked) for item, visibility, linked in rows] == [
        ("msg_q", "both", ""), ("fc_1", "model", "ws_1"), ("fco_1", "model", "ws_1"), ("ws_1", "public", ""),
        ("msg_a", "both", "")]
    listing = [item["id"] for item, visibility, _ in rows if visibility != "model"]
    history = [item["id"] for item, visibility, _ in rows if visibility != "public"]
    assert listing == ["msg_q", "ws_1", "msg_a"] and history == ["msg_q", "fc_1", "fco_1", "msg_a"]


def test_without_gateway_calls_everything_is_both() -> None:
    items = [_item("msg_1"), _item("fc_2", "function_call", "c2")]
    assert {visibility for _, visibility, _ in conversation_rows([], items, items, {})} == {"both"}
