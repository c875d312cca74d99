"""Translation of a model server's Responses output into our public output.

The model server's ids are replaced with ours (consistently across events),
sequence numbers are ours and continuous, text parts get `logprobs: []`, and
the upstream lifecycle events (created, in_progress, terminal) are held back
because the executor emits its own around persistence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentic_core.errors import UpstreamUnavailable
from agentic_core.ids import new_item_id
from agentic_core.json_types import Item
from agentic_core.responses.response import normalize_content_part, normalize_output_item, normalize_usage

# A model output item → the item the client sees (a client tool's call in its declared shape); see
# ToolRegistry.public_item.
Presenter = Callable[[Item], Item]
PublicEvent = tuple[str, int, bytes]  # event type, sequence number, the event's JSON
INVALID_RESPONSE_CODE = "upstream_invalid_response"  # as for an invalid Chat Completions reply
_ARGUMENT_EVENTS = frozenset({"response.function_call_arguments.delta", "response.function_call_arguments.done"})

UPSTREAM_LIFECYCLE_EVENTS = frozenset({"response.created", "response.in_progress", "response.queued"})
UPSTREAM_TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
_TERMINAL_STATUS = {
    "response.completed": "completed",
    "response.incomplete": "incomplete",
    "response.failed": "failed",
}


@dataclass(slots=True)
class RoundOutcome:
    """What one inference round produced, in our public form."""

    status: str
    output: list[dict[str, Any]]
    usage: dict[str, Any] | None = None
    incomplete_details: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass(slots=True)
class ItemIds:
    """Upstream item id → our item id, stable for the whole turn."""

    by_upstream: dict[str, str] = field(default_factory=dict)

    def ours(self, upstream_id: Any, item_type: Any, output_index: Any) -> str:
        """Our id for an upstream item; an id or type that is not a string counts as absent."""
        key = upstream_id if isinstance(upstream_id, str) and upstream_id else f"#{output_index}"
        our_id = self.by_upstream.get(key)
        if our_id is None:
            our_id = new_item_id(item_type if isinstance(item_type, str) else "item")
            self.by_upstream[key] = our_id
        return our_id

    def known(self, upstream_id: str) -> str:
        return self.by_upstream.get(upstream_id, upstream_id)


class EventSequencer:
    """Assigns continuous `sequence_number`s and serialises each public event once."""

    __slots__ = ("next_sequence",)

    def __init__(self, first_sequence: int = 0) -> None:
        self.next_sequence = first_sequence

    def emit(self, event: dict[str, Any]) -> tuple[str, int, bytes]:
        sequence = self.next_sequence
        self.next_sequence += 1
        event["sequence_number"] = sequence
        return event["type"], sequence, orjson.dumps(event)


class StreamTranslator:
    """Folds one upstream SSE stream (one inference round) into public events and a `RoundOutcome`.

    Items for which `is_hidden(item)` holds (gateway-owned calls) emit no events:
    the loop shows them in their public form once executed. Visible items get
    public `output_index`es counted from `index_offset`, so indexes run on
    across rounds and around hidden items. `present` gives a client tool's call
    its declared shape; the argument events of a call that is no longer a plain
    function call become that type's events (a custom tool's input) or none.
    `show` gives a finished item its public form in `output_item.done` (a reasoning
    item its sealed `encrypted_content`); the round's outcome keeps the model's.
    `annotate` turns one public event into the events sent for it (file citations on message text).
    """

    def __init__(
        self,
        sequencer: EventSequencer,
        ids: ItemIds | None = None,
        *,
        index_offset: int = 0,
        is_hidden: Callable[[dict[str, Any]], bool] | None = None,
        present: Presenter | None = None,
        show: Presenter | None = None,
        annotate: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.sequencer = sequencer
        self.annotate = annotate
        self.show = show
        self.ids = ids or ItemIds()
        self.index_offset = index_offset
        self.is_hidden = is_hidden
        self.present = present
        # Output index → a call shown in another shape than the model's: (the model's item, the client's).
        self._presented: dict[int, tuple[Item, Item]] = {}
        self._public_index: dict[int, int] = {}
        self._hidden: set[int] = set()
        # Items after the first hidden call wait, so that the client sees the model's order:
        # they follow the executed call's public items (see `release_deferred`).
        self._first_hidden: int | None = None
        self._deferred: dict[int, list[dict[str, Any]]] = {}
        self._done_items: dict[int, dict[str, Any]] = {}
        self._terminal: RoundOutcome | None = None


    @property
    def finished(self) -> bool:
        return self._terminal is not None

    def translate(self, event: dict[str, Any]) -> list[PublicEvent]:
        """One upstream event → its public events (usually one; none when held back)."""
        event_type = event.get("type")
        if not isinstance(event_type, str) or event_type in UPSTREAM_LIFECYCLE_EVENTS:
            return []  # an event without a string type is as unknown as one of an unknown type
        if event_type in UPSTREAM_TERMINAL_EVENTS:
            response = event.get("response")
            self._terminal = self._outcome_from_terminal(event_type, response if isinstance(response, dict) else {})
            return []
        if event_type == "error":
            self._terminal = RoundOutcome(
                status="failed",
                output=self._collected_output(),
                error={"code": str(event.get("code") or "upstream_error"), "message": str(event.get("message") or "")},
            )
            return []
        output_index = event.get("output_index")
        item = event.get("item")
        if isinstance(item, dict):
            our_id = self.ids.ours(item.get("id"), item.get("type"), output_index)
            item = normalize_output_item(item, our_id)
            if self.present is not None:
                presented = self.present(item)
                if presented is not item and isinstance(output_index, int):
                    self._presented[output_index] = (item, presented)
                item = presented
            event["item"] = item
            if event_type == "response.output_item.done" and isinstance(output_index, int):
                self._done_items[output_index] = item
                if self.show is not None:
                    event["item"] = self.show(item)
            if (event_type == "response.output_item.added" and isinstance(output_index, int)
                    and self.is_hidden is not None and self.is_hidden(item)):
                self._hidden.add(output_index)
                if self._first_hidden is None or output_index < self._first_hidden:
                    self._first_hidden = output_index
        events = [event]
        if event_type in _ARGUMENT_EVENTS and isinstance(output_index, int) and output_index in self._presented:
            events = self._presented_argument_events(event, *self._presented[output_index])
        for each in events:
            item_id = each.get("item_id")
            if isinstance(item_id, str):
                each["item_id"] = self.ids.known(item_id)
            part = each.get("part")
            if isinstance(part, dict):
                each["part"] = normalize_content_part(part)
            if "logprobs" in each and each["logprobs"] is None:
                each["logprobs"] = []
        if self.annotate is not None:
            events = [annotated for each in events for annotated in self.annotate(each)]
        if isinstance(output_index, int):
            if output_index in self._hidden:
                return []
            if self._first_hidden is not None and output_index > self._first_hidden:
                self._deferred.setdefault(output_index, []).extend(events)
                return []
            public_index = self._public_index.get(output_index)
            if public_index is None:
                public_index = self._public_index[output_index] = self.index_offset + len(self._public_index)
            for each in events:
                each["output_index"] = public_index
        return [self.sequencer.emit(each) for each in events]

    def _presented_argument_events(self, event: dict[str, Any], model_call: Item, call: Item) -> list[dict[str, Any]]:
        """The argument events of a call shown in another shape: a namespaced function keeps them (under its
        own name); a custom tool's input streams once complete (the arguments are JSON around it); the
        fixed-shape calls (shell, apply_patch, ...) have none, their item carries everything."""
        if call.get("type") == "function_call":
            if "name" in event:
                event["name"] = call.get("name")
            return [event]
        if call.get("type") != "custom_tool_call" or event["type"] != "response.function_call_arguments.done":
            return []
        assert self.present is not None
        text = self.present({**model_call, "arguments": event.get("arguments") or ""}).get("input", "")
        base = {"item_id": event.get("item_id"), "output_index": event.get("output_index")}
        return [{"type": "response.custom_tool_call_input.delta", **base, "delta": text},
                {"type": "response.custom_tool_call_input.done", **base, "input": text}]

    def release_deferred(self, next_public_index: int) -> list[PublicEvent]:
        """The held-back items' events, numbered from `next_public_index` on, in the model's order."""
        released = []
        for upstream_index in sorted(self._deferred):
            for event in self._deferred[upstream_index]:
                event["output_index"] = next_public_index
                released.append(self.sequencer.emit(event))
            next_public_index += 1
        self._deferred.clear()
        return released

    def outcome(self) -> RoundOutcome | None:
        """The round's result, or None when the stream ended without a terminal event."""
        return self._terminal

    def _collected_output(self) -> list[dict[str, Any]]:
        return [self._done_items[index] for index in sorted(self._done_items)]

    def _outcome_from_terminal(self, event_type: str, response: dict[str, Any]) -> RoundOutcome:
        upstream_output = response.get("output")
        if isinstance(upstream_output, list) and upstream_output:
            output = map_output(upstream_output, self.ids, self.present)
        else:
            output = self._collected_output()
        return _outcome(response, _TERMINAL_STATUS[event_type], output)


