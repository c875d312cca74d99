"""What a WebSocket connection remembers of its unstored responses, so a client continues with only new input.

A `store: false` response made on a connection can be continued there with
`previous_response_id`: the connection keeps the response's whole context
(the items the model saw plus its output) for the lane that made it, and a
continuation is expanded into a stateless request carrying that context. Only
the latest response of each lane is kept, within a per-connection budget of
items and bytes; a continuation of anything dropped gets
`previous_response_not_found` — never a silently shorter history.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from agentic_core.errors import NotFound
from agentic_core.json_types import Item

_FORGOTTEN_REMEMBERED = 256  # ids dropped on this connection, named in the error of a continuation


@dataclass(frozen=True, slots=True)
class Retained:
    """A response's context: `stored_parent` (a stored response the executor rehydrates) plus `items`."""

    stored_parent: str | None
    items: list[Item]
    size: int  # bytes of the JSON the items came from, an upper bound of their serialised size


def input_items(value: Any) -> list[Item]:
    """A create request's `input` as items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return value
    return []


class SocketHistory:
    """Per connection: lane → its latest unstored response's context, least recently used first."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._lanes: OrderedDict[str, tuple[str, Retained]] = OrderedDict()
        self._by_id: dict[str, Retained] = {}
        self._forgotten: deque[str] = deque(maxlen=_FORGOTTEN_REMEMBERED)
        self.size = 0

    def expand(self, payload: dict[str, Any], request_size: int) -> tuple[dict[str, Any], Retained | None]:
        """The request to send (a retained parent inlined), and the context its response will extend.

        The context is None when the response cannot be retained: stored responses and conversation turns
        continue through state, not through the connection."""
        previous = payload.get("previous_response_id")
        parent = self._by_id.get(previous) if isinstance(previous, str) else None
        if parent is None and isinstance(previous, str) and previous in self._forgotten:
            raise NotFound(
                f"Previous response with id '{previous}' is no longer held by this connection: an unstored response "
                f"is kept only while it is its lane's latest and fits the connection's budget ({self.max_items} "
                f"items, {self.max_bytes} bytes). Send the full input instead.",
                param="previous_response_id", code="previous_response_not_found",
            )
        retain = payload.get("store") is False and not payload.get("conversation")
        if parent is None:
            stored_parent = previous if isinstance(previous, str) else None
            context = Retained(stored_parent, input_items(payload.get("input")), request_size) if retain else None
            return payload, context
        items = parent.items + input_items(payload.get("input"))
        expanded = {**payload, "input": items}
        if parent.stored_parent is None:
            expanded.pop("previous_response_id", None)
        else:
            expanded["previous_response_id"] = parent.stored_parent
        context = Retained(parent.stored_parent, items, parent.size + request_size) if retain else None
        return expanded, context

    def record(self, lane: str, response_id: str, context: Retained, output: list[Item], output_size: int) -> bool:
        """Keep a finished response as `lane`'s latest; False when it alone exceeds the budget (not kept)."""
        retained = Retained(context.stored_parent, context.items + output, context.size + output_size)
        self._drop_lane(lane)
        if len(retained.items) > self.max_items or retained.size > self.max_bytes:
            self._forgotten.append(response_id)
            return False
        while self._lanes and self.size + retained.size > self.max_bytes:
            self._drop_lane(next(iter(self._lanes)))
        self._lanes[lane] = (response_id, retained)
        self._by_id[response_id] = retained
        self.size += retained.size
        return True

    def holds(self, response_id: str) -> bool:
        return response_id in self._by_id

    def evict(self, response_id: str) -> None:
        """Forget a held response (a continuation of it failed): continuing it again is previous_response_not_found."""
        lane = next((lane for lane, (held, _) in self._lanes.items() if held == response_id), None)
        if lane is not None:
            self._drop_lane(lane)

    def has_lane(self, lane: str) -> bool:
        return lane in self._lanes

    def lane_names(self) -> list[str]:
        return list(self._lanes)

    def _drop_lane(self, lane: str) -> None:
        entry = self._lanes.pop(lane, None)
        if entry is None:
            return
        response_id, retained = entry
        self._by_id.pop(response_id, None)
        self._forgotten.append(response_id)
        self.size -= retained.size
