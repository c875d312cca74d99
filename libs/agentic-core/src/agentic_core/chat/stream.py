"""Chat Completions stream chunks → the Responses events vLLM's /v1/responses sends for the same generation.

One output item is open at a time, in the order the model produced them:
reasoning (`reasoning_content` / `reasoning`), message text (and refusal),
then each tool call (by its `index`). Switching kind closes the open item.
The terminal event waits for the usage chunk that `include_usage` adds after
the `finish_reason` chunk, or for `finish()`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agentic_core.chat.response import (
    function_call_item,
    invalid_reply,
    logprobs_from_chat,
    message_item,
    output_text_part,
    reasoning_item,
    response_object,
    status_for,
    usage_from_chat,
)
from agentic_core.errors import UpstreamUnavailable
from agentic_core.ids import new_id, new_item_id, new_response_id

STREAM_ERROR_CODE = "upstream_stream_error"


@dataclass(slots=True)
class _Message:
    item_id: str
    output_index: int
    parts: list[dict[str, Any]] = field(default_factory=list)
    part_type: str | None = None  # "output_text" or "refusal" while a part is open
    text: str = ""
    logprobs: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class _Reasoning:
    item_id: str
    output_index: int
    text: str = ""


@dataclass(slots=True)
class _ToolCall:
    chat_index: int
    item_id: str
    output_index: int = -1  # assigned when announced, once the name is known
    call_id: str | None = None
    name: str = ""
    arguments: str = ""

    @property
    def announced(self) -> bool:
        return self.output_index >= 0


_Open = _Message | _Reasoning | _ToolCall


def _event(event_type: str, sequence_number: int, **fields: Any) -> dict[str, Any]:
    # vLLM (like the openai SDK models) orders an event's fields by name, with `type` last.
    event = dict(sorted({**fields, "sequence_number": sequence_number}.items()))
    event["type"] = event_type
    return event


class ChatStreamTranslator:
    """Feed parsed chunks (not `[DONE]`) to `translate`, then call `finish` at end of stream.

    `request` is the Responses request the chat body was made from; the
    response objects in the lifecycle events echo it.
    """

    def __init__(self, request: dict[str, Any]) -> None:
        self._request = request
        self._response_id = new_response_id()
        self._created_at = int(time.time())
        self._model: str | None = None
        self._sequence = 0
        self._started = False
        self._open: _Open | None = None
        self._output: list[dict[str, Any]] = []
        self._next_output_index = 0
        self._call_indexes: set[int] = set()
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._terminal_sent = False

    def translate(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """One chunk → the Responses events it completes (possibly none)."""
        if self._terminal_sent:
            return []
        choices = _choices(chunk)
        events = [] if self._started else self._start(chunk)
        if chunk.get("usage") is not None:
            self._usage = usage_from_chat(chunk["usage"])
        for choice in choices:
            # A response has one output; we never ask for `n` > 1, so other choices are ignored.
            if choice.get("index", 0) != 0 or self._finish_reason is not None:
                continue
            events += self._choice(choice)
        if self._finish_reason is not None and self._usage is not None:
            events += self._terminal()
        return events

    def finish(self) -> list[dict[str, Any]]:
        """End of stream: the terminal event if the generation finished; [] if it was cut off."""
        if self._terminal_sent or self._finish_reason is None:
            return []
        return self._terminal()

    # -- chunk handling ------------------------------------------------------------

    def _start(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        self._started = True
        if isinstance(chunk.get("created"), int):
            self._created_at = chunk["created"]
        if isinstance(chunk.get("model"), str):
            self._model = chunk["model"]
        opening = self._response("in_progress", [])
        return [self._emit("response.created", response=opening),
                self._emit("response.in_progress", response=opening)]

    def _choice(self, choice: dict[str, Any]) -> list[dict[str, Any]]:
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise invalid_reply("`delta` is not an object")
        reasoning = _text(delta, "reasoning_content") or _text(delta, "reasoning")
        content = _text(delta, "content")
        refusal = _text(delta, "refusal")
        tool_calls = delta.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise invalid_reply("`delta.tool_calls` is not an array")
        finish_reason = choice.get("finish_reason")
        if finish_reason is not None and not isinstance(finish_reason, str):
            raise invalid_reply("`finish_reason` is not a string")
        events: list[dict[str, Any]] = []
        if reasoning:
            events += self._reasoning_delta(reasoning)
        if content:
            events += self._text_delta("output_text", content, logprobs_from_chat(choice.get("logprobs")))
        if refusal:
            events += self._text_delta("refusal", refusal, [])
        for tool_call in tool_calls:
            events += self._tool_call_delta(tool_call)
        if finish_reason is not None:
            self._finish_reason = finish_reason
            status, _, _ = status_for(finish_reason)
            events += self._close("incomplete" if status == "incomplete" else "completed")
            if not self._output:
                # An empty answer is still a message, as on the JSON path.
                events += self._text_delta("output_text", "", [], announce_only=True)
                events += self._close("incomplete" if status == "incomplete" else "completed")
        return events

    def _reasoning_delta(self, delta: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        item = self._open
        if not isinstance(item, _Reasoning):
            events += self._close("completed")
            item = _Reasoning(new_item_id("reasoning"), self._claim_output_index())
            self._open = item
            events.append(self._emit("response.output_item.added", item=reasoning_item(item.item_id, None, "in_progress"),
                                     output_index=item.output_index))
            events.append(self._emit("response.content_part.added", content_index=0, item_id=item.item_id,
                                     output_index=item.output_index, part={"text": "", "type": "reasoning_text"}))
        item.text += delta
        events.append(self._emit("response.reasoning_text.delta", content_index=0, delta=delta, item_id=item.item_id,
                                 output_index=item.output_index))
        return events

    def _text_delta(self, part_type: str, delta: str, logprobs: list[dict[str, Any]], *, announce_only: bool = False
                    ) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        message = self._open
        if not isinstance(message, _Message):
            events += self._close("completed")
            message = _Message(new_item_id("message"), self._claim_output_index())
            self._open = message
            events.append(self._emit("response.output_item.added", item=message_item(message.item_id, [], "in_progress"),
                                     output_index=message.output_index))
        if message.part_type != part_type:
            events += self._close_part(message)
            message.part_type = part_type
            empty = output_text_part("", []) if part_type == "output_text" else {"refusal": "", "type": "refusal"}
            events.append(self._emit("response.content_part.added", content_index=len(message.parts),
                                     item_id=message.item_id, output_index=message.output_index, part=empty))
        if announce_only:
            return events
        message.text += delta
        message.logprobs += logprobs
        if part_type == "output_text":
            events.append(self._emit("response.output_text.delta", content_index=len(message.parts), delta=delta,
                                     item_id=message.item_id, logprobs=logprobs, output_index=message.output_index))
        else:
            events.append(self._emit("response.refusal.delta", content_index=len(message.parts), delta=delta,
                                     item_id=message.item_id, output_index=message.output_index))
        return events

    def _tool_call_delta(self, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, dict):
            raise invalid_reply("a `tool_calls` entry is not an object")
        function = raw.get("function") or {}
        if not isinstance(function, dict):
            raise invalid_reply("a tool call's `function` is not an object")
        call_id, name, arguments = _text(raw, "id"), _text(function, "name"), _text(function, "arguments")
        index = raw.get("index")
        if index is None:
            # Some servers omit `index`: a new id starts a new call, anything else continues the open one.
            current_index = self._open.chat_index if isinstance(self._open, _ToolCall) else -1
            index = current_index + 1 if call_id or current_index < 0 else current_index
        if not isinstance(index, int) or isinstance(index, bool):
            raise invalid_reply("a tool call's `index` is not an integer")
        events: list[dict[str, Any]] = []
        call = self._open
        if not isinstance(call, _ToolCall) or call.chat_index != index:
            if index in self._call_indexes:
                raise invalid_reply(f"tool call {index} continued after another output item began")
            events += self._close("completed")
            call = _ToolCall(index, new_item_id("function_call"))
            self._call_indexes.add(index)
            self._open = call
        if call_id and call.call_id is None:
            call.call_id = call_id
        if name:
            call.name += name
        if not call.announced and call.name:
            events += self._announce(call)
        if arguments:
            call.arguments += arguments
            if call.announced:
                events.append(self._emit("response.function_call_arguments.delta", delta=arguments,
                                         item_id=call.item_id, output_index=call.output_index))
        return events

    def _announce(self, call: _ToolCall) -> list[dict[str, Any]]:
        call.output_index = self._claim_output_index()
        call.call_id = call.call_id or new_id("call")
        item = function_call_item(call.item_id, call.call_id, call.name, "", "in_progress")
        events = [self._emit("response.output_item.added", item=item, output_index=call.output_index)]
        if call.arguments:
            # Arguments that arrived before the name are sent as one delta.
            events.append(self._emit("response.function_call_arguments.delta", delta=call.arguments,
                                     item_id=call.item_id, output_index=call.output_index))
        return events

    # -- closing -----------------------------------------------------------------

    def _close(self, status: str) -> list[dict[str, Any]]:
        item, self._open = self._open, None
        if item is None:
            return []
        if isinstance(item, _Message):
            events = self._close_part(item)
            done = message_item(item.item_id, item.parts, status)
        elif isinstance(item, _Reasoning):
            events = [
                self._emit("response.reasoning_text.done", content_index=0, item_id=item.item_id,
                           output_index=item.output_index, text=item.text),
                self._emit("response.content_part.done", content_index=0, item_id=item.item_id,
                           output_index=item.output_index, part={"text": item.text, "type": "reasoning_text"}),
            ]
            done = reasoning_item(item.item_id, item.text, status)
        else:
            if not item.announced:
                raise invalid_reply(f"tool call {item.chat_index} ended without a function name")
            arguments_done = self._emit("response.function_call_arguments.done", arguments=item.arguments,
                                        item_id=item.item_id, output_index=item.output_index)
            arguments_done["name"] = item.name
            events = [arguments_done]
            done = function_call_item(item.item_id, item.call_id or "", item.name, item.arguments, status)
        events.append(self._emit("response.output_item.done", item=done, output_index=item.output_index))
        self._output.append(done)
        return events

    def _close_part(self, message: _Message) -> list[dict[str, Any]]:
        if message.part_type is None:
            return []
        content_index = len(message.parts)
        common = {"content_index": content_index, "item_id": message.item_id, "output_index": message.output_index}
        if message.part_type == "output_text":
            part = output_text_part(message.text, message.logprobs)
            events = [self._emit("response.output_text.done", logprobs=message.logprobs, text=message.text, **common)]
        else:
            part = {"refusal": message.text, "type": "refusal"}
            events = [self._emit("response.refusal.done", refusal=message.text, **common)]
        events.append(self._emit("response.content_part.done", part=part, **common))
        message.parts.append(part)
        message.part_type, message.text, message.logprobs = None, "", []
        return events

    def _terminal(self) -> list[dict[str, Any]]:
        self._terminal_sent = True
        status, incomplete_details, error = status_for(self._finish_reason)
        response = self._response(status, list(self._output), incomplete_details, error)
        return [self._emit(f"response.{status}", response=response)]

    # -- helpers -----------------------------------------------------------------

    def _claim_output_index(self) -> int:
        index = self._next_output_index
        self._next_output_index += 1
        return index

    def _response(self, status: str, output: list[dict[str, Any]], incomplete_details: dict[str, Any] | None = None,
                  error: dict[str, Any] | None = None) -> dict[str, Any]:
        return response_object(
            self._request, response_id=self._response_id, created_at=self._created_at, model=self._model,
            status=status, output=output, usage=self._usage if status != "in_progress" else None,
            incomplete_details=incomplete_details, error=error,
        )

    def _emit(self, event_type: str, **fields: Any) -> dict[str, Any]:
        event = _event(event_type, self._sequence, **fields)
        self._sequence += 1
        return event


def _choices(chunk: Any) -> list[dict[str, Any]]:
    if not isinstance(chunk, dict):
        raise invalid_reply("a stream chunk is not a JSON object")
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        error = chunk.get("error")
        if isinstance(error, dict):
            # vLLM reports a failure after the 200 as an `{"error": {...}}` chunk.
            raise UpstreamUnavailable(f"The model server failed mid-stream: {error.get('message') or error}",
                                      code=STREAM_ERROR_CODE)
        raise invalid_reply("a stream chunk has no `choices` array")
    if not all(isinstance(choice, dict) for choice in choices):
        raise invalid_reply("a `choices` entry is not an object")
    return choices


def _text(container: dict[str, Any], key: str) -> str | None:
    value = container.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid_reply(f"`{key}` is not a string")
    return value
