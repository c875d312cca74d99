"""Compaction: POST /v1/responses/compact, continuing from a compaction item, automatic compaction
(`context_management`) on chains and conversations, and the context-window check."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.support.fake_upstream import Text

MODEL = "smollm2"
SUMMARY_HEADING = "Summary of the earlier conversation (compacted):\n"
LONG_ANSWER = "a long answer about the weather " * 12  # 72 words: over a small threshold


def _sent(request: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of each message the model server received."""
    return [(item["role"], "".join(part.get("text", "") for part in item["content"]))
            for item in request["input"] if item.get("type", "message") == "message"]


def _as_input(items: list[Any]) -> list[dict[str, Any]]:
    # The SDK types output messages as assistant ones; the user messages keep their `input_text` parts.
    return [item.model_dump(exclude_none=True, warnings=False) for item in items]


def _chain(client: OpenAI, upstream, *questions: str) -> str:
    upstream.script(*(Text(f"answer to {question}") for question in questions))
    previous = None
    for question in questions:
        previous = client.responses.create(model=MODEL, input=question, previous_response_id=previous).id
    assert previous is not None
    return previous


def test_compact_returns_the_user_messages_and_one_sealed_compaction_item(client: OpenAI, upstream) -> None:
    last = _chain(client, upstream, "first question", "second question")
    upstream.script(Text("SUMMARY: two questions were answered"))
    compacted = client.responses.compact(model=MODEL, previous_response_id=last, instructions="be brief")

    assert compacted.object == "response.compaction" and compacted.id.startswith("resp_")
    assert [item.type for item in compacted.output] == ["message", "message", "compaction"]
    assert [item.role for item in compacted.output[:2]] == ["user", "user"]
    assert compacted.output[0].content[0].text == "first question"
    item = compacted.output[-1]
    assert item.id.startswith("cmp_") and "SUMMARY" not in item.encrypted_content
    assert compacted.usage.total_tokens > 0
    # One non-streaming call with the summarisation prompt over the whole history.
    call = upstream.requests[-1]
    assert call["stream"] is False and "compact a conversation" in call["instructions"]
    assert _sent(call)[:4] == [("user", "first question"), ("assistant", "answer to first question"),
                               ("user", "second question"), ("assistant", "answer to second question")]
    assert "be brief" in _sent(call)[-1][1]


def test_continuing_after_compaction_sends_the_summary_instead_of_the_old_history(client: OpenAI, upstream) -> None:
    last = _chain(client, upstream, "first question", "second question")
    upstream.script(Text("SUMMARY: weather talk"), Text("third answer"), Text("fourth answer"))
    compacted = client.responses.compact(model=MODEL, previous_response_id=last)
    third = client.responses.create(model=MODEL, input=[*_as_input(compacted.output),
                                                        {"role": "user", "content": "third question"}])
    assert _sent(upstream.requests[-1]) == [("user", "first question"), ("user", "second question"),
                                            ("assistant", SUMMARY_HEADING + "SUMMARY: weather talk"),
                                            ("user", "third question")]
    # Stored with the chain, the compaction keeps superseding what came before it.
    client.responses.create(model=MODEL, input="fourth question", previous_response_id=third.id)
    assert _sent(upstream.requests[-1]) == [("user", "first question"), ("user", "second question"),
                                            ("assistant", SUMMARY_HEADING + "SUMMARY: weather talk"),
                                            ("user", "third question"), ("assistant", "third answer"),
                                            ("user", "fourth question")]
    assert all("encrypted_content" not in str(item) for item in upstream.requests[-1]["input"])


def test_tampered_or_foreign_encrypted_content_is_a_400(client: OpenAI, other_tenant: OpenAI, upstream) -> None:
    upstream.script(Text("SUMMARY"))
    compacted = client.responses.compact(model=MODEL, input="remember the number 7")
    item = _as_input(compacted.output)[-1]
    token = item["encrypted_content"]
    tampered = {**item, "encrypted_content": token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")}
    for bad in (tampered, {**item, "encrypted_content": "not sealed"}):
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model=MODEL, input=[bad, {"role": "user", "content": "go on"}])
        assert caught.value.code == "invalid_encrypted_content"
    # Another tenant cannot read it either: the seal is bound to the tenant.
    with pytest.raises(openai.BadRequestError) as caught:
        other_tenant.responses.create(model=MODEL, input=[item, {"role": "user", "content": "go on"}])
    assert caught.value.code == "invalid_encrypted_content"
    with pytest.raises(openai.BadRequestError):
        client.responses.compact(model=MODEL, input=[tampered])


