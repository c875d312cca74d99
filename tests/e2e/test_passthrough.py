"""Stateless requests go from the gateway straight to the model server and back, unchanged."""

from __future__ import annotations

import httpx
import openai
import orjson
import pytest
from openai import OpenAI

from conftest import CHAT_MODEL, DEAD_MODEL
from tests.support.fake_upstream import Text

MODEL = "smollm2"


def test_store_false_response_is_relayed_byte_for_byte(gateway_url, auth_headers, upstream) -> None:
    body = b'{"model": "smollm2", "input": "hi", "store": false, "metadata": {"kept": "as sent"}}'
    reply = httpx.post(f"{gateway_url}/v1/responses", content=body, headers={**auth_headers, "content-type": "application/json"})
    assert reply.status_code == 200
    relayed = reply.json()
    # The model server's own object, vLLM-only fields included: no executor rewrote it.
    assert "kv_transfer_params" in relayed and len(relayed["id"]) == len("resp_") + 16
    assert upstream.requests[-1] == orjson.loads(body)


def test_store_false_stream_is_relayed(client: OpenAI, upstream) -> None:
    upstream.script(Text("straight through"))
    events = list(client.responses.create(model=MODEL, input="hi", store=False, stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "straight through"
    assert [event.sequence_number for event in events] == list(range(len(events)))


def test_stateful_requests_are_not_passed_through(client: OpenAI, upstream) -> None:
    earlier = client.responses.create(model=MODEL, input="stored", metadata={"a": "b"})
    assert "metadata" not in upstream.requests[-1] and len(earlier.id) > len("resp_") + 16  # the executor's turn
    later = client.responses.create(model=MODEL, input="next", store=False, previous_response_id=earlier.id)
    assert "previous_response_id" not in upstream.requests[-1]  # the executor inlined the history
    assert len(upstream.requests[-1]["input"]) == 3 and later.previous_response_id == earlier.id


def test_a_chat_route_is_not_passed_through_for_responses(client: OpenAI, upstream) -> None:
    response = client.responses.create(model=CHAT_MODEL, input="hi", store=False)
    assert response.status == "completed" and "messages" in upstream.requests[-1]


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_pass_through(client: OpenAI, upstream, stream: bool) -> None:
    upstream.script(Text("chat reply"))
    if stream:
        chunks = list(client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True))
        text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    else:
        completion = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        assert completion.id.startswith("chatcmpl-")
        text = completion.choices[0].message.content
    assert text == "chat reply"


def test_chat_completions_through_an_alias_rewrites_only_the_model(client: OpenAI, upstream) -> None:
    client.chat.completions.create(model=CHAT_MODEL, messages=[{"role": "user", "content": "hi"}])
    assert upstream.requests[-1]["model"] == "smollm2"


def test_completions_and_embeddings_pass_through(client: OpenAI, upstream) -> None:
    upstream.script(Text("legacy"))
    assert client.completions.create(model=MODEL, prompt="x").choices[0].text == "legacy"
    embeddings = client.embeddings.create(model=MODEL, input=["a", "bcd"])
    assert [len(item.embedding) for item in embeddings.data] == [3, 3]


def test_upstream_errors_are_relayed_with_their_status(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert "does not exist" in raised.value.body["message"]


def test_an_unreachable_model_server_is_502(client: OpenAI) -> None:
    for call in (
        lambda: client.responses.create(model=DEAD_MODEL, input="x", store=False),
        lambda: client.responses.create(model=DEAD_MODEL, input="x"),
        lambda: client.chat.completions.create(model=DEAD_MODEL, messages=[{"role": "user", "content": "x"}]),
    ):
        with pytest.raises(openai.APIStatusError) as raised:
            call()
        assert raised.value.status_code == 502
        assert raised.value.body["code"] == "upstream_unreachable"


def test_pass_through_requires_a_key(gateway_url) -> None:
    reply = httpx.post(f"{gateway_url}/v1/chat/completions", json={"model": MODEL, "messages": []})
    assert reply.status_code == 401


def test_models_lists_every_model_server_and_routed_names(client: OpenAI) -> None:
    ids = {model.id for model in client.models.list()}
    assert {MODEL, CHAT_MODEL} <= ids
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")
