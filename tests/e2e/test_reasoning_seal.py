"""Reasoning that survives `store: false`: with `include: ["reasoning.encrypted_content"]` reasoning items come back
sealed for the tenant, and a later request that sends one back has the reasoning replayed to the model server
(Responses and Chat Completions servers, JSON and streamed); a tampered or foreign item is a 400."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from conftest import CHAT_MODEL
from tests.support.fake_upstream import Reasoning, Text

MODEL = "smollm2"
INCLUDE = ["reasoning.encrypted_content"]
THOUGHT = "The user greets me, so a friendly greeting in return fits best"


def _first_turn(client: OpenAI, upstream, model: str = MODEL, **fields: Any) -> Any:
    upstream.script(Reasoning(THOUGHT, Text("Hello there!")))
    return client.responses.create(model=model, input="hi", store=False, include=INCLUDE, **fields)


def _sent_back(item: Any, *, keep_text: bool = False) -> dict[str, Any]:
    """The reasoning item as a stateless client keeps it; without its readable text unless `keep_text`."""
    kept = item.model_dump(exclude_none=True)
    if not keep_text:
        kept.pop("content", None)
    return kept


def _follow_up(item: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "hi"}, item, {"role": "assistant", "content": "Hello there!"},
            {"role": "user", "content": "and now?"}]


def _replayed_on_responses(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in request["input"] if item.get("type") == "reasoning"]


def _assert_sealed(item: Any) -> None:
    assert item.type == "reasoning"
    assert item.encrypted_content and item.encrypted_content.startswith("v1.")
    assert THOUGHT not in item.encrypted_content and "reasoning_text" not in item.encrypted_content
    for word in THOUGHT.split():
        assert len(word) < 6 or word not in item.encrypted_content


def test_reasoning_comes_back_sealed_and_is_replayed_to_a_responses_server(client: OpenAI, upstream) -> None:
    response = _first_turn(client, upstream)
    reasoning, message = response.output
    _assert_sealed(reasoning)
    assert reasoning.content is not None and reasoning.content[0].text == THOUGHT  # still readable, as without include
    assert message.type == "message" and response.output_text == "Hello there!"
    upstream.script(Text("Now this."))
    follow_up = client.responses.create(model=MODEL, input=_follow_up(_sent_back(reasoning)), store=False,
                                        include=INCLUDE)
    assert follow_up.output_text == "Now this."
    (replayed,) = _replayed_on_responses(upstream.requests[1])
    assert replayed["content"] == [{"type": "reasoning_text", "text": THOUGHT}]
    assert "encrypted_content" not in replayed  # vLLM refuses any


def test_reasoning_from_a_chat_server_is_sealed_and_replayed_as_its_reasoning(client: OpenAI, upstream) -> None:
    response = _first_turn(client, upstream, CHAT_MODEL)
    reasoning = response.output[0]
    _assert_sealed(reasoning)
    upstream.script(Text("Now this."))
    client.responses.create(model=CHAT_MODEL, input=_follow_up(_sent_back(reasoning)), store=False, include=INCLUDE)
    assistants = [message for message in upstream.requests[1]["messages"] if message["role"] == "assistant"]
    assert assistants == [{"role": "assistant", "content": "Hello there!", "reasoning": THOUGHT,
                           "reasoning_content": THOUGHT}]


@pytest.mark.parametrize("model", [MODEL, CHAT_MODEL])
def test_a_streamed_turn_carries_the_sealed_item_in_its_output_item_done(client: OpenAI, upstream, model: str) -> None:
    upstream.script(Reasoning(THOUGHT, Text("Hello there!")))
    events = list(client.responses.create(model=model, input="hi", store=False, include=INCLUDE, stream=True))
    (done,) = [event for event in events if event.type == "response.output_item.done" and event.item.type == "reasoning"]
    _assert_sealed(done.item)
    assert events[-1].type == "response.completed"
    assert events[-1].response.output[0].encrypted_content == done.item.encrypted_content
    upstream.script(Text("Now this."))
    list(client.responses.create(model=model, input=_follow_up(_sent_back(done.item)), store=False, include=INCLUDE,
                                 stream=True))
    if model == MODEL:
        assert _replayed_on_responses(upstream.requests[1])[0]["content"][0]["text"] == THOUGHT
    else:
        assert [message.get("reasoning") for message in upstream.requests[1]["messages"]] == [None, THOUGHT, None]


def test_a_flipped_byte_is_a_400_naming_the_input(client: OpenAI, upstream) -> None:
    item = _sent_back(_first_turn(client, upstream).output[0], keep_text=True)
    token = item["encrypted_content"]
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=_follow_up({**item, "encrypted_content": flipped}), store=False,
                                include=INCLUDE)
    assert (caught.value.code, caught.value.param) == ("invalid_encrypted_content", "input")
    assert len(upstream.requests) == 1  # nothing reached the model server


def test_another_tenants_item_is_a_400(client: OpenAI, other_tenant: OpenAI, upstream) -> None:
    item = _sent_back(_first_turn(client, upstream).output[0], keep_text=True)
    for stored in (False, True):
        with pytest.raises(openai.BadRequestError) as caught:
            other_tenant.responses.create(model=MODEL, input=_follow_up(item), store=stored)
        assert caught.value.code == "invalid_encrypted_content"
    assert len(upstream.requests) == 1


def test_without_include_reasoning_is_returned_as_today_by_the_model_server_itself(gateway_url, auth_headers,
                                                                                   upstream) -> None:
    upstream.script(Reasoning(THOUGHT, Text("Hello there!")))
    body = {"model": MODEL, "input": "hi", "store": False}
    reply = httpx.post(f"{gateway_url}/v1/responses", json=body, headers=auth_headers, timeout=30)
    assert reply.status_code == 200
    response = reply.json()
    assert upstream.requests == [body]  # the client's body itself reached the model server: no executor hop
    assert response["output"][0]["encrypted_content"] is None
    assert response["output"][0]["content"] == [{"text": THOUGHT, "type": "reasoning_text"}]


def test_a_reasoning_item_without_encrypted_content_is_replayed_as_sent(client: OpenAI, upstream) -> None:
    item = {"type": "reasoning", "id": "rs_client", "summary": [], "encrypted_content": None,
            "content": [{"type": "reasoning_text", "text": "my own notes"}]}
    upstream.script(Text("ok"))
    client.responses.create(model=MODEL, input=_follow_up(item), store=False, include=INCLUDE)
    (replayed,) = _replayed_on_responses(upstream.requests[0])
    assert replayed["content"] == item["content"]


def test_a_stored_turn_keeps_the_sealed_form_it_was_sent_and_returned(client: OpenAI, upstream) -> None:
    item = _sent_back(_first_turn(client, upstream).output[0])
    upstream.script(Reasoning("Second thoughts", Text("Now this.")))
    stored = client.responses.create(model=MODEL, input=_follow_up(item), include=INCLUDE)
    listed = [entry for entry in client.responses.input_items.list(stored.id) if entry.type == "reasoning"]
    assert [entry.encrypted_content for entry in listed] == [item["encrypted_content"]]
    assert all(not entry.content for entry in listed)  # the text the client never had is not listed to it
    fetched = client.responses.retrieve(stored.id)
    assert fetched.output[0].encrypted_content == stored.output[0].encrypted_content
    _assert_sealed_text(fetched.output[0].encrypted_content, "Second thoughts")
    # Continuing the chain replays both reasonings, the client's opened.
    upstream.script(Text("Third."))
    client.responses.create(model=MODEL, input="go on", previous_response_id=stored.id)
    texts = [item["content"][0]["text"] for item in _replayed_on_responses(upstream.requests[-1])]
    assert texts == [THOUGHT, "Second thoughts"]


def _assert_sealed_text(token: str | None, text: str) -> None:
    assert token and token.startswith("v1.") and text.split()[0] not in token


def test_over_a_websocket_reasoning_is_sealed_and_replayed_too(client: OpenAI, upstream) -> None:
    upstream.script(Reasoning(THOUGHT, Text("Hello there!")), Text("Now this."))
    with client.responses.connect() as connection:
        connection.send({"type": "response.create", "model": MODEL, "input": "hi", "store": False, "include": INCLUDE})
        events = _until_terminal(connection)
        (done,) = [event for event in events
                   if event.type == "response.output_item.done" and event.item.type == "reasoning"]
        _assert_sealed(done.item)
        connection.send({"type": "response.create", "model": MODEL, "input": _follow_up(_sent_back(done.item)),
                         "store": False, "include": INCLUDE})
        assert _until_terminal(connection)[-1].type == "response.completed"
    assert _replayed_on_responses(upstream.requests[1])[0]["content"][0]["text"] == THOUGHT


def _until_terminal(connection: Any) -> list[Any]:
    events = []
    for event in connection:
        events.append(event)
        if event.type in ("response.completed", "response.failed", "response.incomplete", "error"):
            return events
    raise AssertionError("the connection closed mid-response")
