"""Strict replay of the SSE text a streaming coordinator relayed: a complete, consistent lifecycle or 400.

The stream must open with `response.created`, describe one upstream response
throughout, and end with exactly one terminal event (nothing but `[DONE]`
after it). Every item event must name an item that is open at its
`output_index`, of the right type, with its `item_id`; indexes are used once,
in order; a call id, once announced, never changes (added, argument events,
done, terminal output). A stream whose terminal status is `failed` is
returned but never stored, so only its lifecycle is checked, not its items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from agentic_core.responses.items import CALL_TYPES
from agentic_core.responses.stream import RoundOutcome
from agentic_core.split.outcome import (
    KNOWN_OUTPUT_TYPES,
    UNSTORED_STATUSES,
    check_output_items,
    invalid,
    normalized_output,
    outcome_parts,
    terminal_status,
)
from agentic_core.sse import DONE, SseParser

OPENING_EVENTS = frozenset({"response.queued", "response.in_progress"})
TERMINAL_EVENTS = {"response.completed": "completed", "response.incomplete": "incomplete", "response.failed": "failed"}
# Event type → (item types it may touch, the string field it must carry, whether it addresses a content part).
ITEM_EVENTS: dict[str, tuple[frozenset[str], str | None, bool]] = {
    "response.output_text.delta": (frozenset({"message"}), "delta", True),
    "response.output_text.done": (frozenset({"message"}), "text", True),
    "response.output_text.annotation.added": (frozenset({"message"}), None, True),
    "response.refusal.delta": (frozenset({"message"}), "delta", True),
    "response.refusal.done": (frozenset({"message"}), "refusal", True),
    "response.function_call_arguments.delta": (frozenset({"function_call"}), "delta", False),
    "response.function_call_arguments.done": (frozenset({"function_call"}), "arguments", False),
    "response.custom_tool_call_input.delta": (frozenset({"custom_tool_call"}), "delta", False),
    "response.custom_tool_call_input.done": (frozenset({"custom_tool_call"}), "input", False),
    "response.reasoning_text.delta": (frozenset({"reasoning"}), "delta", False),
    "response.reasoning_text.done": (frozenset({"reasoning"}), "text", False),
    "response.reasoning_part.added": (frozenset({"reasoning"}), None, False),
    "response.reasoning_part.done": (frozenset({"reasoning"}), None, False),
    "response.reasoning_summary_part.added": (frozenset({"reasoning"}), None, False),
    "response.reasoning_summary_part.done": (frozenset({"reasoning"}), None, False),
    "response.reasoning_summary_text.delta": (frozenset({"reasoning"}), "delta", False),
    "response.reasoning_summary_text.done": (frozenset({"reasoning"}), "text", False),
}
PART_EVENTS = frozenset({"response.content_part.added", "response.content_part.done"})
PART_ITEM_TYPES = frozenset({"message", "reasoning"})


class _ItemProblem(Exception):
    """An item-level inconsistency: fatal for a stored turn, ignored for a failed one."""


@dataclass(slots=True)
class _OpenItem:
    index: int
    item_type: str
    item_id: str
    call_id: str  # "" until announced
    done: bool = False
    parts_added: int = 0
    parts_done: set[int] = field(default_factory=set)
    final: dict[str, Any] | None = None


class SseLifecycle:
    """Feed parsed events in order with `accept`, then `finish` for the outcome."""

    def __init__(self) -> None:
        self.upstream_id: str | None = None
        self.opening_seen: set[str] = set()
        self.terminal: dict[str, Any] | None = None
        self.terminal_status: str | None = None
        self.done_marker = False
        self.last_sequence: int | None = None
        self.items: list[_OpenItem] = []
        self.item_ids: set[str] = set()
        self.item_problem: str | None = None
        self.frames = 0

    # -- lifecycle (always strict) ------------------------------------------------

    def accept_frame(self, event_name: str | None, data: bytes) -> None:
        self.frames += 1
        where = f"SSE event {self.frames}"
        if self.done_marker:
            raise invalid(f"{where} follows [DONE]", "sse")
        if data.strip() == DONE:
            if self.terminal is None:
                raise invalid("the stream sent [DONE] before its terminal event", "sse")
            self.done_marker = True
            return
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise invalid(f"{where} is not JSON", "sse") from None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise invalid(f"{where} is not an event object with a type", "sse")
        event_type = event["type"]
        if event_name is not None and event_name != event_type:
            raise invalid(f"{where}: its `event:` name and its data type differ", "sse")
        self._check_sequence(event, where)
        if self.terminal is not None:
            raise invalid(f"{where} follows the terminal event", "sse")
        if event_type == "response.created":
            if self.upstream_id is not None:
                raise invalid("the stream creates its response more than once", "sse")
            self.upstream_id = self._lifecycle_response_id(event, where, first=True)
            return
        if self.upstream_id is None:
            raise invalid("the stream does not open with response.created", "sse")
        if event_type in OPENING_EVENTS:
            if event_type in self.opening_seen or (event_type == "response.queued" and self.opening_seen):
                raise invalid(f"{where} repeats {event_type}", "sse")
            self._lifecycle_response_id(event, where)
            self.opening_seen.add(event_type)
            return
        if event_type in TERMINAL_EVENTS or event_type == "error":
            self._accept_terminal(event, event_type, where)
            return
        if self.item_problem is not None:
            return  # items are no longer tracked after the first problem
        try:
            self._accept_item_event(event, event_type, where)
        except _ItemProblem as problem:
            self.item_problem = str(problem)

    def _check_sequence(self, event: dict[str, Any], where: str) -> None:
        sequence = event.get("sequence_number")
        if sequence is None:
            return
        if not isinstance(sequence, int) or isinstance(sequence, bool) or (self.last_sequence is not None and sequence <= self.last_sequence):
            raise invalid(f"{where} has a sequence_number out of order", "sse")
        self.last_sequence = sequence

    def _lifecycle_response_id(self, event: dict[str, Any], where: str, first: bool = False) -> str:
        response = event.get("response")
        if not isinstance(response, dict):
            raise invalid(f"{where} ({event['type']}) carries no response object", "sse")
        response_id = response.get("id")
        if not isinstance(response_id, str) or not response_id:
            raise invalid(f"{where} ({event['type']}) carries a response without an id", "sse")
        if not first and response_id != self.upstream_id:
            raise invalid(f"{where} ({event['type']}) describes a different response than response.created", "sse")
        return response_id

    def _accept_terminal(self, event: dict[str, Any], event_type: str, where: str) -> None:
        if event_type == "error":
            # A stream-level error ends the response as failed (nothing is stored).
            message = event.get("message")
            code = event.get("code")
            self.terminal = {"status": "failed", "output": [], "error": {
                "code": str(code) if isinstance(code, str | int) else "upstream_error",
                "message": message if isinstance(message, str) else "",
            }}
            self.terminal_status = "failed"
            return
        self._lifecycle_response_id(event, where)
        response = event["response"]
        status = terminal_status(response)
        if status != TERMINAL_EVENTS[event_type]:
            raise invalid(f"{where} ({event_type}) carries a response whose status is not {TERMINAL_EVENTS[event_type]}", "sse")
        output = response.get("output")
        if output is not None and not isinstance(output, list):
            raise invalid(f"{where} ({event_type}) carries an output that is not an array", "sse")
        self.terminal = response
        self.terminal_status = status

    # -- items (strict unless the response failed) ---------------------------------

    def _open_item(self, event: dict[str, Any], where: str) -> _OpenItem:
        index = event.get("output_index")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.items):
            raise _ItemProblem(f"{where} ({event['type']}) names no added output item")
        item = self.items[index]
        if item.done:
            raise _ItemProblem(f"{where} ({event['type']}) changes output[{index}] after its output_item.done")
        return item

    def _accept_item_event(self, event: dict[str, Any], event_type: str, where: str) -> None:
        if event_type == "response.output_item.added":
            self._item_added(event, where)
        elif event_type == "response.output_item.done":
            self._item_done(event, where)
        elif event_type in PART_EVENTS:
            item = self._open_item(event, where)
            self._check_item_id(event, item, where)
            if item.item_type not in PART_ITEM_TYPES or not isinstance(event.get("part"), dict):
                raise _ItemProblem(f"{where} ({event_type}) does not fit its item")
            content_index = event.get("content_index")
            if event_type == "response.content_part.added":
                if content_index != item.parts_added:
                    raise _ItemProblem(f"{where} adds a content part out of order")
                item.parts_added += 1
            else:
                item.parts_done.add(self._check_part(item, content_index, where, event_type))
        elif event_type in ITEM_EVENTS:
            item_types, data_field, addresses_part = ITEM_EVENTS[event_type]
            item = self._open_item(event, where)
            self._check_item_id(event, item, where)
            if item.item_type not in item_types:
                raise _ItemProblem(f"{where} ({event_type}) does not apply to the {item.item_type} at that output_index")
            if data_field is not None and not isinstance(event.get(data_field), str):
                raise _ItemProblem(f"{where} ({event_type}) carries no `{data_field}` string")
            if addresses_part:
                self._check_part(item, event.get("content_index"), where, event_type)
            self._announce_call_id(item, event.get("call_id"), where)
        else:
            raise _ItemProblem(f"{where} has an event type that split execution does not accept")

    def _item_added(self, event: dict[str, Any], where: str) -> None:
        index = event.get("output_index")
        if index != len(self.items):
            raise _ItemProblem(f"{where} (response.output_item.added) does not use the next output_index")
        item: Any = event.get("item")  # checked by _added_item_problem
        problem = _added_item_problem(item, f"{where}'s item")
        if problem is not None:
            raise _ItemProblem(problem)
        if item["id"] in self.item_ids:
            raise _ItemProblem(f"{where} (response.output_item.added) reuses an item id")
        self.item_ids.add(item["id"])
        call_id = item.get("call_id")
        self.items.append(_OpenItem(index, item["type"], item["id"], call_id if isinstance(call_id, str) else ""))

    def _item_done(self, event: dict[str, Any], where: str) -> None:
        open_item = self._open_item(event, where)
        item = event.get("item")
        if not isinstance(item, dict) or item.get("type") != open_item.item_type or item.get("id") != open_item.item_id:
            raise _ItemProblem(f"{where} (response.output_item.done) does not describe the item it completes")
        self._announce_call_id(open_item, item.get("call_id"), where)
        if open_item.item_type == "message" and len(open_item.parts_done) != open_item.parts_added:
            raise _ItemProblem(f"{where} completes a message with an unfinished content part")
        final = dict(item)
        if open_item.call_id:
            final["call_id"] = open_item.call_id
        open_item.final = final
        open_item.done = True

    def _check_item_id(self, event: dict[str, Any], item: _OpenItem, where: str) -> None:
        if event.get("item_id") != item.item_id:
            raise _ItemProblem(f"{where} ({event['type']}) does not name the item_id at its output_index")

    @staticmethod
    def _check_part(item: _OpenItem, content_index: Any, where: str, event_type: str) -> int:
        """The index of an added, still open content part."""
        if not isinstance(content_index, int) or isinstance(content_index, bool) or not 0 <= content_index < item.parts_added:
            raise _ItemProblem(f"{where} ({event_type}) names no added content part")
        if content_index in item.parts_done:
            raise _ItemProblem(f"{where} ({event_type}) changes a content part after content_part.done")
        return content_index

    @staticmethod
    def _announce_call_id(item: _OpenItem, call_id: Any, where: str) -> None:
        if item.item_type not in CALL_TYPES or not isinstance(call_id, str) or not call_id:
            return
        if item.call_id and call_id != item.call_id:
            raise _ItemProblem(f"{where} changes the call_id that output[{item.index}] announced")
        item.call_id = call_id

    # -- the end --------------------------------------------------------------------

    def finish(self) -> RoundOutcome:
        if self.upstream_id is None:
            raise invalid("the stream does not open with response.created", "sse")
        if self.terminal is None or self.terminal_status is None:
            raise invalid("the stream ended before its terminal event (truncated)", "sse")
        terminal_output = self.terminal.get("output") or []
        if self.terminal_status in UNSTORED_STATUSES:
            output = terminal_output or [item.final for item in self.items if item.final is not None]
            return RoundOutcome(status=self.terminal_status, output=normalized_output(output), **outcome_parts(self.terminal))
        if self.item_problem is not None:
            raise invalid(self.item_problem, "sse")
        for index, item in enumerate(self.items):
            if not item.done:
                raise invalid(f"output[{index}] was added but never completed (response.output_item.done)", "sse")
        streamed = [item.final for item in self.items if item.final is not None]
        if terminal_output:
            self._check_terminal_output(terminal_output)
            output = [_with_call_id(item, open_item) for item, open_item in zip(terminal_output, self.items, strict=True)]
        else:
            output = streamed
        check_output_items(output)
        return RoundOutcome(status=self.terminal_status, output=normalized_output(output), **outcome_parts(self.terminal))

    def _check_terminal_output(self, terminal_output: list[Any]) -> None:
        if len(terminal_output) != len(self.items):
            raise invalid("the terminal response's output differs from the items the stream relayed", "sse")
        for index, (item, open_item) in enumerate(zip(terminal_output, self.items, strict=True)):
            if not isinstance(item, dict) or item.get("type") != open_item.item_type or item.get("id") != open_item.item_id:
                raise invalid(f"the terminal response's output[{index}] is not the item the stream relayed", "sse")
            call_id = item.get("call_id")
            if open_item.item_type in CALL_TYPES and isinstance(call_id, str) and call_id and call_id != open_item.call_id:
                raise invalid(f"the terminal response's output[{index}] changes the call_id its item announced", "sse")


def _added_item_problem(item: Any, where: str) -> str | None:
    """An item as first announced: its fields may still be empty, but its type, id and role are final."""
    if not isinstance(item, dict):
        return f"{where} is not an object"
    if item.get("type") not in KNOWN_OUTPUT_TYPES:
        return f"{where} has an unsupported item type"
    if not isinstance(item.get("id"), str) or not item["id"]:
        return f"{where} has no id"
    if item["type"] == "message" and item.get("role") != "assistant":
        return f"{where} is a message whose role is not assistant"
    return None


def _with_call_id(item: dict[str, Any], open_item: _OpenItem) -> dict[str, Any]:
    if open_item.item_type in CALL_TYPES and open_item.call_id and item.get("call_id") != open_item.call_id:
        return {**item, "call_id": open_item.call_id}
    return item


def outcome_from_sse(text: str) -> RoundOutcome:
    """The raw SSE text of one relayed stream → the outcome to store, or 400."""
    raw = text.encode()
    parser = SseParser(max_event_bytes=len(raw) + 1)  # the whole text is already bounded by the caller
    lifecycle = SseLifecycle()
    for event in parser.feed(raw) + parser.close():
        lifecycle.accept_frame(event.event, event.data)
    return lifecycle.finish()