def test_automatic_compaction_on_a_chain(client: OpenAI, upstream) -> None:
    upstream.script(Text(LONG_ANSWER))
    first = client.responses.create(model=MODEL, input="tell me about the weather")
    upstream.script(Text("SUMMARY: weather"), Text("short answer"), Text("next answer"))
    second = client.responses.create(model=MODEL, input="and tomorrow?", previous_response_id=first.id,
                                     context_management=[{"type": "compaction", "compact_threshold": 40}])

    assert [item.type for item in second.output] == ["compaction", "message"]
    summarising, answering = upstream.requests[-2], upstream.requests[-1]
    assert "compact a conversation" in summarising["instructions"]
    assert "context_management" not in answering and "context_management" not in summarising
    # The turn's own question follows the summary, so that the model answers it.
    assert _sent(answering) == [("user", "tell me about the weather"), ("assistant", SUMMARY_HEADING + "SUMMARY: weather"),
                                ("user", "and tomorrow?")]
    # Stored with the turn: the next turn (no threshold) reads the compacted context; nothing was deleted.
    assert client.responses.retrieve(second.id).output[0].type == "compaction"
    client.responses.create(model=MODEL, input="and after?", previous_response_id=second.id)
    assert _sent(upstream.requests[-1])[1:] == [("assistant", SUMMARY_HEADING + "SUMMARY: weather"),
                                                ("user", "and tomorrow?"), ("assistant", "short answer"),
                                                ("user", "and after?")]
    assert client.responses.retrieve(first.id).output[0].content[0].text == LONG_ANSWER


def test_under_the_threshold_nothing_is_compacted(client: OpenAI, upstream) -> None:
    upstream.script(Text("plain"))
    response = client.responses.create(model=MODEL, input="short",
                                       context_management=[{"type": "compaction", "compact_threshold": 100000}])
    assert [item.type for item in response.output] == ["message"]
    assert len(upstream.requests) == 1


def test_automatic_compaction_in_a_conversation_streamed(client: OpenAI, upstream) -> None:
    conversation = client.conversations.create(items=[{"role": "user", "content": "plan my trip"}])
    upstream.script(Text(LONG_ANSWER), Text("SUMMARY: trip plans"), Text("booked"), Text("enjoy"))
    client.responses.create(model=MODEL, input="with details please", conversation=conversation.id)
    events = list(client.responses.create(model=MODEL, input="book it", conversation=conversation.id, stream=True,
                                          context_management=[{"type": "compaction", "compact_threshold": 40}]))

    added = [event for event in events if event.type == "response.output_item.added"]
    assert added[0].item.type == "compaction" and added[0].output_index == 0
    assert [event.sequence_number for event in events] == list(range(len(events)))
    final = events[-1].response
    assert events[-1].type == "response.completed"
    assert [item.type for item in final.output] == ["compaction", "message"]
    listed = client.conversations.items.list(conversation.id, order="asc").data
    assert [item.type for item in listed][-2:] == ["compaction", "message"]
    assert len(listed) == 6  # nothing removed: 2 questions + answer, the new question, the compaction, the answer
    client.responses.create(model=MODEL, input="thanks", conversation=conversation.id)
    assert _sent(upstream.requests[-1]) == [
        ("user", "plan my trip"), ("user", "with details please"),
        ("assistant", SUMMARY_HEADING + "SUMMARY: trip plans"), ("user", "book it"), ("assistant", "booked"),
        ("user", "thanks")]


@pytest.mark.parametrize(("context_management", "param"), [
    ([{"type": "truncation", "compact_threshold": 100}], "context_management[0].type"),
    ([{"type": "compaction", "compact_threshold": 0}], "context_management[0].compact_threshold"),
    ([{"type": "compaction", "compact_threshold": "many"}], "context_management[0].compact_threshold"),
    ({"type": "compaction"}, "context_management"),
])
def test_bad_context_management_is_a_400_naming_the_param(client: OpenAI, upstream, context_management, param) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="x", context_management=context_management)
    assert caught.value.param == param
    assert upstream.requests == []


def test_a_context_longer_than_the_window_is_a_400_naming_the_limit(client: OpenAI, upstream) -> None:
    # The fake model server reports max_model_len 4096 and counts one token per word.
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="word " * 5000)
    assert caught.value.code == "context_length_exceeded" and "4096" in caught.value.message
    assert upstream.requests == []


def test_compact_needs_something_to_compact_and_a_known_chain(client: OpenAI, gateway_url, auth_headers) -> None:
    reply = httpx.post(f"{gateway_url}/v1/responses/compact", json={"model": MODEL}, headers=auth_headers)
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "input"
    with pytest.raises(openai.NotFoundError):
        client.responses.compact(model=MODEL, previous_response_id="resp_missing")


def test_unstored_requests_with_compaction_are_ours_too(client: OpenAI, upstream) -> None:
    """Without state a request would go straight to the model server; a compaction item or
    `context_management` keeps it on the executor, which reads the one and checks the other."""
    upstream.script(Text("SUMMARY: the number is 7"), Text("7"))
    compacted = client.responses.compact(model=MODEL, input="remember the number 7")
    client.responses.create(model=MODEL, store=False, input=[*_as_input(compacted.output),
                                                             {"role": "user", "content": "which number?"}])
    assert _sent(upstream.requests[-1]) == [("user", "remember the number 7"),
                                            ("assistant", SUMMARY_HEADING + "SUMMARY: the number is 7"),
                                            ("user", "which number?")]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, store=False, input="x", context_management=[{"type": "other"}])
    assert caught.value.param == "context_management[0].type"
    assert len(upstream.requests) == 2
