"""Input normalisation (stored form) and the model-facing view."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.items import model_view, normalize_input


def test_string_input_is_one_user_message_with_an_id() -> None:
    (item,) = normalize_input("hello")
    assert item["type"] == "message" and item["role"] == "user" and item["status"] == "completed"
    assert item["content"] == [{"type": "input_text", "text": "hello"}]
    assert item["id"].startswith("msg_")


def test_easy_messages_get_typed_parts_by_role() -> None:
    user, assistant = normalize_input([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    assert user["content"] == [{"type": "input_text", "text": "q"}]
    assert assistant["content"] == [{"type": "output_text", "text": "a", "annotations": [], "logprobs": []}]


def test_client_ids_are_kept() -> None:
    (item,) = normalize_input([{"type": "message", "id": "msg_client", "role": "user", "content": "x"}])
    assert item["id"] == "msg_client"


@pytest.mark.parametrize(
    ("items", "param"),
    [
        ([{"role": "robot", "content": "x"}], "input[0].role"),
        ([{"role": "user", "content": 3}], "input[0].content"),
        ([{"content": "x"}], "input[0]"),
        ([{"type": "function_call_output", "output": "x"}], "input[0].call_id"),
        ([{"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}], "input[0].call_id"),
    ],
)
def test_malformed_items_are_rejected(items, param) -> None:
    with pytest.raises(InvalidRequest) as raised:
        normalize_input(items)
    assert raised.value.param == param


def test_model_view_drops_our_fields_from_client_items_only() -> None:
    user, output = normalize_input([{"role": "user", "content": "q"}, {"type": "function_call_output", "call_id": "c", "output": "o"}])
    assert "id" not in model_view(user) and "status" not in model_view(user)
    assert "id" not in model_view(output)
    assistant = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": []}
    assert model_view(assistant) is assistant
