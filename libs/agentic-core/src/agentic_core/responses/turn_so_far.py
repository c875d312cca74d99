"""What a turn has produced before its next round, grown by copies (a round returns a new one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from agentic_core.json_types import Item


@dataclass(frozen=True, slots=True)
class TurnSoFar:
    public_output: tuple[Item, ...] = ()  # what the client sees
    continuation: tuple[Item, ...] = ()   # what the next turn's model sees
    usage: dict[str, Any] | None = None   # summed over the rounds
    public_of_call: Mapping[str, str] = field(default_factory=dict)  # gateway call id → its public item's id
    rounds: int = 0

    @property
    def next_index(self) -> int:
        """The `output_index` of the next public item."""
        return len(self.public_output)

    def shown(self, items: Iterable[Item]) -> TurnSoFar:
        return replace(self, public_output=(*self.public_output, *items))

    def continued(self, items: Iterable[Item]) -> TurnSoFar:
        return replace(self, continuation=(*self.continuation, *items))

    def counted(self, usage: dict[str, Any] | None) -> TurnSoFar:
        return replace(self, usage=add_usage(self.usage, usage))

    def linked(self, public_of_call: Mapping[str, str]) -> TurnSoFar:
        return replace(self, public_of_call={**self.public_of_call, **public_of_call}) if public_of_call else self


def add_usage(total: dict[str, Any] | None, more: dict[str, Any] | None) -> dict[str, Any] | None:
    """Two usage objects summed key by key, nested details included; None counts as nothing."""
    if more is None:
        return total
    if total is None:
        return more
    summed: dict[str, Any] = {}
    for key in total.keys() | more.keys():
        left, right = total.get(key), more.get(key)
        if isinstance(left, dict) or isinstance(right, dict):
            summed[key] = add_usage(left or {}, right or {})
        else:
            summed[key] = (left or 0) + (right or 0)
    return summed
