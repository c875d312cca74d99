"""The Conversations API with the official openai SDK, and responses that run on a conversation."""

from __future__ import annotations

import threading

import httpx
import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import Delay, FunctionCall, Text

MODEL = "smollm2"


def _texts(items) -> list[str]:
    return [item.content[0].text for item in items]


def test_create_retrieve_update_delete(client: OpenAI) -> None:
    conversation = client.conversations.create(metadata={"topic": "demo"}, items=[{"role": "user", "content": "hi"}])
    assert conversation.id.startswith("conv_") and conversation.object == "conversation"
    assert client.conversations.retrieve(conversation.id).metadata == {"topic": "demo"}
    updated = client.conversations.update(conversation.id, metadata={"topic": "changed"})
    assert updated.metadata == {"topic": "changed"} and updated.created_at == conversation.created_at
    deleted = client.conversations.delete(conversation.id)
    assert deleted.deleted and deleted.id == conversation.id
    with pytest.raises(openai.NotFoundError):
        client.conversations.retrieve(conversation.id)
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.list(conversation.id)


def test_items_append_list_page_retrieve_and_delete(client: OpenAI) -> None:
    conversation = client.conversations.create(items=[{"role": "user", "content": "0"}])
    added = client.conversations.items.create(conversation.id, items=[{"role": "user", "content": str(n)} for n in (1, 2, 3)])
    assert _texts(added.data) == ["1", "2", "3"]
    assert _texts(client.conversations.items.list(conversation.id).data) == ["3", "2", "1", "0"]
    first = client.conversations.items.list(conversation.id, order="asc", limit=2)
    assert _texts(first.data) == ["0", "1"] and first.has_more
    rest = client.conversations.items.list(conversation.id, order="asc", after=first.last_id)
    assert _texts(rest.data) == ["2", "3"] and not rest.has_more
    item_id = added.data[0].id
    assert client.conversations.items.retrieve(item_id, conversation_id=conversation.id).content[0].text == "1"
    after_delete = client.conversations.items.delete(item_id, conversation_id=conversation.id)
    assert after_delete.id == conversation.id
    assert _texts(client.conversations.items.list(conversation.id, order="asc").data) == ["0", "2", "3"]
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.retrieve(item_id, conversation_id=conversation.id)


