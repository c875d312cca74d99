"""Our public Responses event stream → Anthropic's Messages stream events.

The input is what the executor emits for a turn (every round, gateway calls
in their public form); the output is `message_start`, content blocks
(`content_block_start` / `_delta` / `_stop`, with their own contiguous
`index`), `message_delta` and `message_stop` — or an `error` event for a
failed turn, after which the stream ends (Anthropic sends no `message_stop`
after an error).

Gateway-internal items (operator and shell calls with their outputs,
code_interpreter and MCP items) emit nothing, so block indexes do not follow
`output_index`. Blocks open lazily on their first text, so an empty text or
reasoning part makes no block, exactly as on the JSON path; the stop reason and
usage come from the terminal response through the JSON path's own functions,
so a client accumulating the stream gets the same `Message`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from agentic_core.ids import new_id
from agentic_core.messages.errors import anthropic_error_type, error_object
from agentic_core.messages.response import (
    failure_error,
    gateway_function_names,
    is_client_call,
    list_of,
    message_id,
    message_model,
    messages_usage,
    part_text,
    search_input,
    server_tool_use_block,
    stop_reason,
    thinking_signature,
    thinking_text,
    tool_use_block,
    web_search_result_block,
)

AnthropicEvent = tuple[str, dict[str, Any]]
_TERMINAL = ("response.completed", "response.incomplete")
_DELTA_KEYS = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking"),
               "tool_use": ("input_json_delta", "partial_json")}


@dataclass(slots=True)
class _Block:
    index: int
    kind: str          # text | thinking | tool_use
    sent: str = ""     # the text, thinking or argument JSON sent so far
    closed: bool = False


class MessagesStreamTranslator:
    """Feed every public event of one turn to `translate`, in order; send what it returns as SSE (`event: name`).

    `request` is the Messages body (its `model` and `tools` are read).
    """

    def __init__(self, request: dict[str, Any]) -> None:
        self._request = request
        self._hidden_names = set(gateway_function_names(request.get("tools")))
        self._message_id = ""
        self._started = False
        self._finished = False
        self._next_index = 0
        self._open: _Block | None = None
        self._blocks: dict[tuple[Any, ...], _Block] = {}
        self._hidden_items: set[int] = set()
        self._thinking_source: dict[int, str] = {}

    @property
    def finished(self) -> bool:
        """True once `message_stop` or `error` was produced; later events are ignored."""
        return self._finished

    def translate(self, event_type: str, data: dict[str, Any]) -> list[AnthropicEvent]:
        """One public Responses event → the Anthropic events it completes (possibly none)."""
        if self._finished:
            return []
        response = data.get("response") if isinstance(data.get("response"), dict) else None
        if response is not None:
            self._hidden_names |= gateway_function_names(response.get("tools"))
        if event_type in ("error", "response.failed"):
            return self._error(event_type, data, response)
        events = [] if self._started else self._message_start(response)
        if event_type in _TERMINAL:
            return events + self._terminal(response or {})
        output_index = data.get("output_index")
        if not isinstance(output_index, int) or output_index in self._hidden_items:
            return events
        item = data.get("item") if isinstance(data.get("item"), dict) else None
        if event_type == "response.output_item.added" and item is not None:
            events += self._item_added(output_index, item)
        elif event_type == "response.output_item.done" and item is not None:
            events += self._item_done(output_index, item)
        elif event_type in ("response.output_text.delta", "response.refusal.delta"):
            events += self._delta(("text", output_index, _content_index(data)), "text", _text(data, "delta"))
        elif event_type in ("response.output_text.done", "response.refusal.done"):
            final = _text(data, "text" if event_type == "response.output_text.done" else "refusal")
            events += self._settle(("text", output_index, _content_index(data)), "text", final)
        elif event_type == "response.content_part.done":
            events += self._settle(("text", output_index, _content_index(data)), "text", part_text(data.get("part")))
        elif event_type in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
            # The JSON path shows reasoning text, or the summary when there is none: stream the first kind seen.
            source = self._thinking_source.setdefault(output_index, event_type)
            if source == event_type:
                events += self._delta(("thinking", output_index), "thinking", _text(data, "delta"))
        elif event_type == "response.function_call_arguments.delta":
            if ("call", output_index) in self._blocks:
                events += self._delta(("call", output_index), "tool_use", _text(data, "delta"))
        return events

    def interrupted(self, message: str) -> list[AnthropicEvent]:
        """The events that end a stream which broke off before its terminal event ([] once finished)."""
        if self._finished:
            return []
        self._finished = True
        return [("error", error_object("api_error", message))]

    # -- items -----------------------------------------------------------------------

    def _item_added(self, output_index: int, item: dict[str, Any]) -> list[AnthropicEvent]:
        item_type = item.get("type")
        if item_type in ("message", "reasoning"):
            return []  # their blocks open with their first text
        if item_type == "function_call" and is_client_call(item, self._hidden_names):
            events = self._start(("call", output_index), "tool_use", tool_use_block(item, {}))
            return events + self._delta(("call", output_index), "tool_use", _text(item, "arguments"))
        if item_type == "web_search_call":
            return self._search_call(output_index, item)
        self._hidden_items.add(output_index)  # gateway-internal: this item's later events are ignored too
        return []

    def _item_done(self, output_index: int, item: dict[str, Any]) -> list[AnthropicEvent]:
        item_type = item.get("type")
        if item_type == "message":
            events: list[AnthropicEvent] = []
            for content_index, part in enumerate(list_of(item.get("content"))):
                events += self._settle(("text", output_index, content_index), "text", part_text(part))
            return events
        if item_type == "reasoning":
            signature = thinking_signature(item)  # a hosted model's signature alone is still its thinking
            return self._settle(("thinking", output_index), "thinking", thinking_text(item), signature,
                                block=_empty_block("thinking") if signature else None)
        if item_type == "function_call" and is_client_call(item, self._hidden_names):
            return self._settle(("call", output_index), "tool_use", _text(item, "arguments"), block=tool_use_block(item, {}))
        if item_type == "web_search_call":
            events = [] if ("search", output_index) in self._blocks else self._search_call(output_index, item)
            result_key = ("search_result", output_index)
            return events + self._start(result_key, "web_search_tool_result", web_search_result_block(item)) + \
                self._close(self._blocks[result_key])
        return []

    def _search_call(self, output_index: int, item: dict[str, Any]) -> list[AnthropicEvent]:
        """Anthropic streams a server tool's input as JSON after an empty start, then closes the block."""
        key = ("search", output_index)
        events = self._start(key, "tool_use", server_tool_use_block(item, {}))
        events += self._delta(key, "tool_use", orjson.dumps(search_input(item)).decode())
        return events + self._close(self._blocks[key])

    # -- blocks ----------------------------------------------------------------------

    def _start(self, key: tuple[Any, ...], kind: str, content_block: dict[str, Any]) -> list[AnthropicEvent]:
        # Anthropic's blocks never overlap: a new block ends the open one.
        events = self._close(self._open) if self._open is not None else []
        block = _Block(self._next_index, kind)
        self._next_index += 1
        self._blocks[key] = block
        self._open = block
        return events + [("content_block_start",
                          {"type": "content_block_start", "index": block.index, "content_block": content_block})]

    def _delta(self, key: tuple[Any, ...], kind: str, text: str) -> list[AnthropicEvent]:
        if not text:
            return []
        block = self._blocks.get(key)
        events: list[AnthropicEvent] = []
        if block is None or block.closed:
            if kind == "tool_use":
                return []  # call blocks open with their item, which names the tool
            # First text of a part — or text after its block ended (overlapping items): a new block carries it.
            events += self._start(key, kind, _empty_block(kind))
            block = self._blocks[key]
        block.sent += text
        delta_type, field = _DELTA_KEYS[kind]
        return events + [("content_block_delta", {"type": "content_block_delta", "index": block.index,
                                                  "delta": {"type": delta_type, field: text}})]

    def _settle(self, key: tuple[Any, ...], kind: str, final: str, signature: str | None = None, *,
                block: dict[str, Any] | None = None) -> list[AnthropicEvent]:
        """End a block with its final text: what the deltas did not carry yet is sent first."""
        existing = self._blocks.get(key)
        if existing is not None and existing.closed:
            return []
        events: list[AnthropicEvent] = []
        if existing is None:
            if not final and block is None:
                return []  # an empty part or reasoning: no block, as on the JSON path
            events += self._start(key, kind, block or _empty_block(kind))
            existing = self._blocks[key]
        if final.startswith(existing.sent):
            events += self._delta(key, kind, final[len(existing.sent):])
        return events + self._close(existing, signature)

    def _close(self, block: _Block | None, signature: str | None = None) -> list[AnthropicEvent]:
        if block is None or block.closed:
            return []
        block.closed = True
        if self._open is block:
            self._open = None
        events: list[AnthropicEvent] = []
        if block.kind == "thinking":
            # Anthropic ends every thinking block with its signature; ours is the reasoning item's encrypted_content.
            events.append(("content_block_delta", {"type": "content_block_delta", "index": block.index,
                                                   "delta": {"type": "signature_delta", "signature": signature or ""}}))
        return events + [("content_block_stop", {"type": "content_block_stop", "index": block.index})]

    # -- message ---------------------------------------------------------------------

    def _message_start(self, response: dict[str, Any] | None) -> list[AnthropicEvent]:
        self._started = True
        response_id = (response or {}).get("id")
        self._message_id = message_id(response_id) if isinstance(response_id, str) and response_id else new_id("msg")
        usage = messages_usage(response) if response is not None and isinstance(response.get("usage"), dict) else None
        message: dict[str, Any] = {
            "id": self._message_id,
            "type": "message",
            "role": "assistant",
            "model": message_model(self._request, response),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # Input is counted once the turn's rounds are done: the total arrives with message_delta.
            "usage": {"input_tokens": usage["input_tokens"] if usage else 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 0},
        }
        # Anthropic sends a `ping` right after `message_start`; clients expect (and ignore) it.
        return [("message_start", {"type": "message_start", "message": message}), ("ping", {"type": "ping"})]

    def _terminal(self, response: dict[str, Any]) -> list[AnthropicEvent]:
        self._finished = True
        events = self._close(self._open)
        hidden = self._hidden_names | gateway_function_names(self._request.get("tools"), response.get("tools"))
        delta = {"stop_reason": stop_reason(response, hidden), "stop_sequence": None}
        # Usage on message_delta is cumulative: the whole turn's counts, as the JSON Message has them.
        events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": messages_usage(response)}))
        events.append(("message_stop", {"type": "message_stop"}))
        return events

    def _error(self, event_type: str, data: dict[str, Any], response: dict[str, Any] | None) -> list[AnthropicEvent]:
        self._finished = True
        if event_type == "response.failed":
            error = failure_error((response or {}).get("error"))
            return [("error", error_object(anthropic_error_type(error.http_status), error.message))]
        message = str(data.get("message") or "The response failed.")
        return [("error", error_object("api_error", message))]


def _empty_block(kind: str) -> dict[str, Any]:
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {"type": "text", "text": ""}


def _text(container: dict[str, Any], key: str) -> str:
    value = container.get(key)
    return value if isinstance(value, str) else ""


def _content_index(data: dict[str, Any]) -> int:
    """The event's part; an index that is not an integer counts as absent (the first part)."""
    index = data.get("content_index")
    return index if isinstance(index, int) else 0
