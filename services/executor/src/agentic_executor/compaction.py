"""Compaction in the executor: the model writes the summary; before a round, a context over its threshold is compacted.

`Compactor.summarise` is the one place a compaction is made (the compact endpoint and
automatic compaction both use it). `ContextGuard` runs before each inference round of
a turn: over `compact_threshold` it compacts (the item is shown in the output and
stored with the turn), and a context still longer than the model's window is refused
(`context_length_exceeded`) instead of being sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentic_core.errors import UpstreamUnavailable
from agentic_core.json_types import Event, Item
from agentic_core.responses.compaction import (
    CompactionContent,
    Opener,
    compaction_item,
    retained_user_messages,
    summary_request,
    summary_text,
    visible_context,
)
from agentic_core.responses.history import StoredHistory, as_history
from agentic_core.responses.items import model_input
from agentic_core.responses.reasoning import open_reasoning
from agentic_core.responses.round_request import compacted_request
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.routing import ModelRoute
from agentic_core.tools.public_items import standalone_item_events

from agentic_executor.compaction_seal import CompactionSeal
from agentic_executor.context_budget import ContextBudget, context_too_long
from agentic_executor.reasoning_seal import ReasoningSeal
from agentic_executor.upstream import UpstreamClient

# What the summary request adds to the context (the summarisation prompt and request), generously.
_SUMMARY_REQUEST_TOKENS = 256


@dataclass(frozen=True, slots=True)
class Compacted:
    item: Item              # the compaction item
    retained: list[Item]    # the user messages it keeps, as stored
    usage: dict[str, Any] | None


class Compactor:
    def __init__(self, upstream: UpstreamClient, seal: CompactionSeal, budget: ContextBudget, *, summary_max_tokens: int,
                 reasoning: ReasoningSeal | None = None) -> None:
        self.upstream = upstream
        self.seal = seal
        self.reasoning = reasoning or ReasoningSeal()  # the model reads sealed reasoning items opened
        self.budget = budget
        self.summary_max_tokens = summary_max_tokens

    async def summarise(
        self, route: ModelRoute, model: str, visible: Sequence[Item], instructions: str | None, tenant: str,
        room: int | None = None,
    ) -> Compacted:
        """`visible`: the context as stored items, compaction already applied; one non-streaming call writes the summary.
        `room`: tokens the window leaves after the context, when known (the summary must fit in them)."""
        self.seal.ensure_available()
        body = summary_request(model_input(open_reasoning(visible, self.reasoning.opener(tenant))), instructions,
                               model=model)
        body["max_output_tokens"] = min(self.summary_max_tokens, room) if room and room > 0 else self.summary_max_tokens
        reply = await self.upstream.create_response(route, body)
        summary = summary_text(reply)
        if not summary:
            raise UpstreamUnavailable("The model server wrote no summary for the compaction.", code="compaction_failed")
        retained = retained_user_messages(visible)
        content = CompactionContent(summary, tuple(item["id"] for item in retained if isinstance(item.get("id"), str)))
        return Compacted(compaction_item(self.seal.seal(content, tenant)), retained, reply.get("usage"))


@dataclass(frozen=True, slots=True)
class Guarded:
    """The round's body and the turn, with the compaction's item and events when one was made."""

    body: dict[str, Any]
    so_far: TurnSoFar
    events: list[Event]


class ContextGuard:
    """One turn's context checks; the stored items before the turn's output are its history, then its input (the
    history parsed only if a compaction is made)."""

    def __init__(
        self, compactor: Compactor, route: ModelRoute, *, threshold: int | None, history: StoredHistory | Sequence[Item],
        input_items: Sequence[Item], opener: Opener, tenant: str,
    ) -> None:
        self.compactor = compactor
        self.route = route
        self.threshold = threshold
        self.history = as_history(history)
        self.input_items = list(input_items)
        self.opener = opener
        self.tenant = tenant

    async def before_round(self, body: dict[str, Any], so_far: TurnSoFar) -> Guarded:
        budget = self.compactor.budget
        tokens, window = await budget.measure(self.route, body, self.threshold)
        events: list[Event] = []
        if tokens is not None and self.threshold is not None and tokens > self.threshold:
            visible = visible_context([*self.history.items, *self.input_items, *so_far.continuation], self.opener)
            if len(retained_user_messages(visible)) < len(visible):  # something besides user messages to summarise
                room = window - tokens - _SUMMARY_REQUEST_TOKENS if window is not None else None
                compacted = await self.compactor.summarise(self.route, body["model"], visible, body.get("instructions"),
                                                           self.tenant, room)
                events = standalone_item_events(compacted.item, so_far.next_index)
                so_far = so_far.counted(compacted.usage).shown([compacted.item]).continued([compacted.item])
                compacted_context = visible_context([*visible, compacted.item], self.opener)
                body = compacted_request(body, open_reasoning(compacted_context, self.compactor.reasoning.opener(self.tenant)))
                tokens = await budget.count(self.route, body) if window is not None else None
        if tokens is not None and window is not None and tokens > window:
            raise context_too_long(tokens, window)
        return Guarded(body, so_far, events)
