"""A turn's usage in one shape, read from the usage object of any API we relay (Responses, Chat Completions,
Anthropic Messages), and found in relayed bytes without parsing them whole."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

_USAGE_KEY = b'"usage":'
_MAX_USAGE_BYTES = 4096  # a usage object is a few hundred bytes; anything longer is not one
_BRACE = re.compile(rb"[{}]")
_OPEN = ord("{")


@dataclass(slots=True)
class TurnUsage:
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 1  # model requests: a turn's inference rounds
    tool_calls: dict[str, int] = field(default_factory=dict)  # gateway tool calls by kind
    tool_seconds: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _detail(usage: dict[str, Any], key: str, name: str) -> int:
    details = usage.get(key)
    return _number(details.get(name)) if isinstance(details, dict) else 0


def usage_of(usage: Any, requests: int = 1) -> TurnUsage:
    """Responses (`input_tokens`, `*_details`), Chat Completions (`prompt_tokens`, `completion_tokens`) or
    Anthropic (`input_tokens` without the cache, `cache_read_input_tokens`) usage; anything else counts nothing."""
    if not isinstance(usage, dict):
        return TurnUsage(requests=requests)
    if "prompt_tokens" in usage:
        return TurnUsage(
            input_tokens=_number(usage.get("prompt_tokens")),
            cached_tokens=_detail(usage, "prompt_tokens_details", "cached_tokens"),
            output_tokens=_number(usage.get("completion_tokens")),
            reasoning_tokens=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
            requests=requests,
        )
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage:
        cached = _number(usage.get("cache_read_input_tokens"))
        return TurnUsage(
            input_tokens=_number(usage.get("input_tokens")) + cached + _number(usage.get("cache_creation_input_tokens")),
            cached_tokens=cached, output_tokens=_number(usage.get("output_tokens")), requests=requests,
        )
    return TurnUsage(
        input_tokens=_number(usage.get("input_tokens")),
        cached_tokens=_detail(usage, "input_tokens_details", "cached_tokens"),
        output_tokens=_number(usage.get("output_tokens")),
        reasoning_tokens=_detail(usage, "output_tokens_details", "reasoning_tokens"),
        requests=requests,
    )


def last_usage_object(data: bytes) -> dict[str, Any] | None:
    """The last `"usage": {...}` object in `data` (a JSON body or the tail of an SSE stream), found from the end
    and parsed alone: the rest of the body is never parsed. None when there is none."""
    end = len(data)
    while (position := data.rfind(_USAGE_KEY, 0, end)) >= 0:
        found = _object_at(data, position + len(_USAGE_KEY))
        if found is not None:
            return found
        end = position
    return None


def first_usage_object(data: bytes) -> dict[str, Any] | None:
    """The first `"usage": {...}` object in `data` (the head of a stream: Anthropic's `message_start`), parsed
    alone. None when there is none."""
    start = 0
    while (position := data.find(_USAGE_KEY, start)) >= 0:
        found = _object_at(data, position + len(_USAGE_KEY))
        if found is not None:
            return found
        start = position + len(_USAGE_KEY)
    return None


def _object_at(data: bytes, start: int) -> dict[str, Any] | None:
    while start < len(data) and data[start] in b" \t\r\n":
        start += 1
    if start >= len(data) or data[start] != ord("{"):
        return None  # `"usage": null`
    depth = 0
    for brace in _BRACE.finditer(data, start, start + _MAX_USAGE_BYTES):  # found in C: a few braces, not every byte
        depth += 1 if data[brace.start()] == _OPEN else -1
        if depth == 0:
            try:
                parsed = orjson.loads(data[start:brace.end()])
            except orjson.JSONDecodeError:
                return None
            return parsed if isinstance(parsed, dict) else None
    return None


def merged_stream_usage(head: dict[str, Any] | None, tail: dict[str, Any] | None) -> dict[str, Any] | None:
    """An Anthropic stream reports input tokens in `message_start` (the head) and output tokens in the last
    `message_delta` (the tail); other streams carry the whole usage at the end."""
    if tail is None:
        return head
    if head is None or _number(tail.get("input_tokens")) or "prompt_tokens" in tail:
        return tail
    return {**head, **{key: value for key, value in tail.items() if value}}
