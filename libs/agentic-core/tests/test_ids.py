"""Identifiers: ours are unguessable and carry their item type's prefix, and a client's id that PostgreSQL or a gRPC
trailer could not carry is a 400 naming its parameter, quoting it short and printable."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.ids import MAX_ID_CHARS, checked_id, is_identifier, new_item_id, new_response_id, optional_id


def test_our_ids_carry_their_prefix_and_are_never_reused() -> None:
    assert new_response_id().startswith("resp_")
    assert new_item_id("function_call").startswith("fc_")
    assert new_item_id("an_item_type_of_tomorrow").startswith("item_")
    ids = {new_item_id("message") for _ in range(1000)}
    assert len(ids) == 1000
    assert all(is_identifier(one) and len(one) <= MAX_ID_CHARS for one in ids)


@pytest.mark.parametrize("client_id", ["msg_abc", "chatcmpl-9x.Y:z", "a" * MAX_ID_CHARS])
def test_ids_of_other_systems_are_taken(client_id: str) -> None:
    assert checked_id(client_id, "input[0].id") == client_id


@pytest.mark.parametrize("client_id", ["", "a" * (MAX_ID_CHARS + 1), "msg\x00x", "msg x", "msg/../x", "ünï"])
def test_an_id_a_database_or_trailer_cannot_carry_is_a_400(client_id: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        checked_id(client_id, "input[0].id")
    error = refused.value.to_dict()["error"]
    assert error["param"] == "input[0].id" and error["code"] == "invalid_value"
    assert "\x00" not in error["message"]


def test_an_id_that_is_not_a_string_is_a_type_error() -> None:
    with pytest.raises(InvalidRequest) as refused:
        checked_id(12, "after")
    assert refused.value.code == "invalid_type"


def test_a_long_id_is_quoted_short_in_the_error() -> None:
    with pytest.raises(InvalidRequest) as refused:
        checked_id("x" * 10_000 + "!", "after")
    assert len(str(refused.value.to_dict()["error"]["message"])) < 300


def test_an_absent_or_empty_cursor_is_none_and_a_bad_one_a_400() -> None:
    assert optional_id(None, "after") == "" and optional_id("", "after") == ""
    assert optional_id("resp_1", "after") == "resp_1"
    with pytest.raises(InvalidRequest):
        optional_id("resp 1", "after")
