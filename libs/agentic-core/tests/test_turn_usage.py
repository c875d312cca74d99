"""A turn's usage in one shape from Responses, Chat Completions and Anthropic usage objects, found in relayed bytes
without parsing them whole (the first usage of a stream's head, the last of its tail)."""

from __future__ import annotations

import orjson
from agentic_core.usage.turn_usage import (
    TurnUsage,
    first_usage_object,
    last_usage_object,
    merged_stream_usage,
    usage_of,
)


def test_responses_usage() -> None:
    usage = usage_of({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 30}, "output_tokens": 12,
                      "output_tokens_details": {"reasoning_tokens": 4}, "total_tokens": 112}, requests=2)
    assert usage == TurnUsage(100, 30, 12, 4, 2)
    assert usage.tokens == 112


def test_chat_completions_usage() -> None:
    usage = usage_of({"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 10},
                      "completion_tokens_details": None})
    assert usage == TurnUsage(50, 10, 7, 0, 1)


def test_anthropic_usage_counts_the_cache_in_the_input() -> None:
    usage = usage_of({"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20,
                      "output_tokens": 9})
    assert usage == TurnUsage(input_tokens=125, cached_tokens=100, output_tokens=9)


def test_anything_else_counts_a_request_and_no_tokens() -> None:
    assert usage_of(None) == TurnUsage()
    assert usage_of({"input_tokens": "12", "output_tokens": -3, "input_tokens_details": 7}, requests=0) == TurnUsage(requests=0)
    assert usage_of({"input_tokens": True}).input_tokens == 0


def _event(name: str, data: dict[str, object]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps({"type": name, **data}) + b"\n\n"


def test_the_last_usage_object_is_found_from_the_end_skipping_nulls() -> None:
    body = orjson.dumps({"id": "r", "output": [{"text": 'a "usage": fake'}], "usage": {"input_tokens": 3,
                                                                                      "output_tokens": 4}})
    assert last_usage_object(body) == {"input_tokens": 3, "output_tokens": 4}
    stream = _event("response.created", {"response": {"usage": None}}) + \
        _event("response.completed", {"response": {"usage": {"input_tokens": 1, "output_tokens": 2}}})
    assert last_usage_object(stream) == {"input_tokens": 1, "output_tokens": 2}
    assert first_usage_object(stream) == {"input_tokens": 1, "output_tokens": 2}  # the null is skipped
    assert last_usage_object(b'{"usage": null}') is None and last_usage_object(b"") is None
    assert last_usage_object(b'{"usage": {"input_tokens": 1') is None  # cut off


def test_an_anthropic_stream_merges_its_head_and_tail() -> None:
    stream = _event("message_start", {"message": {"usage": {"input_tokens": 21, "output_tokens": 1}}}) + \
        _event("content_block_delta", {"delta": {"text": "hi"}}) + \
        _event("message_delta", {"usage": {"output_tokens": 7}}) + _event("message_stop", {})
    # A short stream can arrive whole in its first chunk: the head's usage is its first one.
    head, tail = first_usage_object(stream), last_usage_object(stream)
    assert head == {"input_tokens": 21, "output_tokens": 1} and tail == {"output_tokens": 7}
    assert usage_of(merged_stream_usage(head, tail)) == TurnUsage(input_tokens=21, output_tokens=7)


def test_a_whole_usage_at_the_end_wins() -> None:
    assert merged_stream_usage({"input_tokens": 1}, {"input_tokens": 5, "output_tokens": 2}) == \
        {"input_tokens": 5, "output_tokens": 2}
    assert merged_stream_usage(None, {"prompt_tokens": 3}) == {"prompt_tokens": 3}
    assert merged_stream_usage({"input_tokens": 4}, None) == {"input_tokens": 4}
