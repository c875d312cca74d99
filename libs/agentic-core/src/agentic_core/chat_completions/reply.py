"""A turn's Responses result → what `/v1/chat/completions` answers: a `chat.completion`, or its chunks.

The text of the message items is the message's `content`, client function
calls are `tool_calls`, reasoning text is `reasoning_content`; `finish_reason`
is `tool_calls` when the model called a client tool, `length` or
`content_filter` for an incomplete turn, else `stop`. A failed turn raises its
error (JSON) or ends the stream with an error chunk.
"""

from __future__ import annotations

import time
from typing import Any

from agentic_core.errors import UpstreamUnavailable

_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _completion_id(response: dict[str, Any]) -> str:
    return "chatcmpl-" + str(response.get("id") or "").removeprefix("resp_")


def _finish_reason(response: dict[str, Any], called: bool) -> str:
    if called:
        return "tool_calls"
    details = response.get("incomplete_details")
    if response.get("status") == "incomplete" and isinstance(details, dict):
        return _INCOMPLETE.get(str(details.get("reason")), "length")
    return "stop"


def chat_usage(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    prompt, completion = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)},
            "completion_tokens_details": {
                "reasoning_tokens": int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)}}


def raise_if_failed(response: dict[str, Any]) -> None:
    if response.get("status") == "failed":
        error = _object(response.get("error"))
        raise UpstreamUnavailable(str(error.get("message") or "The model server failed."),
                                  code=str(error.get("code") or "upstream_error"))


def completion_from_response(response: dict[str, Any], model: str) -> dict[str, Any]:
    raise_if_failed(response)
    output = [item for item in response.get("output") or [] if isinstance(item, dict)]
    text = "".join(str(part.get("text") or "") for item in output if item.get("type") == "message"
                   for part in item.get("content") or [] if isinstance(part, dict) and part.get("type") == "output_text")
    calls = [{"id": item.get("call_id"), "type": "function",
              "function": {"name": item.get("name"), "arguments": item.get("arguments") or ""}}
             for item in output if item.get("type") == "function_call"]
    reasoning = "".join(str(part.get("text") or "") for item in output if item.get("type") == "reasoning"
                        for part in item.get("content") or [] if isinstance(part, dict))
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else ""), "refusal": None}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_content"] = reasoning
    return {"id": _completion_id(response), "object": "chat.completion",
            "created": int(response.get("created_at") or time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": _finish_reason(response, bool(calls))}],
            "usage": chat_usage(response.get("usage"))}


class ChatChunkWriter:
    """Feed a turn's public events (type, data) to `translate`: the chunks they stand for."""

    def __init__(self, model: str, include_usage: bool) -> None:
        self._model = model
        self._include_usage = include_usage
        self._id = "chatcmpl-"
        self._created = int(time.time())
        self._calls: dict[int, int] = {}  # output index → tool call index
        self.finished = False

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": self._id, "object": "chat.completion.chunk", "created": self._created, "model": self._model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]}

    def translate(self, event_type: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        if event_type == "response.created":
            response = _object(data.get("response"))
            self._id = _completion_id(response)
            return [self._chunk({"role": "assistant", "content": ""})]
        if event_type == "response.output_text.delta":
            return [self._chunk({"content": str(data.get("delta") or "")})]
        if event_type == "response.reasoning_text.delta":
            return [self._chunk({"reasoning_content": str(data.get("delta") or "")})]
        item = data.get("item") if isinstance(data.get("item"), dict) else None
        raw_index = data.get("output_index")
        output_index = raw_index if isinstance(raw_index, int) else 0
        if event_type == "response.output_item.added" and item is not None and item.get("type") == "function_call":
            index = self._calls.setdefault(output_index, len(self._calls))
            return [self._chunk({"tool_calls": [{"index": index, "id": item.get("call_id"), "type": "function",
                                                 "function": {"name": item.get("name"), "arguments": ""}}]})]
        if event_type == "response.function_call_arguments.delta":
            if output_index not in self._calls:
                return []
            return [self._chunk({"tool_calls": [{"index": self._calls[output_index], "function": {"arguments": str(data.get("delta") or "")}}]})]
        if event_type in ("response.completed", "response.incomplete", "response.failed"):
            self.finished = True
            response = _object(data.get("response"))
            raise_if_failed(response)
            chunks = [self._chunk({}, _finish_reason(response, bool(self._calls)))]
            if self._include_usage:
                chunks.append({**self._chunk({}), "choices": [], "usage": chat_usage(response.get("usage"))})
            return chunks
        return []


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
