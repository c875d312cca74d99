"""The Responses events of one generation, written as a provider's stream reveals it.

Provider stream translators say what arrived (text, reasoning, a reasoning blob,
a call and its argument pieces, the end) and this writer emits the events vLLM's
/v1/responses sends for the same output: one item open at a time, in the
model's order, each with its added/delta/done lifecycle, then one terminal
event echoing the request.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agentic_core.chat.response import (
    function_call_item,
    message_item,
    output_text_part,
    reasoning_item,
    response_object,
)
from agentic_core.ids import new_id, new_item_id, new_response_id
from agentic_core.json_types import Event


@dataclass(slots=True)
class _Message:
    item_id: str
    output_index: int
    text: str = ""
    part_open: bool = False
    parts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class _Reasoning:
    item_id: str
    output_index: int
    text: str = ""
    part_open: bool = False
    encrypted_content: str | None = None


@dataclass(slots=True)
class _Call:
    item_id: str
    output_index: int
    call_id: str
    name: str
    arguments: str = ""


_Open = _Message | _Reasoning | _Call


def _event(event_type: str, sequence_number: int, **fields: Any) -> Event:
    # vLLM (like the openai SDK models) orders an event's fields by name, with `type` last.
    event = dict(sorted({**fields, "sequence_number": sequence_number}.items()))
    event["type"] = event_type
    return event


def reasoning_output_item(item_id: str, text: str, encrypted_content: str | None, status: str) -> dict[str, Any]:
    """A reasoning item as the adapters produce it: its text (if any), the provider's blob (if any)."""
    item = reasoning_item(item_id, text if text else None, status)
    if encrypted_content is not None:
        item["encrypted_content"] = encrypted_content
    return item


