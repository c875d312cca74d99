"""Stored responses: previous_response_id chains, retrieve, delete, input_items, tenant isolation."""

from __future__ import annotations

import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import Text

MODEL = "smollm2"


def test_three_turn_chain_sends_the_whole_history_upstream(client: OpenAI, upstream) -> None:
    upstream.script(Text("one"), Text("two"), Text("three"))
    first = client.responses.create(model=MODEL, input="first question", instructions="Only for turn one.")
    second = client.responses.create(model=MODEL, input="second question", previous_response_id=first.id)
    third = client.responses.create(model=MODEL, input="third question", previous_response_id=second.id)

    assert third.previous_response_id == second.id
    sent = upstream.requests[-1]
    texts = [(item["role"], item["content"][0]["text"]) for item in sent["input"]]
    assert texts == [
        ("user", "first question"), ("assistant", "one"),
        ("user", "second question"), ("assistant", "two"),
        ("user", "third question"),
    ]
    # Instructions apply to one request only; they are not inherited through the chain.
    assert "instructions" not in upstream.requests[1] or upstream.requests[1]["instructions"] is None
    assert "instructions" not in sent or sent["instructions"] is None


def test_streamed_turns_chain_like_json_turns(client: OpenAI, upstream) -> None:
    upstream.script(Text("streamed answer"), Text("next"))
    events = list(client.responses.create(model=MODEL, input="q1", stream=True))
    first_id = events[-1].response.id
    client.responses.create(model=MODEL, input="q2", previous_response_id=first_id)
    sent = upstream.requests[-1]["input"]
    assert [item["role"] for item in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][0]["text"] == "streamed answer"


def test_retrieve_returns_the_created_response(client: OpenAI, upstream) -> None:
    created = client.responses.create(model=MODEL, input="keep this", metadata={"a": "1"})
    fetched = client.responses.retrieve(created.id)
    assert fetched.model_dump() == created.model_dump()


def test_delete_then_everything_is_404(client: OpenAI, upstream) -> None:
    created = client.responses.create(model=MODEL, input="delete me")
    client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="continue", previous_response_id=created.id)


def test_deleting_a_parent_keeps_the_childs_history(client: OpenAI, upstream) -> None:
    upstream.script(Text("parent answer"))
    parent = client.responses.create(model=MODEL, input="parent")
    child = client.responses.create(model=MODEL, input="child", previous_response_id=parent.id)
    client.responses.delete(parent.id)
    client.responses.create(model=MODEL, input="grandchild", previous_response_id=child.id)
    texts = [item["content"][0]["text"] for item in upstream.requests[-1]["input"]]
    assert texts[:2] == ["parent", "parent answer"]


def test_input_items_lists_this_turns_input_newest_first(client: OpenAI, upstream) -> None:
    created = client.responses.create(
        model=MODEL,
        input=[
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": "one"},
            {"role": "user", "content": [{"type": "input_text", "text": "two"}]},
        ],
    )
    page = client.responses.input_items.list(created.id)
    assert [item.content[0].text for item in page.data] == ["two", "one", "rules"]
    assert all(item.id.startswith("msg_") for item in page.data)
    assert page.first_id == page.data[0].id and page.last_id == page.data[-1].id and page.has_more is False

    ascending = client.responses.input_items.list(created.id, order="asc")
    assert [item.content[0].text for item in ascending.data] == ["rules", "one", "two"]


def test_input_items_paginate_with_limit_after_and_before(client: OpenAI, upstream) -> None:
    created = client.responses.create(model=MODEL, input=[{"role": "user", "content": str(n)} for n in range(5)])
    first = client.responses.input_items.list(created.id, order="asc", limit=2)
    assert [item.content[0].text for item in first.data] == ["0", "1"] and first.has_more
    second = client.responses.input_items.list(created.id, order="asc", limit=2, after=first.last_id)
    assert [item.content[0].text for item in second.data] == ["2", "3"]
    descending = client.responses.input_items.list(created.id, limit=10, after=second.last_id)
    assert [item.content[0].text for item in descending.data] == ["2", "1", "0"]
    before = client.responses.input_items.list(created.id, order="asc", extra_query={"before": second.first_id})
    assert [item.content[0].text for item in before.data] == ["0", "1"]
    everything = [item.content[0].text for item in client.responses.input_items.list(created.id, order="asc", limit=2)]
    assert everything == ["0", "1", "2", "3", "4"]  # the SDK's auto-pagination follows has_more


def test_input_items_reject_a_bad_limit(client: OpenAI, upstream) -> None:
    created = client.responses.create(model=MODEL, input="x")
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.input_items.list(created.id, limit=1000)
    assert raised.value.body["param"] == "limit"


def test_another_tenant_cannot_see_or_continue_a_response(client: OpenAI, other_tenant: OpenAI, upstream) -> None:
    mine = client.responses.create(model=MODEL, input="private")
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.input_items.list(mine.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.create(model=MODEL, input="steal", previous_response_id=mine.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.delete(mine.id)
    assert client.responses.retrieve(mine.id).id == mine.id
