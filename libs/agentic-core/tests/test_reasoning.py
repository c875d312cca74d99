"""Reasoning items across stateless turns: the sealed content's form, the model's view, and the routing rule."""

from __future__ import annotations

import orjson
import pytest
from agentic_core.responses.reasoning import (
    ReasoningContent,
    carries_encrypted_reasoning,
    model_item,
    open_reasoning,
    wants_encrypted_content,
)

ITEM = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}],
        "content": [{"type": "reasoning_text", "text": "r"}], "encrypted_content": "v1.blob", "status": "completed"}


def test_the_content_round_trips_through_json() -> None:
    content = ReasoningContent.of(ITEM, "theirs")
    assert ReasoningContent.from_json(content.to_json()) == content
    assert ReasoningContent.of({"type": "reasoning", "content": None, "summary": ["junk"]}) == ReasoningContent()


@pytest.mark.parametrize("raw", [b"not json", b"[]", b'{"content": "text", "summary": []}',
                                 b'{"content": [], "summary": [1]}', b'{"content": [], "summary": [], "encrypted_content": 3}'])
def test_what_is_not_a_reasoning_items_content_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        ReasoningContent.from_json(raw)


def test_the_model_reads_the_sealed_parts_and_no_blob_of_ours() -> None:
    content = ReasoningContent(({"type": "reasoning_text", "text": "sealed"},), ())
    opened = model_item(ITEM, content)
    assert opened == {"id": "rs_1", "type": "reasoning", "summary": [], "status": "completed",
                      "content": [{"type": "reasoning_text", "text": "sealed"}]}
    assert model_item(ITEM, ReasoningContent((), (), "theirs"))["encrypted_content"] == "theirs"


def test_only_reasoning_items_are_opened() -> None:
    message = {"type": "message", "role": "user", "content": "hi"}
    assert open_reasoning([message, ITEM], lambda item: {**item, "opened": True}) == [message, {**ITEM, "opened": True}]


@pytest.mark.parametrize(("payload", "ours"), [
    ({"include": ["reasoning.encrypted_content"]}, True),
    ({"include": ["message.output_text.logprobs"]}, False),
    ({"input": [ITEM]}, True),
    ({"input": [{**ITEM, "encrypted_content": None}]}, False),
    ({"input": [{**ITEM, "encrypted_content": ""}]}, False),
    ({"input": [{k: v for k, v in ITEM.items() if k != "encrypted_content"}]}, False),
    ({"input": "hi"}, False),
])
def test_requests_carrying_encrypted_reasoning_are_the_executors(payload: dict, ours: bool) -> None:
    assert carries_encrypted_reasoning(payload) is ours
    assert wants_encrypted_content(orjson.loads(orjson.dumps(payload.get("include")))) is ("include" in payload and ours)