def test_turns_on_a_conversation_see_its_items_and_append_to_it(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create(items=[{"role": "developer", "content": "be terse"}])
    upstream.script(Text("first answer"), Text("second answer"))
    first = client.responses.create(model=MODEL, input="first question", conversation=conversation.id)
    second = client.responses.create(model=MODEL, input="second question", conversation={"id": conversation.id})
    assert first.conversation.id == conversation.id and second.conversation.id == conversation.id
    sent = [item["content"][0]["text"] for item in upstream.requests[-1]["input"]]
    assert sent == ["be terse", "first question", "first answer", "second question"]
    listed = client.conversations.items.list(conversation.id, order="asc")
    assert _texts(listed.data) == ["be terse", "first question", "first answer", "second question", "second answer"]
    assert listed.data[2].id == first.output[0].id


def test_streamed_turn_appends_to_the_conversation(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Text("streamed"))
    events = list(client.responses.create(model=MODEL, input="q", conversation=conversation.id, stream=True))
    assert events[-1].type == "response.completed"
    assert _texts(client.conversations.items.list(conversation.id, order="asc").data) == ["q", "streamed"]


def test_store_false_still_appends_to_the_conversation(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    response = client.responses.create(model=MODEL, input="ephemeral", conversation=conversation.id, store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)
    assert _texts(client.conversations.items.list(conversation.id, order="asc").data)[0] == "ephemeral"


def test_conversation_with_previous_response_id_is_400(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    earlier = client.responses.create(model=MODEL, input="x")
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="y", conversation=conversation.id, previous_response_id=earlier.id)
    assert raised.value.body["param"] == "conversation"


def test_unknown_conversation_is_404(client: OpenAI, upstream) -> None:
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="x", conversation="conv_missing")
    assert upstream.requests == []


def test_deleting_an_item_removes_it_from_history_but_not_from_stored_responses(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Text("secret answer"), Text("later"))
    first = client.responses.create(model=MODEL, input="secret question", conversation=conversation.id)
    for item in client.conversations.items.list(conversation.id).data:
        client.conversations.items.delete(item.id, conversation_id=conversation.id)
    client.responses.create(model=MODEL, input="new topic", conversation=conversation.id)
    assert [item["content"][0]["text"] for item in upstream.requests[-1]["input"]] == ["new topic"]
    assert client.responses.retrieve(first.id).output_text == "secret answer"
    assert _texts(client.responses.input_items.list(first.id).data) == ["secret question"]


def test_a_failed_turn_appends_nothing_and_releases_the_conversation(client: OpenAI, upstream) -> None:
    from tests.support.fake_upstream import HttpError

    conversation = client.conversations.create()
    upstream.script(HttpError(500, "down", "InternalServerError"))
    with pytest.raises(openai.APIStatusError):
        client.responses.create(model=MODEL, input="lost", conversation=conversation.id)
    assert client.conversations.items.list(conversation.id).data == []
    assert client.responses.create(model=MODEL, input="works", conversation=conversation.id).status == "completed"


def _race(client: OpenAI, conversation_id: str, texts: list[str]) -> list[object]:
    results: list[object] = [None] * len(texts)

    def run(index: int) -> None:
        try:
            results[index] = client.responses.create(model=MODEL, input=texts[index], conversation=conversation_id)
        except openai.APIStatusError as exc:
            results[index] = exc

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_racing_turns_wait_for_each_other_and_never_interleave(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Delay(0.4), Delay(0.4))  # each answer echoes its own question
    results = _race(client, conversation.id, ["question A", "question B"])
    assert all(getattr(result, "status", None) == "completed" for result in results), results
    texts = _texts(client.conversations.items.list(conversation.id, order="asc").data)
    assert len(texts) == 4
    # Each turn's input is directly followed by its own output.
    assert texts[0].split()[-1] == texts[1].split()[-1] and texts[2].split()[-1] == texts[3].split()[-1]
    # The second turn saw the first one's items as history.
    assert len(upstream.requests[-1]["input"]) == 3


def test_a_turn_that_cannot_get_the_conversation_in_time_is_409(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create()
    upstream.script(Delay(2.5, Text("slow")))  # longer than the test stack's 1.5 s wait
    results = _race(client, conversation.id, ["slow one", "impatient one"])
    conflicts = [result for result in results if isinstance(result, openai.APIStatusError)]
    assert len(conflicts) == 1 and conflicts[0].status_code == 409
    assert conflicts[0].body["code"] == "conversation_locked"
    winner = next(result for result in results if not isinstance(result, openai.APIStatusError))
    texts = _texts(client.conversations.items.list(conversation.id, order="asc").data)
    assert len(texts) == 2 and texts[1] == winner.output_text == "slow"


def test_another_tenant_cannot_touch_a_conversation(client: OpenAI, other_tenant: OpenAI, upstream) -> None:
    conversation = client.conversations.create(items=[{"role": "user", "content": "mine"}])
    with pytest.raises(openai.NotFoundError):
        other_tenant.conversations.retrieve(conversation.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.conversations.items.list(conversation.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.conversations.items.create(conversation.id, items=[{"role": "user", "content": "theirs"}])
    with pytest.raises(openai.NotFoundError):
        other_tenant.responses.create(model=MODEL, input="x", conversation=conversation.id)
    with pytest.raises(openai.NotFoundError):
        other_tenant.conversations.delete(conversation.id)
    assert _texts(client.conversations.items.list(conversation.id).data) == ["mine"]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/conversations", {"items": [{"role": "user", "content": "x"}] * 21}, "items"),
        ("/v1/conversations", {"metadata": {"k": 1}}, "metadata.k"),
        ("/v1/conversations", {"unknown": True}, "unknown"),
        ("/v1/conversations", {"items": [{"role": "robot", "content": "x"}]}, "input[0].role"),
    ],
)
def test_bad_conversation_bodies_are_400(gateway_url, auth_headers, path, body, param) -> None:
    reply = httpx.post(f"{gateway_url}{path}", json=body, headers=auth_headers)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["param"] == param


def test_client_tool_call_continues_on_a_conversation(client: OpenAI, upstream) -> None:
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}
    conversation = client.conversations.create()
    upstream.script(FunctionCall("lookup", "{}"), Text("done"))
    first = client.responses.create(model=MODEL, input="look it up", tools=[tool], conversation=conversation.id)
    call = first.output[0]
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="ignore the call", tools=[tool], conversation=conversation.id)
    assert call.call_id in raised.value.body["message"]
    second = client.responses.create(
        model=MODEL, tools=[tool], conversation=conversation.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "42"}],
    )
    assert second.output_text == "done"


def test_a_client_that_hangs_up_mid_stream_does_not_keep_the_conversation(client: OpenAI, upstream, gateway_url,
                                                                           auth_headers) -> None:
    conversation = client.conversations.create()
    upstream.script(Delay(2.0, Text("never read")), Text("next turn"))
    with pytest.raises(httpx.ReadTimeout):  # the turn holds the conversation; the client gives up and hangs up
        httpx.post(f"{gateway_url}/v1/responses", headers=auth_headers, timeout=httpx.Timeout(30, read=0.5),
                   json={"model": MODEL, "input": "start", "conversation": conversation.id, "stream": True})
    followed = client.responses.create(model=MODEL, input="again", conversation=conversation.id)
    assert followed.status == "completed" and followed.output_text == "next turn"
    assert _texts(client.conversations.items.list(conversation.id, order="asc").data) == ["again", "next turn"]
