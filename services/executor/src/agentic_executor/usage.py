"""A turn's usage as recorded: the model's tokens summed over the rounds, and the gateway tool calls it ran."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from agentic.v1 import common_pb2
from agentic_core.json_types import Item
from agentic_core.responses.turn_so_far import TurnSoFar
from agentic_core.tools.registry import ToolBinding
from agentic_core.usage.turn_usage import TurnUsage, usage_of


class UsageSink(Protocol):
    def record(self, principal: common_pb2.Principal, model: str, usage: TurnUsage) -> None: ...


@dataclass(slots=True)
class ToolTally:
    """Gateway tool calls of one turn by kind, and the seconds the turn waited on them."""

    calls: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @contextmanager
    def timing(self, calls: Sequence[Item], binding: Callable[[Item], ToolBinding]) -> Iterator[None]:
        for call in calls:
            kind = binding(call).kind
            self.calls[kind] = self.calls.get(kind, 0) + 1
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - started


@dataclass(slots=True)
class TurnMeter:
    """The turn as of its last answered round (the rounds update it) or, once they are done, the whole turn: what
    its usage record counts however the turn ends, as the model's tokens were spent either way."""

    so_far: TurnSoFar | None = None

    def answered(self, so_far: TurnSoFar) -> None:
        self.so_far = so_far

    def record(self, sink: UsageSink, principal: common_pb2.Principal, model: str, tally: ToolTally) -> None:
        """Every turn that reached the model server counts, stored or not, finished or cut short (a prewarm,
        `generate: false`, makes no model request but counts as a turn)."""
        if self.so_far is None:
            return
        usage = usage_of(self.so_far.usage, requests=self.so_far.rounds)
        usage.tool_calls, usage.tool_seconds = tally.calls, tally.seconds
        sink.record(principal, model, usage)
