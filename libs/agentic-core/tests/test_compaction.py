"""Compaction's pure rules: reading `context_management`, what the model sees after a compaction, the summary call."""

from __future__ import annotations

import pytest
from agentic_core.errors import InvalidRequest
from agentic_core.responses.compaction import (
    SUMMARY_PROMPT,
    CompactionContent,
    compaction_item,
    read_context_management,
    retained_user_messages,
    summary_request,
    summary_text,
    visible_context,
)
from agentic_core.responses.items import model_input, normalize_input_item
from agentic_core.responses.upstream_request import stateless_request


def user(text: str, item_id: str) -> dict:
    return {"type": "message", "id": item_id, "role": "user", "content": [{"type": "input_text", "text": text}]}


def assistant(text: str, item_id: str) -> dict:
    return {"type": "message", "id": item_id, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def plain_opener(item: dict) -> CompactionContent:
    return CompactionContent.from_json(item["encrypted_content"])


def compaction(summary: str, *retained: str) -> dict:
    return compaction_item(CompactionContent(summary, retained).to_json().decode(), "cmp_1")


def texts(items: list[dict]) -> list[tuple[str, str]]:
    return [(item["role"], item["content"][0]["text"]) for item in items]


def test_context_management_gives_the_threshold() -> None:
    assert read_context_management(None) is None
    assert read_context_management([]) is None
    assert read_context_management([{"type": "compaction", "compact_threshold": 1000}]) == 1000


@pytest.mark.parametrize(("value", "param"), [
    ({"type": "compaction"}, "context_management"),
    ([{"type": "truncate", "compact_threshold": 10}], "context_management[0].type"),
    (["compaction"], "context_management[0].type"),
    ([{"type": "compaction"}], "context_management[0].compact_threshold"),
    ([{"type": "compaction", "compact_threshold": 0}], "context_management[0].compact_threshold"),
    ([{"type": "compaction", "compact_threshold": "1000"}], "context_management[0].compact_threshold"),
    ([{"type": "compaction", "compact_threshold": True}], "context_management[0].compact_threshold"),
    ([{"type": "compaction", "compact_threshold": 10, "keep": 2}], "context_management[0].keep"),
    ([{"type": "compaction", "compact_threshold": 10}, {"type": "compaction", "compact_threshold": 20}],
     "context_management[1]"),
])
def test_bad_context_management_names_its_param(value: object, param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        read_context_management(value)
    assert caught.value.param == param


def test_without_compaction_everything_is_visible() -> None:
    items = [user("a", "m1"), assistant("b", "m2")]
    assert visible_context(items, plain_opener) == items


def test_latest_compaction_supersedes_all_but_its_retained_user_messages() -> None:
    items = [user("a", "m1"), assistant("b", "m2"), user("c", "m3"), assistant("d", "m4"),
             compaction("a and c were asked", "m1", "m3"), user("e", "m5")]
    seen = visible_context(items, plain_opener)
    assert texts(seen) == [("user", "a"), ("user", "c"),
                           ("assistant", "Summary of the earlier conversation (compacted):\na and c were asked"),
                           ("user", "e")]


def test_a_turns_own_input_compacted_before_its_first_round_follows_the_summary() -> None:
    items = [user("a", "m1"), assistant("b", "m2"), user("c", "m3"), compaction("s", "m1", "m3"), assistant("d", "m4")]
    assert [role for role, _ in texts(visible_context(items, plain_opener))] == ["user", "assistant", "user", "assistant"]
    assert texts(visible_context(items, plain_opener))[2] == ("user", "c")


def test_only_the_latest_compaction_counts_and_unretained_messages_stay_superseded() -> None:
    items = [user("a", "m1"), compaction("old", "m1"), user("b", "m2"), assistant("x", "m3"),
             compaction("new", "m2"), assistant("y", "m4")]
    seen = visible_context(items, plain_opener)
    assert [text.rsplit("\n", 1)[-1] for _, text in texts(seen)] == ["b", "new", "y"]


def test_a_compaction_is_never_sent_to_the_model_as_itself() -> None:
    item = compaction("secret summary", "m1")
    assert model_input([user("a", "m1"), item]) == [model_input([user("a", "m1")])[0]]
    body = stateless_request({"model": "m", "context_management": [{"type": "compaction", "compact_threshold": 5}]},
                             [user("a", "m1"), item], [user("b", "m2")], stream=False, open_compaction=plain_opener)
    assert "context_management" not in body
    assert [part["content"][0]["text"].rsplit("\n", 1)[-1] for part in body["input"]] == ["a", "secret summary", "b"]


def test_retained_user_messages_are_every_visible_one() -> None:
    items = [user("a", "m1"), assistant("b", "m2"), user("c", "m3")]
    assert [item["id"] for item in retained_user_messages(items)] == ["m1", "m3"]


def test_summary_request_and_reply() -> None:
    body = summary_request([{"role": "user", "content": "hi"}], "be terse", model="m")
    assert body["instructions"] == SUMMARY_PROMPT and body["stream"] is False and body["store"] is False
    assert body["input"][0] == {"role": "user", "content": "hi"}
    assert "be terse" in body["input"][-1]["content"][0]["text"]
    reply = {"output": [{"type": "reasoning"}, assistant(" the summary ", "m9")]}
    assert summary_text(reply) == "the summary"


def test_content_round_trips_and_rejects_other_json() -> None:
    content = CompactionContent("s", ("m1",))
    assert CompactionContent.from_json(content.to_json()) == content
    for raw in (b"not json", b"[]", b'{"summary": 1}', b'{"summary": "s", "retained": [1]}'):
        with pytest.raises(ValueError):
            CompactionContent.from_json(raw)


def test_a_compaction_input_item_needs_its_content() -> None:
    with pytest.raises(InvalidRequest) as caught:
        normalize_input_item({"type": "compaction"}, 2)
    assert caught.value.param == "input[2].encrypted_content"
    assert normalize_input_item({"type": "compaction", "encrypted_content": "x", "id": "cmp_1"}, 0)["id"] == "cmp_1"