class ResponsesEventWriter:
    """`start` once, then the output as it arrives, then `finish`. `request`: the Responses request the provider
    body was made from (the response objects echo it)."""

    def __init__(self, request: dict[str, Any]) -> None:
        self._request = request
        self._response_id = new_response_id()
        self._created_at = int(time.time())
        self._model: str | None = None
        self._sequence = 0
        self._open: _Open | None = None
        self._output: list[dict[str, Any]] = []
        self._next_output_index = 0
        self.started = False
        self.finished = False

    @property
    def has_output(self) -> bool:
        return bool(self._output) or self._open is not None

    def start(self, model: str | None = None) -> list[Event]:
        self.started = True
        self._model = model
        opening = self._response("in_progress", [])
        return [self._emit("response.created", response=opening), self._emit("response.in_progress", response=opening)]

    def text(self, delta: str) -> list[Event]:
        events: list[Event] = []
        message = self._open
        if not isinstance(message, _Message):
            events += self.close()
            message = _Message(new_item_id("message"), self._claim_output_index())
            self._open = message
            events.append(self._emit("response.output_item.added", item=message_item(message.item_id, [], "in_progress"),
                                     output_index=message.output_index))
        if not message.part_open:
            message.part_open = True
            events.append(self._emit("response.content_part.added", content_index=len(message.parts),
                                     item_id=message.item_id, output_index=message.output_index,
                                     part=output_text_part("", [])))
        if delta:
            message.text += delta
            events.append(self._emit("response.output_text.delta", content_index=len(message.parts), delta=delta,
                                     item_id=message.item_id, logprobs=[], output_index=message.output_index))
        return events

    def reasoning(self, delta: str) -> list[Event]:
        events = self._reasoning_open()
        item = self._open
        assert isinstance(item, _Reasoning)
        if not item.part_open:
            item.part_open = True
            events.append(self._emit("response.content_part.added", content_index=0, item_id=item.item_id,
                                     output_index=item.output_index, part={"text": "", "type": "reasoning_text"}))
        if delta:
            item.text += delta
            events.append(self._emit("response.reasoning_text.delta", content_index=0, delta=delta,
                                     item_id=item.item_id, output_index=item.output_index))
        return events

    def reasoning_blob(self, encrypted_content: str, *, new_item: bool = False) -> list[Event]:
        """The provider's own reasoning state (a signature) on the open reasoning item, or on a new one."""
        events = self.close() if new_item else []
        events += self._reasoning_open()
        item = self._open
        assert isinstance(item, _Reasoning)
        item.encrypted_content = (item.encrypted_content or "") + encrypted_content
        return events

    def call(self, name: str, call_id: str | None = None) -> list[Event]:
        events = self.close()
        call = _Call(new_item_id("function_call"), self._claim_output_index(), call_id or new_id("call"), name)
        self._open = call
        item = function_call_item(call.item_id, call.call_id, call.name, "", "in_progress")
        events.append(self._emit("response.output_item.added", item=item, output_index=call.output_index))
        return events

    def arguments(self, delta: str) -> list[Event]:
        call = self._open
        if not isinstance(call, _Call) or not delta:
            return []
        call.arguments += delta
        return [self._emit("response.function_call_arguments.delta", delta=delta, item_id=call.item_id,
                           output_index=call.output_index)]

    def close(self, status: str = "completed") -> list[Event]:
        """Ends the open item (if any)."""
        item, self._open = self._open, None
        if item is None:
            return []
        events: list[Event]
        if isinstance(item, _Message):
            events = self._close_part(item)
            done = message_item(item.item_id, item.parts, status)
        elif isinstance(item, _Reasoning):
            events = []
            if item.part_open:
                part = {"text": item.text, "type": "reasoning_text"}
                events += [
                    self._emit("response.reasoning_text.done", content_index=0, item_id=item.item_id,
                               output_index=item.output_index, text=item.text),
                    self._emit("response.content_part.done", content_index=0, item_id=item.item_id,
                               output_index=item.output_index, part=part),
                ]
            done = reasoning_output_item(item.item_id, item.text, item.encrypted_content, status)
        else:
            arguments_done = self._emit("response.function_call_arguments.done", arguments=item.arguments,
                                        item_id=item.item_id, output_index=item.output_index)
            arguments_done["name"] = item.name
            events = [arguments_done]
            done = function_call_item(item.item_id, item.call_id, item.name, item.arguments, status)
        events.append(self._emit("response.output_item.done", item=done, output_index=item.output_index))
        self._output.append(done)
        return events

    def finish(self, status: str, *, usage: dict[str, Any] | None, incomplete_details: dict[str, Any] | None = None,
               error: dict[str, Any] | None = None) -> list[Event]:
        """The open item closed and the terminal event; an empty answer is still a message, as on the JSON path."""
        item_status = "incomplete" if status == "incomplete" else "completed"
        events = self.close(item_status)
        if status != "failed" and not any(item["type"] in ("message", "function_call") for item in self._output):
            events += self.text("")
            events += self.close(item_status)
        self.finished = True
        response = self._response(status, list(self._output), usage, incomplete_details, error)
        return [*events, self._emit(f"response.{status}", response=response)]

    # -- helpers -----------------------------------------------------------------

    def _reasoning_open(self) -> list[Event]:
        if isinstance(self._open, _Reasoning):
            return []
        events = self.close()
        item = _Reasoning(new_item_id("reasoning"), self._claim_output_index())
        self._open = item
        events.append(self._emit("response.output_item.added", item=reasoning_item(item.item_id, None, "in_progress"),
                                 output_index=item.output_index))
        return events

    def _close_part(self, message: _Message) -> list[Event]:
        if not message.part_open:
            return []
        content_index = len(message.parts)
        common = {"content_index": content_index, "item_id": message.item_id, "output_index": message.output_index}
        part = output_text_part(message.text, [])
        events = [self._emit("response.output_text.done", logprobs=[], text=message.text, **common),
                  self._emit("response.content_part.done", part=part, **common)]
        message.parts.append(part)
        message.part_open, message.text = False, ""
        return events

    def _claim_output_index(self) -> int:
        index = self._next_output_index
        self._next_output_index += 1
        return index

    def _response(self, status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None = None,
                  incomplete_details: dict[str, Any] | None = None, error: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
        return response_object(self._request, response_id=self._response_id, created_at=self._created_at,
                               model=self._model, status=status, output=output, usage=usage,
                               incomplete_details=incomplete_details, error=error)

    def _emit(self, event_type: str, **fields: Any) -> Event:
        event = _event(event_type, self._sequence, **fields)
        self._sequence += 1
        return event
