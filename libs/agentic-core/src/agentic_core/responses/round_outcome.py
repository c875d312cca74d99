"""What one round's output means for its turn: what is shown, which calls the gateway runs, and whether the turn ends.

A round ends the turn when nothing is left for the gateway to run (the model's
own status stands), when a client-owned call or an approval request hands the
next step to the client (the gateway calls of that round still run), or when it
was the last round allowed (incomplete, `max_tool_rounds`). Otherwise another
round follows with the outputs of the gateway calls. Items are told apart by
their position in the output, never by comparing their contents.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentic_core.json_types import Item
from agentic_core.responses.items import CALL_TYPES
from agentic_core.responses.stream import RoundOutcome
from agentic_core.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class TurnEnding:
    """How a turn ends: its final status and what explains it."""

    status: str
    incomplete_details: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RoundReading:
    """One round's output sorted for the turn, in the model's order within each part."""

    shown_first: tuple[Item, ...] = ()        # visible items before the first gateway call: shown as they are
    shown_last: tuple[Item, ...] = ()         # visible items after it: shown after the calls' public items
    gateway_calls: tuple[Item, ...] = ()      # the gateway runs these in this round
    awaiting_approval: tuple[Item, ...] = ()  # gateway calls the client approves or denies in its next request
    continuation: tuple[Item, ...] = ()       # the round's output as the next turn's model reads it
    ending: TurnEnding | None = None          # None: another round follows, reading the gateway calls' outputs


def is_gateway_call(item: Item, registry: ToolRegistry) -> bool:
    return item.get("type") == "function_call" and registry.is_gateway_call(item.get("name"))


def read_round(outcome: RoundOutcome, registry: ToolRegistry, *, round_number: int, max_rounds: int) -> RoundReading:
    """`round_number` counts from 1; the turn may take `max_rounds` rounds."""
    if outcome.status == "failed":
        return RoundReading(ending=TurnEnding("failed", error=outcome.error))
    output = outcome.output
    hidden = [is_gateway_call(item, registry) for item in output]
    first_hidden = hidden.index(True) if True in hidden else len(output)
    visible = [(position, item) for position, item in enumerate(output) if not hidden[position]]
    shown_first = tuple(item for position, item in visible if position < first_hidden)
    shown_last = tuple(item for position, item in visible if position > first_hidden)
    client_calls = any(item.get("type") in CALL_TYPES for _, item in visible)
    if outcome.status != "completed":
        # Cut short (max_output_tokens): a call the model never finished is neither run nor kept.
        return RoundReading(shown_first, shown_last, continuation=tuple(item for _, item in visible),
                            ending=TurnEnding(outcome.status, incomplete_details=outcome.incomplete_details))
    calls = [item for position, item in enumerate(output) if hidden[position]]
    awaiting = tuple(call for call in calls if _needs_approval(call, registry))
    runs = tuple(call for call in calls if not _needs_approval(call, registry))
    if not runs:
        ending: TurnEnding | None = TurnEnding(outcome.status, incomplete_details=outcome.incomplete_details)
    elif client_calls or awaiting:
        ending = TurnEnding("completed")  # the client owns the next step
    elif round_number >= max_rounds:
        ending = TurnEnding("incomplete", incomplete_details={"reason": "max_tool_rounds"})
    else:
        ending = None
    return RoundReading(shown_first, shown_last, runs, awaiting, tuple(output), ending)


def _needs_approval(call: Item, registry: ToolRegistry) -> bool:
    binding = registry.binding(call.get("name") or "")
    return binding is not None and binding.requires_approval
