"""Anthropic's Messages stream events → the Responses events vLLM's /v1/responses sends for the same generation.

`message_start` opens the response; each content block (`content_block_start`
… `content_block_stop`) is one output item: `text_delta` → output text,
`thinking_delta` → reasoning text and `signature_delta` → its blob,
`input_json_delta` → function call arguments (however finely split);
`message_delta` carries the stop reason and output usage, `message_stop` the
end. `ping` is nothing; an `error` event fails the stream (the round ends
failed). A stream cut before `message_delta` has no terminal event.
"""

from __future__ import annotations

from typing import Any

from agentic_core.errors import UpstreamUnavailable
from agentic_core.json_types import Event
from agentic_core.providers.anthropic.request import REDACTED_PREFIX, THINKING_PREFIX
from agentic_core.providers.anthropic.response import PROVIDER, status_for, usage_from_anthropic
from agentic_core.providers.common import invalid_reply
from agentic_core.providers.events import ResponsesEventWriter

STREAM_ERROR_CODE = "upstream_stream_error"


class AnthropicStreamTranslator:
    """Feed parsed events (`data` JSON) to `translate`, then call `finish` at the end of the stream."""

    def __init__(self, request: dict[str, Any]) -> None:
        self._writer = ResponsesEventWriter(request)
        self._usage: dict[str, Any] = {}
        self._stop_reason: str | None = None
        self._stopped = False
        self._block_kind: str | None = None
        self._signature_pending = False  # the open thinking block's blob has begun
        self._arguments_seen = False  # the open tool_use block's input has begun

    def translate(self, event: dict[str, Any]) -> list[Event]:
        if self._writer.finished:
            return []
        kind = event.get("type")
        if kind == "error":
            error = _object(event.get("error"))
            raise UpstreamUnavailable(f"The model server failed mid-stream: {error.get('message') or error}",
                                      code=STREAM_ERROR_CODE)
        if kind == "ping":
            return []
        if kind == "message_start":
            message = _object(event.get("message"))
            self._merge_usage(message.get("usage"))
            model = message.get("model")
            return self._writer.start(model if isinstance(model, str) else None)
        events = [] if self._writer.started else self._writer.start()
        if kind == "content_block_start":
            events += self._block_start(event.get("content_block"))
        elif kind == "content_block_delta":
            events += self._delta(event.get("delta"))
        elif kind == "content_block_stop":
            if self._block_kind == "tool_use" and not self._arguments_seen:
                events += self._writer.arguments("{}")  # a call without arguments: its input is an empty object
            self._block_kind = None
            events += self._writer.close()
        elif kind == "message_delta":
            delta = _object(event.get("delta"))
            if isinstance(delta.get("stop_reason"), str):
                self._stop_reason = delta["stop_reason"]
            self._merge_usage(event.get("usage"))
        elif kind == "message_stop":
            self._stopped = True
            events += self._terminal()
        return events

    def finish(self) -> list[Event]:
        """End of stream: the terminal event if the generation ended; [] if the stream was cut."""
        if self._writer.finished or self._stop_reason is None:
            return []
        return self._terminal()

    def _block_start(self, block: Any) -> list[Event]:
        if not isinstance(block, dict):
            raise invalid_reply(PROVIDER, "`content_block` is not an object")
        kind = block.get("type")
        self._block_kind = kind if isinstance(kind, str) else None
        self._signature_pending = self._arguments_seen = False
        if kind == "text":
            return self._writer.text(str(block.get("text") or ""))
        if kind == "thinking":
            events = self._writer.reasoning(str(block.get("thinking") or ""))
            if isinstance(block.get("signature"), str) and block["signature"]:
                events += self._writer.reasoning_blob(THINKING_PREFIX + block["signature"])
            return events
        if kind == "redacted_thinking":
            return self._writer.reasoning_blob(REDACTED_PREFIX + str(block.get("data") or ""), new_item=True)
        if kind == "tool_use":
            name, call_id = block.get("name"), block.get("id")
            if not isinstance(name, str) or not name:
                raise invalid_reply(PROVIDER, "a tool_use block has no name")
            return self._writer.call(name, call_id if isinstance(call_id, str) and call_id else None)
        return self._writer.close()  # server tool blocks and future kinds: not output the round loop reads

    def _delta(self, delta: Any) -> list[Event]:
        if not isinstance(delta, dict):
            raise invalid_reply(PROVIDER, "`delta` is not an object")
        kind = delta.get("type")
        if kind == "text_delta" and self._block_kind == "text":
            return self._writer.text(str(delta.get("text") or ""))
        if kind == "thinking_delta" and self._block_kind == "thinking":
            return self._writer.reasoning(str(delta.get("thinking") or ""))
        if kind == "signature_delta" and self._block_kind == "thinking":
            signature = str(delta.get("signature") or "")
            if not signature:
                return []
            prefix = "" if self._signature_pending else THINKING_PREFIX
            self._signature_pending = True
            return self._writer.reasoning_blob(prefix + signature)
        if kind == "input_json_delta" and self._block_kind == "tool_use":
            partial = str(delta.get("partial_json") or "")
            self._arguments_seen = self._arguments_seen or bool(partial)
            return self._writer.arguments(partial)
        return []

    def _merge_usage(self, raw: Any) -> None:
        if isinstance(raw, dict):
            self._usage.update({key: value for key, value in raw.items() if value is not None})

    def _terminal(self) -> list[Event]:
        status, incomplete_details = status_for(self._stop_reason)
        return self._writer.finish(status, usage=usage_from_anthropic(self._usage), incomplete_details=incomplete_details)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