def map_output(upstream_output: list[Any], ids: ItemIds, present: Presenter | None = None) -> list[Item]:
    """The upstream output items in our public form; an entry that is not an object is no item."""
    items = [normalize_output_item(item, ids.ours(item.get("id"), item.get("type"), index))
             for index, item in enumerate(upstream_output) if isinstance(item, dict)]
    return items if present is None else [present(item) for item in items]


def outcome_from_json(response: dict[str, Any], present: Presenter | None = None) -> RoundOutcome:
    """A non-streaming upstream response → `RoundOutcome`."""
    output = response.get("output")
    return _outcome(response, "completed", map_output(output if isinstance(output, list) else [], ItemIds(), present))


def _outcome(response: dict[str, Any], default_status: str, output: list[Item]) -> RoundOutcome:
    """A terminal upstream response's outcome; a field of the wrong type counts as absent, usage that is not
    numeric is a protocol error."""
    status, details, error = response.get("status"), response.get("incomplete_details"), response.get("error")
    return RoundOutcome(
        status=status if isinstance(status, str) and status else default_status,
        output=output,
        usage=_usage(response.get("usage")),
        incomplete_details=details if isinstance(details, dict) else None,
        error=error if isinstance(error, dict) else None,
    )


def _usage(usage: Any) -> dict[str, Any] | None:
    try:
        return normalize_usage(usage if isinstance(usage, dict) else None)
    except (TypeError, ValueError):
        raise UpstreamUnavailable("The model server sent a usage count that is not a number.",
                                  code=INVALID_RESPONSE_CODE) from None
